#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import LogStore

/// A read-only memory mapping of a whole file, unmapped when the last reference goes. The
/// index checkpoint (`IndexCheckpointFile`) is served from one: its pages are the kernel's page
/// cache (RssFile), not the process heap, and only the pages a statement touches are read.
///
/// The file must not be truncated while it is mapped: the engine never rewrites a checkpoint
/// file in place (a new one is written beside it and renamed over it, so a mapping keeps the
/// old file's pages).
final class MappedFile: @unchecked Sendable {
    let base: UnsafeRawPointer
    let length: Int

    /// Maps the file at `path`.
    /// - Throws: `StoreError.io` when it cannot be opened, measured or mapped;
    ///   `StoreError.corrupt` when it is empty.
    init(path: String) throws {
        let descriptor = open(path, O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else { throw StoreError.io(operation: "open \(path)", errno: errno) }
        defer { _ = close(descriptor) }
        var info = stat()
        guard fstat(descriptor, &info) == 0 else { throw StoreError.io(operation: "fstat \(path)", errno: errno) }
        let length = Int(info.st_size)
        guard length > 0 else { throw StoreError.corrupt("\(path): empty file") }
        guard let pointer = mmap(nil, length, PROT_READ, MAP_SHARED, descriptor, 0), pointer != MAP_FAILED else {
            throw StoreError.io(operation: "mmap \(path)", errno: errno)
        }
        base = UnsafeRawPointer(pointer)
        self.length = length
    }

    var bytes: UnsafeRawBufferPointer { UnsafeRawBufferPointer(start: base, count: length) }

    /// Takes the file's pages out of the process (they stay in the page cache; a later read
    /// faults them back in): after a checkpoint read the whole file to write the next one.
    func releaseResidentPages() {
        _ = madvise(UnsafeMutableRawPointer(mutating: base), length, MADV_DONTNEED)
    }

    deinit { munmap(UnsafeMutableRawPointer(mutating: base), length) }
}

/// Little-endian integers stored at any alignment in a mapped file (`MappedFile`).
enum MappedInts {
    @inline(__always)
    static func u32(_ base: UnsafeRawPointer, _ i: Int) -> UInt32 {
        UInt32(littleEndian: base.loadUnaligned(fromByteOffset: i &* 4, as: UInt32.self))
    }

    @inline(__always)
    static func u64(_ base: UnsafeRawPointer, _ i: Int) -> UInt64 {
        UInt64(littleEndian: base.loadUnaligned(fromByteOffset: i &* 8, as: UInt64.self))
    }
}
