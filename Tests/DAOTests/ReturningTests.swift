@testable import DAO
import XCTest

/// INSERT/UPDATE/DELETE ... RETURNING (issue 15 item 6), compared with SQLite: rows, their
/// order, column names, changes, and the table afterwards.
final class ReturningTests: XCTestCase {
    private func same(_ d: Differential, _ sql: String, file: StaticString = #filePath, line: UInt = #line) {
        let expected = Result { try d.oracle.run(sql) }
        let actual = Result { try d.database.execute(sql) }
        switch (expected, actual) {
        case (.success(let e), .success(let a)):
            XCTAssertEqual(a.rows, e.rows, sql, file: file, line: line)
            XCTAssertEqual(a.columns, e.columns, sql, file: file, line: line)
        case (.failure, .failure): break
        case (.success, .failure(let error)): XCTFail("\(sql): ours failed with \(error)", file: file, line: line)
        case (.failure(let error), .success): XCTFail("\(sql): SQLite failed with \(error)", file: file, line: line)
        }
        d.check("SELECT rowid, * FROM t ORDER BY rowid", file: file, line: line)
    }

    func testReturningAgreesWithSQLite() throws {
        let d = try Differential()
        d.run(["CREATE TABLE t(id INTEGER PRIMARY KEY, k TEXT UNIQUE, v REAL)"])
        for sql in ["INSERT INTO t(k, v) VALUES ('a', 1), ('b', '2') RETURNING *",
                    "INSERT INTO t(k, v) VALUES ('c', 3) RETURNING id, k || '!' AS shout, v * 2, typeof(v)",
                    "INSERT INTO t(k, v) VALUES ('a', 9) ON CONFLICT(k) DO UPDATE SET v = v + excluded.v RETURNING id, v",
                    "INSERT INTO t(k, v) VALUES ('a', 9) ON CONFLICT(k) DO NOTHING RETURNING id",
                    "INSERT OR REPLACE INTO t(id, k, v) VALUES (2, 'bb', 5) RETURNING rowid, k",
                    "INSERT INTO t(k, v) VALUES ('d', 1), ('d', 2) ON CONFLICT(k) DO UPDATE SET v = v * 10 + excluded.v RETURNING k, v",
                    "UPDATE t SET v = v + 1 WHERE v > 2 RETURNING k, v, id",
                    "UPDATE t SET id = id + 100 WHERE k = 'c' RETURNING id, k",
                    "UPDATE t SET v = NULL WHERE 0 RETURNING *",
                    "DELETE FROM t WHERE k > 'b' RETURNING id, k, v",
                    "INSERT INTO t(k) VALUES ('a') RETURNING id",
                    "INSERT INTO t(k) VALUES ('x') RETURNING nosuch",
                    "DELETE FROM t RETURNING *"] {
            same(d, sql)
        }
    }
}
