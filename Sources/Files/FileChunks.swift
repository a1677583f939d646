import Foundation

/// The content of a file as an `AsyncSequence` of chunks of up to `chunkSize` bytes, read (and
/// for an encrypted file, authenticated) as it is iterated. Each iteration opens the file anew.
public struct FileChunks: AsyncSequence {
    public typealias Element = Data

    let storage: FileStorage
    let name: String
    let encryption: FileEncryption
    let chunkSize: Int

    /// Opens the file on its first `next()`; throws what `FileStorage.reader` and
    /// `FileReader.read(upTo:)` throw.
    public struct AsyncIterator: AsyncIteratorProtocol {
        let chunks: FileChunks
        var reader: FileReader?
        var finished = false

        public mutating func next() async throws -> Data? {
            guard !finished else { return nil }
            if reader == nil { reader = try chunks.storage.reader(chunks.name, encryption: chunks.encryption) }
            guard let chunk = try reader?.read(upTo: chunks.chunkSize), !chunk.isEmpty else {
                finished = true
                reader?.close()
                return nil
            }
            return chunk
        }
    }

    public func makeAsyncIterator() -> AsyncIterator { AsyncIterator(chunks: self) }
}

extension FileStorage {
    /// `name`'s content in chunks of up to `chunkSize` bytes (default 64 KiB), as an async sequence.
    /// - Throws: `FileStorageError.unsupported` for a chunk size below 1 (file errors come from
    ///   the iteration).
    public func chunks(of name: String, encryption: FileEncryption = .none, chunkSize: Int = 64 << 10) throws -> FileChunks {
        guard chunkSize > 0 else { throw FileStorageError.unsupported("chunk size \(chunkSize)") }
        return FileChunks(storage: self, name: name, encryption: encryption, chunkSize: chunkSize)
    }
}
