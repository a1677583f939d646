@testable import DAO
import XCTest

/// The vertical slice: create, insert, select with WHERE, update, delete, against SQLite.
final class SQLSmokeTests: XCTestCase {
    func testCreateInsertSelectUpdateDelete() throws {
        let d = try Differential()
        d.run(["CREATE TABLE t (id INTEGER PRIMARY KEY, name TEXT NOT NULL, score REAL, tag)",
               "INSERT INTO t (name, score, tag) VALUES ('ann', 1.5, 1), ('bob', 2, 'x'), ('cy', NULL, x'00ff')",
               "INSERT INTO t VALUES (10, 'dee', 7, 2.0)"])
        d.check("SELECT * FROM t")
        d.check("SELECT id, name FROM t WHERE score > 1.7")
        d.check("SELECT name FROM t WHERE id = 2")
        d.check("SELECT name, typeof(score), typeof(tag) FROM t ORDER BY name DESC")
        let update = try d.database.execute("UPDATE t SET score = score * 2 WHERE name <> 'ann'")
        _ = try d.oracle.execute("UPDATE t SET score = score * 2 WHERE name <> 'ann'")
        XCTAssertEqual(update.changes, 3)
        d.check("SELECT * FROM t")
        let delete = try d.database.execute("DELETE FROM t WHERE id >= 3")
        _ = try d.oracle.execute("DELETE FROM t WHERE id >= 3")
        XCTAssertEqual(delete.changes, 2)
        d.check("SELECT * FROM t")
        let insert = try d.database.execute("INSERT INTO t (name) VALUES (?)", arguments: ["eve"])
        XCTAssertEqual(insert.lastInsertRowId, 3)
        XCTAssertEqual(try d.temporary.store.sql("SELECT count(*) FROM t"), [[.integer(3)]])
    }

    func testCachedStatementsFollowSchemaChanges() throws {
        let temporary = try TemporaryStore()
        let db = try temporary.database
        try db.execute("CREATE TABLE t (a)")
        try db.execute("INSERT INTO t VALUES (1)")
        let select = try db.prepare("SELECT * FROM t")
        XCTAssertEqual(try select.execute().rows, [[.integer(1)]])
        try db.execute("ALTER TABLE t ADD COLUMN b DEFAULT 'x'")
        XCTAssertEqual(try select.execute().rows, [[.integer(1), .text("x")]])
        XCTAssertEqual(try db.execute("SELECT * FROM t").columns, ["a", "b"])
        try db.execute("DROP TABLE t")
        XCTAssertThrowsError(try select.execute())
        try db.execute("CREATE TABLE t (z)")
        try db.execute("INSERT INTO t VALUES (9)")
        XCTAssertEqual(try select.execute().rows, [[.integer(9)]])
    }
}
