import XCTest
@testable import LogStore

/// The public API's semantics, one behaviour at a time.
final class StoreTests: StoreTestCase {
    func testPutGetOverwriteDelete() throws {
        let directory = temporary.make()
        let store = try LogStore(directory: directory, options: options())
        XCTAssertNil(try store.get(forKey: b("a")))
        try store.put(b("1"), forKey: b("a"))
        XCTAssertEqual(try store.get(forKey: b("a")), b("1"))
        try store.put(b("2"), forKey: b("a"))
        XCTAssertEqual(try store.get(forKey: b("a")), b("2"))
        try store.delete(forKey: b("a"))
        XCTAssertNil(try store.get(forKey: b("a")))
        try store.delete(forKey: b("never-written"))  // not an error
        try store.put(b("3"), forKey: b("a"))
        XCTAssertEqual(try store.get(forKey: b("a")), b("3"))
        XCTAssertEqual(try store.verify().problems, [])
        try store.close()
        let reopened = try LogStore(directory: directory, options: options())
        XCTAssertEqual(try reopened.get(forKey: b("a")), b("3"))
        XCTAssertNil(try reopened.get(forKey: b("never-written")))
        XCTAssertEqual(reopened.recoveryReport, [])
    }

    /// `writeIndexSnapshot()` (what the DAO's checkpoint calls) does close's work early: the
    /// active segment cut to its content, everything synced, the snapshot written. Appends go
    /// on after it (the segment reserves room again), and a close right after it leaves the
    /// snapshot file as it was.
    func testWriteIndexSnapshotCutsTheActiveSegmentAndAppendsGoOn() throws {
        let directory = temporary.make()
        let store = try LogStore(directory: directory, options: options())
        // Values no compressor shrinks, so the bounds below hold in every test mode (zstd and
        // AES-GCM add at most a few dozen bytes a record).
        func value(_ i: Int) -> [UInt8] {
            var state = UInt64(i) &* 0x9E37_79B9_7F4A_7C15 | 1
            return (0..<300).map { _ in
                state ^= state << 13; state ^= state >> 7; state ^= state << 17
                return UInt8(truncatingIfNeeded: state)
            }
        }
        for i in 0..<200 { try store.put(value(i), forKey: b("k\(i)")) }
        try store.writeIndexSnapshot()
        let segment = directory.appendingPathComponent("00000001.seg").path
        let snapshot = directory.appendingPathComponent("index.snapshot").path
        let cut = try XCTUnwrap(FileManager.default.attributesOfItem(atPath: segment)[.size] as? Int)
        let inode = try XCTUnwrap(FileManager.default.attributesOfItem(atPath: snapshot)[.systemFileNumber] as? UInt64)
        // The reserved space is gone: the file ends with its last record (200 records of at
        // least 300 bytes, far below the reserve a segment grows by).
        XCTAssertGreaterThan(cut, 200 * 300)
        XCTAssertLessThan(cut, 200 * 400)
        for i in 200..<400 { try store.put(value(i), forKey: b("k\(i)")) }
        for i in [0, 199, 200, 399] { XCTAssertEqual(try store.get(forKey: b("k\(i)")), value(i)) }
        XCTAssertEqual(try store.verify().problems, [])
        try store.writeIndexSnapshot()
        let second = try XCTUnwrap(FileManager.default.attributesOfItem(atPath: snapshot)[.systemFileNumber] as? UInt64)
        XCTAssertNotEqual(second, inode, "written again after the appends")
        try store.close()
        XCTAssertEqual(try FileManager.default.attributesOfItem(atPath: snapshot)[.systemFileNumber] as? UInt64, second, "close kept it")
        let reopened = try LogStore(directory: directory, options: options())
        XCTAssertEqual(reopened.recoveryReport, [])
        for i in 0..<400 { XCTAssertEqual(try reopened.get(forKey: b("k\(i)")), value(i), "k\(i)") }
        try reopened.close()
    }

    func testKeySpacesIsolateKeys() throws {
        let store = try LogStore(directory: temporary.make(), options: options())
        try store.put(b("zero"), forKey: b("k"), space: 0)
        try store.put(b("one"), forKey: b("k"), space: 1)
        try store.put(b("top"), forKey: b("k"), space: UInt32.max)
        XCTAssertEqual(try store.get(forKey: b("k"), space: 0), b("zero"))
        XCTAssertEqual(try store.get(forKey: b("k"), space: 1), b("one"))
        XCTAssertEqual(try store.get(forKey: b("k"), space: UInt32.max), b("top"))
        XCTAssertNil(try store.get(forKey: b("k"), space: 2))
        try store.delete(forKey: b("k"), space: 1)
        XCTAssertNil(try store.get(forKey: b("k"), space: 1))
        XCTAssertEqual(try store.get(forKey: b("k"), space: 0), b("zero"))
        XCTAssertEqual(try store.keys(space: 0), [b("k")])
        XCTAssertEqual(try store.keys(space: 1), [])
        // UInt32.max is the engine's own space: it also holds the key check value when encrypting.
        XCTAssertEqual(try store.keys(space: UInt32.max), ([b("k")] + engineKeys).sorted { $0.lexicographicallyPrecedes($1) })
        XCTAssertEqual(store.statistics.liveKeys, 2 + engineKeys.count)
    }

    func testKeysSortedLiveOnlyWithPrefix() throws {
        let store = try LogStore(directory: temporary.make(), options: options(segmentSize: 4096))
        var rng = SeededRandom(seed: 5)
        var expected = Set<[UInt8]>()
        for _ in 0..<400 {
            let key = (0..<Int.random(in: 0...6, using: &rng)).map { _ in UInt8.random(in: 0...3, using: &rng) * 60 }
            if Bool.random(using: &rng) {
                try store.put(key, forKey: key)
                expected.insert(key)
            } else {
                try store.delete(forKey: key)
                expected.remove(key)
            }
        }
        try store.put(b("other"), forKey: b("x"), space: 9)
        let sorted = expected.sorted { $0.lexicographicallyPrecedes($1) }
        XCTAssertEqual(try store.keys(space: 0), sorted)
        for prefix: [UInt8] in [[], [0], [60], [60, 180], [180, 180, 180], [1]] {
            XCTAssertEqual(try store.keys(space: 0, prefix: prefix), sorted.filter { $0.starts(with: prefix) }, "prefix \(prefix)")
            let entries = try store.entries(space: 0, prefix: prefix)
            XCTAssertEqual(entries.map(\.key), sorted.filter { $0.starts(with: prefix) })
            for entry in entries { XCTAssertEqual(entry.key, entry.value) }
        }
        XCTAssertEqual(try store.keys(space: 9), [b("x")])
        XCTAssertEqual(try store.keys(space: 9, prefix: b("xy")), [])
    }

    func testExpiry() throws {
        let directory = temporary.make()
        let store = try LogStore(directory: directory, options: options())
        try store.put(b("old"), forKey: b("past"), expiresAt: Date(timeIntervalSinceNow: -10))
        let soon = Date(timeIntervalSinceNow: 1.5)
        try store.put(b("soon"), forKey: b("soon"), expiresAt: soon)
        try store.put(b("later"), forKey: b("later"), expiresAt: Date(timeIntervalSinceNow: 3600))
        try store.put(b("forever"), forKey: b("forever"))
        XCTAssertNil(try store.get(forKey: b("past")))
        XCTAssertEqual(try store.get(forKey: b("soon")), b("soon"))
        XCTAssertEqual(try store.keys(space: 0), [b("forever"), b("later"), b("soon")])
        Thread.sleep(until: soon.addingTimeInterval(0.05))
        XCTAssertNil(try store.get(forKey: b("soon")))
        XCTAssertEqual(try store.keys(space: 0), [b("forever"), b("later")])
        XCTAssertEqual(try store.entries(space: 0).map(\.value), [b("forever"), b("later")])
        // A put without expiry over an expired key revives it; with expiry over a live one hides it.
        try store.put(b("again"), forKey: b("past"))
        XCTAssertEqual(try store.get(forKey: b("past")), b("again"))
        try store.put(b("gone"), forKey: b("forever"), expiresAt: Date(timeIntervalSince1970: 0))
        XCTAssertNil(try store.get(forKey: b("forever")))
        try store.close()
        let reopened = try LogStore(directory: directory, options: options())
        XCTAssertEqual(try reopened.keys(space: 0), [b("later"), b("past")])
        XCTAssertEqual(try reopened.get(forKey: b("later")), b("later"))
        let info = try allRecords(reopened).last { $0.key == b("later") }
        XCTAssertNotNil(info?.expiresAt)
        XCTAssertEqual(info!.expiresAt!.timeIntervalSinceNow, 3600, accuracy: 60)
    }

    func testEmptyKeyAndEmptyValue() throws {
        let directory = temporary.make()
        let store = try LogStore(directory: directory, options: options())
        try store.put([], forKey: [])
        XCTAssertEqual(try store.get(forKey: []), [])
        try store.put([], forKey: b("empty"))
        XCTAssertEqual(try store.get(forKey: b("empty")), [])
        try store.put(b("x"), forKey: [], space: 3)
        XCTAssertEqual(try store.keys(space: 0), [[], b("empty")])
        XCTAssertEqual(try store.get(forKey: [], space: 3), b("x"))
        try store.close()
        let reopened = try LogStore(directory: directory, options: options())
        XCTAssertEqual(try reopened.get(forKey: []), [])
        XCTAssertEqual(try reopened.get(forKey: b("empty")), [])
        try reopened.delete(forKey: [])
        XCTAssertNil(try reopened.get(forKey: []))
        XCTAssertEqual(try reopened.keys(space: 0), [b("empty")])
    }

    func testKeySizeLimit() throws {
        let store = try LogStore(directory: temporary.make(), options: options(segmentSize: 32 << 10))
        let largest = [UInt8](repeating: 0x6B, count: 64 << 10)
        try store.put(b("v"), forKey: largest)
        XCTAssertEqual(try store.get(forKey: largest), b("v"))
        let tooLong = largest + [0]
        assertStoreError(try store.put(b("v"), forKey: tooLong), { $0.tooLargeSize == tooLong.count })
        assertStoreError(try store.delete(forKey: tooLong), { $0.tooLargeSize == tooLong.count })
        var batch = LogStore.WriteBatch()
        batch.put(b("fine"), forKey: b("fine"))
        batch.put(b("v"), forKey: tooLong)
        assertStoreError(try store.write(batch), { $0.tooLargeSize != nil })
        XCTAssertNil(try store.get(forKey: b("fine")), "a rejected batch writes nothing")
        XCTAssertEqual(try store.keys(space: 0), [largest])
        XCTAssertEqual(try store.verify().problems, [])
    }

    func testLargeValueCrossesSegments() throws {
        let directory = temporary.make()
        let size = 64 << 20
        var value = [UInt8](repeating: 0, count: size)
        var rng = SeededRandom(seed: 64)
        value.withUnsafeMutableBytes { raw in
            let words = raw.bindMemory(to: UInt64.self)
            for i in words.indices { words[i] = rng.next() }
        }
        do {
            let store = try LogStore(directory: directory, options: options(segmentSize: 1 << 20))
            try store.put(b("before"), forKey: b("before"))
            try store.put(value, forKey: b("big"))
            try store.put(b("after"), forKey: b("after"))
            XCTAssertEqual(try store.get(forKey: b("big")) == value, true)
            XCTAssertGreaterThanOrEqual(store.statistics.segmentCount, 3, "the big record got a segment of its own")
            try store.close()
        }
        // Reopen with a full scan too.
        try FileManager.default.removeItem(at: directory.appendingPathComponent("index.snapshot"))
        let store = try LogStore(directory: directory, options: options(segmentSize: 1 << 20))
        XCTAssertEqual(store.recoveryReport, [])
        XCTAssertEqual(try store.get(forKey: b("big")) == value, true)
        XCTAssertEqual(try store.get(forKey: b("before")), b("before"))
        XCTAssertEqual(try store.get(forKey: b("after")), b("after"))
        XCTAssertTrue(try segmentFiles(directory).contains { try fileSize($0.url) > size })
        // Overwrite it and compact: the space comes back.
        try store.put(b("small"), forKey: b("big"))
        try store.compact()
        XCTAssertLessThan(store.statistics.segmentBytes, 1 << 20)
        XCTAssertEqual(try store.get(forKey: b("big")), b("small"))
        XCTAssertEqual(try store.verify().problems, [])
    }

    func testBatches() throws {
        let directory = temporary.make()
        let store = try LogStore(directory: directory, options: options())
        try store.put(b("old"), forKey: b("doomed"))
        try store.put(b("old"), forKey: b("changed"))
        var batch = LogStore.WriteBatch()
        XCTAssertEqual(batch.count, 0)
        try store.write(batch)  // an empty batch is fine
        batch.put(b("1"), forKey: b("a"))
        batch.put(b("2"), forKey: b("b"), space: 4)
        batch.delete(forKey: b("doomed"))
        batch.put(b("new"), forKey: b("changed"))
        // Put then delete of the same key: the delete wins; delete then put: the put wins.
        batch.put(b("temp"), forKey: b("put-then-delete"))
        batch.delete(forKey: b("put-then-delete"))
        batch.delete(forKey: b("delete-then-put"))
        batch.put(b("kept"), forKey: b("delete-then-put"))
        batch.put(b("first"), forKey: b("twice"))
        batch.put(b("second"), forKey: b("twice"))
        batch.put(b("exp"), forKey: b("expired"), expiresAt: Date(timeIntervalSinceNow: -1))
        XCTAssertEqual(batch.count, 11)
        try store.write(batch)
        let expected: [[UInt8]: [UInt8]] = [b("a"): b("1"), b("changed"): b("new"), b("delete-then-put"): b("kept"), b("twice"): b("second")]
        try assertContents(store, expected)
        XCTAssertEqual(try store.get(forKey: b("b"), space: 4), b("2"))
        // The batch is consecutive records, all but the last flagged batchContinues.
        let batchRecords = try allRecords(store).suffix(11)
        XCTAssertEqual(batchRecords.map { $0.flags & RecordFlags.batchContinues.rawValue != 0 }, Array(repeating: true, count: 10) + [false])
        XCTAssertEqual(store.statistics.liveKeys, 6 + engineKeys.count, "the expired key counts until compaction")
        try store.close()
        for snapshot in [true, false] {
            let copy = try copyStore(directory)
            if !snapshot { try FileManager.default.removeItem(at: copy.appendingPathComponent("index.snapshot")) }
            let reopened = try LogStore(directory: copy, options: options())
            try assertContents(reopened, expected, "snapshot \(snapshot)")
            XCTAssertEqual(reopened.statistics.liveKeys, 6 + engineKeys.count)
            XCTAssertEqual(reopened.recoveryReport, [])
        }
    }

    func testBatchLargerThanASegment() throws {
        let directory = temporary.make()
        let store = try LogStore(directory: directory, options: options(segmentSize: 4096))
        try store.put(b("small"), forKey: b("small"))
        var batch = LogStore.WriteBatch()
        var expected: [[UInt8]: [UInt8]] = [b("small"): b("small")]
        for i in 0..<12 {
            let value = [UInt8](repeating: UInt8(i), count: 1000)
            batch.put(value, forKey: b("big\(i)"))
            expected[b("big\(i)")] = value
        }
        try store.write(batch)
        try store.put(b("after"), forKey: b("after"))
        expected[b("after")] = b("after")
        try assertContents(store, expected)
        // A batch never spans segments: all twelve records lie in one.
        var segmentsOfBatch = Set<UInt32>()
        try store.forEachRecord { if $0.key.starts(with: b("big")) { segmentsOfBatch.insert($0.segment) } }
        XCTAssertEqual(segmentsOfBatch.count, 1)
        let crash = try copyStore(directory)
        try store.close()
        for directory in [directory, crash] {
            let reopened = try LogStore(directory: directory, options: options(segmentSize: 4096))
            XCTAssertEqual(reopened.recoveryReport, [])
            try assertContents(reopened, expected)
            try reopened.put(b("more"), forKey: b("more"))
            XCTAssertEqual(try reopened.verify().problems, [])
            try reopened.close()
        }
    }

    func testReadOnlyRejectsWrites() throws {
        let directory = temporary.make()
        do {
            let store = try LogStore(directory: directory, options: options())
            try store.put(b("v"), forKey: b("k"))
            try store.close()
        }
        let before = try fileNames(directory)
        let store = try LogStore(directory: directory, options: options(readOnly: true))
        XCTAssertEqual(try store.get(forKey: b("k")), b("v"))
        assertStoreError(try store.put(b("x"), forKey: b("k")), \.isReadOnly)
        assertStoreError(try store.delete(forKey: b("k")), \.isReadOnly)
        var batch = LogStore.WriteBatch()
        batch.put(b("x"), forKey: b("y"))
        assertStoreError(try store.write(batch), \.isReadOnly)
        assertStoreError(try store.compact(), \.isReadOnly)
        XCTAssertEqual(try store.get(forKey: b("k")), b("v"))
        XCTAssertEqual(try store.verify().problems, [])
        // Read-only openers share the lock with each other, but not with a writer.
        let second = try LogStore(directory: directory, options: options(readOnly: true))
        XCTAssertEqual(try second.get(forKey: b("k")), b("v"))
        assertStoreError(try LogStore(directory: directory, options: options()), \.isLocked)
        try store.close()
        try second.close()
        XCTAssertEqual(try fileNames(directory), before, "a read-only open writes nothing")
        // A read-only open of a missing directory fails and creates nothing.
        let missing = temporary.make("missing")
        XCTAssertThrowsError(try LogStore(directory: missing, options: options(readOnly: true)))
        XCTAssertFalse(FileManager.default.fileExists(atPath: missing.path))
    }

    func testClosedHandleThrows() throws {
        let store = try LogStore(directory: temporary.make(), options: options())
        try store.put(b("v"), forKey: b("k"))
        try store.close()
        try store.close()  // closing twice is not an error
        assertStoreError(try store.get(forKey: b("k")), \.isClosed)
        assertStoreError(try store.put(b("v"), forKey: b("k")), \.isClosed)
        assertStoreError(try store.delete(forKey: b("k")), \.isClosed)
        assertStoreError(try store.write({ var batch = LogStore.WriteBatch(); batch.put([1], forKey: [1]); return batch }()), \.isClosed)
        assertStoreError(try store.keys(space: 0), \.isClosed)
        assertStoreError(try store.entries(space: 0), \.isClosed)
        assertStoreError(try store.compact(), \.isClosed)
        assertStoreError(try store.verify(), \.isClosed)
        assertStoreError(try store.sync(), \.isClosed)
        assertStoreError(try store.forEachRecord { _ in }, \.isClosed)
    }

    func testSecondOpenerIsLocked() throws {
        let directory = temporary.make()
        let first = try LogStore(directory: directory, options: options())
        try first.put(b("v"), forKey: b("k"))
        assertStoreError(try LogStore(directory: directory, options: options()), \.isLocked)
        assertStoreError(try LogStore(directory: directory, options: options(readOnly: true)), \.isLocked)
        // The failed opener changed nothing.
        XCTAssertEqual(try first.get(forKey: b("k")), b("v"))
        try first.put(b("w"), forKey: b("k2"))
        try first.close()
        let second = try LogStore(directory: directory, options: options())
        XCTAssertEqual(try second.get(forKey: b("k")), b("v"))
        XCTAssertEqual(try second.get(forKey: b("k2")), b("w"))
        try second.close()
        // Releasing the last reference closes too.
        var fourth: LogStore? = try LogStore(directory: directory, options: options())
        try fourth!.put(b("x"), forKey: b("k3"))
        fourth = nil
        let fifth = try LogStore(directory: directory, options: options())
        XCTAssertEqual(try fifth.get(forKey: b("k3")), b("x"))
        XCTAssertEqual(fifth.recoveryReport, [])
    }

    func testDurabilityModes() throws {
        let modes: [LogStore.Options.Durability] = [.processCrashSafe, .fsyncEachWrite, .groupCommit(interval: 0.01)]
        for mode in modes {
            let directory = temporary.make()
            let store = try LogStore(directory: directory, options: options(segmentSize: 8 << 10, durability: mode))
            var expected: [[UInt8]: [UInt8]] = [:]
            for i in 0..<300 {
                try store.put(b("value-\(i)-\(mode)"), forKey: b("key-\(i % 120)"))
                expected[b("key-\(i % 120)")] = b("value-\(i)-\(mode)")
            }
            var batch = LogStore.WriteBatch()
            batch.delete(forKey: b("key-0"))
            batch.put(b("b"), forKey: b("batched"))
            try store.write(batch)
            expected[b("key-0")] = nil
            expected[b("batched")] = b("b")
            try store.sync()
            if case .groupCommit = mode { Thread.sleep(forTimeInterval: 0.05) }  // let the timer fire at least once
            try assertContents(store, expected, "\(mode)")
            // What a crash would leave right now.
            let copy = try copyStore(directory)
            try store.close()
            let reopened = try LogStore(directory: copy, options: options(segmentSize: 8 << 10, durability: mode))
            try assertContents(reopened, expected, "\(mode) reopened")
            XCTAssertEqual(try reopened.verify().problems, [])
            try reopened.close()
        }
    }

    func testReopenWithAnotherSegmentSize() throws {
        let directory = temporary.make()
        var expected: [[UInt8]: [UInt8]] = [:]
        for (round, segmentSize) in [1 << 20, 4096, 1 << 20, 8192].enumerated() {
            let store = try LogStore(directory: directory, options: options(segmentSize: segmentSize))
            try assertContents(store, expected, "round \(round) on open")
            for i in 0..<300 {
                let value = b("r\(round)-\(i)-") + [UInt8](repeating: UInt8(i % 256), count: i % 90)
                try store.put(value, forKey: b("k\(i % 170)"))
                expected[b("k\(i % 170)")] = value
            }
            try assertContents(store, expected, "round \(round)")
            XCTAssertEqual(try store.verify().problems, [], "round \(round)")
            if round == 2 { try store.compact() }
            // Half the rounds end in a crash (the copy), half in a clean close.
            if round % 2 == 1 {
                let crash = try copyStore(directory)
                try store.close()
                try FileManager.default.removeItem(at: directory)
                try FileManager.default.moveItem(at: crash, to: directory)
            } else {
                try store.close()
            }
        }
        let final = try LogStore(directory: directory, options: options(segmentSize: 2048))
        try assertContents(final, expected, "final")
        XCTAssertEqual(final.statistics.liveBytes, liveRecordBytes(final))
    }

    func testStatistics() throws {
        let directory = temporary.make()
        let store = try LogStore(directory: directory, options: options(segmentSize: 16 << 10))
        var stats = store.statistics
        // A new store holds nothing but the engine's own records (the key check value).
        XCTAssertEqual(stats.liveKeys, engineKeys.count)
        XCTAssertEqual(stats.liveBytes, liveRecordBytes(store))
        XCTAssertEqual(stats.liveBytes == 0, engineKeys.isEmpty)
        XCTAssertEqual(stats.deadBytes, 0)
        XCTAssertEqual(stats.segmentCount, 1)
        XCTAssertEqual(stats.segmentBytes, SegmentHeader.size + stats.liveBytes)
        // The keydir has a table per key space holding keys: none yet unless the engine's own.
        XCTAssertEqual(stats.keydirBytes == 0, engineKeys.isEmpty)
        XCTAssertEqual(stats.compactions, 0)
        // Incompressible values: 100 bytes reach the file in every mode.
        for i in 0..<100 { try store.put(incompressible(100, seed: UInt64(i)), forKey: b("k\(i)")) }
        stats = store.statistics
        XCTAssertEqual(stats.liveKeys, 100 + engineKeys.count)
        XCTAssertGreaterThan(stats.keydirBytes, 0)
        XCTAssertEqual(stats.deadBytes, 0)
        XCTAssertGreaterThan(stats.liveBytes, 100 * 100)
        XCTAssertEqual(stats.liveBytes + stats.deadBytes + stats.segmentCount * SegmentHeader.size, stats.segmentBytes)
        let liveAfterPuts = stats.liveBytes
        XCTAssertEqual(stats.liveBytes, liveRecordBytes(store))
        // Overwrites move bytes from live to dead; live stays about the same (sequence numbers
        // past 127 take one more varint byte).
        for i in 0..<50 { try store.put(incompressible(100, seed: UInt64(1000 + i)), forKey: b("k\(i)")) }
        stats = store.statistics
        XCTAssertEqual(stats.liveKeys, 100 + engineKeys.count)
        XCTAssertEqual(stats.liveBytes, liveRecordBytes(store))
        XCTAssertEqual(Double(stats.liveBytes), Double(liveAfterPuts), accuracy: 50)
        XCTAssertGreaterThan(stats.deadBytes, 50 * 100)
        XCTAssertEqual(stats.liveBytes + stats.deadBytes + stats.segmentCount * SegmentHeader.size, stats.segmentBytes)
        let deadAfterOverwrites = stats.deadBytes
        // Deletes: live goes down, dead goes up by the record and its tombstone.
        for i in 0..<10 { try store.delete(forKey: b("k\(i)")) }
        stats = store.statistics
        XCTAssertEqual(stats.liveKeys, 90 + engineKeys.count)
        XCTAssertEqual(stats.liveBytes, liveRecordBytes(store))
        XCTAssertLessThan(stats.liveBytes, liveAfterPuts)
        XCTAssertGreaterThan(stats.deadBytes, deadAfterOverwrites + 10 * 100)
        XCTAssertEqual(stats.liveBytes + stats.deadBytes + stats.segmentCount * SegmentHeader.size, stats.segmentBytes)
        XCTAssertGreaterThan(stats.segmentCount, 1)
        let beforeClose = stats
        try store.close()
        // The same figures after reopen, by snapshot and by scan.
        for useSnapshot in [true, false] {
            if !useSnapshot { try FileManager.default.removeItem(at: directory.appendingPathComponent("index.snapshot")) }
            let reopened = try LogStore(directory: directory, options: options(segmentSize: 16 << 10))
            let again = reopened.statistics
            XCTAssertEqual(again.liveKeys, beforeClose.liveKeys, "snapshot \(useSnapshot)")
            XCTAssertEqual(again.liveBytes, beforeClose.liveBytes, "snapshot \(useSnapshot)")
            XCTAssertEqual(again.deadBytes, beforeClose.deadBytes, "snapshot \(useSnapshot)")
            XCTAssertEqual(again.segmentBytes, beforeClose.segmentBytes, "snapshot \(useSnapshot)")
            try reopened.close()
        }
        let reopened = try LogStore(directory: directory, options: options(segmentSize: 16 << 10))
        try reopened.compact()
        stats = reopened.statistics
        XCTAssertEqual(stats.deadBytes, 0)
        XCTAssertEqual(stats.liveBytes, beforeClose.liveBytes)
        XCTAssertEqual(stats.compactions, 1)
        XCTAssertEqual(stats.liveKeys, 90 + engineKeys.count)
    }

    func testVerifyAndForEachRecord() throws {
        let store = try LogStore(directory: temporary.make(), options: options(segmentSize: 4096))
        for i in 0..<200 { try store.put(b("v\(i)"), forKey: b("k\(i % 50)"), space: UInt32(i % 2)) }
        try store.delete(forKey: b("k1"), space: 1)
        let report = try store.verify()
        XCTAssertEqual(report.problems, [])
        // The engine's own records (the key check value, when encrypting) come first.
        let total = 201 + engineKeys.count
        XCTAssertEqual(report.recordsChecked, total)
        let records = try allRecords(store)
        XCTAssertEqual(records.count, total)
        XCTAssertEqual(records.map(\.sequence), (1...total).map { UInt64($0) }, "file order is write order here")
        XCTAssertEqual(records.prefix(engineKeys.count).map(\.key), engineKeys)
        XCTAssertEqual(records.filter(\.isLive).count, store.statistics.liveKeys)
        XCTAssertEqual(records.filter(\.isTombstone).count, 1)
        XCTAssertEqual(records.last?.key, b("k1"))
        for record in records where record.isLive {
            let value = try XCTUnwrap(try store.get(forKey: record.key, space: record.space))
            if record.space == LogStore.engineSpace || !mode.encrypts {
                XCTAssertEqual(value, record.value, "stored as given")
            } else {
                // RecordInfo.value is as stored: the AES-GCM ciphertext and its 16-byte tag.
                XCTAssertEqual(record.flags & RecordFlags.encrypted.rawValue, RecordFlags.encrypted.rawValue)
                XCTAssertEqual(record.value.count, value.count + 16)
                XCTAssertNotEqual(Array(record.value.prefix(value.count)), value)
            }
        }
    }

    func allRecords(_ store: LogStore) throws -> [LogStore.RecordInfo] {
        var result: [LogStore.RecordInfo] = []
        try store.forEachRecord { result.append($0) }
        return result
    }
}

/// The space catalog: names to key spaces in the library's half.
final class SpaceCatalogTests: StoreTestCase {
    func testNamesGetStableDistinctSpacesInTheLibraryHalf() throws {
        let directory = temporary.make()
        var store = try LogStore(directory: directory, options: options())
        let prefs = try store.space(named: "preferences")
        let cache = try store.space(named: "cache:images")
        XCTAssertGreaterThanOrEqual(prefs, 1 << 31)
        XCTAssertNotEqual(prefs, cache)
        XCTAssertEqual(try store.space(named: "preferences"), prefs)
        try store.put(b("v"), forKey: b("k"), space: cache)
        try store.removeAll(space: cache)
        XCTAssertEqual(try store.keys(space: cache), [])
        try store.compact()
        try store.close()
        store = try LogStore(directory: directory, options: options())
        XCTAssertEqual(try store.space(named: "cache:images"), cache)
        XCTAssertEqual(try store.namedSpaces(), ["preferences": prefs, "cache:images": cache])
        XCTAssertEqual(try store.space(named: "third"), max(prefs, cache) + 1)
    }

    /// Thousands of names (a DAO with many tables, per-user caches): each gets its own space,
    /// the same one after reopen, and a new name after reopen continues above them all.
    func testManyNamesStayDistinctAndStableAcrossReopen() throws {
        let directory = temporary.make()
        var store = try LogStore(directory: directory, options: options())
        var assigned: [String: LogStore.KeySpace] = [:]
        for i in 0..<3_000 { assigned["table-\(i)"] = try store.space(named: "table-\(i)") }
        XCTAssertEqual(Set(assigned.values).count, assigned.count)
        XCTAssertEqual(try store.namedSpaces(), assigned)
        try store.close()
        store = try LogStore(directory: directory, options: options())
        defer { try? store.close() }
        XCTAssertEqual(try store.space(named: "table-1234"), assigned["table-1234"])
        XCTAssertEqual(try store.space(named: "one more"), assigned.values.max()! + 1)
    }

    /// A registration whose write fails (the disk is full when it needs a new segment) is not
    /// registered: the name is not listed, and the next attempt registers it at a space no other
    /// name has.
    func testAFailedRegistrationLeavesTheCatalogAsItWas() throws {
        let directory = temporary.make()
        let store = try LogStore(directory: directory, options: options(segmentSize: 4 << 10))
        defer { try? store.close() }
        FaultInjection.arm(failAt: 0, fault: .error(ENOSPC), only: [.fallocate])
        var registered: [String: LogStore.KeySpace] = [:]
        var refused: String?
        for i in 0..<1_000 {
            let name = "a somewhat long table name, to fill a segment soon: \(i)"
            do { registered[name] = try store.space(named: name) } catch StoreError.io(_, let code) {
                XCTAssertEqual(code, ENOSPC)
                refused = name
                break
            }
        }
        FaultInjection.disarm()
        let name = try XCTUnwrap(refused, "no registration needed a new segment")
        XCTAssertEqual(try store.namedSpaces(), registered)
        let space = try store.space(named: name)
        XCTAssertFalse(registered.values.contains(space))
        registered[name] = space
        XCTAssertEqual(try store.namedSpaces(), registered)
    }
}
