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
        // A change after it is journaled in its own batch: an attach after a crash (here a
        // copy of the directory taken while the store is open) loads the file and replays the
        // journal (CheckpointJournalTests), without reading the rows.
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
        XCTAssertEqual(reopened.indexReport, [])
        XCTAssertEqual(reopened.checkpointJournal?.namedCount, 1)
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

    /// Damage in the metadata (header, tables, block checksums, its checksum) or a truncated
    /// file: attach does not use the file and rebuilds from the rows.
    func testACorruptCheckpointMetadataIsRebuiltFromTheRowsAtAttach() throws {
        let temporary = try TemporaryStore()
        var db = try temporary.database
        try fill(db)
        let expected = try answers(db)
        try db.checkpoint()
        let path = checkpointPath(temporary)
        for offset in [12, 21, 40, -4] {
            // Closing writes a fresh checkpoint when the last attach rebuilt: damage that one.
            try temporary.reopen()
            var damaged = try [UInt8](Data(contentsOf: URL(fileURLWithPath: path)))
            let metadata = (20..<24).reduce(0) { $0 | Int(damaged[$1]) << (8 * ($1 - 20)) }
            damaged[offset < 0 ? metadata + offset : offset] ^= 0x41
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

    /// The blocks of the file are checked when a statement first touches them, not at attach:
    /// a damaged block is found by the first statement that reads it, which then runs again on
    /// tables rebuilt from the rows (its answer, and what it changes, never come from the
    /// damaged block). The file and its record go, so the next attach does not trust them.
    func testADamagedBlockIsFoundAtFirstTouchAndTheStatementAnswersFromTheRows() throws {
        for damagedByte in [-1, -3, -5] {
            let temporary = try TemporaryStore()
            var db = try temporary.database
            try fill(db)
            // Besides the usual queries, two that read every entry of each of t's indexes.
            let everything = ["SELECT name, id FROM t ORDER BY name", "SELECT k, name, id FROM t ORDER BY k DESC, name"]
            func all(_ db: SQLDatabase) throws -> [[[DAOValue]]] { try answers(db) + everything.map { try db.execute($0).rows } }
            let expected = try all(db)
            let path = checkpointPath(temporary)
            try db.checkpoint()
            try temporary.reopen()
            var bytes = try [UInt8](Data(contentsOf: URL(fileURLWithPath: path)))
            let metadata = (20..<24).reduce(0) { $0 | Int(bytes[$1]) << (8 * ($1 - 20)) }
            // The last byte (table `empty` has no rows: the last data is t's index tk), the
            // middle of the data, the first rowid of t.
            let at = damagedByte == -1 ? bytes.count - 1 : damagedByte == -3 ? (metadata + bytes.count) / 2 : metadata + 2
            bytes[at] ^= 0x41
            try Data(bytes).write(to: URL(fileURLWithPath: path))
            db = try temporary.database
            XCTAssertTrue(db.checkpointCurrent, "the metadata holds: attach serves the file")
            XCTAssertEqual(db.indexReport, [])
            let blocks = try XCTUnwrap(db.servedBlocks)
            XCTAssertEqual((0..<blocks.count).filter { blocks.states[$0] != CheckpointBlocks.unchecked }.count, 0, "nothing checked at attach")
            XCTAssertEqual(try all(db), expected, "byte \(at)")
            XCTAssertEqual(db.indexReport.count, 1, "byte \(at): \(db.indexReport)")
            XCTAssertTrue(db.indexReport.first?.contains("failed its check") == true, "\(db.indexReport)")
            XCTAssertNil(db.servedBlocks)
            XCTAssertFalse(FileManager.default.fileExists(atPath: path), "the damaged file is removed")
            XCTAssertEqual(try db.table(named: "t").memoryFootprint > 0, true, "served from the heap now")
            XCTAssertThrowsError(try db.execute("INSERT INTO t VALUES (1000, 1, 'n1')"), "the unique index is whole")
            // Closing writes a fresh checkpoint from the rebuilt tables.
            try temporary.reopen()
            db = try temporary.database
            XCTAssertEqual(db.indexReport, [])
            XCTAssertEqual(try all(db), expected)
        }
    }

    /// A damaged block touched by a write (an UPDATE finding its rows through the damaged
    /// index) and inside a transaction: the statement runs again on tables rebuilt from the
    /// rows as the transaction sees them; the transaction goes on and commits what it should.
    func testADamagedBlockFoundInsideATransactionKeepsTheTransactionsRows() throws {
        let temporary = try TemporaryStore(), reference = try TemporaryStore()
        var db = try temporary.database
        let oracle = try reference.database
        for target in [db, oracle] { try fill(target) }
        try db.checkpoint()
        try temporary.reopen()
        let path = checkpointPath(temporary)
        var bytes = try [UInt8](Data(contentsOf: URL(fileURLWithPath: path)))
        // Every data byte after the rowids of t: the entries of both of t's indexes.
        let metadata = (20..<24).reduce(0) { $0 | Int(bytes[$1]) << (8 * ($1 - 20)) }
        let rows = try db.table(named: "t").rowids.count
        for at in stride(from: metadata + 8 * rows + 5, to: bytes.count, by: 97) { bytes[at] ^= 0x5A }
        try Data(bytes).write(to: URL(fileURLWithPath: path))
        db = try temporary.database
        XCTAssertTrue(db.checkpointCurrent)
        let statements = [
            "BEGIN",
            "INSERT INTO t VALUES (2000, 13, 'inserted')",
            "DELETE FROM t WHERE id = 3",
            "UPDATE t SET name = name || '!' WHERE k = 13",
            "SELECT id, k, name FROM t WHERE k BETWEEN 12 AND 14 ORDER BY k, id",
            "COMMIT",
        ]
        for statement in statements {
            let ours = try db.execute(statement), theirs = try oracle.execute(statement)
            XCTAssertEqual(ours.rows, theirs.rows, statement)
            XCTAssertEqual(ours.changes, theirs.changes, statement)
        }
        XCTAssertTrue(db.indexReport.first?.contains("index block") == true, "\(db.indexReport)")
        XCTAssertEqual(try answers(db), try answers(oracle))
        try temporary.reopen()
        db = try temporary.database
        XCTAssertEqual(try answers(db), try answers(oracle))
    }

    /// A file rewritten by something else with fresh checksums (block and metadata): the
    /// structure of a block is checked with it (rowids in order, also across blocks), so rowids
    /// out of order are found at first touch, never read past the mapping or give wrong rows.
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
        func crc32c(_ slice: ArraySlice<UInt8>) -> UInt32 {
            var crc = UInt32.max
            for byte in slice {
                crc ^= UInt32(byte)
                for _ in 0..<8 { crc = crc & 1 == 1 ? (crc >> 1) ^ 0x82F6_3B78 : crc >> 1 }
            }
            return ~crc
        }
        func put32(_ value: UInt32, at: Int) { for i in 0..<4 { bytes[at + i] = UInt8(truncatingIfNeeded: value >> (8 * i)) } }
        // FORMAT.md "DAO index checkpoint" version 3: the first table (lowest key space) is t;
        // its rowids are the first data, at the metadata length; block 0 is its first 384.
        let metadata = u32(20)
        XCTAssertEqual(u32(36 + 4), 1)
        XCTAssertEqual(bytes[36 + 8], UInt8(ascii: "t"))
        let rows = try db.table(named: "t").rowids.count
        XCTAssertEqual((rows + 383) / 384, 2)
        XCTAssertEqual((rows + 191) / 192, 3)
        // Make the first rowid of block 1 (rowid 384) smaller than the last of block 0.
        let first = metadata + 8 * 384
        for i in 0..<8 { bytes[first + i] = i == 0 ? 1 : 0 }
        // t: 2 rowid blocks, then 3 + 3 entry blocks; table empty: none. Block 1's checksum:
        let checksums = metadata - 4 - 4 * 8
        put32(crc32c(bytes[first..<(metadata + 8 * rows)]), at: checksums + 4)
        put32(crc32c(bytes[0..<(metadata - 4)]), at: metadata - 4)
        try Data(bytes).write(to: URL(fileURLWithPath: path))
        db = try temporary.database
        XCTAssertTrue(db.checkpointCurrent, "the checksums hold")
        XCTAssertEqual(try answers(db), expected)
        XCTAssertTrue(db.indexReport.first?.contains("rowid block 1") == true, "\(db.indexReport)")
    }

    /// A version 2 file (one checksum over the whole file, checked at attach) is still read and
    /// served in place; the next checkpoint writes version 3.
    func testAVersion2CheckpointFileIsStillRead() throws {
        let temporary = try TemporaryStore()
        var db = try temporary.database
        try fill(db)
        let expected = try answers(db)
        try db.checkpoint()
        let path = checkpointPath(temporary)
        let current = try [UInt8](Data(contentsOf: URL(fileURLWithPath: path)))
        // The version 2 bytes of the same tables and stamp (FORMAT.md, version 2).
        var v2: [UInt8] = Array("USDAOIDX".utf8)
        func put32(_ value: Int) { v2 += (0..<4).map { UInt8(truncatingIfNeeded: value >> (8 * $0)) } }
        func put64(_ value: UInt64) { v2 += (0..<8).map { UInt8(truncatingIfNeeded: value >> (8 * UInt64($0))) } }
        put32(2)
        v2 += current[12..<20]
        let ordered = db.tables.values.sorted { $0.space < $1.space }
        put32(ordered.count)
        for table in ordered {
            put32(Int(table.space))
            put32(table.name.utf8.count)
            v2 += Array(table.name.lowercased().utf8)
            put64(UInt64(table.rowids.count))
            for rowid in table.allRowids { put64(UInt64(bitPattern: rowid)) }
            put32(table.indexes.count)
            for index in table.indexes {
                put32(index.schema.name.utf8.count)
                v2 += Array(index.schema.name.utf8)
                var arena: [UInt8] = [], ends: [Int] = []
                for chunk in index.entries.chunks {
                    for i in 0..<chunk.entryCount { chunk.withEntry(i) { arena += $0 }; ends.append(arena.count) }
                }
                put64(UInt64(ends.count))
                put64(UInt64(arena.count))
                for end in ends { put32(end) }
                v2 += arena
            }
        }
        var crc = UInt32.max
        for byte in v2 {
            crc ^= UInt32(byte)
            for _ in 0..<8 { crc = crc & 1 == 1 ? (crc >> 1) ^ 0x82F6_3B78 : crc >> 1 }
        }
        put32(Int(~crc))
        try temporary.reopen()
        try Data(v2).write(to: URL(fileURLWithPath: path))
        db = try temporary.database
        XCTAssertTrue(db.checkpointCurrent)
        XCTAssertEqual(db.indexReport, [])
        XCTAssertEqual(try db.table(named: "t").memoryFootprint, 0, "served in place")
        let blocks = try XCTUnwrap(db.servedBlocks)
        XCTAssertTrue((0..<blocks.count).allSatisfy { blocks.states[$0] == CheckpointBlocks.sound }, "checked whole at attach")
        XCTAssertEqual(try answers(db), expected)
        try db.execute("DELETE FROM t WHERE id = 3")
        try db.checkpoint()
        let rewritten = try [UInt8](Data(contentsOf: URL(fileURLWithPath: path)))
        XCTAssertEqual(rewritten[8], 3, "the next checkpoint is version 3")
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
