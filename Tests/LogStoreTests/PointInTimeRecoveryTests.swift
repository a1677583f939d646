import CrashTestSupport
import Foundation
import XCTest
@testable import LogStore

/// Point-in-time recovery (issue 21, item 2; FORMAT.md, "Recovery", rules 6-9): what a power
/// cut leaves is a prefix of the writes. Each test builds by hand a directory a power cut could
/// leave (a copy of an open store, with the unsynced bytes of one write lost), then checks what
/// the store shows. The campaign form is DefaultModePowerLossTests.
final class PointInTimeRecoveryTests: StoreTestCase {
    /// No background syncer: the test decides what is synced (`sync()`).
    private func manualOptions(readOnly: Bool = false) -> LogStore.Options {
        var options = options(segmentSize: 4 << 10, readOnly: readOnly)
        options.maxUnsyncedInterval = nil
        options.maxUnsyncedBytes = nil
        return options
    }

    /// Zeroes the bytes of the record of `key` (its tombstone when `tombstone`) in `segment`:
    /// the sectors of one unsynced write that did not reach the disk.
    private func loseRecord(_ key: String, tombstone: Bool, in segment: URL) throws {
        let found = try records(in: segment)
        let bytes = try Data(contentsOf: segment)
        let lost = try XCTUnwrap(found.first { record in
            record.header.flags.contains(.tombstone) == tombstone
                && Array(bytes[(record.offset + record.header.keyOffset)..<(record.offset + record.header.keyOffset + record.header.keyLength)]) == b(key)
        }, "no record of \(key) in \(segment.lastPathComponent)")
        try modifyFile(segment) { bytes in
            for i in lost.offset..<(lost.offset + lost.header.totalLength) { bytes[i] = 0 }
        }
    }

    /// A directory a power cut could leave: "a" = 1 and "x" synced, then a delete of "a" lost
    /// (its bytes zero, at the end of the first segment) while later puts, in later segments,
    /// and a batch reached the disk. No snapshot.
    private func storeWithALostDelete() throws -> URL {
        let directory = temporary.make("pit-sealed")
        let store = try LogStore(directory: directory, options: manualOptions())
        try store.put(b("1"), forKey: b("a"))
        try store.put(incompressible(600, seed: 1), forKey: b("x"))
        try store.sync()                                   // the watermark: "a" = 1 and "x" are durable
        try store.delete(forKey: b("a"))                   // unsynced, then lost
        for i in 0..<20 { try store.put(incompressible(500, seed: UInt64(10 + i)), forKey: b("later\(i)")) }  // rolls
        var batch = LogStore.WriteBatch()
        batch.put(b("3"), forKey: b("c"))
        batch.put(b("4"), forKey: b("d"))
        try store.write(batch)
        let copy = try copyStore(directory, label: "pit-sealed-cut")
        try store.close()
        try? FileManager.default.removeItem(at: copy.appendingPathComponent("index.snapshot"))
        let first = try XCTUnwrap(segmentFiles(copy).first).url
        XCTAssertGreaterThan(try segmentFiles(copy).count, 2, "the later writes rolled into later segments")
        try loseRecord("a", tombstone: true, in: first)
        return copy
    }

    /// The case: a delete at the end of a sealed segment was lost while the segments
    /// after it (later puts, a batch) reached the disk. Before point-in-time recovery the delete
    /// was skipped as corrupt bytes and every later write kept: "a" came back with "c" present,
    /// a state that never existed. Now the log ends at the lost delete.
    func testALostDeleteInASealedSegmentDropsEveryLaterSegment() throws {
        let copy = try storeWithALostDelete()
        for readOnly in [true, false] {
            let reopened = try LogStore(directory: copy, options: manualOptions(readOnly: readOnly))
            XCTAssertEqual(try reopened.get(forKey: b("a")), b("1"), "read-only \(readOnly): the lost delete's key keeps its earlier value")
            XCTAssertNil(try reopened.get(forKey: b("c")), "read-only \(readOnly): no write after the lost one")
            XCTAssertNil(try reopened.get(forKey: b("later0")), "read-only \(readOnly)")
            XCTAssertEqual(try reopened.get(forKey: b("x")), incompressible(600, seed: 1), "read-only \(readOnly): synced writes stay")
            XCTAssertEqual(try reopened.verify().problems, [], "read-only \(readOnly)")
            XCTAssertTrue(reopened.recoveryReport.contains { $0.contains("the log ends") }, "\(reopened.recoveryReport)")
            if !readOnly {
                // The later segments are gone and new writes continue the log.
                XCTAssertEqual(try segmentFiles(copy).count, 1)
                try reopened.put(b("new"), forKey: b("c"))
            }
            try reopened.close()
        }
        let again = try LogStore(directory: copy, options: manualOptions())
        XCTAssertEqual(again.recoveryReport, [])
        XCTAssertEqual(try again.get(forKey: b("c")), b("new"))
        XCTAssertEqual(try again.get(forKey: b("a")), b("1"))
        XCTAssertNil(try again.get(forKey: b("later0")))
        try again.close()
    }

    /// A write-path segment that vanished whole (its name never reached the disk) while a later
    /// one survived: the later one's first write does not continue the sequence numbers, so it
    /// and everything after it are dropped.
    func testAMissingSegmentEndsTheLogAtItsPlace() throws {
        let directory = temporary.make("pit-missing")
        let store = try LogStore(directory: directory, options: manualOptions())
        try store.put(b("1"), forKey: b("a"))
        try store.sync()
        for i in 0..<30 { try store.put(incompressible(500, seed: UInt64(i)), forKey: b("k\(i)")) }
        try store.delete(forKey: b("a"))
        let copy = try copyStore(directory, label: "pit-missing-cut")
        try store.close()
        try? FileManager.default.removeItem(at: copy.appendingPathComponent("index.snapshot"))
        let files = try segmentFiles(copy)
        XCTAssertGreaterThan(files.count, 3)
        try FileManager.default.removeItem(at: files[2].url)
        let reopened = try LogStore(directory: copy, options: manualOptions())
        defer { try? reopened.close() }
        XCTAssertEqual(try reopened.get(forKey: b("a")), b("1"), "the delete came after the lost segment")
        let kept = try (0..<30).filter { try reopened.get(forKey: b("k\($0)")) != nil }
        XCTAssertEqual(kept, Array(0..<kept.count), "a prefix of the puts: \(kept)")
        XCTAssertTrue(reopened.recoveryReport.contains { $0.contains("a write before it was lost") }, "\(reopened.recoveryReport)")
        XCTAssertEqual(try reopened.verify().problems, [])
    }

    /// A record damaged inside the synced part (before the watermark) is still skipped and
    /// reported, and the writes after it stay.
    func testCorruptionBeforeTheWatermarkIsIsolated() throws {
        let directory = temporary.make("pit-isolated")
        let store = try LogStore(directory: directory, options: manualOptions())
        for i in 0..<20 { try store.put(incompressible(500, seed: UInt64(i)), forKey: b("k\(i)")) }
        try store.close()                                   // all synced, the mark at the end
        try? FileManager.default.removeItem(at: directory.appendingPathComponent("index.snapshot"))
        let second = try segmentFiles(directory)[1].url
        let victim = try XCTUnwrap(records(in: second).first)
        try modifyFile(second) { $0[victim.offset + victim.header.totalLength - 1] ^= 0x40 }
        let reopened = try LogStore(directory: directory, options: manualOptions())
        defer { try? reopened.close() }
        XCTAssertTrue(reopened.recoveryReport.contains { $0.contains("skipped corrupt bytes") }, "\(reopened.recoveryReport)")
        XCTAssertEqual(try reopened.get(forKey: b("k19")), incompressible(500, seed: 19), "writes after the damage stay")
        XCTAssertEqual(try (0..<20).filter { try reopened.get(forKey: b("k\($0)")) == nil }.count, 1, "only the damaged record is lost")
    }

    /// In `.fsyncEachWrite` a mark follows every 64 KiB of synced log, so a store that was not
    /// closed (a crash) still trusts all but its last stretch: a record damaged well before the
    /// end is skipped and reported and the writes after it stay.
    func testFsyncEachWriteMarksKeepDamageIsolatedWithoutAClose() throws {
        let directory = temporary.make("pit-fsync")
        let store = try LogStore(directory: directory, options: options(segmentSize: 1 << 20, durability: .fsyncEachWrite))
        for i in 0..<400 { try store.put(incompressible(500, seed: UInt64(i)), forKey: b("k\(i)")) }   // about 200 KiB
        let copy = try copyStore(directory, label: "pit-fsync-crash")
        try store.close()
        try? FileManager.default.removeItem(at: copy.appendingPathComponent("index.snapshot"))
        let mark = try XCTUnwrap(SyncMarkFile.newest(in: Array(try Data(contentsOf: copy.appendingPathComponent(SyncMarkFile.name)))))
        XCTAssertGreaterThan(mark.mark.position.offset, 64 << 10, "marks were written while the store was open")
        let segment = try XCTUnwrap(segmentFiles(copy).first).url
        let victim = try XCTUnwrap(records(in: segment).dropFirst(10).first)
        try modifyFile(segment) { $0[victim.offset + victim.header.totalLength - 1] ^= 0x40 }
        let reopened = try LogStore(directory: copy, options: options(segmentSize: 1 << 20, durability: .fsyncEachWrite))
        defer { try? reopened.close() }
        XCTAssertTrue(reopened.recoveryReport.contains { $0.contains("skipped corrupt bytes") }, "\(reopened.recoveryReport)")
        XCTAssertEqual(try reopened.get(forKey: b("k399")), incompressible(500, seed: 399), "the writes after the damage stay")
        XCTAssertEqual(try (0..<400).filter { try reopened.get(forKey: b("k\($0)")) == nil }.count, 1, "only the damaged record is lost")
    }

    /// A store of version 1 segments (written before sync marks) opens as before and, opened
    /// read-write, starts a version 2 segment and a sync mark.
    func testAVersionOneStoreIsReadAsBeforeAndUpgraded() throws {
        let directory = temporary.make("pit-v1")
        let store = try LogStore(directory: directory, options: manualOptions())
        for i in 0..<10 { try store.put(incompressible(300, seed: UInt64(i)), forKey: b("k\(i)")) }
        try store.close()
        try FileManager.default.removeItem(at: directory.appendingPathComponent(SyncMarkFile.name))
        try? FileManager.default.removeItem(at: directory.appendingPathComponent("index.snapshot"))
        for file in try segmentFiles(directory) {
            // Rewrite the header as version 1 (same layout).
            let header = try segmentHeader(file.url)
            var old = header
            old.version = 1
            try modifyFile(file.url) { bytes in bytes.replaceSubrange(0..<SegmentHeader.size, with: old.encoded()) }
        }
        let reader = try LogStore(directory: directory, options: manualOptions(readOnly: true))
        XCTAssertEqual(try reader.get(forKey: b("k9")), incompressible(300, seed: 9))
        try reader.close()
        XCTAssertFalse(FileManager.default.fileExists(atPath: directory.appendingPathComponent(SyncMarkFile.name).path))
        let writer = try LogStore(directory: directory, options: manualOptions())
        XCTAssertEqual(try writer.get(forKey: b("k9")), incompressible(300, seed: 9))
        XCTAssertTrue(writer.recoveryReport.contains { $0.contains("began sync marks") }, "\(writer.recoveryReport)")
        try writer.close()
        let versions = try segmentFiles(directory).map { try segmentHeader($0.url).version }
        XCTAssertEqual(versions.last, 2)
        XCTAssertTrue(versions.contains(1))
        let bytes = Array(try Data(contentsOf: directory.appendingPathComponent(SyncMarkFile.name)))
        XCTAssertNotNil(SyncMarkFile.newest(in: bytes))
    }

    /// Rule 9: the open that cuts the log makes the cut durable (zeroes and syncs the tail,
    /// removes and syncs away the later segments, writes the new mark into both slots) before
    /// anything is written. Under the simulator, from that open through new writes: a power cut
    /// at any point shows the state the cut left or that state plus a prefix of the new writes,
    /// never a stale record from beyond the first cut.
    func testAfterACutAPowerCutNeverBringsBackWhatTheCutDropped() throws {
        try XCTSkipIf(TestMode.current != .plain, "power-loss campaigns run in the plain test mode only")
        typealias State = [String: [UInt8]]
        let damaged = try storeWithALostDelete()
        func contents(_ directory: URL, readOnly: Bool) throws -> State {
            let store = try LogStore(directory: directory, options: manualOptions(readOnly: readOnly))
            defer { try? store.close() }
            var found: State = [:]
            for (key, value) in try store.entries(space: 0) { found[String(decoding: key, as: UTF8.self)] = value }
            return found
        }
        let afterCut = try contents(damaged, readOnly: true)
        XCTAssertEqual(afterCut["a"], b("1"))
        XCTAssertNil(afterCut["c"])
        let journal = PowerLossJournal<State>(initial: afterCut)
        var settings = PowerLossCampaign.Settings.fromEnvironment
        settings.maximumCuts = 0
        settings.randomOutcomes = max(2, settings.randomOutcomes)
        PowerLossCampaign.run("pit-after-cut", settings: settings, workload: { directory in
            // The damaged files, as found (the simulator takes files it did not see written as durable).
            for name in try FileManager.default.contentsOfDirectory(atPath: damaged.path) {
                try FileManager.default.copyItem(at: damaged.appendingPathComponent(name), to: directory.appendingPathComponent(name))
            }
            let store = try LogStore(directory: directory, options: manualOptions())
            var state = afterCut
            for i in 0..<16 {
                journal.begin("put n\(i)")
                let value = incompressible(400, seed: UInt64(100 + i))
                try store.put(value, forKey: b("n\(i)"))
                state["n\(i)"] = value
                journal.acknowledge(state)
                if i % 5 == 4 { try store.sync() }
            }
            journal.begin("delete x")
            try store.delete(forKey: b("x"))
            state["x"] = nil
            journal.acknowledge(state)
            try store.close()
        }, check: { cut in
            let found = try contents(cut.directory, readOnly: false)
            let ceiling = min(journal.states.count - 1, journal.begun(before: cut.index))
            XCTAssertNotNil(journal.match(found, in: 0...ceiling), "\(cut.context): not a state: \(found.keys.sorted())")
            XCTAssertNil(found["c"], "\(cut.context): a write the first cut dropped came back")
            XCTAssertNil(found["later0"], "\(cut.context): a write the first cut dropped came back")
        })
    }
}

/// Item 1 of issue 21 (what is synced before what depends on it), found while building item 2:
/// compaction drops the records its keydir says are dead, but in the default mode the records
/// that made them dead (a newer value, a delete, in the active segment) were not synced before
/// the commit. A power cut after the commit could lose them while the commit survived: the key
/// then had no value at all (not a state the writes ever made). Compaction now syncs the log and
/// a mark before its commit file (`StoreEngine.syncLogWithDurableMark`).
final class CompactionPowerLossTests: XCTestCase {
    private typealias State = [String: [UInt8]]

    func testCompactionNeverDropsAValueWhoseSuccessorCouldBeLost() throws {
        try XCTSkipIf(TestMode.current != .plain, "power-loss campaigns run in the plain test mode only")
        var options = LogStore.Options()
        options.segmentSize = 4 << 10
        options.compactionTrigger = 2
        options.maxUnsyncedInterval = nil      // nothing synced but by sync() and compaction
        options.maxUnsyncedBytes = nil
        let journal = PowerLossJournal<State>(initial: [:])
        func value(_ key: Int, _ version: Int) -> [UInt8] { Array("k\(key)v\(version):".utf8) + [UInt8](repeating: UInt8(key), count: 300) }
        var notAState = 0
        var settings = PowerLossCampaign.Settings.fromEnvironment   // every cut point, always
        settings.maximumCuts = 0
        settings.randomOutcomes = max(2, settings.randomOutcomes)
        PowerLossCampaign.run("compaction-successors", settings: settings, workload: { directory in
            let store = try LogStore(directory: directory, options: options)
            var state: State = [:]
            for key in 0..<12 {                                   // v1 of every key, in sealed segments
                journal.begin("put k\(key) v1")
                try store.put(value(key, 1), forKey: Array("k\(key)".utf8))
                state["k\(key)"] = value(key, 1)
                journal.acknowledge(state)
            }
            try store.sync()
            for key in 0..<4 {                                    // successors, unsynced: newer values and deletes
                journal.begin("successor of k\(key)")
                if key % 2 == 0 {
                    try store.put(value(key, 2), forKey: Array("k\(key)".utf8))
                    state["k\(key)"] = value(key, 2)
                } else {
                    try store.delete(forKey: Array("k\(key)".utf8))
                    state["k\(key)"] = nil
                }
                journal.acknowledge(state)
            }
            journal.begin("compact")
            // As a background compaction does (dead bytes): the sealed segment only, the
            // successors staying unsynced in the active one. Drops v1 of k0..k3.
            try store.engine.compact(sealActive: false)
            journal.acknowledge(state)
            try store.close()
        }, check: { cut in
            let store = try LogStore(directory: cut.directory, options: options)
            defer { try? store.close() }
            var found: State = [:]
            for (key, value) in try store.entries(space: 0) { found[String(decoding: key, as: UTF8.self)] = value }
            let ceiling = min(journal.states.count - 1, journal.begun(before: cut.index))
            if journal.match(found, in: 0...ceiling) == nil {
                notAState += 1
                XCTFail("\(cut.context): not a state of the writes: \(found.keys.sorted()) \(store.recoveryReport)")
            }
        })
        XCTAssertEqual(notAState, 0)
    }
}
