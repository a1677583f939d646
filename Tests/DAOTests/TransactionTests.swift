@testable import DAO
import XCTest

/// BEGIN/COMMIT/ROLLBACK: reads see own writes, rollback restores, commit persists.
final class TransactionTests: XCTestCase {
    func testRollbackRestoresAndCommitPersists() throws {
        let temporary = try TemporaryStore()
        var db = try temporary.database
        try db.execute("CREATE TABLE t (id INTEGER PRIMARY KEY, v TEXT UNIQUE)")
        try db.execute("INSERT INTO t (v) VALUES ('a')")
        try db.execute("BEGIN")
        XCTAssertTrue(db.inTransaction)
        try db.execute("INSERT INTO t (v) VALUES ('b')")
        try db.execute("UPDATE t SET v = 'A' WHERE id = 1")
        try db.execute("CREATE TABLE u (x)")
        try db.execute("INSERT INTO u VALUES (1)")
        XCTAssertEqual(try db.execute("SELECT v FROM t ORDER BY id").rows, [[.text("A")], [.text("b")]])
        XCTAssertEqual(try db.execute("SELECT id FROM t WHERE v = 'b'").rows, [[.integer(2)]])
        // A failing statement inside the transaction undoes only itself.
        XCTAssertThrowsError(try db.execute("INSERT INTO t (v) VALUES ('c'), ('b')"))
        XCTAssertEqual(try db.execute("SELECT count(*) FROM t").rows, [[.integer(2)]])
        try db.execute("ROLLBACK")
        XCTAssertFalse(db.inTransaction)
        XCTAssertEqual(try db.execute("SELECT id, v FROM t").rows, [[.integer(1), .text("a")]])
        XCTAssertEqual(try db.execute("SELECT id FROM t WHERE v = 'b'").rows, [])
        XCTAssertThrowsError(try db.execute("SELECT * FROM u"))

        try db.execute("BEGIN TRANSACTION")
        try db.execute("INSERT INTO t (v) VALUES ('c')")
        try db.execute("DELETE FROM t WHERE v = 'a'")
        try db.execute("CREATE TABLE w (x)")
        try db.execute("COMMIT")
        XCTAssertThrowsError(try db.execute("COMMIT"))
        XCTAssertThrowsError(try db.execute("ROLLBACK"))
        try temporary.reopen()
        db = try temporary.database
        XCTAssertEqual(try db.execute("SELECT id, v FROM t").rows, [[.integer(2), .text("c")]])
        XCTAssertEqual(try db.execute("SELECT count(*) FROM w").rows, [[.integer(0)]])
    }

    func testOtherThreadsWaitForTheTransaction() throws {
        let temporary = try TemporaryStore()
        let db = try temporary.database
        try db.execute("CREATE TABLE t (v)")
        try db.execute("BEGIN")
        try db.execute("INSERT INTO t VALUES (1)")
        let done = expectation(description: "other thread ran")
        nonisolated(unsafe) var seen: [[DAOValue]] = []
        Thread.detachNewThread {
            seen = (try? db.execute("SELECT count(*) FROM t").rows) ?? []
            done.fulfill()
        }
        Thread.sleep(forTimeInterval: 0.1)
        try db.execute("INSERT INTO t VALUES (2)")
        try db.execute("COMMIT")
        wait(for: [done], timeout: 5)
        XCTAssertEqual(seen, [[.integer(2)]], "the other thread ran after COMMIT")
    }

    func testNestedBeginFails() throws {
        let temporary = try TemporaryStore()
        let db = try temporary.database
        try db.execute("BEGIN")
        XCTAssertThrowsError(try db.execute("BEGIN"))
        try db.execute("ROLLBACK")
    }
}
