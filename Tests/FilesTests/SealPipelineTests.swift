@testable import Files
import Foundation
import Synchronization
import XCTest

/// The two-thread seal-and-write pipeline of encrypted writers: every chunk sealed once and
/// written once, in order, after its seal; a failed seal or write stops it with nothing left
/// running.
final class SealPipelineTests: XCTestCase {
    /// What the closures saw, from both threads.
    private final class Log: @unchecked Sendable {
        let lock = NSLock()
        var sealed: [Int] = []
        var written: [Int] = []
        var sealsAfterReturn = 0
        var returned = false

        func seal(_ chunk: Int) {
            lock.withLock {
                sealed.append(chunk)
                if returned { sealsAfterReturn += 1 }
            }
        }
    }

    func testEveryChunkIsSealedOnceAndWrittenOnceInOrderAfterItsSeal() throws {
        for chunkCount in [1, 2, 3, 16, 17, 64] {
            for _ in 0 ..< 20 {
                let log = Log()
                try SealPipeline.run(chunkCount: chunkCount, seal: { chunk in
                    // Uneven seal times, so that the two threads interleave differently.
                    if chunk % 3 == 0 { usleep(UInt32(chunk % 5) * 20) }
                    log.seal(chunk)
                }, write: { chunks in
                    log.lock.withLock {
                        for chunk in chunks {
                            XCTAssertTrue(log.sealed.contains(chunk), "chunk \(chunk) written before it was sealed")
                            log.written.append(chunk)
                        }
                    }
                })
                XCTAssertEqual(log.sealed.sorted(), Array(0 ..< chunkCount))
                XCTAssertEqual(log.written, Array(0 ..< chunkCount))
            }
        }
    }

    func testAFailedSealStopsThePipelineWithNoSealRunningAfterItThrows() {
        struct Refused: Error, Equatable { let chunk: Int }
        for failing in [0, 1, 5, 15] {
            for _ in 0 ..< 20 {
                let log = Log()
                XCTAssertThrowsError(try SealPipeline.run(chunkCount: 16, seal: { chunk in
                    usleep(50)
                    if chunk == failing { throw Refused(chunk: chunk) }
                    log.seal(chunk)
                }, write: { chunks in
                    log.lock.withLock { log.written += chunks }
                })) { error in
                    XCTAssertEqual(error as? Refused, Refused(chunk: failing))
                }
                log.lock.withLock { log.returned = true }
                // A late helper job would seal here, after the pipeline returned.
                usleep(2_000)
                log.lock.withLock {
                    XCTAssertEqual(log.sealsAfterReturn, 0)
                    XCTAssertFalse(log.written.contains(failing), "the failed chunk was written")
                    XCTAssertEqual(log.written, Array(0 ..< log.written.count), "writes out of order")
                }
            }
        }
    }

    /// Every chunk but the first fails (as when the cipher cannot get memory): the helper stops
    /// at its first failure, so its error is written once (ThreadSanitizer runs this suite).
    func testManyFailedSealsReportOneErrorWithNoSealRunningAfterwards() {
        struct Refused: Error {}
        for _ in 0 ..< 50 {
            let log = Log()
            XCTAssertThrowsError(try SealPipeline.run(chunkCount: 32, seal: { chunk in
                // Failures spread over time, so that a helper that went on after its first one
                // would write its error while the caller reads it.
                if chunk != 0 {
                    usleep(20)
                    throw Refused()
                }
                log.seal(chunk)
            }, write: { chunks in
                log.lock.withLock { log.written += chunks }
            })) { XCTAssertTrue($0 is Refused) }
            log.lock.withLock { log.returned = true }
            usleep(500)
            log.lock.withLock {
                XCTAssertEqual(log.sealsAfterReturn, 0)
                XCTAssertTrue(log.written.allSatisfy { $0 == 0 }, "a failed chunk was written: \(log.written)")
            }
        }
    }

    func testAFailedWriteStopsThePipeline() {
        struct Full: Error {}
        let log = Log()
        XCTAssertThrowsError(try SealPipeline.run(chunkCount: 32, seal: { chunk in
            log.seal(chunk)
        }, write: { chunks in
            if chunks.upperBound > 4 { throw Full() }
            log.lock.withLock { log.written += chunks }
        })) { XCTAssertTrue($0 is Full) }
        log.lock.withLock { log.returned = true }
        usleep(2_000)
        log.lock.withLock { XCTAssertEqual(log.sealsAfterReturn, 0) }
    }
}
