@testable import DAO
import LogStore
import XCTest

/// VACUUM and ANALYZE, which Android's and iOS's frameworks and apps send: what each does here,
/// and SQLite's answers and errors for each form (through the oracle).
final class MaintenanceStatementTests: XCTestCase {
    /// VACUUM compacts the store: the bytes deleted and replaced rows left are gone after it,
    /// and every row that stays reads as before, also after a reopen.
    func testVacuumDropsWhatDeletedRowsLeft() throws {
        let temporary = try TemporaryStore()
        let database = try temporary.database
        try database.execute("CREATE TABLE notes (id INTEGER PRIMARY KEY, body TEXT)")
        let body = String(repeating: "x", count: 400)
        try database.execute("BEGIN")
        for id in 1...3_000 { try database.execute("INSERT INTO notes VALUES (?, ?)", arguments: [.integer(Int64(id)), .text(body + "\(id)")]) }
        try database.execute("COMMIT")
        try database.execute("DELETE FROM notes WHERE id % 10 <> 0")
        let before = temporary.store.statistics
        XCTAssertGreaterThan(before.deadBytes, 1_000_000)
        try database.execute("VACUUM")
        let after = temporary.store.statistics
        XCTAssertLessThan(after.deadBytes, before.deadBytes / 10, "VACUUM left \(after.deadBytes) dead bytes of \(before.deadBytes)")
        var length = 0
        for id in stride(from: 10, through: 3_000, by: 10) { length += 400 + String(id).count }
        XCTAssertEqual(try database.execute("SELECT count(*), sum(length(body)) FROM notes").rows, [[.integer(300), .integer(Int64(length))]])
        try temporary.reopen()
        let reopened = try temporary.database
        XCTAssertEqual(try reopened.execute("SELECT body FROM notes WHERE id = 2990").rows, [[.text(body + "2990")]])
        XCTAssertEqual(try reopened.execute("SELECT count(*) FROM notes").rows, [[.integer(300)]])
    }

    /// Each form of VACUUM and ANALYZE succeeds or fails as in SQLite, with its message.
    func testFormsAndErrorsAsSQLite() throws {
        let d = try Differential()
        d.run(["CREATE TABLE t (a)", "CREATE INDEX ti ON t (a)", "INSERT INTO t VALUES (1), (2)"])
        for sql in ["VACUUM", "VACUUM main", "VACUUM temp", "VACUUM nosuch", "ANALYZE", "ANALYZE t", "ANALYZE main", "ANALYZE main.t",
                    "ANALYZE ti", "ANALYZE main.ti", "ANALYZE nosuch", "ANALYZE other.t"] {
            let expected = statementOutcome { try d.oracle.execute(sql) }
            let actual = statementOutcome { try d.database.execute(sql).rows }
            XCTAssertEqual(actual, expected, sql)
        }
        // Inside a transaction VACUUM is refused and the transaction goes on.
        for engine in [{ (sql: String) in try d.oracle.execute(sql) }, { (sql: String) in try d.database.execute(sql).rows }] {
            _ = try engine("BEGIN")
            _ = try engine("INSERT INTO t VALUES (3)")
            XCTAssertEqual(statementOutcome { try engine("VACUUM") }, "cannot VACUUM from within a transaction")
            _ = try engine("COMMIT")
        }
        d.check("SELECT a FROM t ORDER BY a")
        XCTAssertThrowsError(try d.database.execute("VACUUM INTO '/tmp/copy.db'")) { error in
            guard case DAOError.unsupported("VACUUM INTO") = error else { return XCTFail("\(error)") }
        }
    }
}
