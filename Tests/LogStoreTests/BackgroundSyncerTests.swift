import Foundation
import XCTest
@testable import LogStore

/// The background syncer's rules (issue 21): on by default in `.processCrashSafe`, no write waits
/// on it unless `waitsBeyondMaxUnsyncedBytes` asks for a hard byte bound, and a round takes the
/// written pages of the active segment out of the mapping before it fsyncs.
final class BackgroundSyncerTests: XCTestCase {
    func testDefaultModeBoundsOneSecondAndFourMiBWithoutWaits() {
        let options = LogStore.Options()
        XCTAssertEqual(options.durability, .processCrashSafe)
        XCTAssertEqual(options.maxUnsyncedInterval, 1)
        XCTAssertEqual(options.maxUnsyncedBytes, 4 << 20)
        XCTAssertFalse(options.waitsBeyondMaxUnsyncedBytes)
    }

    func testADefaultStoreRunsTheSyncer() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("syncer-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: directory) }
        let store = try LogStore(directory: directory)
        defer { try? store.close() }
        XCTAssertNotNil(store.engine.writeMutex.withLock { store.engine.backgroundSyncer })
        var off = LogStore.Options()
        off.maxUnsyncedInterval = nil
        off.maxUnsyncedBytes = nil
        let other = try LogStore(directory: directory.appendingPathComponent("off"), options: off)
        defer { try? other.close() }
        XCTAssertNil(other.engine.writeMutex.withLock { other.engine.backgroundSyncer })
    }

    /// Drives the slow path as a burst far past the byte bound would: the soft syncer only
    /// queues rounds, the hard one makes the writer sync.
    private func decisions(waits: Bool) -> [BackgroundSyncer.Decision] {
        let syncer = BackgroundSyncer(interval: 1, byteLimit: 4096, waitsBeyondByteLimit: waits)
        syncer.updateSlowPath()
        var seen: [BackgroundSyncer.Decision] = []
        for _ in 0..<100 {
            syncer.appendedBytes += 1000
            if syncer.appendedBytes >= syncer.slowPathAt { seen += syncer.decide() }
            // A round begins now and then but never completes: the disk is behind.
            if syncer.urgentQueued && syncer.appendedBytes % 7000 == 0 { syncer.roundBegins() }
        }
        return seen
    }

    func testNoWriteWaitsUnlessTheByteBoundIsHard() {
        let soft = decisions(waits: false)
        XCTAssertFalse(soft.contains(.syncNow), "a default-mode write synced itself")
        XCTAssertTrue(soft.contains(.queueUrgent))
        XCTAssertTrue(soft.contains(.scheduleTimed))
        XCTAssertTrue(decisions(waits: true).contains(.syncNow), "the hard bound never made a writer sync")
    }

    func testARoundTakesEachWrittenWholePageOnce() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("pages-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let page = Segment.pageSize
        let segment = try Segment.create(path: directory.appendingPathComponent("1.seg").path, id: 1, flags: 0,
                                         capacity: 16 * page, initialAllocation: 4 * page)
        XCTAssertTrue(segment.takeWrittenSinceLastSync().isEmpty, "the header's page is not whole yet")
        try segment.reserve(3 * page)
        segment.length += 3 * page                      // past the header: 3 whole pages and a part
        XCTAssertEqual(segment.takeWrittenSinceLastSync(), 0..<(3 * page))
        XCTAssertTrue(segment.takeWrittenSinceLastSync().isEmpty, "a page was taken twice")
        segment.length += page
        XCTAssertEqual(segment.takeWrittenSinceLastSync(), (3 * page)..<(4 * page))
        // The pages are out of the mapping, not out of the file: reading them back faults them in.
        memset(segment.base + SegmentHeader.size, 0x5A, 16)
        segment.region.dropResidentPages(offset: 0, count: 4 * page)
        XCTAssertEqual(segment.base.load(fromByteOffset: SegmentHeader.size + 15, as: UInt8.self), 0x5A)
    }

    /// The drop a round makes of a segment just before its fsync (a sealed one, or the active
    /// one after the others were synced): the pages written since the round's first take, once,
    /// and their bytes still read back.
    func testADropBeforeTheFsyncTakesWhatWasWrittenSinceAndKeepsTheBytes() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("drop-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let page = Segment.pageSize
        let segment = try Segment.create(path: directory.appendingPathComponent("1.seg").path, id: 1, flags: 0,
                                         capacity: 16 * page, initialAllocation: 8 * page)
        let lock = Mutex()
        try segment.reserve(6 * page)
        segment.length += 2 * page
        XCTAssertEqual(lock.withLock { segment.takeWrittenSinceLastSync() }, 0..<(2 * page))   // the round's capture
        memset(segment.base + 2 * page, 0x3C, 3 * page)
        segment.length += 3 * page                      // written while the round synced others
        segment.dropPagesWrittenSinceLastSync(lock: lock)
        XCTAssertTrue(segment.takeWrittenSinceLastSync().isEmpty, "the drop did not take the pages it dropped")
        for offset in stride(from: 2 * page, to: 5 * page, by: 512) {
            XCTAssertEqual(segment.base.load(fromByteOffset: offset, as: UInt8.self), 0x3C)
        }
    }
}
