import Foundation
import XCTest

@testable import DAO

/// `UPDATE OR REPLACE | IGNORE | ABORT | FAIL` (what Android's `updateWithOnConflict` writes),
/// and `INSERT OR FAIL`, against SQLite 3.40: the same rows, change counts and errors.
final class UpdateConflictTests: XCTestCase {
    private let setup = [
        "CREATE TABLE u (id INTEGER PRIMARY KEY, code TEXT UNIQUE, name TEXT NOT NULL DEFAULT 'anon', n INTEGER, UNIQUE (name, n))",
        "CREATE INDEX un ON u (n)",
        "INSERT INTO u VALUES (1, 'a', 'ann', 1), (2, 'b', 'bob', 2), (3, 'c', 'cy', 3), (4, NULL, 'dee', 4), (5, 'e', 'ann', 5)",
    ]

    private let cases = [
        "UPDATE OR IGNORE u SET code = 'a' WHERE id > 1",                 // every row clashes with row 1: none changes
        "UPDATE OR REPLACE u SET code = 'a' WHERE id = 3",                // deletes row 1
        "UPDATE OR REPLACE u SET code = 'b' WHERE id >= 3",               // a chain of replacements
        "UPDATE OR IGNORE u SET id = id + 1",                             // rowid clashes skipped
        "UPDATE OR REPLACE u SET id = id + 1 WHERE id < 4",               // rowid clashes replace
        "UPDATE OR IGNORE u SET name = NULL WHERE id < 3",                // NOT NULL: skipped
        "UPDATE OR REPLACE u SET name = NULL WHERE id = 2",               // NOT NULL: the default
        "UPDATE OR REPLACE u SET name = 'ann', n = 1 WHERE id = 2",       // a two-column UNIQUE
        "UPDATE OR ABORT u SET code = 'a' WHERE id = 2",
        "UPDATE OR FAIL u SET n = 7 WHERE id = 2",
        // FAIL keeps the rows the statement changed before the one that failed (ABORT does not).
        "UPDATE OR FAIL u SET n = n + 10, code = CASE id WHEN 3 THEN 'a' ELSE code END",
        "UPDATE OR ABORT u SET n = n + 10, code = CASE id WHEN 3 THEN 'a' ELSE code END",
        "INSERT OR FAIL INTO u (id, code, name, n) VALUES (10, 'x', 'x', 10), (11, 'a', 'y', 11), (12, 'z', 'z', 12)",
        "INSERT OR FAIL INTO u (id, code, name, n) VALUES (13, 'q', 'q', 13), (14, 'r', NULL, 14)",
        "UPDATE OR ROLLBACK u SET n = 8",
        "UPDATE OR NOTHING u SET n = 8",
    ]

    private func outcome(_ body: () throws -> SQLResult) -> String {
        do {
            return "changes \(try body().changes)"
        } catch SQLiteOracle.OracleError.sqlite(let message) {
            return message
        } catch DAOError.constraint(let message) {
            return message
        } catch DAOError.unsupported {
            return "unsupported"
        } catch {
            return "\(error)"
        }
    }

    func testUpdateOrGivesSQLitesRowsAndCounts() throws {
        for sql in cases {
            let temporary = try TemporaryStore()
            let db = try temporary.database
            let oracle = try SQLiteOracle()
            for statement in setup {
                try db.execute(statement)
                _ = try oracle.execute(statement)
            }
            let ours = outcome { try db.execute(sql) }
            let theirs = outcome { try oracle.run(sql) }
            switch sql {
            case "UPDATE OR NOTHING u SET n = 8":
                XCTAssertTrue(ours.contains("syntax"), "\(sql): \(ours)")
                continue
            default:
                XCTAssertEqual(ours, theirs, sql)
            }
            let all = "SELECT * FROM u ORDER BY id"
            XCTAssertEqual(try db.execute(all).rows, try oracle.execute(all), sql)
            let byIndex = "SELECT id FROM u WHERE n > 0 ORDER BY n, id"
            XCTAssertEqual(try db.execute(byIndex).rows, try oracle.execute(byIndex), "the index after \(sql)")
        }
    }

    /// OR FAIL on an AUTOINCREMENT table: the rows before the failure stay, the failing row's
    /// number is not used up (SQLite writes the sequence only when the statement ends).
    func testOrFailDoesNotUseUpTheFailingRowsNumber() throws {
        let d = try Differential()
        d.check("CREATE TABLE c (id INTEGER PRIMARY KEY AUTOINCREMENT, k TEXT NOT NULL UNIQUE)")
        d.check("INSERT INTO c (k) VALUES ('a'), ('b')")
        d.check("INSERT OR FAIL INTO c (k) VALUES ('a')")
        d.check("INSERT OR FAIL INTO c (k) VALUES ('c'), ('b'), ('d')")
        d.check("INSERT OR IGNORE INTO c (k) VALUES ('a')")
        d.check("INSERT INTO c (k) VALUES ('e')")
        d.check("SELECT id, k FROM c ORDER BY id")
        d.check("SELECT seq FROM sqlite_sequence WHERE name = 'c'")
        XCTAssertEqual(try d.database.execute("INSERT INTO c (k) VALUES ('f')").lastInsertRowId,
                       try d.oracle.run("INSERT INTO c (k) VALUES ('f')").lastInsertRowId)
    }

    /// OR ROLLBACK: a broken constraint rolls back and ends the open transaction (without one
    /// it is ABORT).
    func testOrRollbackEndsTheTransaction() throws {
        let d = try Differential()
        for sql in ["CREATE TABLE r (id INTEGER PRIMARY KEY, k TEXT UNIQUE NOT NULL)", "INSERT INTO r (k) VALUES ('a')"] { d.check(sql) }
        let steps = ["BEGIN", "INSERT INTO r (k) VALUES ('b')", "INSERT OR ROLLBACK INTO r (k) VALUES ('a')", "SELECT * FROM r ORDER BY id",
                     "BEGIN", "UPDATE r SET k = 'c'", "UPDATE OR ROLLBACK r SET k = NULL", "SELECT * FROM r ORDER BY id",
                     "INSERT OR ROLLBACK INTO r (k) VALUES ('d'), ('a')", "SELECT * FROM r ORDER BY id", "COMMIT"]
        for sql in steps {
            XCTAssertEqual(statementOutcome { try d.database.execute(sql).rows }, statementOutcome { try d.oracle.execute(sql) }, sql)
            XCTAssertEqual(d.database.inTransaction, d.oracle.inTransaction, "in a transaction after \(sql)")
        }
    }
}
