#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A shared memory mapping of a file (or a private copy-on-write one), unmapped when the last
/// reference goes.
///
/// Readers use `base` under the engine's read lock; the engine unmaps a region only under its
/// write lock, so no reader can hold a pointer into a region that is going away.
final class MappedRegion: @unchecked Sendable {
    let base: UnsafeMutableRawPointer
    let length: Int

    /// - Parameter copyOnWrite: a private mapping the process may write to: a written page
    ///   becomes the process's own copy and nothing ever reaches the file.
    init(descriptor: Int32, length: Int, writable: Bool, copyOnWrite: Bool = false, path: String) throws {
        guard length > 0 else { throw StoreError.corrupt("\(path): cannot map an empty file") }
        try FaultInjection.failIfInjected(.mmap, path, operation: "mmap \(path)")
        let protection = writable || copyOnWrite ? (PROT_READ | PROT_WRITE) : PROT_READ
        let sharing = copyOnWrite ? MAP_PRIVATE : MAP_SHARED
        guard let pointer = mmap(nil, length, protection, sharing, descriptor, 0), pointer != MAP_FAILED else {
            throw StoreError.io(operation: "mmap \(path)", errno: errno)
        }
        self.base = pointer
        self.length = length
    }

    deinit {
        PowerLossSimulator.willUnmap(base: base)
        munmap(base, length)
    }

    /// Tells the kernel the pages of `[offset, offset + count)` may be dropped from this
    /// process: file-backed pages stay in the page cache (dirty ones are kept), but no longer
    /// count toward our resident set.
    func dropResidentPages(offset: Int, count: Int) {
        let page = Int(sysconf(Int32(_SC_PAGESIZE)))
        let start = (offset + page - 1) / page * page
        let end = min(offset + count, length) / page * page
        if end > start { madvise(base + start, end - start, MADV_DONTNEED) }
    }

    /// Asks the kernel to fault in `[offset, offset + count)` for writing now. Best effort.
    func populateForWriting(offset: Int, count: Int) {
        #if os(Linux)
        let page = Int(sysconf(Int32(_SC_PAGESIZE)))
        let start = offset / page * page
        let end = min(offset + count, length)
        let populateWrite: Int32 = 23   // MADV_POPULATE_WRITE; Glibc headers may predate it
        if end > start { _ = madvise(base + start, end - start, populateWrite) }
        #endif
    }
}
