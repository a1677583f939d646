import DAO
import Foundation
import LogStore

/// `logstore-crash-writer dao <dir> <seed> <first op id>`: SQL statements on one table until
/// killed. Table `c (id INTEGER PRIMARY KEY, k TEXT UNIQUE, v INTEGER, w TEXT)` with an index on
/// `v`; rowids 0..<200. Before each operation it prints `B <id> <op>`, after it `A <id>`:
///
///   B <id> I <rowid>                INSERT OR REPLACE of row <rowid> at version <id>
///   B <id> U <rowid>                UPDATE of row <rowid> (if present) to version <id>
///   B <id> D <rowid>                DELETE of row <rowid>
///   B <id> T <n> <op>:<rowid> ...   BEGIN, those n operations at version <id>, COMMIT
///
/// A row at version n is (rowid, 'k<rowid>', n, `daoPadding(n)`). Must match DAOCrashTests.
/// After every 25th operation it writes the index checkpoint (`SQLDatabase.checkpoint()`).
func runDAOChild(_ arguments: [String]) -> Never {
    guard arguments.count == 3, let seed = UInt64(arguments[1]), let firstID = Int(arguments[2]) else {
        fail("usage: logstore-crash-writer dao <dir> <seed> <first op id>")
    }
    do {
        var options = LogStore.Options()
        options.segmentSize = 64 << 10   // many segment rolls and background compactions
        options.compactionTrigger = 0.3
        let store = try LogStore(directory: URL(fileURLWithPath: arguments[0]), options: options)
        let db = try SQLDatabase.attached(to: store)
        _ = try db.execute("CREATE TABLE IF NOT EXISTS c (id INTEGER PRIMARY KEY, k TEXT UNIQUE, v INTEGER, w TEXT)")
        _ = try db.execute("CREATE INDEX IF NOT EXISTS c_v ON c (v)")
        emit("O")
        var random = Generator(state: seed)
        var id = firstID
        func apply(_ op: Character, _ rowid: Int, version: Int) throws {
            switch op {
            case "I":
                _ = try db.execute("INSERT OR REPLACE INTO c VALUES (?, ?, ?, ?)",
                                   arguments: [.integer(Int64(rowid)), .text("k\(rowid)"), .integer(Int64(version)), .text(daoPadding(version))])
            case "U":
                _ = try db.execute("UPDATE c SET v = ?, w = ? WHERE id = ?",
                                   arguments: [.integer(Int64(version)), .text(daoPadding(version)), .integer(Int64(rowid))])
            default:
                _ = try db.execute("DELETE FROM c WHERE id = ?", arguments: [.integer(Int64(rowid))])
            }
        }
        let kinds: [Character] = ["I", "I", "I", "U", "D"]
        while true {
            id += 1
            let roll = random.next() % 10
            if roll < 7 {
                let op = kinds[Int(random.next() % UInt64(kinds.count))]
                let rowid = Int(random.next() % 200)
                emit("B \(id) \(op) \(rowid)")
                try apply(op, rowid, version: id)
            } else {
                let count = 2 + Int(random.next() % 5)
                let ops = (0..<count).map { _ in (kinds[Int(random.next() % UInt64(kinds.count))], Int(random.next() % 200)) }
                emit("B \(id) T \(count) " + ops.map { "\($0.0):\($0.1)" }.joined(separator: " "))
                _ = try db.execute("BEGIN")
                for (op, rowid) in ops { try apply(op, rowid, version: id) }
                _ = try db.execute("COMMIT")
            }
            emit("A \(id)")
            // Index checkpoints now and then, so kills also land while the file is written.
            if id % 25 == 0 { try db.checkpoint() }
        }
    } catch {
        fail("dao: \(error)")
    }
}

/// The `w` column of a row at `version`: long enough that rows span pages and segments.
func daoPadding(_ version: Int) -> String {
    "w\(version)-" + String(repeating: Character(UnicodeScalar(UInt8(97 + version % 26))), count: 40 + version % 300)
}
