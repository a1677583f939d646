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
        // The first change makes it stale, in its own batch: an attach after a crash (here a
        // copy of the directory taken while the store is open) rebuilds from the rows.
        try db.execute("INSERT INTO t VALUES (1000, 1, 'fresh')")
        let changed = try answers(db)
        let crashed = FileManager.default.temporaryDirectory.appendingPathComponent("dao-crashed-\(UUID())")
        defer { try? FileManager.default.removeItem(at: crashed) }
        try FileManager.default.copyItem(at: temporary.directory, to: crashed)
        try? FileManager.default.removeItem(at: crashed.appendingPathComponent("LOCK"))
        let store = try LogStore(directory: crashed)
        defer { try? store.close() }
        let reopened = try SQLDatabase.attached(to: store)
        XCTAssertFalse(reopened.checkpointCurrent)
        XCTAssertEqual(reopened.indexReport.count, 1)
        XCTAssertTrue(reopened.indexReport.first?.contains("older") == true, "\(reopened.indexReport)")
        XCTAssertEqual(try answers(reopened), changed)
    }

    /// `checkpoint()` also writes the store's index snapshot, so the close that follows has
    /// nothing to write (the snapshot file is the same file, not a new one renamed over it) and
    /// the next open uses it.
    func testCheckpointWritesTheStoresSnapshotAndCloseKeepsIt() throws {
        let temporary = try TemporaryStore()
        var db = try temporary.database
        try fill(db)
        let expected = try answers(db)
        let snapshot = temporary.directory.appendingPathComponent("index.snapshot").path
        try db.checkpoint()
        let written = try FileManager.default.attributesOfItem(atPath: snapshot)
        let inode = try XCTUnwrap(written[.systemFileNumber] as? UInt64)
        try temporary.reopen()
        let kept = try FileManager.default.attributesOfItem(atPath: snapshot)
        XCTAssertEqual(kept[.systemFileNumber] as? UInt64, inode, "close did not replace the snapshot checkpoint() wrote")
        XCTAssertFalse(temporary.store.recoveryReport.contains { $0.contains("snapshot") }, "\(temporary.store.recoveryReport)")
        db = try temporary.database
        XCTAssertTrue(db.checkpointCurrent)
        XCTAssertEqual(try answers(db), expected)
        // A write after the checkpoint: close writes a new snapshot (a new file), and it holds it.
        try db.execute("INSERT INTO t VALUES (5000, 3, 'late')")
        try temporary.reopen()
        let rewritten = try FileManager.default.attributesOfItem(atPath: snapshot)
        XCTAssertNotEqual(rewritten[.systemFileNumber] as? UInt64, inode)
        db = try temporary.database
        XCTAssertEqual(try db.execute("SELECT name FROM t WHERE id = 5000").rows, [[.text("late")]])
    }

    func testClosingTheStoreWritesTheCheckpoint() throws {
        let temporary = try TemporaryStore()
        var db = try temporary.database
        try fill(db)
        let expected = try answers(db)
        try temporary.reopen()
        db = try temporary.database
        XCTAssertTrue(db.checkpointCurrent, "the close wrote it, the attach loaded it")
        XCTAssertEqual(db.indexReport, [])
        XCTAssertEqual(try answers(db), expected)
        // An open transaction at close is not checkpointed (its changes are not the tables').
        try db.execute("BEGIN")
        try db.execute("DELETE FROM t WHERE id < 100")
        try temporary.reopen()
        db = try temporary.database
        XCTAssertEqual(try answers(db), expected)
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
        let path = checkpointPath(temporary)
        for offset in [-3, 40, -1] {
            // Closing writes a fresh checkpoint when the last attach rebuilt: damage that one.
            try temporary.reopen()
            var damaged = try [UInt8](Data(contentsOf: URL(fileURLWithPath: path)))
            damaged[offset == -1 ? damaged.count - 1 : (offset == -3 ? damaged.count / 3 : offset)] ^= 0x41
            try Data(damaged).write(to: URL(fileURLWithPath: path))
            db = try temporary.database
            XCTAssertFalse(db.checkpointCurrent, "byte \(offset)")
            XCTAssertTrue(db.indexReport.first?.contains("unreadable") == true, "\(db.indexReport)")
            XCTAssertEqual(try answers(db), expected, "byte \(offset)")
        }
        // Truncated.
        try temporary.reopen()
        var bytes = try [UInt8](Data(contentsOf: URL(fileURLWithPath: path)))
        bytes.removeLast(bytes.count / 2)
        try Data(bytes).write(to: URL(fileURLWithPath: path))
        db = try temporary.database
        XCTAssertTrue(db.indexReport.first?.contains("unreadable") == true, "\(db.indexReport)")
        XCTAssertEqual(try answers(db), expected)
    }

    /// The file is served in place, so its structure is checked even when its checksum holds
    /// (a file rewritten by something else with a fresh checksum): rowids out of order make
    /// attach rebuild from the rows, never read past the mapping or give wrong rows.
    func testAChecksummedFileWithRowidsOutOfOrderIsRebuiltFromTheRows() throws {
        let temporary = try TemporaryStore()
        var db = try temporary.database
        try fill(db)
        let expected = try answers(db)
        try db.checkpoint()
        try temporary.reopen()
        let path = checkpointPath(temporary)
        var bytes = try [UInt8](Data(contentsOf: URL(fileURLWithPath: path)))
        func u32(_ at: Int) -> Int { (0..<4).reduce(0) { $0 | Int(bytes[at + $1]) << (8 * $1) } }
        // Find table t's rowids (FORMAT.md "DAO index checkpoint") and make the first the largest.
        // The first table (lowest key space) is t: u32 space, u32 name length, name, u64 count.
        let length = u32(24 + 4)
        XCTAssertEqual(String(decoding: bytes[(24 + 8)..<(24 + 8 + length)], as: UTF8.self), "t")
        let first = 24 + 8 + length + 8
        for i in 0..<8 { bytes[first + i] = i == 7 ? 0x7F : 0xFF }
        bytes.removeLast(4)
        var crc = UInt32.max
        for byte in bytes {
            crc ^= UInt32(byte)
            for _ in 0..<8 { crc = crc & 1 == 1 ? (crc >> 1) ^ 0x82F6_3B78 : crc >> 1 }
        }
        crc = ~crc
        bytes += (0..<4).map { UInt8(truncatingIfNeeded: crc >> (8 * $0)) }
        try Data(bytes).write(to: URL(fileURLWithPath: path))
        db = try temporary.database
        XCTAssertFalse(db.checkpointCurrent)
        XCTAssertTrue(db.indexReport.first?.contains("out of order") == true, "\(db.indexReport)")
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

    /// Rows written before ALTER TABLE ADD COLUMN index the new column as its DEFAULT, both when
    /// attach reads the rows and when it loads the checkpoint.
    func testIndexesOnAnAddedColumnSeeTheDefaultOfOlderRows() throws {
        let temporary = try TemporaryStore()
        var db = try temporary.database
        try db.execute("CREATE TABLE t (id INTEGER PRIMARY KEY, a TEXT)")
        for i in 0..<20 { try db.execute("INSERT INTO t VALUES (?, 'x')", arguments: [.integer(Int64(i))]) }
        try db.execute("ALTER TABLE t ADD COLUMN c INTEGER DEFAULT 7")
        try db.execute("CREATE INDEX tc ON t (c, a)")
        for i in 20..<25 { try db.execute("INSERT INTO t VALUES (?, 'y', 8)", arguments: [.integer(Int64(i))]) }
        let sql = "SELECT c, count(*) FROM t WHERE c >= 7 GROUP BY c ORDER BY c"
        let expected: [[DAOValue]] = [[.integer(7), .integer(20)], [.integer(8), .integer(5)]]
        XCTAssertEqual(try db.execute(sql).rows, expected)
        for dropFile in [true, false] {
            try temporary.reopen()
            if dropFile { try FileManager.default.removeItem(atPath: checkpointPath(temporary)) }
            db = try temporary.database
            XCTAssertEqual(db.checkpointCurrent, !dropFile)
            XCTAssertEqual(try db.execute(sql).rows, expected, "checkpoint file dropped: \(dropFile)")
            XCTAssertTrue(db.lastPlan.hasPrefix("INDEX"), db.lastPlan)
        }
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

    /// A table opened from the checkpoint holds its rowids and index entries in the mapped file,
    /// not the heap; a change copies only the chunks it touches, and the next checkpoint serves
    /// the table from the new file again. Statements see the same rows as on a table built in
    /// the heap that took the same changes.
    func testACheckpointIsServedInPlaceAndChangesStayInTheHeapUntilTheNext() throws {
        let mapped = try TemporaryStore(), heap = try TemporaryStore()
        var db = try mapped.database
        let reference = try heap.database
        for target in [db, reference] {
            try target.execute("CREATE TABLE t (id INTEGER PRIMARY KEY, k INTEGER, name TEXT UNIQUE)")
            try target.execute("CREATE INDEX tk ON t (k DESC, name)")
            try target.execute("BEGIN")
            for i in 0..<3_000 { try target.execute("INSERT INTO t VALUES (?, ?, ?)", arguments: [.integer(Int64(i * 3)), .integer(Int64(i % 41)), .text("n\(i)")]) }
            try target.execute("COMMIT")
        }
        XCTAssertGreaterThan(try db.table(named: "t").memoryFootprint, 3_000 * 8)
        try db.checkpoint()
        XCTAssertEqual(try db.table(named: "t").memoryFootprint, 0, "served from the file it wrote")
        try mapped.reopen()
        db = try mapped.database
        XCTAssertTrue(db.checkpointCurrent)
        XCTAssertEqual(try db.table(named: "t").memoryFootprint, 0, "served from the file at attach")
        XCTAssertEqual(try answers(db), try answers(reference))
        let changes = [
            "INSERT INTO t VALUES (4, 7, 'inserted')",
            "INSERT INTO t VALUES (100000, 3, 'last')",
            "DELETE FROM t WHERE id BETWEEN 3000 AND 3030",
            "UPDATE t SET k = 40, name = 'moved' WHERE id = 6000",
        ]
        for change in changes {
            try db.execute(change)
            try reference.execute(change)
            XCTAssertEqual(try answers(db), try answers(reference), change)
        }
        let touched = try db.table(named: "t").memoryFootprint
        XCTAssertGreaterThan(touched, 0)
        XCTAssertLessThan(touched, try reference.table(named: "t").memoryFootprint / 2, "only the changed chunks are in the heap")
        try db.checkpoint()
        XCTAssertEqual(try db.table(named: "t").memoryFootprint, 0, "merged into the new file")
        XCTAssertEqual(try answers(db), try answers(reference))
        try mapped.reopen()
        db = try mapped.database
        XCTAssertEqual(db.indexReport, [])
        XCTAssertEqual(try answers(db), try answers(reference))
        XCTAssertThrowsError(try db.execute("INSERT INTO t VALUES (5, 1, 'moved')"), "the unique index is served from the file")
    }
}
