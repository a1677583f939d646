@testable import DAO
import Foundation
import LogStore
import XCTest

/// Transactions of many rows: their undo entries hold no row values (UndoLog.swift) and their
/// commit goes to the store a chunk at a time (CommitBatch, `LogStore.write(streaming:)`).
/// Checked against SQLite running the same statements.
final class LargeTransactionTests: XCTestCase {
    private let schema = [
        "CREATE TABLE t (id INTEGER PRIMARY KEY, name TEXT, n INTEGER, note TEXT)",
        "CREATE INDEX t_name ON t (name)",
        "CREATE UNIQUE INDEX t_n ON t (n)",
    ]

    /// Queries through the rowid order and each index.
    private let queries = [
        "SELECT * FROM t ORDER BY id",
        "SELECT id, name FROM t ORDER BY name, id",
        "SELECT n, id FROM t WHERE n BETWEEN 1000 AND 40000 ORDER BY n",
        "SELECT count(*), sum(n), min(name), max(name) FROM t",
        "SELECT id FROM t WHERE name = 'name-77' ORDER BY id",
    ]

    /// A transaction's statements: inserts, updates of indexed columns, deletes of committed
    /// and of new rows, and a statement that fails half way (its own rows undone, the
    /// transaction's kept).
    private func transaction(_ diff: Differential, rows: Int, spilling: Bool) {
        // A small budget: the transaction's rows go to the scratch file after the first 64 KiB.
        if spilling, let table = try? diff.database.table(named: "t") { table.overlay.memoryBudget = 64 << 10 }
        diff.run(["BEGIN"])
        for i in 0..<rows {
            diff.run(["INSERT INTO t VALUES (\(10_000 + i), 'name-\(i % 97)', \(50_000 + i), 'inserted \(i) \(String(repeating: "-", count: 150))')"])
        }
        diff.run(["UPDATE t SET name = name || '-u', n = n + 100000 WHERE id % 3 = 0",
                  "DELETE FROM t WHERE id % 7 = 0",
                  "UPDATE t SET note = NULL WHERE id BETWEEN 2000 AND 12000"])
        // Fails on its last row (n already taken): the rows it inserted before are undone.
        diff.check("INSERT INTO t SELECT id + 100000, name, n + 1000000, note FROM t WHERE id < 500 UNION ALL SELECT 999999, 'x', 50001, 'dup'")
    }

    private func setUp(_ diff: Differential, committed: Int) {
        diff.run(schema)
        diff.run(["BEGIN"])
        for i in 0..<committed { diff.run(["INSERT INTO t VALUES (\(i), 'name-\(i % 89)', \(i * 3), 'note \(i)')"]) }
        diff.run(["COMMIT"])
    }

    func testRolledBackTransactionLeavesEveryIndexAsItWas() throws {
        for spilling in [false, true] {
            let diff = try Differential()
            setUp(diff, committed: 3_000)
            transaction(diff, rows: 9_000, spilling: spilling)
            for query in queries { diff.check(query) }
            if spilling { XCTAssertGreaterThan(try diff.database.table(named: "t").overlay.arenaBytes.file, 1_000_000) }
            diff.run(["ROLLBACK"])
            for query in queries { diff.check(query) }
            XCTAssertEqual(try diff.database.execute("SELECT count(*) FROM t").rows, [[.integer(3_000)]])
        }
    }

    func testLargeTransactionIsCommittedWholeAndSurvivesACrash() throws {
        for spilling in [false, true] { try commitAndCrashCopy(spilling: spilling) }
    }

    private func commitAndCrashCopy(spilling: Bool) throws {
        let diff = try Differential()
        setUp(diff, committed: 3_000)
        transaction(diff, rows: 9_000, spilling: spilling)
        if spilling { XCTAssertGreaterThan(try diff.database.table(named: "t").overlay.arenaBytes.file, 1_000_000) }
        diff.run(["COMMIT"])
        for query in queries { diff.check(query) }
        let expected = try queries.map { try diff.database.execute($0).rows }

        // A copy taken while the store is open, as a kill -9 leaves it: the commit's batch is
        // read back from the segments.
        let copy = FileManager.default.temporaryDirectory.appendingPathComponent("dao-crash-\(UUID())")
        defer { try? FileManager.default.removeItem(at: copy) }
        try FileManager.default.copyItem(at: diff.temporary.directory, to: copy)
        let store = try LogStore(directory: copy)
        let reopened = try SQLDatabase.attached(to: store)
        XCTAssertEqual(try queries.map { try reopened.execute($0).rows }, expected)
        try store.close()
    }

    func testCommitCutShortByACrashLeavesNoneOfTheTransaction() throws {
        let temporary = try TemporaryStore()
        let db = try temporary.database
        for sql in schema { try db.execute(sql) }
        try db.execute("INSERT INTO t VALUES (1, 'one', 1, NULL)")
        try temporary.store.sync()
        let segmentsBefore = try segmentLengths(temporary.directory)
        try db.execute("BEGIN")
        for i in 2..<6_000 { try db.execute("INSERT INTO t VALUES (?, ?, ?, ?)", arguments: [.integer(Int64(i)), .text("n\(i)"), .integer(Int64(i)), .text("note")]) }
        try db.execute("COMMIT")
        // The commit is one batch after what was there: cut the log inside it, in three places.
        let after = try segmentLengths(temporary.directory)
        guard let (name, start) = segmentsBefore.max(by: { $0.key < $1.key }), let end = after[name], end > start + 1000 else {
            return XCTFail("the commit's batch is not where expected: \(segmentsBefore) -> \(after)")
        }
        for cut in [start + 10, (start + end) / 2, end - 3] {
            let copy = FileManager.default.temporaryDirectory.appendingPathComponent("dao-cut-\(UUID())")
            defer { try? FileManager.default.removeItem(at: copy) }
            try FileManager.default.copyItem(at: temporary.directory, to: copy)
            let handle = try FileHandle(forWritingTo: copy.appendingPathComponent(name))
            try handle.truncate(atOffset: UInt64(cut))
            try handle.close()
            let store = try LogStore(directory: copy)
            let reopened = try SQLDatabase.attached(to: store)
            XCTAssertEqual(try reopened.execute("SELECT id, name FROM t ORDER BY id").rows, [[.integer(1), .text("one")]], "cut at \(cut)")
            XCTAssertEqual(try reopened.execute("SELECT id FROM t WHERE name > 'a' ORDER BY name").rows, [[.integer(1)]], "cut at \(cut)")
            try store.close()
        }
    }

    /// A store with a default key keeps a big transaction's rows in memory: no plaintext row
    /// reaches the disk outside the store's encrypted records.
    func testAnEncryptedStoreNeverSpills() throws {
        var options = LogStore.Options()
        options.encryption = .init(key: [UInt8](repeating: 7, count: 32), keyID: 1)
        let temporary = try TemporaryStore(options: options)
        let db = try temporary.database
        for sql in schema { try db.execute(sql) }
        try db.table(named: "t").overlay.memoryBudget = 1_000
        try db.execute("BEGIN")
        for i in 0..<3_000 { try db.execute("INSERT INTO t VALUES (?, 'secret-name', ?, 'secret note')", arguments: [.integer(Int64(i)), .integer(Int64(i))]) }
        XCTAssertFalse(try db.table(named: "t").overlay.isSpilling)
        XCTAssertGreaterThan(try db.table(named: "t").overlay.arenaBytes.heap, 50_000)
        try db.execute("COMMIT")
        XCTAssertEqual(try db.execute("SELECT count(*) FROM t WHERE note = 'secret note'").rows, [[.integer(3_000)]])
        // Nothing in the store's folder holds the plaintext.
        for name in try FileManager.default.contentsOfDirectory(atPath: temporary.directory.path) {
            var isDirectory: ObjCBool = false
            let path = temporary.directory.appendingPathComponent(name).path
            guard FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory), !isDirectory.boolValue else { continue }
            let bytes = try Data(contentsOf: URL(fileURLWithPath: path))
            XCTAssertNil(bytes.range(of: Data("secret note".utf8)), name)
        }
    }

    /// Each segment file's content length (its file size once synced and trimmed; the active
    /// one's written length as the sync left it).
    private func segmentLengths(_ directory: URL) throws -> [String: Int] {
        var lengths: [String: Int] = [:]
        for name in try FileManager.default.contentsOfDirectory(atPath: directory.path) where name.hasSuffix(".seg") {
            let bytes = try Data(contentsOf: directory.appendingPathComponent(name))
            // Content ends where the reserved zero tail starts.
            var end = bytes.count
            while end > 0, bytes[end - 1] == 0 { end -= 1 }
            lengths[name] = end
        }
        return lengths
    }
}
