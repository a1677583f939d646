import Dispatch
import Foundation
import Synchronization

/// Seals one batch of an encrypted file on two threads while the calling thread writes it: the
/// batch is cut into chunks (about 64 KiB of plaintext each), a helper thread takes chunks to
/// seal, in order, from a shared counter, and the caller writes every run of sealed chunks at
/// the front of the batch as soon as it is there. So the page-cache copy of the first chunks
/// overlaps the AES of the later ones (on this project's VM the copy is the slower of the two),
/// where sealing the whole batch first and then writing it cost the sum of both.
///
/// Only the caller writes, in file order, so no two threads contend for the file's lock. With
/// nothing to write, the caller seals the chunk it must write next when the helper has not
/// taken it (the helper is not up yet, or behind), and otherwise waits for it (spinning, then
/// yielding: a chunk is ~8 us of AES); it never seals a chunk further on, which would keep it
/// from writing one that is ready. If the helper is never scheduled, the caller seals every
/// chunk alone.
///
/// Lifetime: the helper's job may start after `run` returned (a busy machine). It touches the
/// batch's buffers only through a chunk it claimed, and `run` returns only once every claimed
/// chunk is settled and no chunk is left to claim, so a late job finds nothing and ends.
final class SealPipeline: @unchecked Sendable {
    /// Plaintext bytes per chunk: small enough that the first write waits for little AES,
    /// large enough that a hand-over per chunk costs little. (32 KiB to 128 KiB measured alike.)
    static let chunkBytes = 64 << 10

    /// The queue the helper's job runs on.
    private static let helperQueue = DispatchQueue(label: "UnifiedStorage.Files.SealPipeline", attributes: .concurrent)

    /// Chunks in the batch (at most 64: one bit each in the masks below).
    private let chunkCount: Int
    /// Seals chunk `i`; called on the caller's thread and on the helper's.
    private let sealChunk: (Int) throws -> Void
    /// The next chunk to claim (may run past `chunkCount`).
    private let nextChunk = Atomic<Int>(0)
    /// Chunks sealed, or whose seal failed (release: the sealed bytes and any error are
    /// published with the bit).
    private let settled = Atomic<UInt64>(0)
    /// Chunks whose seal failed on the helper.
    private let failedChunks = Atomic<UInt64>(0)
    /// The helper's error; written once (the helper stops at its first failure), before its
    /// chunk's bit is set in `settled`, and read only after that bit is seen.
    private var helperError: (any Error)?

    private init(chunkCount: Int, sealChunk: @escaping (Int) throws -> Void) {
        self.chunkCount = chunkCount
        self.sealChunk = sealChunk
    }

    /// Seals chunks `0 ..< chunkCount` with `seal` (on this thread and a helper) and calls
    /// `write` on this thread for runs of sealed chunks in order, each chunk once, every chunk
    /// written before it returns. `seal` must be safe to call for different chunks at once.
    /// - Throws: the first error `seal` or `write` threw; chunks after it may be unwritten,
    ///   and no seal is running or will run when it throws.
    static func run(chunkCount: Int, seal: @escaping (Int) throws -> Void, write: (Range<Int>) throws -> Void) throws {
        guard SegmentBatch.canSplit, chunkCount > 1, chunkCount <= 64 else {
            // One thread: everything sealed, then one write (fewer, larger writes cost less).
            for chunk in 0 ..< chunkCount { try seal(chunk) }
            try write(0 ..< chunkCount)
            return
        }
        let pipeline = SealPipeline(chunkCount: chunkCount, sealChunk: seal)
        helperQueue.async { pipeline.help() }
        try pipeline.drive(write: write)
    }

    private static func bit(_ chunk: Int) -> UInt64 { 1 << UInt64(chunk) }

    /// A chunk no one has claimed, or nil when all are.
    private func claim() -> Int? {
        let chunk = nextChunk.wrappingAdd(1, ordering: .relaxed).oldValue
        return chunk < chunkCount ? chunk : nil
    }

    /// The helper: seals chunks until none is left, or until one fails (so `helperError` is
    /// written once, before the release that publishes it; the caller takes the rest).
    private func help() {
        while let chunk = claim() {
            do {
                try sealChunk(chunk)
            } catch {
                helperError = error
                failedChunks.bitwiseOr(Self.bit(chunk), ordering: .relaxed)
                settled.bitwiseOr(Self.bit(chunk), ordering: .releasing)
                return
            }
            settled.bitwiseOr(Self.bit(chunk), ordering: .releasing)
        }
    }

    /// The caller: writes what is sealed, else seals the next chunk to write if no one has
    /// taken it, else waits for the helper to finish it.
    private func drive(write: (Range<Int>) throws -> Void) throws {
        var written = 0
        var idleRounds = 0
        do {
            while written < chunkCount {
                let mask = settled.load(ordering: .acquiring)
                var ready = written
                while ready < chunkCount, mask & Self.bit(ready) != 0 { ready += 1 }
                if ready > written {
                    if failedChunks.load(ordering: .relaxed) & mask != 0, let helperError { throw helperError }
                    try write(written ..< ready)
                    written = ready
                    idleRounds = 0
                } else if nextChunk.compareExchange(expected: written, desired: written + 1, ordering: .relaxed).exchanged {
                    // The chunk to write next is unclaimed (the helper is behind or not up yet):
                    // seal it here. Chunks after it are left to the helper, so this thread is
                    // never busy sealing when a chunk is ready to write.
                    defer { settled.bitwiseOr(Self.bit(written), ordering: .releasing) }
                    try sealChunk(written)
                } else {
                    // The helper is sealing chunk `written`: about 8 us of AES.
                    idleRounds += 1
                    if idleRounds > 256 { sched_yield() }
                }
            }
        } catch {
            settle()
            throw error
        }
    }

    /// Stops further claims and waits until every chunk claimed so far is settled.
    private func settle() {
        let claimed = min(nextChunk.exchange(chunkCount, ordering: .relaxed), chunkCount)
        let all = claimed == 64 ? UInt64.max : Self.bit(claimed) - 1
        while settled.load(ordering: .acquiring) & all != all { sched_yield() }
    }
}
