@testable import DAO
import Foundation
import LogStore
import XCTest

/// `SQLDatabase.forEachRow`: the rows `execute` returns, in its order, handed out one at a time
/// (streamed when the access path gives the final order), and the rules of the body.
final class ForEachRowTests: XCTestCase {
    private func fill(_ db: SQLDatabase) throws {
        try db.execute("CREATE TABLE t (id INTEGER PRIMARY KEY, k INTEGER, name TEXT, v REAL)")
        try db.execute("CREATE INDEX tk ON t (k)")
        try db.execute("CREATE INDEX tname ON t (name DESC)")
        try db.execute("CREATE TABLE u (id INTEGER PRIMARY KEY, t_id INTEGER, note TEXT)")
        try db.execute("CREATE INDEX ut ON u (t_id)")
        try db.execute("BEGIN")
        for i in 0..<400 {
            try db.execute("INSERT INTO t VALUES (?, ?, ?, ?)", arguments: [.integer(Int64(i * 2)), i % 9 == 0 ? .null : .integer(Int64(i % 37)),
                                                                        .text("n\(i % 53)"), .real(Double(i) / 8)])
            if i % 3 == 0 { try db.execute("INSERT INTO u (t_id, note) VALUES (?, ?)", arguments: [.integer(Int64(i * 2)), .text("u\(i)")]) }
        }
        try db.execute("INSERT INTO t VALUES (9001, 5, CAST(x'61ff62' AS TEXT), NULL)")
        try db.execute("COMMIT")
    }

    /// Queries of every shape, and whether each streams: its rows come in their final order
    /// from the access path (scans, index ranges, index orders with and without LIMIT/OFFSET,
    /// joins, aggregates), or are handed out after the run (sorts, DISTINCT with LIMIT,
    /// compounds, CTEs).
    static let queries: [(sql: String, streamed: Bool)] = [
        ("SELECT * FROM t", true),
        ("SELECT id, name FROM t WHERE k BETWEEN 3 AND 7", true),
        ("SELECT id, k FROM t WHERE k > 30 ORDER BY k", true),
        ("SELECT id, k FROM t WHERE k > 30 ORDER BY k LIMIT 5 OFFSET 3", true),
        ("SELECT name, id FROM t ORDER BY name DESC LIMIT 12", true),
        ("SELECT id FROM t ORDER BY id DESC LIMIT 4 OFFSET 396", true),
        ("SELECT v, id FROM t ORDER BY v DESC, id LIMIT 9", false),
        ("SELECT k, count(*), sum(v) FROM t GROUP BY k", true),
        ("SELECT count(*) FROM t WHERE name LIKE 'n1%'", true),
        ("SELECT DISTINCT k FROM t", true),
        ("SELECT DISTINCT k FROM t ORDER BY k LIMIT 3 OFFSET 2", false),
        ("SELECT t.id, u.note FROM t JOIN u ON u.t_id = t.id WHERE t.k < 5", true),
        ("SELECT t.id, u.note FROM t LEFT JOIN u ON u.t_id = t.id ORDER BY t.id LIMIT 20", false),
        ("SELECT id FROM t WHERE id IN (SELECT t_id FROM u WHERE note > 'u5')", true),
        ("SELECT (SELECT count(*) FROM u WHERE u.t_id = t.id), id FROM t WHERE k = 4", true),
        ("SELECT id FROM t WHERE k = 1 UNION SELECT t_id FROM u WHERE id < 5 ORDER BY 1", false),
        ("WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c WHERE x < 30) SELECT x FROM c", false),
        ("SELECT 1, 'a', NULL, x'00'", true),
        ("SELECT id FROM t WHERE k = 99", true),
        ("SELECT id, name FROM t WHERE id = 9001", true),
        ("SELECT id FROM t LIMIT 0", true),
    ]

    private func collect(_ db: SQLDatabase, _ sql: String) throws -> (rows: [[DAOValue]], bytes: [[[UInt8]?]], count: Int) {
        var rows: [[DAOValue]] = []
        var bytes: [[[UInt8]?]] = []
        let count = try db.forEachRow(sql) { row in
            rows.append((0..<row.count).map { row[$0] })
            bytes.append((0..<row.count).map { row.textBytes($0) })
            XCTAssertEqual(row.values, rows.last)
        }
        return (rows, bytes, count)
    }

    func testRowsAndOrderAreExecutes() throws {
        let temporary = try TemporaryStore()
        let db = try temporary.database
        try fill(db)
        for (sql, streamed) in Self.queries {
            let expected = try db.execute(sql)
            let got = try collect(db, sql)
            XCTAssertEqual(got.rows, expected.rows, sql)
            XCTAssertEqual(got.count, expected.rows.count, sql)
            if streamed {
                XCTAssertEqual(db.lastStreamedRows, got.count, "\(sql): streamed as the scan made the rows")
            } else {
                XCTAssertEqual(db.lastStreamedRows, 0, "\(sql): handed out after the run")
            }
            for (r, row) in got.bytes.enumerated() {
                for (c, bytes) in row.enumerated() { XCTAssertEqual(bytes, expected.textBytes(row: r, column: c), "\(sql) [\(r)][\(c)]") }
            }
        }
        // The text that is not UTF-8 keeps its bytes; the subscript repairs it as `rows` does.
        let odd = try collect(db, "SELECT name FROM t WHERE id = 9001")
        XCTAssertEqual(odd.bytes, [[[0x61, 0xFF, 0x62]]])
        XCTAssertEqual(odd.rows, [[.text("a\u{FFFD}b")]])
    }

    /// A `SELECT *` of one table hands out the scan's own row (no copy): rows the body keeps
    /// must stay as they were while the scan reads the next ones into a new buffer, through
    /// every path (rowid order, index range, covering index, a column added later).
    func testKeptWholeRowsStayAsTheyWere() throws {
        let temporary = try TemporaryStore()
        let db = try temporary.database
        try fill(db)
        try db.execute("ALTER TABLE t ADD COLUMN extra TEXT DEFAULT 'x'")
        try db.execute("UPDATE t SET extra = 'y' || id WHERE id < 40")
        try db.execute("CREATE TABLE pair (a INTEGER, b TEXT)")
        try db.execute("CREATE INDEX pair_ab ON pair (a, b)")
        for i in 0..<300 { try db.execute("INSERT INTO pair VALUES (?, ?)", arguments: [.integer(Int64(i % 17)), .text("b\(i)")]) }
        for sql in ["SELECT * FROM t", "SELECT * FROM t WHERE k BETWEEN 3 AND 7", "SELECT * FROM t WHERE id > 700 ORDER BY id DESC",
                    "SELECT id, k, name, v, extra FROM t WHERE name > 'n4' ORDER BY name DESC LIMIT 30",
                    "SELECT a, b FROM pair WHERE a BETWEEN 2 AND 5", "SELECT * FROM pair WHERE a > 10"] {
            var kept: [SQLRow] = []
            let count = try db.forEachRow(sql) { kept.append($0) }
            XCTAssertEqual(db.lastStreamedRows, count, sql)
            XCTAssertEqual(kept.map(\.values), try db.execute(sql).rows, sql)
            XCTAssertGreaterThan(count, 1, sql)
        }
    }

    func testAPreparedStatementStreamsWithEachBinding() throws {
        let temporary = try TemporaryStore()
        let db = try temporary.database
        try fill(db)
        let byK = try db.prepare("SELECT id, name FROM t WHERE k = ? ORDER BY id")
        let byName = try db.prepare("SELECT id FROM t WHERE name = :name ORDER BY id")
        for k in [0, 5, 36, 99] {
            var rows: [[DAOValue]] = []
            let count = try byK.forEachRow(arguments: [.integer(Int64(k))]) { rows.append($0.values) }
            XCTAssertEqual(rows, try db.execute("SELECT id, name FROM t WHERE k = ? ORDER BY id", arguments: [.integer(Int64(k))]).rows)
            XCTAssertEqual(count, rows.count)
            var named: [[DAOValue]] = []
            try byName.forEachRow(named: ["name": .text("n\(k)")]) { named.append($0.values) }
            XCTAssertEqual(named, try db.execute("SELECT id FROM t WHERE name = ? ORDER BY id", arguments: [.text("n\(k)")]).rows)
        }
    }

    func testAWritingStatementHandsOutItsReturnedRows() throws {
        let temporary = try TemporaryStore()
        let db = try temporary.database
        try fill(db)
        let got = try collect(db, "INSERT INTO u (t_id, note) VALUES (1, 'r1'), (2, 'r2') RETURNING t_id, note")
        XCTAssertEqual(got.rows, [[.integer(1), .text("r1")], [.integer(2), .text("r2")]])
        XCTAssertEqual(try collect(db, "CREATE TABLE w (a)").count, 0)
        XCTAssertEqual(try db.execute("SELECT count(*) FROM u WHERE note LIKE 'r%'").rows, [[.integer(2)]])
    }

    func testTheBodyStopsTheQueryByThrowingAndTheDatabaseGoesOn() throws {
        struct Enough: Error {}
        let temporary = try TemporaryStore()
        let db = try temporary.database
        try fill(db)
        var seen = 0
        XCTAssertThrowsError(try db.forEachRow("SELECT id FROM t ORDER BY id") { _ in
            seen += 1
            if seen == 10 { throw Enough() }
        }) { XCTAssertTrue($0 is Enough, "\($0)") }
        XCTAssertEqual(seen, 10, "streamed: the scan stopped at the throw")
        XCTAssertEqual(try db.execute("SELECT count(*) FROM t").rows, [[.integer(401)]])
        // In a transaction the body's error leaves the transaction's changes as they were.
        try db.execute("BEGIN")
        try db.execute("DELETE FROM t WHERE id < 100")
        XCTAssertThrowsError(try db.forEachRow("SELECT id FROM t") { _ in throw Enough() })
        XCTAssertTrue(db.inTransaction)
        try db.execute("COMMIT")
        XCTAssertEqual(try db.execute("SELECT count(*) FROM t").rows, [[.integer(351)]])
    }

    /// The body holds the statement lock: reading the database's state works (no deadlock), a
    /// statement is refused with an error instead of corrupting the running query.
    func testTheBodyMayReadStateButNotRunStatements() throws {
        let temporary = try TemporaryStore()
        let db = try temporary.database
        try fill(db)
        var refused = 0
        try db.forEachRow("SELECT id FROM t WHERE id < 10") { row in
            XCTAssertEqual(db.tableNames(), ["t", "u"])
            XCTAssertFalse(db.inTransaction)
            XCTAssertNotNil(db.schema(ofTable: "t"))
            XCTAssertThrowsError(try db.execute("SELECT 1")) { error in
                XCTAssertTrue((error as? SQLExecutionError)?.message.contains("forEachRow") == true, "\(error)")
                refused += 1
            }
            XCTAssertThrowsError(try db.forEachRow("SELECT 1") { _ in })
        }
        XCTAssertEqual(refused, 5)
        // Another thread waits for the call to end, then runs.
        let started = DispatchSemaphore(value: 0)
        let finished = DispatchSemaphore(value: 0)
        let order = OrderLog()
        try db.forEachRow("SELECT id FROM t WHERE id < 6") { _ in
            if order.count == 0 {
                Thread.detachNewThread {
                    started.signal()
                    _ = try? db.execute("SELECT 1")
                    order.append("other")
                    finished.signal()
                }
                started.wait()
                Thread.sleep(forTimeInterval: 0.05)
            }
            order.append("row")
        }
        finished.wait()
        XCTAssertEqual(order.entries, ["row", "row", "row", "other"])
    }

    /// After a damaged block of the index checkpoint is found mid-query, the statement runs
    /// again on rebuilt tables: the body sees every row once, none from the damaged block.
    func testADamagedCheckpointBlockFoundMidStreamGivesEachRowOnce() throws {
        var foundByTheQuery = 0
        for fraction in stride(from: 0.05, to: 1.0, by: 0.1) {
            let temporary = try TemporaryStore()
            var db = try temporary.database
            try fill(db)
            let sql = "SELECT name, id FROM t ORDER BY name DESC"
            let expected = try db.execute(sql).rows
            try db.checkpoint()
            try temporary.reopen()
            let path = temporary.directory.appendingPathComponent(IndexCheckpointFile.name).path
            var bytes = try [UInt8](Data(contentsOf: URL(fileURLWithPath: path)))
            let metadata = (20..<24).reduce(0) { $0 | Int(bytes[$1]) << (8 * ($1 - 20)) }
            let at = metadata + Int(Double(bytes.count - metadata) * fraction)
            bytes[at] ^= 0x41
            try Data(bytes).write(to: URL(fileURLWithPath: path))
            db = try temporary.database
            let got = try collect(db, sql)
            XCTAssertEqual(got.rows, expected, "damaged byte at \(fraction)")
            XCTAssertEqual(got.count, expected.count)
            // The byte may be in a block this query does not read (another index, table u).
            if db.indexReport.count == 1 {
                foundByTheQuery += 1
                XCTAssertGreaterThan(db.lastStreamedRows, 0)
            }
        }
        XCTAssertGreaterThan(foundByTheQuery, 0, "some damaged byte was in a block the streamed query read")
    }
}

/// A log appended from two threads.
private final class OrderLog: @unchecked Sendable {
    private let lock = NSLock()
    private var log: [String] = []
    func append(_ entry: String) { lock.lock(); log.append(entry); lock.unlock() }
    var count: Int { lock.lock(); defer { lock.unlock() }; return log.count }
    var entries: [String] { lock.lock(); defer { lock.unlock() }; return log }
}
