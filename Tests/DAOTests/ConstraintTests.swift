@testable import DAO
import XCTest

/// INSERT variants, UNIQUE and NOT NULL violations (atomic statements), UPDATE and DELETE.
final class ConstraintTests: XCTestCase {
    func testViolationsLeaveTheTableAsItWas() throws {
        let d = try Differential()
        d.run(["CREATE TABLE t (id INTEGER PRIMARY KEY, a TEXT UNIQUE, b NOT NULL DEFAULT 'dflt', c INT, UNIQUE (b, c))",
               "CREATE INDEX tc ON t (c)",
               "INSERT INTO t (a, b, c) VALUES ('x', 'p', 1), ('y', 'p', 2), (NULL, 'q', NULL), (NULL, 'q', NULL)"])
        for (sql, message) in [
            ("INSERT INTO t (a, b, c) VALUES ('z', 'r', 5), ('x', 's', 6)", "UNIQUE constraint failed: t.a"),
            ("INSERT INTO t (a, b, c) VALUES ('w', NULL, 7)", "NOT NULL constraint failed: t.b"),
            ("INSERT INTO t (id, a) VALUES (1, 'new')", "UNIQUE constraint failed: t.id"),
            ("INSERT INTO t (a, b, c) VALUES ('k', 'p', 1)", "UNIQUE constraint failed: t.b, t.c"),
            ("UPDATE t SET c = 1 WHERE a = 'y'", "UNIQUE constraint failed: t.b, t.c"),
            ("UPDATE t SET a = 'q' || a, b = NULL WHERE id > 1", "NOT NULL constraint failed: t.b"),
            ("UPDATE t SET id = id + 1", "UNIQUE constraint failed: t.id"),
        ] {
            XCTAssertThrowsError(try d.database.execute(sql), sql) { error in
                guard case DAOError.constraint(let text) = error else { return XCTFail("\(sql): \(error)") }
                XCTAssertEqual(text, message, sql)
            }
            XCTAssertThrowsError(try d.oracle.execute(sql)) { error in
                XCTAssertEqual(error as? SQLiteOracle.OracleError, .sqlite(message), sql)
            }
            d.check("SELECT * FROM t")
            d.check("SELECT id FROM t WHERE c = 1")
            d.check("SELECT id FROM t WHERE a = 'z'")
        }
        XCTAssertEqual(try d.database.execute("SELECT count(*) FROM t").rows, [[.integer(4)]])
    }

    func testInsertVariants() throws {
        let d = try Differential()
        d.run(["CREATE TABLE t (id INTEGER PRIMARY KEY, k TEXT UNIQUE, v INT DEFAULT (1 + 1), w REAL DEFAULT -1.5, n TEXT NOT NULL DEFAULT 'n')",
               "INSERT INTO t (k) VALUES ('a'), ('b')",
               "INSERT OR IGNORE INTO t (k, v) VALUES ('a', 10), ('c', 11)",
               "INSERT OR REPLACE INTO t (k, v) VALUES ('b', 20)",
               "REPLACE INTO t (id, k, v) VALUES (1, 'z', 30)",
               "INSERT OR REPLACE INTO t (k, n) VALUES ('d', NULL)",
               "INSERT OR IGNORE INTO t (k, n) VALUES ('e', NULL)",
               "INSERT INTO t DEFAULT VALUES",
               "CREATE TABLE u (x, y)",
               "INSERT INTO u SELECT k, v FROM t WHERE v > 2",
               "INSERT INTO u (y) SELECT id FROM t ORDER BY id DESC LIMIT 2"])
        d.check("SELECT * FROM t")
        d.check("SELECT * FROM u")
        d.check("INSERT INTO t (k) VALUES ('f', 1)")
        d.check("INSERT INTO t VALUES (1)")
        d.check("INSERT INTO t (nope) VALUES (1)")
        let result = try d.database.execute("INSERT OR REPLACE INTO t (k, v) VALUES ('z', 1), ('y', 2)")
        XCTAssertEqual(result.changes, 2)
        let ignored = try d.database.execute("INSERT OR IGNORE INTO t (k) VALUES ('z')")
        XCTAssertEqual(ignored.changes, 0)
        XCTAssertEqual(ignored.lastInsertRowId, result.lastInsertRowId)
    }

    func testAutoincrementAndRowidAssignment() throws {
        let d = try Differential()
        d.run(["CREATE TABLE a (id INTEGER PRIMARY KEY AUTOINCREMENT, v)",
               "CREATE TABLE p (id INTEGER PRIMARY KEY, v)",
               "INSERT INTO a (v) VALUES (1), (2), (3)", "INSERT INTO p (v) VALUES (1), (2), (3)",
               "DELETE FROM a WHERE id = 3", "DELETE FROM p WHERE id = 3",
               "INSERT INTO a (v) VALUES (4)", "INSERT INTO p (v) VALUES (4)",
               "INSERT INTO p (id, v) VALUES (-5, 5)", "INSERT INTO a (id, v) VALUES (100, 5)",
               "DELETE FROM a WHERE id = 100", "INSERT INTO a (v) VALUES (6)"])
        d.check("SELECT * FROM a")
        d.check("SELECT * FROM p")
        d.check("CREATE TABLE bad (id TEXT PRIMARY KEY AUTOINCREMENT)")
    }

    func testUpdateAndDelete() throws {
        let d = try Differential()
        d.run(["CREATE TABLE t (id INTEGER PRIMARY KEY, a INT, b TEXT)",
               "INSERT INTO t (a, b) VALUES (1, 'x'), (2, 'y'), (3, 'z'), (NULL, NULL)",
               "UPDATE t SET a = a * 10, b = b || a WHERE a >= 2",
               "UPDATE t SET id = id + 100 WHERE id = 1",
               "UPDATE t SET a = '7' WHERE b IS NULL",
               "DELETE FROM t WHERE b = 'y2'"])
        d.check("SELECT *, typeof(a) FROM t")
        let update = try d.database.execute("UPDATE t SET b = 'all'")
        XCTAssertEqual(update.changes, 3)
        let delete = try d.database.execute("DELETE FROM t")
        XCTAssertEqual(delete.changes, 3)
        XCTAssertEqual(try d.database.execute("SELECT count(*) FROM t").rows, [[.integer(0)]])
        XCTAssertThrowsError(try d.database.execute("UPDATE t SET nope = 1"))
        XCTAssertThrowsError(try d.database.execute("DELETE FROM nope"))
    }
}
