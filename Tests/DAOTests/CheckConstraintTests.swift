import Foundation
import XCTest

@testable import DAO

/// CHECK constraints against SQLite 3.40: kept in the catalog, checked on every row an INSERT,
/// UPDATE or upsert writes (NULL passes), with each conflict resolution, and SQLite's messages.
final class CheckConstraintTests: XCTestCase {
    func testChecksAreEnforcedAsSQLiteEnforcesThem() throws {
        let d = try Differential()
        let statements = [
            "CREATE TABLE t (id INTEGER PRIMARY KEY, a INTEGER CHECK (a > 0), b TEXT CONSTRAINT blen CHECK(length(b) < 5), "
                + "c REAL, CHECK (c IS NULL OR c BETWEEN 0 AND 1))",
            "INSERT INTO t (a, b) VALUES (0, 'x')",
            "INSERT INTO t (a, b) VALUES (1, 'xxxxxx')",
            "INSERT INTO t (a, b, c) VALUES (1, 'x', 2)",
            "INSERT INTO t (a, b) VALUES (NULL, NULL)",
            "INSERT OR IGNORE INTO t (a, b) VALUES (0, 'x'), (3, 'ok')",
            "INSERT OR REPLACE INTO t (a, b) VALUES (0, 'x')",
            "INSERT OR FAIL INTO t (a, b) VALUES (4, 'a'), (-4, 'b'), (5, 'c')",
            "INSERT INTO t (a, b, c) VALUES ('5', 'x', '0.5')",
            "UPDATE t SET a = -1",
            "UPDATE OR IGNORE t SET a = a - 4",
            "INSERT INTO t (id, a, b) VALUES (2, 7, 'y') ON CONFLICT (id) DO UPDATE SET a = -7",
            "SELECT * FROM t ORDER BY id",
            "CREATE TABLE bad (x CHECK (y > 0))",
            "ALTER TABLE t DROP COLUMN c",                 // the table's CHECK names it: refused
            "ALTER TABLE t DROP COLUMN a",                 // its own CHECK goes with it
        ]
        for sql in statements {
            XCTAssertEqual(statementOutcome { try d.database.execute(sql).rows }, statementOutcome { try d.oracle.execute(sql) }, sql)
        }
        try d.temporary.reopen()
        let db = try d.temporary.database
        XCTAssertThrowsError(try db.execute("INSERT INTO t (b, c) VALUES ('z', 5)")) { error in
            XCTAssertEqual("\(error)", "\(DAOError.constraint("CHECK constraint failed: c IS NULL OR c BETWEEN 0 AND 1"))", "the check holds after a reopen")
        }
        XCTAssertEqual(try db.execute("SELECT sql FROM sqlite_master WHERE name = 't'").rows, [[.text(
            "CREATE TABLE \"t\" (\"id\" INTEGER PRIMARY KEY, \"b\" TEXT CONSTRAINT \"blen\" CHECK (length(b) < 5), "
            + "\"c\" REAL, CHECK (c IS NULL OR c BETWEEN 0 AND 1))")]])
        XCTAssertThrowsError(try db.execute("ALTER TABLE t RENAME COLUMN b TO bb")) { error in
            guard case DAOError.unsupported = error else { return XCTFail("\(error)") }
        }
        XCTAssertThrowsError(try db.execute("ALTER TABLE t ADD COLUMN d CHECK (d > 0)")) { error in
            guard case DAOError.unsupported = error else { return XCTFail("\(error)") }
        }
        try db.execute("ALTER TABLE t RENAME COLUMN id TO key")
        XCTAssertThrowsError(try db.execute("UPDATE t SET c = 9 WHERE key = 1"))
    }
}
