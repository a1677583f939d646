@testable import DAO
import XCTest

/// ORDER BY (alias, position, expression, across storage classes) and LIMIT/OFFSET.
final class OrderLimitTests: XCTestCase {
    func testOrderAcrossTypesAndLimit() throws {
        let d = try Differential()
        d.run(["CREATE TABLE t (id INTEGER PRIMARY KEY, v, w TEXT)",
               "INSERT INTO t (v, w) VALUES (3, 'c'), ('b', 'a'), (NULL, 'b'), (x'00', 'd'), (2.5, 'e'), ('A', 'f'), (-1, NULL), (3.0, 'g')"])
        d.check("SELECT v FROM t ORDER BY v, id")
        d.check("SELECT v FROM t ORDER BY v DESC, id")
        d.check("SELECT id, v AS k FROM t ORDER BY k, 1 DESC")
        d.check("SELECT id, w FROM t ORDER BY 2")
        d.check("SELECT id FROM t ORDER BY length(w) DESC, id")
        d.check("SELECT id FROM t ORDER BY id LIMIT 3")
        d.check("SELECT id FROM t ORDER BY id LIMIT 3 OFFSET 2")
        d.check("SELECT id FROM t ORDER BY id LIMIT 2, 3")
        d.check("SELECT id FROM t ORDER BY id LIMIT -1 OFFSET 5")
        d.check("SELECT id FROM t ORDER BY id LIMIT 1 + 1 OFFSET '1'")
        d.check("SELECT id FROM t ORDER BY id DESC LIMIT 0")
        d.check("SELECT id FROM t ORDER BY id LIMIT 3 OFFSET -2")
        d.check("SELECT id FROM t ORDER BY id LIMIT ?", [.integer(2)])
        d.check("SELECT * FROM t ORDER BY w DESC LIMIT 4")
        XCTAssertThrowsError(try d.database.execute("SELECT id FROM t LIMIT 'x'"))
        XCTAssertThrowsError(try d.database.execute("SELECT id FROM t LIMIT 1.5"))
        XCTAssertThrowsError(try d.database.execute("SELECT id FROM t ORDER BY 3"))
    }

    func testSelectWithoutFromAndColumnNames() throws {
        let d = try Differential()
        d.check("SELECT 1 + 1, 'a' AS x, NULL")
        d.check("SELECT 1 WHERE 0")
        d.check("SELECT 1 ORDER BY 1 LIMIT 5")
        d.run(["CREATE TABLE t (Alpha INTEGER, b TEXT)", "INSERT INTO t VALUES (1, 'x')"])
        let result = try d.database.execute("SELECT alpha, b AS Bee, alpha + 1, rowid, * FROM t")
        XCTAssertEqual(result.columns, ["Alpha", "Bee", "alpha + 1", "rowid", "Alpha", "b"])
        XCTAssertTrue(result.isQuery)
    }

    func testColumnNamesAsSQLiteGivesThem() throws {
        let temporary = try TemporaryStore()
        let db = try temporary.database
        try db.execute("CREATE TABLE t (Id INTEGER PRIMARY KEY, b)")
        try db.execute("INSERT INTO t VALUES (1, 2)")
        let result = try db.execute("SELECT rowid, oid, t.b, B, count(*), (b), b AS 'x y', * FROM t")
        XCTAssertEqual(result.columns, ["Id", "Id", "b", "b", "count(*)", "b", "x y", "Id", "b"])
        XCTAssertEqual(try db.execute("SELECT 1 AS a, 2 a2, max(b) FROM t").columns, ["a", "a2", "max(b)"])
    }
}

/// Extreme LIMIT and OFFSET values.
final class LimitEdgeTests: XCTestCase {
    func testHugeLimitAndOffset() throws {
        let d = try Differential()
        d.run(["CREATE TABLE t (v)", "INSERT INTO t VALUES (1), (2), (3)"])
        d.check("SELECT v FROM t ORDER BY rowid LIMIT 9223372036854775807")
        d.check("SELECT v FROM t ORDER BY rowid LIMIT 9223372036854775807 OFFSET 9223372036854775807")
        d.check("SELECT v FROM t LIMIT 2 OFFSET 9223372036854775807")
        d.check("SELECT v FROM t ORDER BY v DESC LIMIT -9223372036854775808 OFFSET 1")
    }
}
