@testable import DAO
import Foundation
import LogStore
import XCTest

/// The index checkpoint (FORMAT.md "DAO index checkpoint"): attach loads the rowid orders and
/// indexes from it when it is current, and rebuilds them from the rows, saying why, when the
/// file is missing, damaged or stale. Either way the queries give the same rows.
final class IndexCheckpointTests: XCTestCase {
    private let queries = [
        "SELECT id, k, name FROM t ORDER BY id",
        "SELECT id FROM t WHERE k BETWEEN 10 AND 30 ORDER BY k DESC, id",
        "SELECT id, name FROM t WHERE name > 'n5' ORDER BY name LIMIT 7",
        "SELECT count(*) FROM t WHERE name = 'n7'",
    ]

    private func fill(_ db: SQLDatabase) throws {
        try db.execute("CREATE TABLE t (id INTEGER PRIMARY KEY, k INTEGER, name TEXT UNIQUE)")
        try db.execute("CREATE INDEX tk ON t (k DESC, name)")
        try db.execute("CREATE TABLE empty (a, b)")
        try db.execute("CREATE INDEX eb ON empty (b)")
        try db.execute("BEGIN")
        for i in 0..<500 { try db.execute("INSERT INTO t VALUES (?, ?, ?)", arguments: [.integer(Int64(i * 3)), .integer(Int64(i % 41)), .text("n\(i)")]) }
        try db.execute("COMMIT")
        try db.execute("DELETE FROM t WHERE id % 7 = 0")
    }

    private func answers(_ db: SQLDatabase) throws -> [[[DAOValue]]] {
        try queries.map { try db.execute($0).rows }
    }

    private var checkpointPath: (TemporaryStore) -> String { { $0.directory.appendingPathComponent(IndexCheckpointFile.name).path } }

    func testACurrentCheckpointIsLoadedWithoutReadingRows() throws {
        let temporary = try TemporaryStore()
        var db = try temporary.database
        try fill(db)
        let expected = try answers(db)
        try db.checkpoint()
        try temporary.reopen()
        db = try temporary.database
        XCTAssertEqual(db.indexReport, [])
        XCTAssertTrue(db.checkpointCurrent, "loaded from the checkpoint")
        XCTAssertEqual(try answers(db), expected)
        XCTAssertThrowsError(try db.execute("INSERT INTO t VALUES (1000, 1, 'n1')"), "the unique index came back from the file")
        // The first change makes it stale, in its own batch: the next attach rebuilds.
        try db.execute("INSERT INTO t VALUES (1000, 1, 'fresh')")
        let changed = try answers(db)
        try temporary.reopen()
        db = try temporary.database
        XCTAssertFalse(db.checkpointCurrent)
        XCTAssertEqual(db.indexReport.count, 1)
        XCTAssertTrue(db.indexReport[0].contains("older"), "\(db.indexReport)")
        XCTAssertEqual(try answers(db), changed)
    }

    func testAMissingCheckpointFileIsRebuiltFromTheRowsAndReported() throws {
        let temporary = try TemporaryStore()
        var db = try temporary.database
        try fill(db)
        let expected = try answers(db)
        try db.checkpoint()
        try temporary.reopen()
        try FileManager.default.removeItem(atPath: checkpointPath(temporary))
        db = try temporary.database
        XCTAssertFalse(db.checkpointCurrent)
        XCTAssertTrue(db.indexReport.first?.contains("missing") == true, "\(db.indexReport)")
        XCTAssertEqual(try answers(db), expected)
    }

    func testACorruptCheckpointFileIsRebuiltFromTheRowsAndReported() throws {
        let temporary = try TemporaryStore()
        var db = try temporary.database
        try fill(db)
        let expected = try answers(db)
        try db.checkpoint()
        try temporary.reopen()
        let path = checkpointPath(temporary)
        var bytes = try [UInt8](Data(contentsOf: URL(fileURLWithPath: path)))
        for offset in [bytes.count / 3, 40, bytes.count - 1] {
            var damaged = bytes
            damaged[offset] ^= 0x41
            try Data(damaged).write(to: URL(fileURLWithPath: path))
            try temporary.reopen()
            db = try temporary.database
            XCTAssertFalse(db.checkpointCurrent, "byte \(offset)")
            XCTAssertTrue(db.indexReport.first?.contains("unreadable") == true, "\(db.indexReport)")
            XCTAssertEqual(try answers(db), expected, "byte \(offset)")
        }
        // Truncated.
        bytes.removeLast(bytes.count / 2)
        try Data(bytes).write(to: URL(fileURLWithPath: path))
        try temporary.reopen()
        db = try temporary.database
        XCTAssertTrue(db.indexReport.first?.contains("unreadable") == true, "\(db.indexReport)")
        XCTAssertEqual(try answers(db), expected)
    }

    /// A file from another checkpoint (its stamp is not the record's) is not used.
    func testACheckpointFileOfAnotherCheckpointIsNotUsed() throws {
        let temporary = try TemporaryStore()
        var db = try temporary.database
        try fill(db)
        try db.checkpoint()
        let path = checkpointPath(temporary)
        let old = try Data(contentsOf: URL(fileURLWithPath: path))
        try db.execute("UPDATE t SET k = k + 100 WHERE id < 300")
        let expected = try answers(db)
        try db.checkpoint()
        try temporary.reopen()
        try old.write(to: URL(fileURLWithPath: path))
        db = try temporary.database
        XCTAssertTrue(db.indexReport.first?.contains("not the checkpoint") == true, "\(db.indexReport)")
        XCTAssertEqual(try answers(db), expected)
    }

    func testCheckpointIsRefusedInATransactionAndSkippedWhenCurrent() throws {
        let temporary = try TemporaryStore()
        let db = try temporary.database
        try fill(db)
        try db.execute("BEGIN")
        XCTAssertThrowsError(try db.checkpoint())
        try db.execute("ROLLBACK")
        try db.checkpoint()
        let path = checkpointPath(temporary)
        let first = try Data(contentsOf: URL(fileURLWithPath: path))
        try db.checkpoint()
        XCTAssertEqual(try Data(contentsOf: URL(fileURLWithPath: path)), first, "nothing changed: not rewritten")
    }
}
