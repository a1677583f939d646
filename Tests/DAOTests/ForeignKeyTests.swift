import Foundation
import XCTest

@testable import DAO

/// FOREIGN KEY and REFERENCES clauses are kept and listed, not enforced: SQLite's behaviour
/// with `PRAGMA foreign_keys` off, its default (Room's `@ForeignKey` and hand-written schemas
/// declare them). Turning enforcement on is refused while one is declared.
final class ForeignKeyTests: XCTestCase {
    private let schema = [
        "CREATE TABLE p (id INTEGER PRIMARY KEY, code UNIQUE)",
        "CREATE TABLE c (a INTEGER REFERENCES p(id) ON DELETE CASCADE, b, d, "
            + "CONSTRAINT fk_bd FOREIGN KEY (b, d) REFERENCES p (code, id) ON UPDATE SET NULL DEFERRABLE INITIALLY DEFERRED, "
            + "FOREIGN KEY (d) REFERENCES p MATCH FULL)",
        "INSERT INTO p VALUES (1, 'x')",
        "INSERT INTO c VALUES (1, 'x', 1), (99, 'orphan', 42)",   // not enforced: orphans go in
        "DELETE FROM p WHERE id = 1",                               // no cascade
        "ALTER TABLE c ADD COLUMN e REFERENCES p",
        "CREATE TABLE bad (x, FOREIGN KEY (y) REFERENCES p)",
        "CREATE TABLE bad (x, y, FOREIGN KEY (x, y) REFERENCES p (id))",
        "ALTER TABLE c DROP COLUMN d",
        "ALTER TABLE c RENAME COLUMN b TO bb",
        "ALTER TABLE p RENAME COLUMN code TO kode",
        "ALTER TABLE p RENAME TO parent",
        "PRAGMA foreign_keys",
    ]

    func testForeignKeysAreKeptListedAndNotEnforced() throws {
        let temporary = try TemporaryStore()
        let oracle = try SQLiteOracle()
        for sql in schema {
            XCTAssertEqual(statementOutcome { try temporary.database.execute(sql).rows }, statementOutcome { try oracle.execute(sql) }, sql)
        }
        let queries = ["PRAGMA foreign_key_list(c)", "SELECT * FROM c ORDER BY a", "SELECT * FROM parent"]
        for sql in queries { XCTAssertEqual(try temporary.database.execute(sql).rows, try oracle.execute(sql), sql) }
        try temporary.reopen()
        for sql in queries { XCTAssertEqual(try temporary.database.execute(sql).rows, try oracle.execute(sql), "after reopen: \(sql)") }
        XCTAssertEqual(try temporary.database.execute("SELECT sql FROM sqlite_master WHERE name = 'c'").rows, [[.text(
            "CREATE TABLE \"c\" (\"a\" INTEGER REFERENCES \"parent\" (\"id\") ON DELETE CASCADE, \"bb\", \"d\", \"e\" REFERENCES \"parent\", "
            + "FOREIGN KEY (\"bb\", \"d\") REFERENCES \"parent\" (\"kode\", \"id\") ON UPDATE SET NULL DEFERRABLE INITIALLY DEFERRED, "
            + "FOREIGN KEY (\"d\") REFERENCES \"parent\")")]])

        // Enforcement is not there: turning it on is refused while a foreign key is declared.
        let db = try temporary.database
        XCTAssertThrowsError(try db.execute("PRAGMA foreign_keys = ON")) { error in
            guard case DAOError.unsupported = error else { return XCTFail("\(error)") }
        }
        XCTAssertEqual(try db.execute("PRAGMA foreign_keys").rows, [[.integer(0)]])
        try db.execute("DROP TABLE c")
        try db.execute("PRAGMA foreign_keys = ON")
        XCTAssertThrowsError(try db.execute("CREATE TABLE c2 (a REFERENCES parent)")) { error in
            guard case DAOError.unsupported = error else { return XCTFail("\(error)") }
        }
        XCTAssertEqual(try db.execute("PRAGMA foreign_keys").rows, [[.integer(1)]])
    }
}
