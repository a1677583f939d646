@testable import DAO
import XCTest

/// INSERT ... ON CONFLICT DO NOTHING / DO UPDATE (issue 15 item 6), compared with SQLite:
/// rows, changes, last insert rowid, errors.
final class UpsertTests: XCTestCase {
    /// Runs `sql` on both: same outcome (rows of `query` afterwards, changes, last rowid).
    private func same(_ d: Differential, _ sql: String, _ arguments: [DAOValue] = [], query: String,
                      file: StaticString = #filePath, line: UInt = #line) {
        let expected = Result { try d.oracle.run(sql, arguments: arguments) }
        let actual = Result { try d.database.execute(sql, arguments: arguments) }
        switch (expected, actual) {
        case (.success(let e), .success(let a)):
            XCTAssertEqual(a.changes, e.changes, "changes: \(sql)", file: file, line: line)
            XCTAssertEqual(a.lastInsertRowId, e.lastInsertRowId, "last rowid: \(sql)", file: file, line: line)
        case (.failure, .failure): break
        case (.success, .failure(let error)): XCTFail("\(sql): ours failed with \(error)", file: file, line: line)
        case (.failure(let error), .success): XCTFail("\(sql): SQLite failed with \(error)", file: file, line: line)
        }
        d.check(query, file: file, line: line)
    }

    func testUpsertAgreesWithSQLite() throws {
        let d = try Differential()
        d.run(["CREATE TABLE kv(id INTEGER PRIMARY KEY, k TEXT UNIQUE, v INTEGER NOT NULL DEFAULT 0, n TEXT, UNIQUE(n, v))",
               "INSERT INTO kv VALUES (1, 'a', 10, 'x'), (2, 'b', 20, 'y'), (3, 'c', 30, NULL)"])
        let query = "SELECT id, k, v, n, typeof(v) FROM kv ORDER BY id"
        let before = try d.database.execute(query).rows
        for sql in ["INSERT INTO kv(k, v) VALUES ('a', 1) ON CONFLICT DO NOTHING",
                    "INSERT INTO kv(k, v) VALUES ('a', 1) ON CONFLICT(k) DO NOTHING",
                    "INSERT INTO kv(k, v) VALUES ('d', 4) ON CONFLICT(k) DO NOTHING",
                    "INSERT INTO kv(k, v) VALUES ('a', 5) ON CONFLICT(k) DO UPDATE SET v = v + excluded.v",
                    "INSERT INTO kv(k, v) VALUES ('b', '7') ON CONFLICT(k) DO UPDATE SET v = excluded.v * 2, n = kv.k || excluded.k",
                    "INSERT INTO kv(id, k, v) VALUES (1, 'zz', 9) ON CONFLICT(id) DO UPDATE SET v = excluded.v WHERE excluded.v > v",
                    "INSERT INTO kv(id, k, v) VALUES (1, 'zz', 99) ON CONFLICT(id) DO UPDATE SET v = excluded.v WHERE excluded.v > v",
                    "INSERT INTO kv(id, k, v) VALUES (2, 'q', 1) ON CONFLICT DO UPDATE SET k = excluded.k",
                    "INSERT INTO kv(id, k, v) VALUES (9, 'q', 1) ON CONFLICT(id) DO UPDATE SET v = 0",
                    "INSERT INTO kv(k, v) VALUES ('e', 1), ('e', 2), ('e', 3) ON CONFLICT(k) DO UPDATE SET v = v * 10 + excluded.v",
                    "INSERT INTO kv(k, v, n) VALUES ('f', 20, 'y') ON CONFLICT(v, n) DO UPDATE SET k = 'g'",
                    "INSERT INTO kv(k, v, n) VALUES ('a', 20, 'y') ON CONFLICT(n, v) DO UPDATE SET k = 'h'",
                    "INSERT INTO kv(k, v) VALUES ('c', NULL) ON CONFLICT(k) DO NOTHING",
                    "INSERT INTO kv(k, v) VALUES ('c', 1) ON CONFLICT(k) DO UPDATE SET k = 'a'",
                    "INSERT INTO kv(k, v) VALUES ('c', 1) ON CONFLICT(k) DO UPDATE SET id = 1",
                    "INSERT INTO kv(k, v) VALUES ('c', 1) ON CONFLICT(k) DO UPDATE SET id = 50",
                    "INSERT INTO kv(k, v) VALUES ('zz', 1) ON CONFLICT(v) DO NOTHING",
                    "INSERT INTO kv(k, v) VALUES ('zz', 1) ON CONFLICT(nosuch) DO NOTHING",
                    "INSERT INTO kv(k) VALUES ('c') ON CONFLICT(k) DO UPDATE SET v = excluded.v + 100, n = excluded.nosuch",
                    "INSERT INTO kv(k) VALUES ('c') ON CONFLICT(k) DO UPDATE SET v = excluded.v + 100"] {
            same(d, sql, query: query)
        }
        same(d, "INSERT INTO kv(k, v) VALUES (?, ?) ON CONFLICT(k) DO UPDATE SET v = ? + excluded.v", ["a", 1, 1000], query: query)
        // The clauses did update rows (the comparisons above are not of unchanged tables).
        XCTAssertEqual(try d.database.execute("SELECT v FROM kv WHERE k = 'a'").rows, [[1001]])
        XCTAssertNotEqual(try d.database.execute(query).rows.count, before.count)
        same(d, "INSERT OR IGNORE INTO kv(k, v, n) VALUES ('a', 20, 'y') ON CONFLICT(k) DO UPDATE SET v = 1", query: query)
        // A failing row leaves every row of the statement undone.
        same(d, "INSERT INTO kv(k, v) VALUES ('new', 1), ('a', NULL) ON CONFLICT(k) DO NOTHING", query: query)
    }

    func testUpsertRefusals() throws {
        let temporary = try TemporaryStore()
        let db = try temporary.database
        try db.execute("CREATE TABLE t(a UNIQUE, b)")
        for (sql, construct) in [("INSERT INTO t SELECT 1, 2 ON CONFLICT DO NOTHING", "UPSERT after INSERT ... SELECT"),
                                 ("INSERT INTO t VALUES (1, 2) ON CONFLICT(a) WHERE a > 0 DO NOTHING", "UPSERT target WHERE"),
                                 ("INSERT INTO t VALUES (1, 2) ON CONFLICT(a) DO NOTHING ON CONFLICT DO NOTHING", "several ON CONFLICT clauses")] {
            XCTAssertThrowsError(try db.execute(sql), sql) { error in
                guard case DAOError.unsupported(let name) = error else { return XCTFail("\(sql): \(error)") }
                XCTAssertEqual(name, construct)
            }
        }
    }
}
