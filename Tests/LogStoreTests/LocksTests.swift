import Foundation
import XCTest
@testable import LogStore

/// The engine's own locks: `Mutex.withLockSpinning` (the syncer's way into `writeMutex`)
/// excludes plain `withLock` exactly as `withLock` does.
final class LocksTests: XCTestCase {
    /// One thread takes the lock with `withLock` in a tight loop (the writer), another with
    /// `withLockSpinning` (the syncer); every increment of the unguarded counter survives.
    func testSpinningAndBlockingTakersExcludeEachOther() {
        do {
            let mutex = Mutex()
            final class Counter: @unchecked Sendable { var value = 0 }
            let counter = Counter()
            let rounds = 200_000
            DispatchQueue.concurrentPerform(iterations: 2) { thread in
                for _ in 0..<rounds {
                    if thread == 0 {
                        mutex.withLock { counter.value += 1 }
                    } else {
                        mutex.withLockSpinning { counter.value += 1 }
                    }
                }
            }
            XCTAssertEqual(counter.value, 2 * rounds)
        }
    }

    /// A holder that keeps the lock for longer than the spinner polls: the spinner falls back
    /// to blocking and still gets in once the holder lets go.
    func testASpinnerOutlastedByTheHolderBlocksAndGetsIn() {
        let mutex = Mutex()
        let held = DispatchSemaphore(value: 0)
        let done = DispatchSemaphore(value: 0)
        final class Flag: @unchecked Sendable { var released = false }
        let flag = Flag()
        DispatchQueue.global().async {
            mutex.withLock {
                held.signal()
                usleep(200_000)
                flag.released = true
            }
        }
        held.wait()
        DispatchQueue.global().async {
            let sawRelease = mutex.withLockSpinning { flag.released }
            XCTAssertTrue(sawRelease, "the spinner got in while the lock was held")
            done.signal()
        }
        XCTAssertEqual(done.wait(timeout: .now() + 10), .success)
    }
}
