import Foundation

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

    /// The free buffers. Unchecked: every access holds `lock` (an `NSLock`, a pthread mutex,
    /// which ThreadSanitizer follows; it reported `Synchronization.Mutex`'s futex as a race).
    private final class Pool: @unchecked Sendable {
        let lock = NSLock()
        var free: [UnsafeMutableRawBufferPointer] = []
        var retained = 0
    }

    private static let pool = Pool()

    /// A buffer of exactly `byteCount` bytes (16-byte aligned), reused when one is free.
    static func borrow(byteCount: Int) -> UnsafeMutableRawBufferPointer {
        pool.lock.lock()
        if let index = pool.free.firstIndex(where: { $0.count == byteCount }) {
            let buffer = pool.free.remove(at: index)
            pool.retained -= byteCount
            pool.lock.unlock()
            return buffer
        }
        pool.lock.unlock()
        return .allocate(byteCount: byteCount, alignment: 16)
    }

    /// Bytes waiting in the pool now (for tests).
    static var retainedBytes: Int {
        pool.lock.lock()
        defer { pool.lock.unlock() }
        return pool.retained
    }

    /// Frees every buffer waiting in the pool (tests start from an empty pool with it; a caller
    /// that wants the memory back may call it too).
    static func releaseAll() {
        pool.lock.lock()
        let free = pool.free
        pool.free = []
        pool.retained = 0
        pool.lock.unlock()
        for buffer in free { buffer.deallocate() }
    }

    /// Takes `buffer` back for a later `borrow` (or frees it when the pool is full).
    static func giveBack(_ buffer: UnsafeMutableRawBufferPointer) {
        pool.lock.lock()
        if pool.retained + buffer.count <= retainedLimit {
            pool.retained += buffer.count
            pool.free.append(buffer)
            pool.lock.unlock()
            return
        }
        pool.lock.unlock()
        buffer.deallocate()
    }
}
