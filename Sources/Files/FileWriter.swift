import Foundation

/// Writes one file of a `FileStorage` (the source's `ZFileOutputStream`, or with encryption
/// `ZSecurityFileOutputStream`). Bytes go to a temporary file beside the target; `close()`
/// renames it over the target, so readers and a crash see the old file or the new one, never
/// a mix. In append mode (plain files only) bytes go to the file itself.
///
/// Not thread-safe: use one writer from one thread (or task) at a time. A writer released
/// without `close()` leaves the target as it was.
public final class FileWriter {
    /// The file's name in its storage.
    public let name: String
    /// Bytes given to `write` so far.
    public private(set) var bytesWritten: Int64 = 0
    private var backend: (any WriteBackend)?

    init(name: String, backend: any WriteBackend) {
        self.name = name
        self.backend = backend
    }

    deinit { backend?.abandon() }

    /// Whether `close()` or `discard()` ran.
    public var isClosed: Bool { backend == nil }

    /// Writes `bytes` (buffered; they reach the file by `close()`). O(bytes).
    /// - Throws: `FileStorageError.closed` after `close()`; `StoreError.io` when the file
    ///   cannot be written (the writer is then discarded and the target left as it was).
    public func write(_ bytes: some DataProtocol) throws {
        guard let backend else { throw FileStorageError.closed(name) }
        do {
            for region in bytes.regions {
                try region.withUnsafeBytes { try backend.write($0) }
            }
        } catch {
            discard()
            throw error
        }
        bytesWritten += Int64(bytes.count)
    }

    /// Writes `string` in `encoding`.
    /// - Throws: `FileStorageError.unsupported` when the string cannot be represented in
    ///   `encoding`; as `write(_:)` otherwise.
    public func write(_ string: String, encoding: String.Encoding = .utf8) throws {
        guard let data = string.data(using: encoding) else { throw FileStorageError.unsupported("\"\(name)\": text not representable in \(encoding)") }
        try write(data)
    }

    /// Writes what is buffered and puts the file in place: syncs it (unless the storage is
    /// only process-crash safe), renames it over the target, syncs the folder. Closing twice
    /// is not an error.
    /// - Throws: `StoreError.io` when a step fails: up to the rename the target is left as it
    ///   was; a failed sync of the folder after the rename leaves the new file in place but not
    ///   yet durable against a power loss.
    public func close() throws {
        guard let backend else { return }
        self.backend = nil
        try backend.finish()
    }

    /// Drops what was written: the target stays as it was (in append mode, bytes already
    /// written stay; the buffered ones go).
    public func discard() {
        backend?.abandon()
        backend = nil
    }
}
