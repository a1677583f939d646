import XCTest
@testable import LogStore

/// Reopening: by snapshot, by full scan, after a crash (a copy of the directory taken while the
/// store is open), and after damage to copies of real files.
final class RecoveryTests: StoreTestCase {
    /// The expected contents per space.
    typealias Model = [LogStore.KeySpace: [[UInt8]: [UInt8]]]

    /// A mixed workload over three spaces: puts, overwrites, deletes, batches, expiring puts.
    @discardableResult
    func workload(_ store: LogStore, model: inout Model, seed: UInt64, operations: Int, keyRange: Int = 300) throws -> Model {
        var rng = SeededRandom(seed: seed)
        for step in 0..<operations {
            let space = LogStore.KeySpace.random(in: 0..<3, using: &rng)
            let key = b("key-\(Int.random(in: 0..<keyRange, using: &rng))")
            switch Int.random(in: 0..<20, using: &rng) {
            case 0..<12:
                let value = b("v-\(seed)-\(step)-") + [UInt8](repeating: UInt8(step % 256), count: Int.random(in: 0..<200, using: &rng))
                try store.put(value, forKey: key, space: space)
                model[space, default: [:]][key] = value
            case 12..<15:
                try store.delete(forKey: key, space: space)
                model[space, default: [:]][key] = nil
            case 15:
                try store.put(b("expired"), forKey: key, space: space, expiresAt: Date(timeIntervalSinceNow: -1))
                model[space, default: [:]][key] = nil
            default:
                var batch = LogStore.WriteBatch()
                for member in 0..<Int.random(in: 1...5, using: &rng) {
                    let batchKey = b("key-\(Int.random(in: 0..<keyRange, using: &rng))")
                    if Int.random(in: 0..<4, using: &rng) == 0 {
                        batch.delete(forKey: batchKey, space: space)
                        model[space, default: [:]][batchKey] = nil
                    } else {
                        let value = b("batch-\(seed)-\(step)-\(member)")
                        batch.put(value, forKey: batchKey, space: space)
                        model[space, default: [:]][batchKey] = value
                    }
                }
                try store.write(batch)
            }
        }
        return model
    }

    func assertModel(_ store: LogStore, _ model: Model, _ message: String = "", file: StaticString = #filePath, line: UInt = #line) throws {
        for space: LogStore.KeySpace in 0..<3 {
            try assertContents(store, model[space] ?? [:], space: space, "space \(space) \(message)", file: file, line: line)
        }
    }

    func testSnapshotAndFullScanAgree() throws {
        let directory = temporary.make()
        var model: Model = [:]
        do {
            let store = try LogStore(directory: directory, options: options(segmentSize: 8 << 10))
            try workload(store, model: &model, seed: 1, operations: 3000)
            try assertModel(store, model)
            try store.close()
        }
        XCTAssertGreaterThan(try segmentFiles(directory).count, 5)
        let viaSnapshot = try LogStore(directory: directory, options: options(segmentSize: 8 << 10))
        XCTAssertEqual(viaSnapshot.recoveryReport, [])
        try assertModel(viaSnapshot, model, "snapshot")
        let snapshotStats = viaSnapshot.statistics
        try viaSnapshot.close()
        let copy = try copyStore(directory)
        try FileManager.default.removeItem(at: copy.appendingPathComponent("index.snapshot"))
        let viaScan = try LogStore(directory: copy, options: options(segmentSize: 8 << 10))
        XCTAssertEqual(viaScan.recoveryReport, [])
        try assertModel(viaScan, model, "scan")
        let scanStats = viaScan.statistics
        XCTAssertEqual(scanStats.liveKeys, snapshotStats.liveKeys)
        XCTAssertEqual(scanStats.liveBytes, snapshotStats.liveBytes)
        XCTAssertEqual(scanStats.liveBytes, liveRecordBytes(viaScan))
        XCTAssertEqual(scanStats.deadBytes, snapshotStats.deadBytes)
        XCTAssertEqual(scanStats.segmentBytes, snapshotStats.segmentBytes)
        XCTAssertEqual(try viaScan.verify().problems, [])
        // Writes after a scan-open continue the sequence: newer writes win after another reopen.
        try viaScan.put(b("after"), forKey: b("key-1"))
        model[0, default: [:]][b("key-1")] = b("after")
        try viaScan.close()
        try FileManager.default.removeItem(at: copy.appendingPathComponent("index.snapshot"))
        let again = try LogStore(directory: copy, options: options(segmentSize: 8 << 10))
        try assertModel(again, model, "scan after more writes")
    }

    func testReopenAfterCrashWithoutClose() throws {
        let directory = temporary.make()
        var model: Model = [:]
        let store = try LogStore(directory: directory, options: options(segmentSize: 8 << 10))
        try workload(store, model: &model, seed: 2, operations: 1500)
        // No snapshot exists yet: the crash copy is recovered by a full scan.
        let firstCrash = try copyStore(directory, label: "crash1")
        XCTAssertFalse(FileManager.default.fileExists(atPath: firstCrash.appendingPathComponent("index.snapshot").path))
        let recovered = try LogStore(directory: firstCrash, options: options(segmentSize: 8 << 10))
        XCTAssertEqual(recovered.recoveryReport, [])
        try assertModel(recovered, model, "first crash")
        XCTAssertEqual(try recovered.verify().problems, [])
        try recovered.close()
        try store.close()

        // Now with a snapshot from a clean close, then more writes and rolls, then a crash.
        let reopened = try LogStore(directory: directory, options: options(segmentSize: 8 << 10))
        try workload(reopened, model: &model, seed: 3, operations: 1500)
        let secondCrash = try copyStore(directory, label: "crash2")
        XCTAssertTrue(FileManager.default.fileExists(atPath: secondCrash.appendingPathComponent("index.snapshot").path))
        let recovered2 = try LogStore(directory: secondCrash, options: options(segmentSize: 8 << 10))
        XCTAssertEqual(recovered2.recoveryReport, [], "the stale snapshot is used and the rest replayed")
        try assertModel(recovered2, model, "second crash")
        XCTAssertEqual(try recovered2.verify().problems, [])
        try recovered2.close()

        // And after a compaction (which writes a snapshot) followed by more writes.
        try reopened.compact()
        try workload(reopened, model: &model, seed: 4, operations: 1500)
        let thirdCrash = try copyStore(directory, label: "crash3")
        let recovered3 = try LogStore(directory: thirdCrash, options: options(segmentSize: 8 << 10))
        try assertModel(recovered3, model, "third crash")
        XCTAssertEqual(try recovered3.verify().problems, [])
        // The crash copy goes on working, and survives its own clean reopen.
        try workload(recovered3, model: &model, seed: 5, operations: 500)
        try recovered3.close()
        let final = try LogStore(directory: thirdCrash, options: options(segmentSize: 8 << 10))
        try assertModel(final, model, "after more writes")
        XCTAssertEqual(final.recoveryReport, [])
        try reopened.close()
    }

    /// Segment sizes to run the tail tests with: one larger than the first reservation of a new
    /// segment (256 KiB), so the crashed active file is shorter than a segment, and one smaller,
    /// so the crashed active file is exactly a segment long (all of it reserved up front).
    static let tailSegmentSizes = [1 << 20, 64 << 10]

    func testTornTailTruncated() throws {
        for segmentSize in Self.tailSegmentSizes {
        for withSnapshot in [true, false] {
            let (copy, model, active) = try crashCopy(before: withSnapshot ? 50 : 0, after: 40, segmentSize: segmentSize)
            let records = try records(in: active)
            let last = records.last!
            XCTAssertEqual(last.offset + last.header.totalLength, records.reduce(SegmentHeader.size) { max($0, $1.offset + $1.header.totalLength) })
            // Cut the last record in half (the rest of the file is gone, as after a kill mid-write).
            try truncateFile(active, to: last.offset + last.header.totalLength / 2)
            var expected = model
            expected[b("a39")] = nil
            let context = "segment size \(segmentSize), snapshot \(withSnapshot)"
            let store = try LogStore(directory: copy, options: options(segmentSize: segmentSize))
            XCTAssertTrue(store.recoveryReport.contains { $0.contains("torn tail") && $0.contains("\(last.offset)") },
                          "\(context): \(store.recoveryReport)")
            try assertContents(store, expected, context)
            XCTAssertEqual(try store.verify().problems, [], "the torn tail was cut: \(context)")
            XCTAssertEqual(store.statistics.segmentCount, try segmentFiles(copy).count, "no new segment needed: \(context)")
            // Writing goes on, and the cut stays cut.
            try store.put(b("new"), forKey: b("new"))
            expected[b("new")] = b("new")
            try store.close()
            let reopened = try LogStore(directory: copy, options: options(segmentSize: segmentSize))
            XCTAssertEqual(reopened.recoveryReport, [], context)
            try assertContents(reopened, expected, "reopened, \(context)")
            try reopened.close()
            try FileManager.default.removeItem(at: copy.appendingPathComponent("index.snapshot"))
            let scanned = try LogStore(directory: copy, options: options(segmentSize: segmentSize))
            XCTAssertEqual(scanned.recoveryReport, [], context)
            try assertContents(scanned, expected, "scanned, \(context)")
        }
        }
    }

    func testTornTailGarbled() throws {
        var rng = SeededRandom(seed: 77)
        for segmentSize in Self.tailSegmentSizes {
        for withSnapshot in [true, false] {
            for mode in ["garbage-in-record", "garbage-after", "half-zeroed"] {
                let (copy, model, active) = try crashCopy(before: withSnapshot ? 50 : 0, after: 40, segmentSize: segmentSize)
                let last = try records(in: active).last!
                var expected = model
                try modifyFile(active) { bytes in
                    switch mode {
                    case "garbage-in-record":
                        for i in (last.offset + 3)..<(last.offset + last.header.totalLength) { bytes[i] = UInt8.random(in: 0...255, using: &rng) }
                        expected[b("a39")] = nil
                    case "garbage-after":
                        // Half-written next record: random bytes after the last good one.
                        let end = last.offset + last.header.totalLength
                        for i in end..<min(bytes.count, end + 50) { bytes[i] = UInt8.random(in: 1...255, using: &rng) }
                        if bytes.count < end + 50 { bytes += (0..<50).map { _ in UInt8.random(in: 1...255, using: &rng) } }
                    default:
                        // The page holding the record's second half never reached the file.
                        for i in (last.offset + last.header.totalLength / 2)..<(last.offset + last.header.totalLength) { bytes[i] = 0 }
                        expected[b("a39")] = nil
                    }
                }
                let context = "\(mode), segment size \(segmentSize), snapshot \(withSnapshot)"
                let store = try LogStore(directory: copy, options: options(segmentSize: segmentSize))
                XCTAssertTrue(store.recoveryReport.contains { $0.contains("torn tail") }, "\(context): \(store.recoveryReport)")
                try assertContents(store, expected, context)
                XCTAssertEqual(try store.verify().problems, [], context)
                XCTAssertEqual(store.statistics.liveBytes, liveRecordBytes(store), context)
                for i in 0..<20 {
                    try store.put(b("more-\(i)"), forKey: b("m\(i)"))
                    expected[b("m\(i)")] = b("more-\(i)")
                }
                let crashAgain = try copyStore(copy, label: "again")
                try store.close()
                for directory in [copy, crashAgain] {
                    let reopened = try LogStore(directory: directory, options: options(segmentSize: segmentSize))
                    XCTAssertEqual(reopened.recoveryReport, [], context)
                    try assertContents(reopened, expected, "\(context) reopened")
                    XCTAssertEqual(try reopened.verify().problems, [], context)
                    try reopened.close()
                }
            }
        }
        }
    }

    func testBitFlipInSealedSegment() throws {
        for withSnapshot in [false, true] {
            let directory = temporary.make()
            var model: [[UInt8]: [UInt8]] = [:]
            do {
                let store = try LogStore(directory: directory, options: options(segmentSize: 4096))
                for i in 0..<300 {
                    let value = b("value-\(i)-") + [UInt8](repeating: UInt8(i % 200) + 1, count: 40)
                    try store.put(value, forKey: b("k\(i)"))
                    model[b("k\(i)")] = value
                }
                try store.close()
            }
            if !withSnapshot { try FileManager.default.removeItem(at: directory.appendingPathComponent("index.snapshot")) }
            let sealed = try segmentFiles(directory)[1].url
            let victims = try records(in: sealed)
            let victim = victims[victims.count / 2]
            // Find the victim's key, then flip one bit of its value.
            let victimKey: [UInt8] = try {
                let bytes = [UInt8](try Data(contentsOf: sealed))
                return Array(bytes[(victim.offset + victim.header.keyOffset)..<(victim.offset + victim.header.keyOffset + victim.header.keyLength)])
            }()
            try modifyFile(sealed) { $0[victim.offset + victim.header.valueOffset + 3] ^= 0x04 }
            let sizeBefore = try fileSize(sealed)
            let store = try LogStore(directory: directory, options: options(segmentSize: 4096))
            XCTAssertEqual(try fileSize(sealed), sizeBefore, "a sealed segment is never rewritten by recovery")
            var expected = model
            expected[victimKey] = nil
            for (key, value) in expected { XCTAssertEqual(try store.get(forKey: key), value) }
            if withSnapshot {
                // The snapshot points at the damaged record: it is never returned.
                assertStoreError(try store.get(forKey: victimKey), \.isCorrupt)
                assertStoreError(try store.entries(space: 0), \.isCorrupt)
            } else {
                XCTAssertTrue(store.recoveryReport.contains { $0.contains("corrupt") && $0.contains("\(victim.offset)") && $0.contains(sealed.lastPathComponent) },
                              "\(store.recoveryReport)")
                XCTAssertNil(try store.get(forKey: victimKey), "a corrupt record is skipped")
                try assertContents(store, expected)
            }
            let report = try store.verify()
            XCTAssertFalse(report.problems.isEmpty)
            XCTAssertTrue(report.problems.contains { $0.contains(sealed.lastPathComponent) && $0.contains("\(victim.offset)") }, "\(report.problems)")
            // Compaction drops the damaged bytes (and, with a snapshot, the keydir entry that
            // pointed at them); then verify is clean and the counts add up.
            try store.compact()
            XCTAssertEqual(try store.verify().problems, [])
            XCTAssertEqual(store.statistics.liveKeys, expected.count + engineKeys.count)
            XCTAssertEqual(store.statistics.liveBytes, liveRecordBytes(store))
            for (key, value) in expected { XCTAssertEqual(try store.get(forKey: key), value) }
            XCTAssertNil(try store.get(forKey: victimKey))
        }
    }

    func testIncompleteBatchAtTailIsDropped() throws {
        for cutMode in ["before-last-record", "inside-last-record", "after-first-record", "zeroed-last-record", "zeroed-half-last-record"] {
            for withSnapshot in [true, false] {
                let segmentSize = Self.tailSegmentSizes[withSnapshot ? 0 : 1]
                let (copy, model, active) = try crashCopy(before: withSnapshot ? 20 : 0, after: 10, segmentSize: segmentSize) { store in
                    var batch = LogStore.WriteBatch()
                    for i in 0..<6 { batch.put(b("batch-\(i)"), forKey: b("batch\(i)")) }
                    batch.delete(forKey: b("a0"))
                    try store.write(batch)
                }
                let records = try records(in: active)
                let batch = Array(records.suffix(7))
                XCTAssertTrue(batch.dropLast().allSatisfy { $0.header.flags.contains(.batchContinues) })
                XCTAssertFalse(batch.last!.header.flags.contains(.batchContinues))
                switch cutMode {
                case "before-last-record": try truncateFile(active, to: batch[6].offset)
                case "inside-last-record": try truncateFile(active, to: batch[6].offset + 3)
                // The file keeps its length (reserved space), the last record never reached it.
                case "zeroed-last-record":
                    try modifyFile(active) { bytes in for i in batch[6].offset..<(batch[6].offset + batch[6].header.totalLength) { bytes[i] = 0 } }
                case "zeroed-half-last-record":
                    try modifyFile(active) { bytes in
                        for i in (batch[6].offset + batch[6].header.totalLength / 2)..<(batch[6].offset + batch[6].header.totalLength) { bytes[i] = 0 }
                    }
                default: try truncateFile(active, to: batch[1].offset)
                }
                let store = try LogStore(directory: copy, options: options(segmentSize: segmentSize))
                XCTAssertTrue(store.recoveryReport.contains { $0.contains("incomplete batch") && $0.contains("\(batch[0].offset)") },
                              "\(cutMode): \(store.recoveryReport)")
                try assertContents(store, model, "\(cutMode) snapshot \(withSnapshot)")
                XCTAssertEqual(try store.verify().problems, [])
                try store.put(b("x"), forKey: b("x"))
                var expected = model
                expected[b("x")] = b("x")
                try store.close()
                let reopened = try LogStore(directory: copy, options: options(segmentSize: segmentSize))
                XCTAssertEqual(reopened.recoveryReport, [])
                try assertContents(reopened, expected, "\(cutMode) reopened")
                try reopened.close()
                try FileManager.default.removeItem(at: copy.appendingPathComponent("index.snapshot"))
                let scanned = try LogStore(directory: copy, options: options(segmentSize: segmentSize))
                XCTAssertEqual(scanned.recoveryReport, [])
                try assertContents(scanned, expected, "\(cutMode) scanned")
            }
        }
    }

    /// A batch with a damaged record in its middle is dropped whole: neither the records before
    /// the damage nor those after it apply, and writes around the batch are untouched.
    func testBatchBrokenByCorruptionIsDroppedWhole() throws {
        for (sealed, victimIndex) in [(true, 2), (false, 2), (true, 0), (false, 5)] {
            let directory = temporary.make()
            var model: [[UInt8]: [UInt8]] = [:]
            do {
                let store = try LogStore(directory: directory, options: options(segmentSize: 16 << 10))
                for i in 0..<20 {
                    try store.put(b("before-\(i)"), forKey: b("b\(i)"))
                    model[b("b\(i)")] = b("before-\(i)")
                }
                var batch = LogStore.WriteBatch()
                for i in 0..<5 { batch.put(b("batch-\(i)"), forKey: b("batch\(i)")) }
                batch.delete(forKey: b("b0"))
                try store.write(batch)
                for i in 0..<20 {
                    try store.put(b("after-\(i)"), forKey: b("a\(i)"))
                    model[b("a\(i)")] = b("after-\(i)")
                }
                if sealed {
                    // Push the batch into a sealed segment.
                    for i in 0..<200 {
                        let value = incompressible(200, seed: UInt64(i))
                        try store.put(value, forKey: b("fill\(i)"))
                        model[b("fill\(i)")] = value
                    }
                }
                try store.close()
            }
            try FileManager.default.removeItem(at: directory.appendingPathComponent("index.snapshot"))
            // Find the batch and damage one of its records.
            var located: (url: URL, records: [(offset: Int, header: RecordHeader)])?
            for file in try segmentFiles(directory) {
                let found = try records(in: file.url)
                if let first = found.firstIndex(where: { $0.header.flags.contains(.batchContinues) }) {
                    located = (file.url, Array(found[first..<(first + 6)]))
                }
            }
            let (url, batch) = try XCTUnwrap(located)
            let lastSegment = try segmentFiles(directory).last!.url
            XCTAssertEqual(url == lastSegment, !sealed, "the batch is where the test means it to be")
            let victim = batch[victimIndex]
            try modifyFile(url) { $0[victim.offset + victim.header.valueOffset - 1] ^= 0x20 }
            let store = try LogStore(directory: directory, options: options(segmentSize: 16 << 10))
            let context = "sealed \(sealed), damaged record \(victimIndex)"
            XCTAssertTrue(store.recoveryReport.contains { $0.contains("corrupt") }, "\(context): \(store.recoveryReport)")
            XCTAssertTrue(store.recoveryReport.contains { $0.contains("dropped") }, "\(context): \(store.recoveryReport)")
            try assertContents(store, model, context)
            try store.close()
            // And it stays dropped through a snapshot reopen.
            let reopened = try LogStore(directory: directory, options: options(segmentSize: 16 << 10))
            try assertContents(reopened, model, "\(context), reopened")
        }
    }

    func testCompleteBatchAtTailSurvivesCrash() throws {
        let (copy, model, _) = try crashCopy(before: 5, after: 5) { store in
            var batch = LogStore.WriteBatch()
            for i in 0..<6 { batch.put(b("batch-\(i)"), forKey: b("batch\(i)")) }
            batch.delete(forKey: b("a0"))
            try store.write(batch)
        }
        var expected = model
        for i in 0..<6 { expected[b("batch\(i)")] = b("batch-\(i)") }
        expected[b("a0")] = nil
        let store = try LogStore(directory: copy, options: options())
        XCTAssertEqual(store.recoveryReport, [])
        try assertContents(store, expected)
    }

    func testBadSnapshotIsIgnored() throws {
        let directory = temporary.make()
        var model: Model = [:]
        do {
            let store = try LogStore(directory: directory, options: options(segmentSize: 8 << 10))
            try workload(store, model: &model, seed: 9, operations: 1000)
            try store.close()
        }
        let snapshotBytes = [UInt8](try Data(contentsOf: directory.appendingPathComponent("index.snapshot")))
        var rng = SeededRandom(seed: 10)
        let damaged: [(String, [UInt8])] = [
            ("garbage", (0..<5000).map { _ in UInt8.random(in: 0...255, using: &rng) }),
            ("empty", []),
            ("truncated", Array(snapshotBytes.prefix(snapshotBytes.count / 2))),
            // In the metadata (header, segment list, tables, block checksums): refused at open.
            ("bit flip", { var bytes = snapshotBytes; bytes[IndexSnapshot.version3HeaderSize + 2] ^= 0x10; return bytes }()),
            ("header only", Array(snapshotBytes.prefix(IndexSnapshot.headerSize))),
        ]
        for (name, bytes) in damaged {
            let copy = try copyStore(directory)
            try Data(bytes).write(to: copy.appendingPathComponent("index.snapshot"))
            let store = try LogStore(directory: copy, options: options(segmentSize: 8 << 10))
            XCTAssertTrue(store.recoveryReport.contains { $0.contains("snapshot not used") }, "\(name): \(store.recoveryReport)")
            try assertModel(store, model, name)
            XCTAssertEqual(try store.verify().problems, [], name)
            try store.close()
            // The clean close replaced it with a good one.
            let reopened = try LogStore(directory: copy, options: options(segmentSize: 8 << 10))
            XCTAssertEqual(reopened.recoveryReport, [], name)
            try assertModel(reopened, model, "\(name) reopened")
        }
        // A snapshot that names a segment that is gone is not used either.
        let copy = try copyStore(directory)
        try FileManager.default.removeItem(at: try segmentFiles(copy)[0].url)
        let missing = try LogStore(directory: copy, options: options(segmentSize: 8 << 10))
        XCTAssertTrue(missing.recoveryReport.contains { $0.contains("snapshot not used") }, "\(missing.recoveryReport)")
    }

    /// A flipped bit in the slots of a version 3 snapshot (served in place, each block checked
    /// when first touched) is never acted on: an answer that touches it is a `corrupt` error, the
    /// snapshot is removed, and the reopened store has every key (read from the segments).
    func testDamagedSnapshotBlockIsRefusedAndRebuilt() throws {
        let directory = temporary.make()
        var model: Model = [:]
        do {
            let store = try LogStore(directory: directory, options: options(segmentSize: 8 << 10))
            try workload(store, model: &model, seed: 12, operations: 1000)
            try store.close()
        }
        var bytes = [UInt8](try Data(contentsOf: directory.appendingPathComponent("index.snapshot")))
        XCTAssertEqual(Array(bytes[4..<6]), [3, 0])
        // The tag of every entry of the application's spaces (the engine's own table, read and
        // checked whole during open, stays intact): any touch of one of their blocks finds it.
        let segmentCount = Int(LittleEndian.load32(bytes, 28))
        for table in 0..<Int(LittleEndian.load32(bytes, 40)) {
            let record = IndexSnapshot.version3HeaderSize + segmentCount * IndexSnapshot.segmentRecordSize
                + table * IndexSnapshot.version3TableRecordSize
            guard LittleEndian.load32(bytes, record) != LogStore.engineSpace else { continue }
            let start = Int(LittleEndian.load64(bytes, record + 16))
            let end = start + Int(LittleEndian.load32(bytes, record + 4)) * KeyDir.entrySize
            for index in stride(from: start, to: end, by: KeyDir.entrySize) where bytes[index] != 0 { bytes[index] ^= 0x10 }
        }
        try Data(bytes).write(to: directory.appendingPathComponent("index.snapshot"))
        let store = try LogStore(directory: directory, options: options(segmentSize: 8 << 10))
        XCTAssertTrue(store.engine.keydir.tables.contains { $0.snapshotBlocks != nil }, "served in place")
        var refused = 0
        var asked = 0
        for (space, pairs) in model {
            for key in pairs.keys {
                asked += 1
                do {
                    _ = try store.get(forKey: key, space: space)
                } catch StoreError.corrupt(let message) {
                    XCTAssertTrue(message.contains("index snapshot"), message)
                    refused += 1
                }
            }
        }
        XCTAssertGreaterThan(asked, 0)
        XCTAssertEqual(refused, asked, "every answer from the damaged keydir is refused")
        XCTAssertGreaterThan(try store.verify().problems.count, 0)
        try store.close()
        XCTAssertFalse(FileManager.default.fileExists(atPath: directory.appendingPathComponent("index.snapshot").path))
        let reopened = try LogStore(directory: directory, options: options(segmentSize: 8 << 10))
        try assertModel(reopened, model, "rebuilt from the segments")
        XCTAssertEqual(try reopened.verify().problems, [])
        try reopened.close()
        // ... and its clean close wrote a good version 3 snapshot again, served in place.
        let again = try LogStore(directory: directory, options: options(segmentSize: 8 << 10))
        XCTAssertEqual(again.recoveryReport, [])
        XCTAssertTrue(again.engine.keydir.tables.allSatisfy { $0.snapshotBlocks != nil })
        try assertModel(again, model, "served in place")
    }

    /// A store whose snapshot is version 2 (written before issue 16) opens from it (decoded the
    /// old way), and its next snapshot is version 3.
    func testVersion2SnapshotStillOpens() throws {
        let directory = temporary.make()
        var model: Model = [:]
        do {
            let store = try LogStore(directory: directory, options: options(segmentSize: 8 << 10))
            try workload(store, model: &model, seed: 13, operations: 1000)
            try store.close()
        }
        let url = directory.appendingPathComponent("index.snapshot")
        let version3 = [UInt8](try Data(contentsOf: url))
        let (snapshot, keydir) = try version3.withUnsafeBytes { try IndexSnapshot.decode($0, path: "s") }
        try Data(snapshot.encodeVersion2(keydir: keydir)).write(to: url)
        let store = try LogStore(directory: directory, options: options(segmentSize: 8 << 10))
        XCTAssertEqual(store.recoveryReport, [])
        XCTAssertTrue(store.engine.keydir.tables.allSatisfy { $0.snapshotBlocks == nil }, "decoded into memory")
        try assertModel(store, model, "from version 2")
        try workload(store, model: &model, seed: 14, operations: 300)
        try store.close()
        XCTAssertEqual(Array([UInt8](try Data(contentsOf: url))[4..<6]), [3, 0])
        let reopened = try LogStore(directory: directory, options: options(segmentSize: 8 << 10))
        XCTAssertEqual(reopened.recoveryReport, [])
        try assertModel(reopened, model, "from version 3")
    }

    func testOlderSnapshotIsStillCorrect() throws {
        let directory = temporary.make()
        var model: Model = [:]
        do {
            let store = try LogStore(directory: directory, options: options(segmentSize: 8 << 10))
            try workload(store, model: &model, seed: 11, operations: 800)
            try store.close()
        }
        let old = try Data(contentsOf: directory.appendingPathComponent("index.snapshot"))
        do {
            let store = try LogStore(directory: directory, options: options(segmentSize: 8 << 10))
            try workload(store, model: &model, seed: 12, operations: 800)
            try store.close()
        }
        try old.write(to: directory.appendingPathComponent("index.snapshot"))
        let store = try LogStore(directory: directory, options: options(segmentSize: 8 << 10))
        try assertModel(store, model, "old snapshot plus replay")
        XCTAssertEqual(try store.verify().problems, [])
    }

    func testStrayTemporaryFilesAreRemoved() throws {
        let directory = temporary.make()
        do {
            let store = try LogStore(directory: directory, options: options())
            try store.put(b("v"), forKey: b("k"))
            try store.close()
        }
        for name in ["index.snapshot.tmp", "COMPACTION.tmp", "00000063.seg.tmp"] {
            try Data([1, 2, 3]).write(to: directory.appendingPathComponent(name))
        }
        let store = try LogStore(directory: directory, options: options())
        XCTAssertEqual(try store.get(forKey: b("k")), b("v"))
        XCTAssertEqual(try fileNames(directory).filter { $0.hasSuffix(".tmp") }, [])
        try store.put(b("w"), forKey: b("k2"))
        try store.close()
        let reopened = try LogStore(directory: directory, options: options())
        XCTAssertEqual(try reopened.get(forKey: b("k2")), b("w"))
    }

    func testEmptyAndUnreadableSegmentFiles() throws {
        let directory = temporary.make()
        do {
            let store = try LogStore(directory: directory, options: options(segmentSize: 4096))
            for i in 0..<100 { try store.put(b("value-\(i)"), forKey: b("k\(i)")) }
            try store.close()
        }
        let copy = try copyStore(directory)
        let highest = try segmentFiles(copy).last!.id
        // A crash right after creating a segment: all zeros, removed.
        let zeroName = StoreFileName.segment(highest + 1)
        try Data(count: 4096).write(to: copy.appendingPathComponent(zeroName))
        // A file with a broken header: skipped and reported, left alone, and verify says so.
        let foreignName = StoreFileName.segment(highest + 2)
        try Data(repeating: 0x33, count: 100).write(to: copy.appendingPathComponent(foreignName))
        let store = try LogStore(directory: copy, options: options(segmentSize: 4096))
        XCTAssertFalse(FileManager.default.fileExists(atPath: copy.appendingPathComponent(zeroName).path))
        XCTAssertTrue(FileManager.default.fileExists(atPath: copy.appendingPathComponent(foreignName).path))
        XCTAssertTrue(store.recoveryReport.contains { $0.contains(foreignName) && $0.contains("unreadable") }, "\(store.recoveryReport)")
        for i in 0..<100 { XCTAssertEqual(try store.get(forKey: b("k\(i)")), b("value-\(i)")) }
        XCTAssertTrue(try store.verify().problems.contains { $0.contains(foreignName) })
        // New segments never take the unreadable file's id.
        for i in 0..<100 { try store.put(b("again-\(i)"), forKey: b("k\(i)")) }
        try store.close()
        XCTAssertEqual([UInt8](try Data(contentsOf: copy.appendingPathComponent(foreignName))), [UInt8](repeating: 0x33, count: 100))
        let reopened = try LogStore(directory: copy, options: options(segmentSize: 4096))
        for i in 0..<100 { XCTAssertEqual(try reopened.get(forKey: b("k\(i)")), b("again-\(i)")) }
    }

    func testReadOnlyOpenOfCrashedStoreChangesNothing() throws {
        let (copy, model, active) = try crashCopy(before: 10, after: 10)
        let last = try records(in: active).last!
        try truncateFile(active, to: last.offset + 5)
        try Data([9]).write(to: copy.appendingPathComponent("stray.seg.tmp"))
        var before: [String: Data] = [:]
        for name in try fileNames(copy) { before[name] = try Data(contentsOf: copy.appendingPathComponent(name)) }
        let store = try LogStore(directory: copy, options: options(readOnly: true))
        var expected = model
        expected[b("a9")] = nil
        try assertContents(store, expected)
        try store.close()
        var after: [String: Data] = [:]
        for name in try fileNames(copy) { after[name] = try Data(contentsOf: copy.appendingPathComponent(name)) }
        XCTAssertEqual(before, after)
    }
}
