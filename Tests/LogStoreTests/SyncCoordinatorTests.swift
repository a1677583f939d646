import Foundation
import XCTest
@testable import LogStore

/// Group commit (`SyncCoordinator`): every writer returns only after a sync that began after
/// its write, concurrent writers share syncs, and a leader's wait for the others (gathering)
/// never holds a writer that is alone or one whose peers stopped writing.
final class SyncCoordinatorTests: XCTestCase {
    /// A stand-in for the store: generations handed out under a lock, a sync that takes
    /// `syncMicros` and records the newest generation written when it began.
    private final class FakeLog: @unchecked Sendable {
        let lock = NSLock()
        var generation: UInt64 = 0
        var syncs = 0
        var durableThrough: UInt64 = 0
        let coordinator = SyncCoordinator()
        let syncMicros: UInt32

        init(syncMicros: UInt32) { self.syncMicros = syncMicros }

        /// Appends one write and waits until it is durable; returns whether a sync that began
        /// after the write covered it.
        func writeDurably() throws -> Bool {
            let mine: UInt64 = lock.withLock {
                generation += 1
                return generation
            }
            coordinator.noteWritten(mine)
            try coordinator.waitUntilDurable(mine) {
                let covering = lock.withLock { generation }
                usleep(syncMicros)
                lock.withLock {
                    syncs += 1
                    durableThrough = max(durableThrough, covering)
                }
            }
            return lock.withLock { durableThrough >= mine }
        }
    }

    /// Runs `body` on `count` threads at once and waits for all of them.
    private func runOnThreads(_ count: Int, _ body: @escaping @Sendable () -> Void) {
        let done = DispatchGroup()
        for _ in 0..<count {
            done.enter()
            Thread { body(); done.leave() }.start()
        }
        done.wait()
    }

    func testEveryWriterReturnsCoveredAndWritersShareSyncs() throws {
        let log = FakeLog(syncMicros: 300)
        let writers = 8, each = 100
        final class Failures: @unchecked Sendable { var count = 0; let lock = NSLock() }
        let failures = Failures()
        // Threads of their own: concurrentPerform would run only as many at once as there
        // are CPUs.
        runOnThreads(writers) {
            for _ in 0..<each where (try? log.writeDurably()) != true {
                failures.lock.withLock { failures.count += 1 }
            }
        }
        XCTAssertEqual(failures.count, 0, "a writer returned before a sync covered its write")
        XCTAssertLessThan(log.syncs, writers * each / 2, "eight writers did not share their syncs")
    }

    /// One writer alone: no peers to wait for, so each of its writes costs one sync and no
    /// gathering (a sync of 1 ms each: 50 writes in well under the 50 x 1.5 ms a half-sync
    /// wait per write would add).
    func testAWriterAloneDoesNotWaitForPeers() throws {
        let log = FakeLog(syncMicros: 1000)
        let start = Date()
        for _ in 0..<50 { XCTAssertTrue(try log.writeDurably()) }
        XCTAssertEqual(log.syncs, 50)
        XCTAssertLessThan(Date().timeIntervalSince(start), 50 * 0.0014 + 0.5)
    }

    /// Four writers, then three of them stop: the one left goes on without waiting for the
    /// others at every sync (the expected count falls back after one bounded wait).
    func testAWriterWhosePeersStoppedIsNotHeld() throws {
        let log = FakeLog(syncMicros: 1000)
        runOnThreads(4) {
            for _ in 0..<20 { _ = try? log.writeDurably() }
        }
        let start = Date()
        for _ in 0..<50 { XCTAssertTrue(try log.writeDurably()) }
        // 50 syncs of 1 ms, plus at most one gathering wait (0.5 ms) and scheduling slack.
        XCTAssertLessThan(Date().timeIntervalSince(start), 50 * 0.0014 + 0.5)
    }
}
