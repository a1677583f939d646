import Dispatch
import Foundation

/// Seals a batch of segments and writes it to the file on two threads as a pipeline: the batch
/// is cut into chunks (about 64 KiB); each thread takes the oldest sealed chunks not yet written
/// when no write is running (one write at a time, in file order, coalescing every chunk sealed
/// by then), and otherwise seals the next chunk. So one thread's write overlaps the other's
/// sealing, and the file never sees two writes at once.
///
/// Why not two halves each written by its own thread (`SegmentBatch`, as reads do): ext4's
/// buffered write holds the inode's lock exclusively, so two writes into one file serialize,
/// and the second spins on the first (`rwsem_spin_on_owner`, ~5% of a profile) instead of
/// sealing; a batch then took about half its sealing plus all of its writing.
enum SealPipeline {
    /// Plaintext bytes per chunk (at least one segment).
    static let chunkBytes = 64 << 10
    /// Plaintext bytes in a batch from which it is pipelined: below this the hand-off to a
    /// second thread (microseconds) costs more than it saves.
    static let minimumBatch = 128 << 10
    /// Whether there is a second core to run on.
    private static let canSplit = ProcessInfo.processInfo.activeProcessorCount > 1

    /// Runs `seal` for every chunk in `0 ..< chunks` and `write` over runs of consecutive
    /// sealed chunks (each chunk in exactly one run, runs in ascending order, one at a time,
    /// a run only after `seal` returned for each of its chunks). On two threads when
    /// `chunks > 1` and there is a second core: the calling thread and a helper started on a
    /// global queue. The caller does not wait for the helper to start: when no core is free
    /// (another process busy on it), the caller does the whole batch alone and returns, and
    /// the helper, when it runs, finds nothing left to do. Otherwise every chunk is sealed,
    /// then all written at once.
    /// - Throws: the first error `seal` or `write` threw; nothing more is written after it.
    static func run(chunks: Int, seal: @escaping (Int) throws -> Void, write: @escaping (Range<Int>) throws -> Void) throws {
        guard chunks > 0 else { return }
        guard canSplit, chunks > 1 else {
            for chunk in 0 ..< chunks { try seal(chunk) }
            try write(0 ..< chunks)
            return
        }
        let schedule = Schedule(chunks: chunks, seal: seal, write: write)
        DispatchQueue.global().async { schedule.work() }
        schedule.work()
        // Waits for the helper to leave `seal` or `write`; the helper may still start later,
        // and then calls neither.
        schedule.close()
        if let failure = schedule.failure { throw failure }
    }

    /// The chunks' state, shared by the two threads under `condition`. Unchecked: every
    /// mutable field is read and written with `condition` locked; `seal` and `write` are called
    /// unlocked, `seal` for distinct chunks at once, `write` by one thread at a time, and
    /// neither after `close()` (the closures may outlive the call, with a helper that starts
    /// late, but are never called then).
    private final class Schedule: @unchecked Sendable {
        let chunks: Int
        private let seal: (Int) throws -> Void
        private let write: (Range<Int>) throws -> Void
        /// Set by `close()`: a thread arriving later does nothing.
        private var closed = false
        /// Threads inside `work()`.
        private var active = 0
        private let condition = NSCondition()
        /// Chunks handed to a sealer so far (`0 ..< nextToSeal`).
        private var nextToSeal = 0
        /// Whether each chunk is sealed.
        private var sealed: [Bool]
        /// Chunks written so far (`0 ..< written`).
        private var written = 0
        private var writing = false
        private(set) var failure: (any Error)?

        init(chunks: Int, seal: @escaping (Int) throws -> Void, write: @escaping (Range<Int>) throws -> Void) {
            self.chunks = chunks
            self.seal = seal
            self.write = write
            sealed = Array(repeating: false, count: chunks)
        }

        /// One thread's part: write what is sealed when nobody writes, else seal the next
        /// chunk, else wait; until every chunk is written or something failed.
        func work() {
            condition.lock()
            defer { condition.unlock() }
            guard !closed else { return }
            active += 1
            defer {
                active -= 1
                condition.broadcast()
            }
            while failure == nil, written < chunks {
                if !writing, sealed[written] {
                    let start = written
                    var end = start + 1
                    while end < chunks, sealed[end] { end += 1 }
                    writing = true
                    condition.unlock()
                    let outcome = Result { try write(start ..< end) }
                    condition.lock()
                    writing = false
                    switch outcome {
                    case .success: written = end
                    case .failure(let error): failure = failure ?? error
                    }
                    condition.broadcast()
                } else if nextToSeal < chunks {
                    let chunk = nextToSeal
                    nextToSeal += 1
                    condition.unlock()
                    let outcome = Result { try seal(chunk) }
                    condition.lock()
                    switch outcome {
                    case .success: sealed[chunk] = true
                    case .failure(let error): failure = failure ?? error
                    }
                    condition.broadcast()
                } else {
                    condition.wait()
                }
            }
        }

        /// Ends the batch: later `work()` calls return at once; waits until no thread is inside
        /// `work()`.
        func close() {
            condition.lock()
            defer { condition.unlock() }
            closed = true
            while active > 0 { condition.wait() }
        }
    }
}
