@testable import DAO
import Foundation
import LogStore
import XCTest

/// `SQLDatabase.observe` and `Dao.observe`: the current result first, then one element after
/// commits touching the query's table (coalesced), none for other tables, rolled back or
/// uncommitted changes; cancellation ends iteration and unregisters.
final class ObservationTests: XCTestCase {
    var store: LogStore!
    var db: SQLDatabase!

    override func setUpWithError() throws {
        let store = try LogStore(directory: try temporaryDirectory())
        self.store = store
        // Teardown blocks run last-added first: the store closes before its directory goes.
        addTeardownBlock { try? store.close() }
        db = try SQLDatabase.attached(to: store)
        try db.execute("CREATE TABLE t(id INTEGER PRIMARY KEY, name TEXT)")
        try db.execute("CREATE TABLE other(x)")
        try db.execute("INSERT INTO t(name) VALUES ('ann')")
    }

    func names(_ result: SQLResult?) -> [String] {
        (result?.rows ?? []).compactMap { if case .text(let name) = $0[0] { return name } else { return nil } }
    }

    func nextResult(_ iterator: inout SQLObservation.Iterator) async throws -> SQLResult? {
        try await iterator.next()
    }

    func testFirstElementIsTheCurrentResultThenOnlyRelevantCommitsCount() async throws {
        var iterator = db.observe("SELECT name FROM t WHERE id > ? ORDER BY id", arguments: [0]).makeAsyncIterator()
        let result1 = try await nextResult(&iterator)
        XCTAssertEqual(names(result1), ["ann"])
        let signal = try XCTUnwrap(iterator.registration.signal)
        XCTAssertFalse(signal.isPending)

        // Another table's commit is not a change of this query's table.
        try db.execute("INSERT INTO other VALUES (1)")
        XCTAssertFalse(signal.isPending, "a commit of another table")
        // Nor is an uncommitted or rolled back change.
        try db.execute("BEGIN")
        try db.execute("INSERT INTO t(name) VALUES ('never')")
        XCTAssertFalse(signal.isPending, "not committed yet")
        try db.execute("ROLLBACK")
        XCTAssertFalse(signal.isPending, "rolled back")

        // Three commits before the consumer looks: one element with all of them.
        try db.execute("INSERT INTO t(name) VALUES ('bob')")
        try db.execute("UPDATE t SET name = 'ann2' WHERE id = 1")
        try db.execute("BEGIN")
        try db.execute("INSERT INTO t(name) VALUES ('cy')")
        try db.execute("COMMIT")
        XCTAssertTrue(signal.isPending)
        let result2 = try await nextResult(&iterator)
        XCTAssertEqual(names(result2), ["ann2", "bob", "cy"])
        XCTAssertFalse(signal.isPending, "the three commits were coalesced into that one element")

        // A delete and a schema change of the table count too.
        try db.execute("DELETE FROM t WHERE name = 'bob'")
        let result3 = try await nextResult(&iterator)
        XCTAssertEqual(names(result3), ["ann2", "cy"])
        try db.execute("ALTER TABLE t ADD COLUMN extra")
        XCTAssertTrue(signal.isPending)
    }

    func testAnElementArrivesWhileTheConsumerWaits() async throws {
        let observation = db.observe("SELECT count(*) FROM t")
        let (elements, continuation) = AsyncStream.makeStream(of: Int64.self)
        let consumer = Task {
            for try await result in observation {
                if case .integer(let n) = result.rows[0][0] { continuation.yield(n) }
            }
            continuation.finish()
        }
        var received = elements.makeAsyncIterator()
        let first = await received.next()
        XCTAssertEqual(first, 1)
        // The consumer is waiting (or about to): a commit from another thread wakes it.
        let database = db!
        Thread.detachNewThread { _ = try? database.execute("INSERT INTO t(name) VALUES ('from a thread')") }
        let second = await received.next()
        XCTAssertEqual(second, 2)

        // Cancelling ends the iteration and removes its commit observer.
        consumer.cancel()
        try await consumer.value
        let end = await received.next()
        XCTAssertNil(end)
        XCTAssertEqual(CommitObservers.shared.count(for: db), 0)
    }

    func testNonQueriesAndMissingTablesThrowFromIteration() async throws {
        var update = db.observe("UPDATE t SET name = 'x'").makeAsyncIterator()
        do {
            _ = try await update.next()
            XCTFail("an UPDATE cannot be observed")
        } catch DAOError.unsupported {}
        var missing = db.observe("SELECT * FROM nowhere").makeAsyncIterator()
        do {
            _ = try await missing.next()
            XCTFail("no such table")
        } catch DAOError.noSuchTable {}
    }

    func testDaoObservationDeliversDecodedRecords() async throws {
        let dao = try store.dao(for: User.self)
        var alice = User(id: nil, name: "alice", color: 1, timestamp: 10)
        try dao.create(&alice)
        let observation = try dao.observe(dao.queryBuilder().where { $0.gt("timestamp", 5) }.orderBy("timestamp"))
        var iterator = observation.makeAsyncIterator()
        var records = try await iterator.next()
        XCTAssertEqual(records?.map(\.name), ["alice"])
        var bob = User(id: nil, name: "bob", color: 2, timestamp: 20)
        try dao.create(&bob)
        var early = User(id: nil, name: "early", color: 3, timestamp: 1)
        try dao.create(&early)
        records = try await iterator.next()
        XCTAssertEqual(records?.map(\.name), ["alice", "bob"], "filtered and ordered as the builder says")
        try db.execute("INSERT INTO other VALUES (2)")
        XCTAssertFalse(try XCTUnwrap(iterator.results.registration.signal).isPending)
        alice.timestamp = 30
        _ = try dao.update(alice)
        records = try await iterator.next()
        XCTAssertEqual(records?.map(\.name), ["bob", "alice"])
    }
}
