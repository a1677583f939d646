@testable import DAO
import Foundation
import LogStore
import XCTest

/// ALTER TABLE ... RENAME COLUMN and ... DROP COLUMN against SQLite 3.40: same rows after
/// them (before and after reopening the store), same refusals with the same messages, undone by
/// ROLLBACK, and a typed Dao of the record type after the change reading the older rows.
final class AlterColumnTests: XCTestCase {
    /// The message of what `body` throws (SQLite's, or the engine's in SQLite's words); nil
    /// when it does not throw.
    private func message(_ body: () throws -> Void) -> String? {
        do {
            try body()
            return nil
        } catch SQLiteOracle.OracleError.sqlite(let message) {
            return message
        } catch let error as SQLExecutionError {
            return error.message
        } catch DAOError.noSuchColumn(let name) {
            return "no such column: \(name)"
        } catch DAOError.constraint(let message) {
            return message
        } catch DAOError.noSuchTable(let name) {
            return "no such table: \(name)"
        } catch {
            return "\(error)"
        }
    }

    private let setup = [
        "CREATE TABLE t (id INTEGER PRIMARY KEY, name TEXT NOT NULL, nick TEXT, age INTEGER, code TEXT UNIQUE)",
        "CREATE INDEX t_age ON t (age DESC, name)",
        "INSERT INTO t (name, nick, age, code) VALUES ('ann', 'a', 31, 'x1'), ('bob', NULL, 17, 'x2'), ('cy', 'c', NULL, NULL)",
        "ALTER TABLE t ADD COLUMN score REAL DEFAULT 2.5",
        "INSERT INTO t (name, age, score) VALUES ('dee', 40, 1.0)",
    ]

    private let queries = [
        "SELECT * FROM t ORDER BY id",
        "SELECT id, name FROM t WHERE age > 20 ORDER BY age DESC",
        "SELECT count(*), sum(score) FROM t",
    ]

    func testRenameAndDropColumnGiveSQLitesRowsBeforeAndAfterReopen() throws {
        let temporary = try TemporaryStore()
        let oracle = try SQLiteOracle()
        func both(_ sql: String, file: StaticString = #filePath, line: UInt = #line) throws {
            XCTAssertEqual(message { _ = try temporary.database.execute(sql) }, message { _ = try oracle.execute(sql) },
                           sql, file: file, line: line)
        }
        for sql in setup { try both(sql) }
        try both("ALTER TABLE t RENAME COLUMN nick TO nickname")
        try both("ALTER TABLE t RENAME name TO handle")          // COLUMN is optional
        try both("ALTER TABLE t DROP COLUMN age")                 // refused: the index t_age names it
        try both("DROP INDEX t_age")
        try both("ALTER TABLE t DROP COLUMN age")
        try both("ALTER TABLE t DROP score")                      // an added column, some rows without it
        try both("INSERT INTO t (handle, nickname, code) VALUES ('eve', 'e', 'x3')")
        try both("INSERT INTO t (handle, code) VALUES ('fay', 'x1')")   // UNIQUE code still enforced
        try both("UPDATE t SET nickname = 'B' WHERE handle = 'bob'")
        for sql in ["SELECT * FROM t ORDER BY id", "SELECT handle, nickname FROM t WHERE code = 'x2'",
                    "SELECT id FROM t WHERE nickname IS NULL ORDER BY id"] {
            XCTAssertEqual(try temporary.database.execute(sql).rows, try oracle.execute(sql), sql)
        }
        XCTAssertEqual(try temporary.database.execute("SELECT * FROM t").columns, ["id", "handle", "nickname", "code"])
        try temporary.reopen()
        XCTAssertEqual(try temporary.database.indexReport, [], "the indexes load from the checkpoint written at close")
        for sql in ["SELECT * FROM t ORDER BY id", "SELECT handle FROM t WHERE code = 'x3'", "SELECT count(*) FROM t"] {
            XCTAssertEqual(try temporary.database.execute(sql).rows, try oracle.execute(sql), "after reopen: \(sql)")
        }
        XCTAssertEqual(try temporary.database.tableDefinitions().map(\.sql),
                       ["CREATE TABLE \"t\" (\"id\" INTEGER PRIMARY KEY, \"handle\" TEXT NOT NULL, \"nickname\" TEXT, \"code\" TEXT UNIQUE)"])
        try both("INSERT INTO t (handle, code) VALUES ('gus', 'x3')")
        try both("INSERT INTO t (id, handle) VALUES (1, 'dup')")
        XCTAssertEqual(try temporary.database.execute("SELECT * FROM t ORDER BY id").rows, try oracle.execute("SELECT * FROM t ORDER BY id"))
    }

    /// Rows written before `ALTER TABLE ADD COLUMN` read the column as its DEFAULT with the
    /// column's affinity applied (SQLite: `z INTEGER DEFAULT '5'` reads 5, not '5'), in
    /// queries, in the indexes built from the rows at attach, and in the rows DROP COLUMN
    /// rewrites.
    func testAddedColumnsReadTheirDefaultWithTheColumnsAffinity() throws {
        let temporary = try TemporaryStore()
        let oracle = try SQLiteOracle()
        let statements = [
            "CREATE TABLE a (id INTEGER PRIMARY KEY, x TEXT, y)",
            "INSERT INTO a (x, y) VALUES ('p', 1), ('q', 2), ('r', 3)",
            "ALTER TABLE a ADD COLUMN z INTEGER DEFAULT '5'",
            "ALTER TABLE a ADD COLUMN w REAL DEFAULT 3",
            "ALTER TABLE a ADD COLUMN t TEXT DEFAULT 7",
            "ALTER TABLE a ADD COLUMN n NUMERIC DEFAULT '2.0'",
            "ALTER TABLE a ADD COLUMN b BLOB DEFAULT 4",
            "ALTER TABLE a ADD COLUMN e DEFAULT -'5'",
            "ALTER TABLE a ADD COLUMN f INT DEFAULT '12abc'",
            // Refused while the table has rows, whose new column could not be read:
            "ALTER TABLE a ADD COLUMN g DEFAULT (1+2)",
            "ALTER TABLE a ADD COLUMN h DEFAULT CURRENT_TIMESTAMP",
            "ALTER TABLE a ADD COLUMN i NOT NULL DEFAULT NULL",
            "CREATE INDEX az ON a (z, t)",
            "CREATE INDEX aw ON a (w DESC, n)",
            "INSERT INTO a (x) VALUES ('new')",
            // ... and taken on an empty table, whose new rows evaluate them:
            "CREATE TABLE empty (a)",
            "ALTER TABLE empty ADD COLUMN g DEFAULT (1+2)",
            "ALTER TABLE empty ADD COLUMN h DEFAULT CURRENT_TIMESTAMP",
            "ALTER TABLE empty ADD COLUMN i NOT NULL",
            "INSERT INTO empty (a, i) VALUES (1, 2)",
        ]
        for sql in statements {
            XCTAssertEqual(message { _ = try temporary.database.execute(sql) }, message { _ = try oracle.execute(sql) }, sql)
        }
        let queries = [
            "SELECT *, typeof(z), typeof(w), typeof(t), typeof(n), typeof(b), typeof(e), typeof(f) FROM a ORDER BY id",
            "SELECT id FROM a WHERE z = 5 AND t = '7' ORDER BY id",
            "SELECT id, w, n FROM a WHERE w = 3.0 ORDER BY w DESC, n, id",
            "SELECT id FROM a WHERE t = 7 ORDER BY id",
            "SELECT a, g, i, typeof(h), length(h) FROM empty",
        ]
        func compare(_ label: String) throws {
            for sql in queries { XCTAssertEqual(try temporary.database.execute(sql).rows, try oracle.execute(sql), "\(label): \(sql)") }
        }
        try compare("before reopen")
        try temporary.reopen()
        try compare("after a reopen from the checkpoint")
        // Nothing changed since the checkpoint, so the close writes none: the next attach finds
        // the record without its file and builds the indexes from the rows.
        try FileManager.default.removeItem(at: temporary.directory.appendingPathComponent(IndexCheckpointFile.name))
        try temporary.reopen()
        let report = try temporary.database.indexReport
        XCTAssertTrue(report.contains { $0.contains("missing") }, "\(report)")
        try compare("after a reopen that read the rows")
        for sql in ["ALTER TABLE a DROP COLUMN y", "UPDATE a SET x = x || '!' WHERE id = 2"] {
            XCTAssertNoThrow(try oracle.execute(sql), sql)
            XCTAssertNoThrow(try temporary.database.execute(sql), sql)
        }
        try compare("after DROP COLUMN")
    }

    /// A DROP COLUMN that would break a view or one of the table's triggers is refused with
    /// SQLite's message and changes nothing; a trigger of another table that names the column is
    /// left to fail when it runs, as in SQLite. A RENAME COLUMN that SQLite would carry into a
    /// view or another table's trigger (by rewriting it) is refused, not left to break them.
    func testColumnChangesDoNotBreakViewsOrTriggers() throws {
        let temporary = try TemporaryStore()
        let db = try temporary.database
        let oracle = try SQLiteOracle()
        let schema = [
            "CREATE TABLE m (id INTEGER PRIMARY KEY, starred, body, seen)",
            "CREATE TABLE lists (id INTEGER PRIMARY KEY, name TEXT)",
            "CREATE TABLE log (x)",
            "CREATE VIEW v_starred AS SELECT id FROM m WHERE starred = 1",
            "CREATE VIEW v_lists AS SELECT l.name AS list_name FROM lists l",
            "CREATE TRIGGER tr AFTER INSERT ON m BEGIN INSERT INTO log VALUES (new.body); END",
            "CREATE TRIGGER tr_log AFTER INSERT ON log BEGIN UPDATE m SET seen = 1; END",
            "INSERT INTO m VALUES (1, 1, 'b', 0)",
            "INSERT INTO lists VALUES (1, 'inbox')",
        ]
        for sql in schema {
            try db.execute(sql)
            _ = try oracle.execute(sql)
        }
        for sql in ["ALTER TABLE m DROP COLUMN starred", "ALTER TABLE m DROP COLUMN body", "ALTER TABLE m DROP COLUMN seen"] {
            XCTAssertEqual(message { _ = try db.execute(sql) }, message { _ = try oracle.execute(sql) }, sql)
        }
        XCTAssertEqual(try db.execute("SELECT * FROM m").rows, try oracle.execute("SELECT * FROM m"))
        XCTAssertEqual(try db.execute("SELECT * FROM v_starred").rows, [[.integer(1)]])

        XCTAssertThrowsError(try db.execute("ALTER TABLE lists RENAME COLUMN name TO title")) { error in
            guard case DAOError.unsupported = error else { return XCTFail("\(error)") }
        }
        XCTAssertEqual(try db.execute("SELECT * FROM v_lists").rows, [[.text("inbox")]], "the view still works")
        try db.execute("ALTER TABLE lists RENAME COLUMN id TO list_id")
        try temporary.reopen()
        XCTAssertEqual(try temporary.database.execute("SELECT list_id, list_name FROM lists, v_lists").rows, [[.integer(1), .text("inbox")]])
    }

    func testRenameFollowsKeysAndIndexes() throws {
        let temporary = try TemporaryStore()
        let oracle = try SQLiteOracle()
        let statements = [
            "CREATE TABLE k (a TEXT, b INTEGER, c, PRIMARY KEY (a, b), UNIQUE (c))",
            "CREATE INDEX k_cb ON k (c DESC, b)",
            "INSERT INTO k VALUES ('p', 1, 'u'), ('p', 2, 'v'), ('q', 1, NULL)",
            "ALTER TABLE k RENAME COLUMN a TO alpha",
            "ALTER TABLE k RENAME COLUMN c TO C2",
            "ALTER TABLE k RENAME COLUMN b TO B",                    // the same column, new case
        ]
        for sql in statements {
            XCTAssertNoThrow(try oracle.execute(sql), sql)
            XCTAssertNoThrow(try temporary.database.execute(sql), sql)
        }
        try temporary.reopen()
        let db = try temporary.database
        XCTAssertEqual(try db.tableDefinitions().first?.sql,
                       "CREATE TABLE \"k\" (\"alpha\" TEXT, \"B\" INTEGER, \"C2\", PRIMARY KEY (\"alpha\", \"B\"), UNIQUE (\"C2\"))")
        for sql in ["INSERT INTO k VALUES ('p', 1, 'w')", "INSERT INTO k VALUES ('r', 1, 'u')", "INSERT INTO k VALUES ('r', 1, 'z')"] {
            XCTAssertEqual(message { _ = try db.execute(sql) }, message { _ = try oracle.execute(sql) }, sql)
        }
        for sql in ["SELECT * FROM k ORDER BY alpha, B", "SELECT alpha FROM k WHERE C2 = 'v'", "SELECT * FROM k WHERE c2 > 'a' ORDER BY C2 DESC"] {
            XCTAssertEqual(try db.execute(sql).rows, try oracle.execute(sql), sql)
        }
        _ = try db.execute("SELECT * FROM k WHERE C2 = 'v'")
        XCTAssertTrue(db.lastPlan.hasPrefix("INDEX"), "an index serves the renamed column: \(db.lastPlan)")
    }

    func testRefusalsHaveSQLitesMessagesAndChangeNothing() throws {
        let cases: [(schema: [String], alter: String)] = [
            (["CREATE TABLE t (a INTEGER PRIMARY KEY, b TEXT, c)"], "ALTER TABLE t DROP COLUMN a"),
            (["CREATE TABLE t (a, b TEXT UNIQUE, c)"], "ALTER TABLE t DROP COLUMN b"),
            (["CREATE TABLE t (a, b, c, PRIMARY KEY (b, c))"], "ALTER TABLE t DROP COLUMN c"),
            (["CREATE TABLE t (a, b, c, UNIQUE (b, c))"], "ALTER TABLE t DROP COLUMN b"),
            (["CREATE TABLE t (a, b, c)", "CREATE INDEX i ON t (c)"], "ALTER TABLE t DROP COLUMN c"),
            (["CREATE TABLE t (a, b, c)", "CREATE UNIQUE INDEX i ON t (a, b)"], "ALTER TABLE t DROP COLUMN b"),
            (["CREATE TABLE t (a, b, c)"], "ALTER TABLE t DROP COLUMN z"),
            (["CREATE TABLE t (a, b, c)"], "ALTER TABLE t DROP COLUMN rowid"),
            (["CREATE TABLE t (a, b, c)"], "ALTER TABLE u DROP COLUMN a"),
            (["CREATE TABLE t (a, b, c)"], "ALTER TABLE t RENAME COLUMN z TO y"),
            (["CREATE TABLE t (a, b, c)"], "ALTER TABLE t RENAME COLUMN a TO B"),
            (["CREATE TABLE t (a, b, c)"], "ALTER TABLE u RENAME COLUMN a TO y"),
            (["CREATE TABLE t (a, b, c)", "ALTER TABLE t DROP COLUMN b", "ALTER TABLE t DROP COLUMN c"], "ALTER TABLE t DROP COLUMN a"),
        ]
        for (schema, alter) in cases {
            let temporary = try TemporaryStore()
            let oracle = try SQLiteOracle()
            let db = try temporary.database
            for sql in [schema[0], "INSERT INTO t VALUES (1, 2, 3)"] + schema.dropFirst() {
                XCTAssertNoThrow(try oracle.execute(sql), sql)
                XCTAssertNoThrow(try db.execute(sql), sql)
            }
            let before = try db.execute("SELECT * FROM t")
            let expected = message { _ = try oracle.execute(alter) }
            XCTAssertNotNil(expected, alter)
            XCTAssertEqual(message { _ = try db.execute(alter) }, expected, alter)
            let after = try db.execute("SELECT * FROM t")
            XCTAssertEqual(after.columns, before.columns, alter)
            XCTAssertEqual(after.rows, before.rows, alter)
        }
    }

    func testDropColumnInATransactionIsUndoneByRollback() throws {
        let temporary = try TemporaryStore()
        let db = try temporary.database
        for sql in setup { try db.execute(sql) }
        try db.execute("DROP INDEX t_age")
        let before = try db.execute("SELECT * FROM t ORDER BY id")
        try db.execute("BEGIN")
        try db.execute("UPDATE t SET nick = 'z' WHERE id = 2")
        try db.execute("ALTER TABLE t DROP COLUMN age")
        try db.execute("ALTER TABLE t RENAME COLUMN nick TO nickname")
        XCTAssertEqual(try db.execute("SELECT nickname FROM t WHERE id = 2").rows, [[.text("z")]])
        try db.execute("ROLLBACK")
        XCTAssertEqual(try db.execute("SELECT * FROM t ORDER BY id").rows, before.rows)
        XCTAssertEqual(try db.execute("SELECT * FROM t ORDER BY id").columns, before.columns)
        try temporary.reopen()
        XCTAssertEqual(try temporary.database.execute("SELECT * FROM t ORDER BY id").rows, before.rows)
    }

    // MARK: Typed Dao

    struct PersonV1: Codable, DAORecord, Equatable {
        static let table = TableSchema("Person", primaryKey: "id", generatedID: true)
        var id: Int64?
        var name: String
        var nick: String?
        var age: Int
    }

    struct PersonV2: Codable, DAORecord, Equatable {
        static let table = TableSchema("Person", primaryKey: "id", generatedID: true)
        var id: Int64?
        var name: String
        var nickname: String?
    }

    func testTypedDaoReadsRowsWrittenBeforeARenameAndADrop() throws {
        let temporary = try TemporaryStore()
        var migrator = DatabaseMigrator()
        migrator.registerMigration("people") { _ in
            let people = try temporary.store.dao(for: PersonV1.self)
            var ann = PersonV1(id: nil, name: "ann", nick: "a", age: 31)
            var bob = PersonV1(id: nil, name: "bob", nick: nil, age: 17)
            try people.create(&ann)
            try people.create(&bob)
        }
        try migrator.migrate(temporary.database)
        migrator.registerMigration("nickname, no age") { db in
            try db.execute("ALTER TABLE Person RENAME COLUMN nick TO nickname")
            try db.execute("ALTER TABLE Person DROP COLUMN age")
        }
        try migrator.migrate(temporary.database)
        let expected = [PersonV2(id: 1, name: "ann", nickname: "a"), PersonV2(id: 2, name: "bob", nickname: nil)]
        XCTAssertEqual(try temporary.store.dao(for: PersonV2.self).queryForAll(), expected)
        try temporary.reopen()
        let people = try temporary.store.dao(for: PersonV2.self)
        XCTAssertEqual(try people.queryForAll(), expected)
        var cy = PersonV2(id: nil, name: "cy", nickname: "c")
        try people.create(&cy)
        XCTAssertEqual(try people.queryForID(3), cy)
        XCTAssertEqual(try migrator.appliedMigrations(temporary.database), ["people", "nickname, no age"])
        // The older type no longer fits: its dropped property's column is gone.
        XCTAssertThrowsError(try temporary.store.dao(for: PersonV1.self).queryForAll())
    }
}
