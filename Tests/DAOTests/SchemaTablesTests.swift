import Foundation
import XCTest

@testable import DAO

/// `sqlite_master` / `sqlite_schema`, `sqlite_temp_master` and `sqlite_sequence` answer the
/// questions apps and frameworks ask them as SQLite does (their `sql` texts are the catalog's
/// canonical ones, so only what does not depend on them is compared).
final class SchemaTablesTests: XCTestCase {
    private let schema = [
        "CREATE TABLE notes (id INTEGER PRIMARY KEY AUTOINCREMENT, title TEXT NOT NULL, body TEXT)",
        "CREATE TABLE tags (name TEXT, note INTEGER, PRIMARY KEY (name, note))",
        "CREATE INDEX notes_title ON notes (title)",
        "CREATE UNIQUE INDEX tags_note ON tags (note, name)",
        "CREATE VIEW titled AS SELECT id, title FROM notes WHERE title <> ''",
        "CREATE TRIGGER notes_touch AFTER UPDATE ON notes BEGIN SELECT 1; END",
        "CREATE TABLE empty_auto (id INTEGER PRIMARY KEY AUTOINCREMENT, x)",
        "INSERT INTO notes (title) VALUES ('a'), ('b'), ('it''s')",
        "CREATE TEMP TABLE scratch (k)",
        "CREATE TEMP VIEW recent AS SELECT id FROM notes",
    ]

    private let queries = [
        // Room's open check, FMDB's tableExists, hand-written checks:
        "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'notes'",
        "SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name = 'missing'",
        "select [sql] IS NOT NULL from sqlite_master where [type] = 'table' and lower(name) = 'tags'",
        "SELECT type, name, tbl_name, rootpage > 0 FROM sqlite_schema WHERE name NOT LIKE 'sqlite_autoindex%' ORDER BY type, name",
        "SELECT name FROM sqlite_master WHERE type = 'index' AND tbl_name = 'notes' AND sql IS NOT NULL ORDER BY name",
        "SELECT count(*) FROM sqlite_master WHERE type = 'index' AND tbl_name = 'tags'",
        "SELECT name FROM sqlite_master WHERE type = 'view'",
        "SELECT type, name FROM sqlite_temp_master ORDER BY name",
        "SELECT name, seq FROM sqlite_sequence ORDER BY name",
        "SELECT seq FROM sqlite_sequence WHERE name = 'notes'",
        "SELECT n.title FROM notes n WHERE EXISTS (SELECT 1 FROM sqlite_master WHERE name = 'titled') ORDER BY 1",
    ]

    func testSchemaTablesAnswerAsSQLites() throws {
        let d = try Differential()
        for sql in schema { d.check(sql) }
        for sql in queries { d.check(sql) }
        // The canonical texts name what the catalog holds.
        XCTAssertEqual(try d.database.execute("SELECT sql FROM sqlite_master WHERE name = 'notes'").rows,
                       [[.text("CREATE TABLE \"notes\" (\"id\" INTEGER PRIMARY KEY AUTOINCREMENT, \"title\" TEXT NOT NULL, \"body\" TEXT)")]])
        XCTAssertEqual(try d.database.execute("SELECT sql FROM sqlite_master WHERE name = 'titled'").rows,
                       [[.text("CREATE VIEW titled AS SELECT id, title FROM notes WHERE title <> ''")]])
        // Schema changes show at once, and a rolled-back one goes again.
        d.check("BEGIN")
        d.check("DROP TABLE tags")
        d.check("SELECT count(*) FROM sqlite_master WHERE tbl_name = 'tags'")
        d.check("ROLLBACK")
        d.check("SELECT count(*) FROM sqlite_master WHERE tbl_name = 'tags'")
        // The sequence as it is now, each time the same statement runs.
        for _ in 0..<2 {
            d.check("INSERT INTO notes (title) VALUES ('more')")
            d.check("SELECT seq FROM sqlite_sequence WHERE name = 'notes'")
        }
        // Read-only.
        XCTAssertThrowsError(try d.database.execute("DELETE FROM sqlite_master"))
        XCTAssertThrowsError(try d.oracle.execute("DELETE FROM sqlite_master"))
    }

    /// Apps reset an AUTOINCREMENT table's numbers through `sqlite_sequence`.
    func testWritesToSqliteSequenceSetTheNextNumbers() throws {
        let d = try Differential()
        for sql in ["CREATE TABLE s (id INTEGER PRIMARY KEY AUTOINCREMENT, x)", "CREATE TABLE u (id INTEGER PRIMARY KEY AUTOINCREMENT, y)",
                    "INSERT INTO s (x) VALUES (1), (2), (3)", "INSERT INTO u (y) VALUES (1)", "DELETE FROM s"] {
            d.check(sql)
        }
        let steps = [
            "DELETE FROM sqlite_sequence WHERE name = 's'",
            "INSERT INTO s (x) VALUES ('after delete')",
            "UPDATE sqlite_sequence SET seq = 100 WHERE name = 's'",
            "INSERT INTO s (x) VALUES ('after update')",
            "UPDATE sqlite_sequence SET seq = seq + 5",
            "INSERT INTO u (y) VALUES ('after + 5')",
            "BEGIN",
            "DELETE FROM sqlite_sequence",
            "ROLLBACK",
            "INSERT INTO s (x) VALUES ('after rollback')",
        ]
        for sql in steps {
            let ours = try d.database.execute(sql), theirs = try d.oracle.run(sql)
            XCTAssertEqual(ours.changes, theirs.changes, sql)
            XCTAssertEqual(ours.lastInsertRowId, theirs.lastInsertRowId, sql)
            d.check("SELECT name, seq FROM sqlite_sequence ORDER BY name")
        }
        d.check("SELECT id, x FROM s ORDER BY id")
        d.check("SELECT id, y FROM u ORDER BY id")
    }
}
