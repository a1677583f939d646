import XCTest
@testable import LogStore

final class CompactionTests: StoreTestCase {
    /// Writes `keys` keys, overwrites each `rounds` times, deletes every `deleteEvery`-th. The
    /// values are incompressible, so the segments fill alike in every `TestMode`.
    func churn(_ store: LogStore, keys: Int, rounds: Int, deleteEvery: Int, valueSize: Int = 100) throws -> [[UInt8]: [UInt8]] {
        var model: [[UInt8]: [UInt8]] = [:]
        var rng = SeededRandom(seed: UInt64(keys * 1000 + rounds))
        for round in 0..<rounds {
            for i in 0..<keys {
                let value = b("r\(round)-k\(i)-") + (0..<valueSize).map { _ in UInt8.random(in: 0...255, using: &rng) }
                try store.put(value, forKey: b("key-\(i)"))
                model[b("key-\(i)")] = value
            }
        }
        for i in stride(from: 0, to: keys, by: deleteEvery) {
            try store.delete(forKey: b("key-\(i)"))
            model[b("key-\(i)")] = nil
        }
        return model
    }

    func testCompactionReclaimsSpaceAndLosesNothing() throws {
        let directory = temporary.make()
        let store = try LogStore(directory: directory, options: options(segmentSize: 32 << 10))
        let model = try churn(store, keys: 500, rounds: 4, deleteEvery: 5)
        let before = store.statistics
        XCTAssertGreaterThan(before.deadBytes, before.liveBytes * 2)
        let filesBefore = try segmentFiles(directory).map(\.id)
        try store.compact()
        let after = store.statistics
        XCTAssertEqual(after.deadBytes, 0)
        XCTAssertEqual(after.liveBytes, before.liveBytes)
        XCTAssertEqual(after.liveBytes, liveRecordBytes(store))
        XCTAssertEqual(after.liveKeys, 400 + engineKeys.count)
        XCTAssertEqual(after.compactions, 1)
        XCTAssertLessThan(after.segmentBytes, before.segmentBytes / 3)
        XCTAssertEqual(after.liveBytes + after.segmentCount * SegmentHeader.size, after.segmentBytes)
        try assertContents(store, model)
        XCTAssertEqual(try store.verify().problems, [])
        // The input files are gone, the outputs are flagged, no temporary or commit file is left.
        let filesAfter = try segmentFiles(directory)
        XCTAssertTrue(Set(filesBefore).isDisjoint(with: filesAfter.map(\.id)))
        XCTAssertEqual(try fileNames(directory).filter { $0.hasSuffix(".tmp") || $0 == "COMPACTION" }, [])
        let onDisk = try filesAfter.reduce(0) { $0 + (try fileSize($1.url)) }
        XCTAssertLessThan(onDisk, before.segmentBytes / 3 + (256 << 10), "files shrank (the active may hold reserved space)")
        // Every file but the fresh active segment is a compaction output.
        XCTAssertEqual(try filesAfter.filter { !(try segmentHeader($0.url)).isCompactionOutput }.count, 1)
        // No tombstone survives, and no dead record.
        var tombstones = 0
        var records = 0
        try store.forEachRecord { info in
            records += 1
            if info.isTombstone { tombstones += 1 }
            XCTAssertTrue(info.isLive, "only live records after compaction")
            XCTAssertEqual(info.flags & RecordFlags.batchContinues.rawValue, 0)
        }
        XCTAssertEqual(tombstones, 0)
        XCTAssertEqual(records, 400 + engineKeys.count)
        // Keep writing after compaction, then reopen both ways: deleted keys stay deleted.
        try store.put(b("post"), forKey: b("post"))
        var expected = model
        expected[b("post")] = b("post")
        try store.close()
        for useSnapshot in [true, false] {
            if !useSnapshot { try FileManager.default.removeItem(at: directory.appendingPathComponent("index.snapshot")) }
            let reopened = try LogStore(directory: directory, options: options(segmentSize: 32 << 10))
            XCTAssertEqual(reopened.recoveryReport, [])
            try assertContents(reopened, expected, "snapshot \(useSnapshot)")
            XCTAssertEqual(reopened.statistics.deadBytes, 0)
            try reopened.close()
        }
    }

    /// Deletes whose puts are far older, compacted in several rounds, interleaved with writes.
    func testTombstoneDroppingNeverResurrects() throws {
        let directory = temporary.make()
        let store = try LogStore(directory: directory, options: options(segmentSize: 4096))
        var model: [[UInt8]: [UInt8]] = [:]
        for i in 0..<200 {
            try store.put(b("v\(i)"), forKey: b("k\(i)"))
            model[b("k\(i)")] = b("v\(i)")
        }
        try store.compact()  // k* now live in compaction outputs
        for i in stride(from: 0, to: 200, by: 3) {
            try store.delete(forKey: b("k\(i)"))
            model[b("k\(i)")] = nil
        }
        // Background-style compaction (active not sealed): the newest tombstones stay in the active segment.
        try store.engine.compact(sealActive: false)
        for i in stride(from: 1, to: 200, by: 3) {
            try store.delete(forKey: b("k\(i)"))
            model[b("k\(i)")] = nil
        }
        for i in stride(from: 0, to: 200, by: 6) {
            // Re-put some deleted keys, then delete them again.
            try store.put(b("again\(i)"), forKey: b("k\(i)"))
            try store.delete(forKey: b("k\(i)"))
        }
        for round in 0..<3 {
            let copy = try copyStore(directory, label: "round\(round)")
            try store.compact()
            try assertContents(store, model, "round \(round)")
            // A crash copy, with and without the snapshot compaction wrote.
            for useSnapshot in [true, false] {
                let crash = try copyStore(directory, label: "crash")
                if !useSnapshot { try? FileManager.default.removeItem(at: crash.appendingPathComponent("index.snapshot")) }
                let reopened = try LogStore(directory: crash, options: options(segmentSize: 4096))
                try assertContents(reopened, model, "round \(round) crash copy, snapshot \(useSnapshot)")
                try reopened.close()
            }
            // The copy from before this compaction also holds the right contents.
            try? FileManager.default.removeItem(at: copy.appendingPathComponent("index.snapshot"))
            let old = try LogStore(directory: copy, options: options(segmentSize: 4096))
            try assertContents(old, model, "round \(round) before compaction")
            try old.close()
            try store.put(b("x\(round)"), forKey: b("x\(round)"))
            model[b("x\(round)")] = b("x\(round)")
        }
        try store.close()
        try FileManager.default.removeItem(at: directory.appendingPathComponent("index.snapshot"))
        let final = try LogStore(directory: directory, options: options(segmentSize: 4096))
        try assertContents(final, model, "final scan")
    }

    func testExpiredRecordsAreDropped() throws {
        let directory = temporary.make()
        let store = try LogStore(directory: directory, options: options(segmentSize: 4096))
        for i in 0..<100 {
            try store.put(b("value-\(i)"), forKey: b("k\(i)"),
                          expiresAt: i % 2 == 0 ? Date(timeIntervalSinceNow: -5) : Date(timeIntervalSinceNow: 3600))
        }
        try store.put(b("soon"), forKey: b("soon"), expiresAt: Date(timeIntervalSinceNow: 0.3))
        XCTAssertEqual(store.statistics.liveKeys, 101 + engineKeys.count, "expired keys count until compaction")
        Thread.sleep(forTimeInterval: 0.4)
        try store.compact()
        XCTAssertEqual(store.statistics.liveKeys, 50 + engineKeys.count)
        XCTAssertEqual(store.statistics.deadBytes, 0)
        var keys: [[UInt8]] = []
        try store.forEachRecord { keys.append($0.key) }
        XCTAssertEqual(Set(keys), Set((0..<100).filter { $0 % 2 == 1 }.map { b("k\($0)") } + engineKeys))
        XCTAssertEqual(try store.keys(space: 0).count, 50)
        try store.close()
        for useSnapshot in [true, false] {
            if !useSnapshot { try FileManager.default.removeItem(at: directory.appendingPathComponent("index.snapshot")) }
            let reopened = try LogStore(directory: directory, options: options(segmentSize: 4096))
            XCTAssertEqual(reopened.statistics.liveKeys, 50 + engineKeys.count)
            XCTAssertNil(try reopened.get(forKey: b("k0")))
            XCTAssertEqual(try reopened.get(forKey: b("k1")), b("value-1"))
            try reopened.close()
        }
    }

    func testBackgroundCompactionTriggers() throws {
        let directory = temporary.make()
        let store = try LogStore(directory: directory, options: options(segmentSize: 16 << 10, compactionTrigger: 0.5))
        var model: [[UInt8]: [UInt8]] = [:]
        let deadline = Date(timeIntervalSinceNow: 10)
        var round = 0
        while store.statistics.compactions == 0 && Date() < deadline {
            for i in 0..<100 {
                let value = b("round-\(round)-\(i)-") + [UInt8](repeating: 7, count: 100)
                try store.put(value, forKey: b("k\(i)"))
                model[b("k\(i)")] = value
            }
            round += 1
            if round > 20 { Thread.sleep(forTimeInterval: 0.01) }
        }
        XCTAssertGreaterThan(store.statistics.compactions, 0, "a background compaction ran")
        try assertContents(store, model)
        try store.close()
        let reopened = try LogStore(directory: directory, options: options(segmentSize: 16 << 10, compactionTrigger: 0.5))
        try assertContents(reopened, model)
        XCTAssertEqual(try reopened.verify().problems, [])
    }

    func testCompactionWithNothingToDo() throws {
        let store = try LogStore(directory: temporary.make(), options: options())
        try store.compact()
        XCTAssertEqual(try store.verify().problems, [])
        try store.put(b("v"), forKey: b("k"))
        try store.compact()
        try store.compact()
        XCTAssertEqual(try store.get(forKey: b("k")), b("v"))
        XCTAssertEqual(store.statistics.deadBytes, 0)
        XCTAssertEqual(store.statistics.liveKeys, 1 + engineKeys.count)
        try store.engine.compact(sealActive: false)
        XCTAssertEqual(try store.get(forKey: b("k")), b("v"))
    }

    // MARK: Crash in the middle of compaction

    struct CompactionStages {
        /// The store, closed, before compaction.
        var before: URL
        /// A crash copy right after compaction finished.
        var after: URL
        var oldIDs: [UInt32]
        var newIDs: [UInt32]
        /// The empty active segment the compaction's seal created.
        var newActiveID: UInt32
        var model: [[UInt8]: [UInt8]]
    }

    /// Runs a real compaction and records the files before and after it.
    func compactionStages() throws -> CompactionStages {
        let directory = temporary.make()
        var model: [[UInt8]: [UInt8]] = [:]
        do {
            let store = try LogStore(directory: directory, options: options(segmentSize: 8 << 10))
            model = try churn(store, keys: 200, rounds: 3, deleteEvery: 4)
            // Some puts expiring, so the outputs also drop expired records.
            for i in 0..<20 { try store.put(b("gone"), forKey: b("exp-\(i)"), expiresAt: Date(timeIntervalSinceNow: -1)) }
            try store.close()
        }
        let before = try copyStore(directory, label: "before")
        let store = try LogStore(directory: directory, options: options(segmentSize: 8 << 10))
        try store.compact()
        let after = try copyStore(directory, label: "after")
        try store.close()
        let beforeIDs = Set(try segmentFiles(before).map(\.id))
        let afterFiles = try segmentFiles(after)
        let newIDs = try afterFiles.filter { try segmentHeader($0.url).isCompactionOutput }.map(\.id).filter { !beforeIDs.contains($0) }
        let newActive = try afterFiles.filter { file in
            guard !beforeIDs.contains(file.id) else { return false }
            return !(try segmentHeader(file.url)).isCompactionOutput
        }.map(\.id)
        XCTAssertEqual(newActive.count, 1)
        XCTAssertGreaterThan(newIDs.count, 1, "several output segments")
        XCTAssertTrue(Set(afterFiles.map(\.id)).isDisjoint(with: beforeIDs), "every old segment was an input")
        return CompactionStages(before: before, after: after, oldIDs: beforeIDs.sorted(), newIDs: newIDs.sorted(),
                                newActiveID: newActive[0], model: model)
    }

    enum Stage: String, CaseIterable {
        /// Outputs partly written as *.seg.tmp, no commit.
        case tmpWithoutCommit
        /// Outputs complete as *.seg.tmp, no commit yet.
        case completeTmpWithoutCommit
        /// Commit written, outputs not yet renamed.
        case committedNotRenamed
        /// Commit written, some outputs renamed.
        case committedPartlyRenamed
        /// Outputs renamed, old segments and the old snapshot still there.
        case renamedOldPresent
        /// Outputs renamed, snapshot removed, some old segments deleted.
        case someOldDeleted
        /// Every old segment deleted, the commit file not yet removed.
        case allOldDeleted
    }

    /// Builds the directory a crash at `stage` would leave.
    func build(_ stage: Stage, from stages: CompactionStages) throws -> URL {
        let directory = temporary.make(stage.rawValue)
        let fm = FileManager.default
        try fm.createDirectory(at: directory, withIntermediateDirectories: true)
        func copy(_ from: URL, _ name: String, as target: String? = nil) throws {
            try fm.copyItem(at: from.appendingPathComponent(name), to: directory.appendingPathComponent(target ?? name))
        }
        try copy(stages.before, "LOCK")
        for id in stages.oldIDs { try copy(stages.before, StoreFileName.segment(id)) }
        try copy(stages.after, StoreFileName.segment(stages.newActiveID))
        let commit = CompactionCommit(newSegments: stages.newIDs, oldSegments: stages.oldIDs).encoded()
        func writeCommit() throws { try Data(commit).write(to: directory.appendingPathComponent("COMPACTION")) }
        let oldSnapshot = { try copy(stages.before, "index.snapshot") }
        switch stage {
        case .tmpWithoutCommit:
            try oldSnapshot()
            try copy(stages.after, StoreFileName.segment(stages.newIDs[0]), as: StoreFileName.segment(stages.newIDs[0]) + ".tmp")
            let partial = directory.appendingPathComponent(StoreFileName.segment(stages.newIDs[1]) + ".tmp")
            try copy(stages.after, StoreFileName.segment(stages.newIDs[1]), as: partial.lastPathComponent)
            try truncateFile(partial, to: try fileSize(partial) / 2)
        case .completeTmpWithoutCommit:
            try oldSnapshot()
            for id in stages.newIDs { try copy(stages.after, StoreFileName.segment(id), as: StoreFileName.segment(id) + ".tmp") }
        case .committedNotRenamed:
            try oldSnapshot()
            for id in stages.newIDs { try copy(stages.after, StoreFileName.segment(id), as: StoreFileName.segment(id) + ".tmp") }
            try writeCommit()
        case .committedPartlyRenamed:
            try oldSnapshot()
            for (index, id) in stages.newIDs.enumerated() {
                try copy(stages.after, StoreFileName.segment(id), as: StoreFileName.segment(id) + (index == 0 ? "" : ".tmp"))
            }
            try writeCommit()
        case .renamedOldPresent:
            try oldSnapshot()
            for id in stages.newIDs { try copy(stages.after, StoreFileName.segment(id)) }
            try writeCommit()
        case .someOldDeleted:
            for id in stages.newIDs { try copy(stages.after, StoreFileName.segment(id)) }
            for id in stages.oldIDs.prefix(stages.oldIDs.count / 2) { try fm.removeItem(at: directory.appendingPathComponent(StoreFileName.segment(id))) }
            try writeCommit()
        case .allOldDeleted:
            for id in stages.newIDs { try copy(stages.after, StoreFileName.segment(id)) }
            for id in stages.oldIDs { try fm.removeItem(at: directory.appendingPathComponent(StoreFileName.segment(id))) }
            try writeCommit()
        }
        return directory
    }

    func testCrashInTheMiddleOfCompaction() throws {
        let stages = try compactionStages()
        let segmentOptions = options(segmentSize: 8 << 10)
        // The end states themselves.
        for directory in [stages.before, stages.after] {
            let store = try LogStore(directory: directory, options: segmentOptions)
            try assertContents(store, stages.model)
            try store.close()
        }
        for stage in Stage.allCases {
            let committed = ![.tmpWithoutCommit, .completeTmpWithoutCommit].contains(stage)
            // A read-only opener sees the right contents too, and changes nothing.
            do {
                let directory = try build(stage, from: stages)
                let names = try fileNames(directory)
                let store = try LogStore(directory: directory, options: options(segmentSize: 8 << 10, readOnly: true))
                try assertContents(store, stages.model, "\(stage) read-only")
                try store.close()
                XCTAssertEqual(try fileNames(directory), names, "\(stage): read-only open changed files")
            }
            let directory = try build(stage, from: stages)
            let store = try LogStore(directory: directory, options: segmentOptions)
            if committed {
                XCTAssertTrue(store.recoveryReport.contains { $0.contains("finished an interrupted compaction") }, "\(stage): \(store.recoveryReport)")
            }
            try assertContents(store, stages.model, "\(stage)")
            XCTAssertEqual(try store.verify().problems, [], "\(stage)")
            XCTAssertEqual(store.statistics.liveBytes, liveRecordBytes(store), "\(stage)")
            let ids = Set(try segmentFiles(directory).map(\.id))
            XCTAssertEqual(try fileNames(directory).filter { $0.hasSuffix(".tmp") || $0 == "COMPACTION" }, [], "\(stage)")
            if committed {
                XCTAssertTrue(ids.isDisjoint(with: stages.oldIDs), "\(stage): old segments deleted")
                XCTAssertTrue(ids.isSuperset(of: stages.newIDs), "\(stage): outputs in place")
                XCTAssertEqual(store.statistics.deadBytes, 0, "\(stage)")
            } else {
                XCTAssertTrue(ids.isSuperset(of: stages.oldIDs), "\(stage): old segments kept")
                // (Their ids may be reused by later segments; no compaction output may remain.)
                XCTAssertEqual(try segmentFiles(directory).filter { try segmentHeader($0.url).isCompactionOutput }.map(\.id), [],
                               "\(stage): outputs discarded")
            }
            // The recovered store works: write, compact, reopen both ways.
            try store.put(b("after-\(stage)"), forKey: b("after"))
            try store.delete(forKey: b("key-1"))
            var expected = stages.model
            expected[b("after")] = b("after-\(stage)")
            expected[b("key-1")] = nil
            try store.compact()
            try assertContents(store, expected, "\(stage) compacted again")
            try store.close()
            for useSnapshot in [true, false] {
                if !useSnapshot { try FileManager.default.removeItem(at: directory.appendingPathComponent("index.snapshot")) }
                let reopened = try LogStore(directory: directory, options: segmentOptions)
                XCTAssertEqual(reopened.recoveryReport, [], "\(stage)")
                try assertContents(reopened, expected, "\(stage) reopened, snapshot \(useSnapshot)")
                try reopened.close()
            }
        }
    }

    func testUnreadableCommitFileBeforeRenameIsIgnored() throws {
        let stages = try compactionStages()
        let directory = try build(.completeTmpWithoutCommit, from: stages)
        try Data((0..<40).map { UInt8($0) }).write(to: directory.appendingPathComponent("COMPACTION"))
        let store = try LogStore(directory: directory, options: options(segmentSize: 8 << 10))
        XCTAssertTrue(store.recoveryReport.contains { $0.contains("unreadable compaction commit") }, "\(store.recoveryReport)")
        try assertContents(store, stages.model)
        XCTAssertEqual(try fileNames(directory).filter { $0.hasSuffix(".tmp") || $0 == "COMPACTION" }, [])
    }
}
