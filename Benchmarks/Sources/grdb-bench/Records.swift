import DAO
import GRDB

/// The record of the typed workloads, as the product's typed Dao stores it.
struct DaoUser: Codable, DAORecord {
    static let table = TableSchema("User", primaryKey: "id", generatedID: true, indexes: [["color", "timestamp"]])
    var id: Int64?
    var name: String
    var color: Int
    var timestamp: Int64
}

/// The same record as a GRDB Codable record (FetchableRecord + MutablePersistableRecord).
struct GRDBUser: Codable, FetchableRecord, MutablePersistableRecord {
    static let databaseTableName = "User"
    var id: Int64?
    var name: String
    var color: Int
    var timestamp: Int64

    mutating func didInsert(_ inserted: InsertionSuccess) {
        id = inserted.rowID
    }
}

/// The typed workloads' record i: deterministic fields, colors 0..<64.
func userFields(_ i: Int) -> (name: String, color: Int, timestamp: Int64) {
    let hash = UInt64(i) &* 0x9E37_79B9_7F4A_7C15
    return ("user-\(String(hash >> 24, radix: 36))", Int(hash >> 58), Int64(i))
}
