import Foundation
import XCTest

@testable import DAO

/// SAVEPOINT, RELEASE and ROLLBACK TO (GRDB's `inSavepoint`, FMDB's nested transactions)
/// against SQLite 3.40: the same rows and errors after every statement, and what a savepoint
/// that began the transaction commits survives a reopen.
final class SavepointTests: XCTestCase {
    private let script = [
        "CREATE TABLE t (id INTEGER PRIMARY KEY, v TEXT UNIQUE)",
        "CREATE INDEX tv ON t (v DESC)",
        "INSERT INTO t VALUES (1, 'a')",
        // A savepoint outside a transaction begins one; nested ones roll back and release.
        "SAVEPOINT outer_sp",
        "INSERT INTO t VALUES (2, 'b')",
        "SAVEPOINT inner_sp",
        "INSERT INTO t VALUES (3, 'c')",
        "UPDATE t SET v = 'A' WHERE id = 1",
        "ROLLBACK TO inner_sp",
        "INSERT INTO t VALUES (4, 'd')",
        "ROLLBACK TRANSACTION TO SAVEPOINT inner_sp",
        "INSERT INTO t VALUES (5, 'e')",
        "SAVEPOINT Inner_SP",
        "DELETE FROM t WHERE id = 2",
        "RELEASE inner_sp",
        "INSERT INTO t VALUES (6, 'a')",            // fails (UNIQUE); the transaction goes on
        "RELEASE SAVEPOINT no_such",
        "ROLLBACK TO no_such",
        "BEGIN",                                     // within a transaction: refused
        "SAVEPOINT again",
        "CREATE TABLE u (x)",
        "INSERT INTO u VALUES (1)",
        "ROLLBACK TO again",                         // the table goes too
        "SELECT count(*) FROM t",
        "RELEASE outer_sp",                          // commits
        "RELEASE outer_sp",                          // nothing open
        // Inside BEGIN: releasing every savepoint does not commit; ROLLBACK ends it all.
        "BEGIN",
        "SAVEPOINT s1",
        "INSERT INTO t VALUES (7, 'g')",
        "RELEASE s1",
        "SAVEPOINT s2",
        "INSERT INTO t VALUES (8, 'h')",
        "ROLLBACK",
        "ROLLBACK TO s2",
        "BEGIN",
        "SAVEPOINT s3",
        "INSERT INTO t VALUES (9, 'i')",
        "ROLLBACK TO s3",
        "INSERT INTO t VALUES (10, 'j')",
        "COMMIT",
    ]

    func testSavepointsGiveSQLitesRows() throws {
        let temporary = try TemporaryStore()
        let db = try temporary.database
        let oracle = try SQLiteOracle()
        for sql in script {
            XCTAssertEqual(statementOutcome { try db.execute(sql).rows }, statementOutcome { try oracle.execute(sql) }, sql)
            XCTAssertEqual(db.inTransaction, oracle.inTransaction, "in a transaction after \(sql)")
            let all = "SELECT * FROM t ORDER BY id"
            XCTAssertEqual(try db.execute(all).rows, try oracle.execute(all), "after \(sql)")
        }
        try temporary.reopen()
        let reopened = try temporary.database
        XCTAssertEqual(try reopened.execute("SELECT * FROM t ORDER BY id").rows, try oracle.execute("SELECT * FROM t ORDER BY id"))
        XCTAssertEqual(try reopened.execute("SELECT v FROM t WHERE v > 'c' ORDER BY v DESC").rows,
                       try oracle.execute("SELECT v FROM t WHERE v > 'c' ORDER BY v DESC"), "the index after a reopen")
        XCTAssertThrowsError(try reopened.execute("SELECT * FROM u"), "the table rolled back to its savepoint is not there")
    }
}
