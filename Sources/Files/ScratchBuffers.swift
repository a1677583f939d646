import Foundation
import Synchronization

/// Buffers that encrypted readers and writers borrow for their batches (about 1 MiB each) and
/// hand back when they are done, so that a process reading or writing many files reuses a few
/// warm buffers. A fresh buffer of that size is mapped by malloc and faults in page by page on
/// first touch: on this project's VM that cost as much as the AES of the bytes in it
/// (BENCHMARKS.md, "Files").
///
/// Process-wide, bounded: at most `retainedLimit` bytes wait in the pool; a buffer returned
/// beyond that is freed. A buffer is returned as it is: a borrower that held plaintext in it
/// wipes the bytes it wrote first.
enum ScratchBuffers {
    /// Bytes kept for reuse at most (a few readers' and writers' batches).
    static let retainedLimit = 16 << 20

    /// Free buffers by address (a pointer is not Sendable; the pool owns what it holds).
    private struct Pool: ~Copyable {
        var free: [(address: UInt, count: Int)] = []
        var retained = 0
    }

    private static let pool = Mutex(Pool())

    /// A buffer of exactly `byteCount` bytes (16-byte aligned), reused when one is free.
    static func borrow(byteCount: Int) -> UnsafeMutableRawBufferPointer {
        let reused: UInt? = pool.withLock { pool in
            guard let index = pool.free.firstIndex(where: { $0.count == byteCount }) else { return nil }
            pool.retained -= byteCount
            return pool.free.remove(at: index).address
        }
        if let reused, let start = UnsafeMutableRawPointer(bitPattern: reused) {
            return UnsafeMutableRawBufferPointer(start: start, count: byteCount)
        }
        return .allocate(byteCount: byteCount, alignment: 16)
    }

    /// Bytes waiting in the pool now (for tests).
    static var retainedBytes: Int { pool.withLock { $0.retained } }

    /// Takes `buffer` back for a later `borrow` (or frees it when the pool is full).
    static func giveBack(_ buffer: UnsafeMutableRawBufferPointer) {
        guard let start = buffer.baseAddress else { return }
        let address = UInt(bitPattern: start), count = buffer.count
        let kept = pool.withLock { pool -> Bool in
            guard pool.retained + count <= retainedLimit else { return false }
            pool.retained += count
            pool.free.append((address, count))
            return true
        }
        if !kept { buffer.deallocate() }
    }
}
