import Foundation
import XCTest

@testable import DAO

/// ALTER TABLE ... RENAME TO rewrites the views and triggers that name the table as SQLite
/// 3.40 does (the texts equal `sqlite_master`'s after the same rename), and they go on
/// working: before and after a reopen, and undone by ROLLBACK.
final class RenameTableTests: XCTestCase {
    private let schema = [
        "CREATE TABLE log (a, b)",
        "CREATE TABLE t (x INTEGER PRIMARY KEY, log)",
        "CREATE VIEW v1 AS SELECT log.a, t.log FROM log, t WHERE log.b = t.x",
        "CREATE VIEW v2 AS SELECT l.a FROM log AS l JOIN t ON l.a = t.x",
        "CREATE VIEW v3 AS SELECT x FROM t WHERE x IN (SELECT a FROM log) OR x IN (SELECT b FROM t, log WHERE t.x = log.a)",
        "CREATE VIEW v4 AS SELECT * FROM (SELECT a FROM \"LOG\") AS log",
        "CREATE VIEW v5 AS SELECT log FROM t /* log */ WHERE log = 'log'",
        "CREATE VIEW v6 AS SELECT log.* FROM t JOIN log ON log.a = t.x",
        "CREATE VIEW v7 AS SELECT log.x FROM t AS log, log AS q",
        "CREATE TRIGGER tr AFTER INSERT ON t BEGIN INSERT INTO log VALUES (new.x, 'log'); "
            + "UPDATE log SET a = a + 100 WHERE log.b = 'log' AND a = new.x; DELETE FROM log WHERE a IS NULL; END",
        "CREATE TRIGGER tr2 BEFORE DELETE ON log FOR EACH ROW WHEN old.a > 0 BEGIN INSERT INTO t (log) VALUES ('deleted ' || old.a); END",
        "INSERT INTO log VALUES (NULL, 'n'), (7, 'seven')",
        "INSERT INTO t (x, log) VALUES (1, 'one'), (2, 'two')",
    ]

    private let queries = [
        "SELECT * FROM v1 ORDER BY 1, 2", "SELECT * FROM v2 ORDER BY 1", "SELECT * FROM v3 ORDER BY 1",
        "SELECT * FROM v4 ORDER BY 1", "SELECT * FROM v5 ORDER BY 1", "SELECT * FROM v6 ORDER BY 1, 2",
        "SELECT * FROM v7 ORDER BY 1", "SELECT * FROM journal ORDER BY a, b", "SELECT * FROM t ORDER BY x",
    ]

    /// The views' and triggers' texts by name, as the database keeps them.
    private func texts(_ db: SQLDatabase) -> [[DAOValue]] {
        var byName: [String: String] = [:]
        for view in db.views.values { byName[view.name] = view.text }
        for table in db.tables.values { for trigger in table.triggers { byName[trigger.name] = trigger.sql } }
        return byName.keys.sorted().map { [.text($0), .text(byName[$0]!)] }
    }

    func testViewsAndTriggersNamingTheTableAreRewrittenAsSQLiteDoes() throws {
        let temporary = try TemporaryStore()
        let oracle = try SQLiteOracle()
        for sql in schema {
            XCTAssertNoThrow(try oracle.execute(sql), sql)
            XCTAssertNoThrow(try temporary.database.execute(sql), sql)
        }
        let rename = "ALTER TABLE log RENAME TO journal"
        _ = try oracle.execute(rename)
        try temporary.database.execute(rename)
        let master = "SELECT name, sql FROM sqlite_master WHERE type IN ('view', 'trigger') ORDER BY name"
        XCTAssertEqual(texts(try temporary.database), try oracle.execute(master))

        // The triggers fire with their new texts (one inserts into the renamed table, the
        // renamed table's own fires on its deletes).
        for sql in ["INSERT INTO t (x, log) VALUES (7, 'seven')", "DELETE FROM journal WHERE a = 107"] {
            XCTAssertNoThrow(try oracle.execute(sql), sql)
            XCTAssertNoThrow(try temporary.database.execute(sql), sql)
        }
        for sql in queries { XCTAssertEqual(try temporary.database.execute(sql).rows, try oracle.execute(sql), sql) }
        try temporary.reopen()
        XCTAssertEqual(texts(try temporary.database), try oracle.execute(master), "after reopen")
        for sql in queries { XCTAssertEqual(try temporary.database.execute(sql).rows, try oracle.execute(sql), "after reopen: \(sql)") }
    }

    func testARolledBackRenameLeavesViewsAndTriggersAsTheyWere() throws {
        let temporary = try TemporaryStore()
        let db = try temporary.database
        for sql in schema { try db.execute(sql) }
        let before = texts(db)
        try db.execute("BEGIN")
        try db.execute("ALTER TABLE log RENAME TO journal")
        XCTAssertNotEqual(texts(db), before)
        try db.execute("ROLLBACK")
        XCTAssertEqual(texts(db), before)
        try db.execute("INSERT INTO t (x, log) VALUES (9, 'nine')")
        // tr fired on the table's old name: it inserted (9, 'log') and added 100.
        XCTAssertEqual(try db.execute("SELECT a FROM log WHERE a = 109").rows, [[.integer(109)]])
        try temporary.reopen()
        XCTAssertEqual(texts(try temporary.database), before)
    }
}
