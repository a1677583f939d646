@testable import DAO
import XCTest

/// CREATE TEMP TABLE (issue 15 item 6): SQLite's results, atomic statements, nothing stored.
final class TemporaryTableTests: XCTestCase {
    func testTemporaryTableAgreesWithSQLite() throws {
        let d = try Differential()
        d.run(["CREATE TABLE t(a INTEGER PRIMARY KEY, b TEXT UNIQUE)", "INSERT INTO t VALUES (1, 'stored')",
               "CREATE TEMP TABLE m(k INTEGER PRIMARY KEY, v TEXT NOT NULL, w REAL UNIQUE)",
               "INSERT INTO m VALUES (1, 'a', 1.5), (5, 'b', 2), (NULL, 'c', '3')",
               "UPDATE m SET v = v || '!' WHERE k > 1", "DELETE FROM m WHERE k = 1",
               "INSERT INTO m(v) SELECT b FROM t"])
        d.check("SELECT k, v, w, typeof(w) FROM m")
        d.check("SELECT count(*), max(k) FROM m WHERE v LIKE '%!'")
        // A failing statement leaves the TEMP table as it was.
        d.check("INSERT INTO m VALUES (20, 'x', 9), (21, NULL, 10)")
        d.check("INSERT INTO m VALUES (22, 'y', 2)")
        d.check("SELECT k, v FROM m ORDER BY k")
        // Explicit transactions roll a TEMP table back too.
        d.run(["BEGIN", "INSERT INTO m VALUES (30, 'z', 30)", "DELETE FROM m WHERE k = 5", "ROLLBACK"])
        d.check("SELECT k, v FROM m ORDER BY k")
        d.run(["BEGIN", "INSERT INTO m VALUES (31, 'kept', 31)", "COMMIT"])
        d.check("SELECT k, v FROM m ORDER BY k")
        // A TEMP table hides a stored one of the same name until it is dropped.
        d.run(["CREATE TEMPORARY TABLE t(x)", "INSERT INTO t VALUES ('temp')"])
        d.check("SELECT * FROM t")
        d.run(["DROP TABLE t"])
        d.check("SELECT * FROM t")
        d.check("CREATE TEMP TABLE m(z)")
        d.check("CREATE TEMP TABLE IF NOT EXISTS m(z)")
        d.check("SELECT a FROM t UNION ALL SELECT k FROM m ORDER BY 1")
    }

    func testTemporaryTableIsNeverStored() throws {
        let temporary = try TemporaryStore()
        var db = try temporary.database
        try db.execute("CREATE TABLE t(a)")
        try db.execute("INSERT INTO t VALUES (1)")
        let spaces = try temporary.store.namedSpaces()
        let catalog = try temporary.store.space(named: "dao.catalog")
        let catalogKeys = try temporary.store.keys(space: catalog)
        try db.execute("CREATE TEMP TABLE m(k INTEGER PRIMARY KEY, v)")
        try db.execute("INSERT INTO m VALUES (1, 'x'), (2, 'y')")
        try db.execute("UPDATE m SET v = 'z'")
        XCTAssertEqual(try db.execute("SELECT k, v FROM m").rows, [[1, "z"], [2, "z"]])
        XCTAssertEqual(try temporary.store.namedSpaces(), spaces)
        XCTAssertEqual(try temporary.store.keys(space: catalog), catalogKeys)
        XCTAssertThrowsError(try db.execute("ALTER TABLE m ADD COLUMN c")) { error in
            guard case DAOError.unsupported = error else { return XCTFail("\(error)") }
        }
        try temporary.reopen()
        db = try temporary.database
        XCTAssertThrowsError(try db.execute("SELECT * FROM m")) { error in
            guard case DAOError.noSuchTable = error else { return XCTFail("\(error)") }
        }
        XCTAssertEqual(try db.execute("SELECT a FROM t").rows, [[1]])
        XCTAssertEqual(db.tableNames(), ["t"])
    }
}
