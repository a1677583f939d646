import Dispatch
import Foundation

/// Runs the opening of a batch of segments (an encrypted reader's) on two threads when the batch
/// is large: AES-256-GCM runs at about the speed of the page-cache copy (FileHandle I/O) on one
/// core, so an encrypted stream can keep up with a plain one only with a second core. Each half
/// uses its own nonce buffer; `AESGCM` hands each thread a context of its own. (Writers seal
/// through `SealPipeline`, which overlaps the sealing with the writing.)
enum SegmentBatch {
    /// Bytes in a batch from which it is split: below this the hand-off to a second thread
    /// (microseconds) costs more than it saves.
    static let splitThreshold = 128 << 10
    /// Whether there is a second core to split onto (shared with the writers' `SealPipeline`).
    static let canSplit = ProcessInfo.processInfo.activeProcessorCount > 1

    /// Calls `part` over `0 ..< count`: once, or for two halves at once when `bytes` (the
    /// batch's size) reaches `splitThreshold`. Returns the smallest index a part returned (a
    /// part returns the first index that failed in its range, nil when none did).
    /// - Throws: the first error a part threw.
    static func run(count: Int, bytes: Int, _ part: (Range<Int>) throws -> Int?) throws -> Int? {
        guard canSplit, count > 1, bytes >= splitThreshold else { return try part(0 ..< count) }
        let middle = count / 2
        let results = withoutActuallyEscaping(part) { part in
            let halves = Halves(part)
            DispatchQueue.concurrentPerform(iterations: 2) { half in
                halves.run(half, half == 0 ? 0 ..< middle : middle ..< count)
            }
            return halves.results
        }
        var failed: Int?
        for result in results {
            if let index = try result.get() { failed = min(failed ?? index, index) }
        }
        return failed
    }

    /// The two halves' work and results, handed to `concurrentPerform`'s threads. Unchecked:
    /// each thread writes only its own slot, and the results are read after both returned.
    private final class Halves: @unchecked Sendable {
        let part: (Range<Int>) throws -> Int?
        private let slots = UnsafeMutableBufferPointer<Result<Int?, any Error>>.allocate(capacity: 2)

        init(_ part: @escaping (Range<Int>) throws -> Int?) {
            self.part = part
            _ = slots.initialize(from: [.success(nil), .success(nil)])
        }

        deinit {
            slots.deinitialize()
            slots.deallocate()
        }

        func run(_ half: Int, _ range: Range<Int>) {
            slots[half] = Result { try part(range) }
        }

        var results: [Result<Int?, any Error>] { Array(slots) }
    }
}
