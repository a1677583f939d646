import DAO
import Foundation
import LogStore

/// `logstore-crash-writer migrate <dir>`: versioned opens of the store's tables, one version
/// after another, until killed. At version v the tables are exactly `t<v> (id INTEGER PRIMARY
/// KEY, v INTEGER, w TEXT)` with rows 0..<migrationRowCount, each (id, v, `daoPadding(v * 1000 +
/// id)`), and an index on `v`. Each step is one `openVersion(v + 1)` whose `onUpgrade` drops
/// `t<v>` and creates and fills `t<v+1>` (`onCreate` for version 1), so the step's write batch
/// holds the row deletes, the catalog changes, the rows and the version record. Before each step
/// it prints `B <v+1> V`, after it `A <v+1>`. Must match DAOMigrationCrashTests.
func runMigrationChild(_ arguments: [String]) -> Never {
    guard arguments.count == 1 else { fail("usage: logstore-crash-writer migrate <dir>") }
    do {
        var options = LogStore.Options()
        options.segmentSize = 64 << 10   // a step's batch spans segments
        let store = try LogStore(directory: URL(fileURLWithPath: arguments[0]), options: options)
        let db = try SQLDatabase.attached(to: store)
        emit("O")
        func fill(_ db: SQLDatabase, _ version: Int) throws {
            try db.execute("CREATE TABLE t\(version) (id INTEGER PRIMARY KEY, v INTEGER, w TEXT)")
            try db.execute("CREATE INDEX t\(version)_v ON t\(version) (v)")
            let insert = try db.prepare("INSERT INTO t\(version) VALUES (?, ?, ?)")
            for id in 0..<migrationRowCount {
                try insert.execute(arguments: [.integer(Int64(id)), .integer(Int64(version)), .text(daoPadding(version * 1000 + id))])
            }
        }
        while true {
            let next = try db.userVersion() + 1
            emit("B \(next) V")
            try db.openVersion(next, onCreate: { db in try fill(db, next) }, onUpgrade: { db, from, to in
                try db.execute("DROP TABLE t\(from)")
                try fill(db, to)
            })
            emit("A \(next)")
        }
    } catch {
        fail("migrate: \(error)")
    }
}

/// Rows of each version's table in the migration crash test.
let migrationRowCount = 150
