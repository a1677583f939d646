import Foundation

/// Reads one file of a `FileStorage` (the source's `ZFileInputStream`, or with encryption
/// `ZSecurityFileInputStream`), from any offset. An encrypted file's reader decrypts only the
/// segments a read touches and returns no byte of a segment before its tag verified.
///
/// Not thread-safe: use one reader from one thread (or task) at a time.
public final class FileReader {
    /// The file's name in its storage.
    public let name: String
    /// Bytes of content (for an encrypted file, the plaintext; authenticated at open).
    public let size: Int64
    /// Where the next read starts.
    public private(set) var offset: Int64 = 0
    private var backend: (any ReadBackend)?

    init(name: String, backend: any ReadBackend) {
        self.name = name
        self.backend = backend
        self.size = Int64(backend.length)
    }

    /// Up to `count` bytes from the current offset; empty at the end of the file. Reads of an
    /// encrypted file cost the segments they touch.
    /// - Throws: `FileStorageError.closed` after `close()`; `.tampered`, `.truncated`,
    ///   `.extended` for a segment that does not authenticate; `StoreError.io`.
    public func read(upTo count: Int) throws -> Data {
        guard count > 0 else { return Data() }
        // Zero-filled, not uninitialised memory handed to Data(bytesNoCopy:): that skipped the
        // fill but made files-bench fault in fresh pages on every read (3x the page faults,
        // FileHandle's reads in the same process slowed too; BENCHMARKS.md, "Files").
        var data = Data(count: Int(min(Int64(count), max(0, size - offset))))
        guard !data.isEmpty else {
            guard backend != nil else { throw FileStorageError.closed(name) }
            return data
        }
        let read = try data.withUnsafeMutableBytes { try self.read(into: $0) }
        if read < data.count { data.removeSubrange(read...) }
        return data
    }

    /// Fills `buffer` from the current offset and advances; returns how many bytes were read
    /// (fewer than asked only at the end).
    /// - Throws: as `read(upTo:)`.
    public func read(into buffer: UnsafeMutableRawBufferPointer) throws -> Int {
        guard let backend else { throw FileStorageError.closed(name) }
        let read = try backend.read(into: buffer, at: Int(offset))
        offset += Int64(read)
        return read
    }

    /// Everything from the current offset to the end.
    /// - Throws: as `read(upTo:)`.
    public func readToEnd() throws -> Data {
        try read(upTo: Int(max(0, size - offset)))
    }

    /// Moves the offset of the next read to `offset` (0 ... size).
    /// - Throws: `FileStorageError.invalidOffset` beyond the end or below 0; `.closed`.
    public func seek(to offset: Int64) throws {
        guard backend != nil else { throw FileStorageError.closed(name) }
        guard offset >= 0, offset <= size else { throw FileStorageError.invalidOffset(file: name, offset: offset, size: size) }
        self.offset = offset
    }

    /// Releases the file. Closing twice is not an error.
    public func close() {
        backend = nil
    }
}
