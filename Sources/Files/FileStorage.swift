import Foundation
import LogStore
import Preferences

/// File storage on real files: the source's Android `ZFile` (internal) and `ZExternalFile`
/// (external) with their plain and encrypting streams. Files are ordinary files with the names
/// the application gives (subfolders allowed) under the storage's folder:
///
/// ```
/// <location>/common/<name>        files that belong to no user
/// <location>/user-<hash>/<name>   with userDependent, the current user's (<hash> as Preferences)
/// ```
///
/// `<location>` is `<storage root>/Files` for `.internal` and the application's folder for
/// `.external(url)`. Get one from `DataCenter.fileStorage(_:userDependent:)` or
/// `CustomStorage.fileStorage(_:userDependent:)`, or for any folder with `init(folder:options:)`.
///
/// Writers replace files atomically at close; temporary files a crash left behind are removed
/// when a storage is opened. Encrypted files use the storage's key (FORMAT.md, "Encrypted files").
/// Thread-safe: any number of readers and writers may be open at once (each one used by one
/// thread at a time).
public final class FileStorage: Sendable {
    /// Where a storage's files live.
    public enum Location: Sendable, Equatable {
        /// Under the storage root (Android's `getFilesDir()`, `ZFile`).
        case `internal`
        /// Under a folder the application names (Android's `getExternalFilesDir()`, `ZExternalFile`).
        case external(URL)
    }

    /// How files are written.
    public struct Options: Sendable {
        /// The key of `FileEncryption.storageKey` (32 bytes); nil: encrypted files need a key
        /// given per call.
        public var key: [UInt8]?
        /// `.processCrashSafe`: no fsync (a process crash still leaves the old or new file);
        /// otherwise a closed writer syncs the file before its rename and the folder after.
        public var durability: LogStore.Options.Durability
        /// Plaintext bytes per segment of new encrypted files (64 ... 16 MiB; default 4 KiB, as
        /// Jetpack's EncryptedFile: a random 4 KiB read then decrypts 4-8 KiB, not 64-128 KiB;
        /// BENCHMARKS.md, "Files" has both sizes).
        public var segmentSize: Int

        public init(key: [UInt8]? = nil, durability: LogStore.Options.Durability = .processCrashSafe, segmentSize: Int = 4096) {
            self.key = key
            self.durability = durability
            self.segmentSize = segmentSize
        }
    }

    /// Where the files are.
    public let location: Location
    /// Whether the files follow the current user.
    public let isUserDependent: Bool
    /// How files are written.
    public let options: Options
    /// `<location>`: the common and user folders are inside it (or, for `init(folder:)`, the files).
    let base: URL
    /// The current user when `isUserDependent`; nil for a folder of its own.
    private let currentUser: (@Sendable () -> String?)?

    /// A storage whose files are directly in `folder` (created if needed), for no user.
    /// Removes temporary files a crash left in it.
    /// - Throws: `StoreError.io` when the folder cannot be created;
    ///   `FileStorageError.unsupported` for a key that is not 32 bytes or a segment size out
    ///   of range.
    public convenience init(folder: URL, options: Options = Options()) throws {
        try self.init(base: folder, location: .external(folder), userDependent: false, options: options, currentUser: nil)
    }

    init(base: URL, location: Location, userDependent: Bool, options: Options, currentUser: (@Sendable () -> String?)?) throws {
        if let key = options.key, key.count != 32 { throw FileStorageError.unsupported("a key of \(key.count) bytes (32 needed)") }
        guard (EncryptedFileHeader.minimumSegmentSize...EncryptedFileHeader.maximumSegmentSize).contains(options.segmentSize) else {
            throw FileStorageError.unsupported("segment size \(options.segmentSize)")
        }
        self.base = base
        self.location = location
        self.isUserDependent = userDependent
        self.options = options
        self.currentUser = currentUser
        try Directory.create(base.path)
        TemporaryFiles.removeLeftovers(under: base)
    }

    /// The folder the names are relative to now (the current user's with `isUserDependent`).
    /// - Throws: `StoreError.noCurrentUser` when user-dependent and no user is set.
    public func folder() throws -> URL {
        guard let currentUser else { return base }
        if isUserDependent {
            guard let user = currentUser() else { throw StoreError.noCurrentUser }
            return base.appendingPathComponent(DataCenterNames.userFolder(user), isDirectory: true)
        }
        return base.appendingPathComponent("common", isDirectory: true)
    }

    /// The file system URL of `name` (for APIs that take a URL; writing through it bypasses
    /// atomic replacement and encryption).
    /// - Throws: `FileStorageError.invalidName`; `StoreError.noCurrentUser`.
    public func url(of name: String) throws -> URL {
        try FileName.url(of: name, in: try folder())
    }

    /// Whether `durability` asks for syncs at close.
    var syncsOnClose: Bool { options.durability != .processCrashSafe }

    /// The key for `encryption`, nil for `.none`.
    /// - Throws: `FileStorageError.noKey` for `.storageKey` without a storage key;
    ///   `.unsupported` for a given key that is not 32 bytes.
    func key(for encryption: FileEncryption) throws -> [UInt8]? {
        switch encryption {
        case .none: return nil
        case .storageKey:
            guard let key = options.key else { throw FileStorageError.noKey }
            return key
        case .key(let key):
            guard key.count == 32 else { throw FileStorageError.unsupported("a key of \(key.count) bytes (32 needed)") }
            return key
        }
    }

    // MARK: Streams

    /// A writer of `name` (subfolders created as needed). Without `append`, the file is
    /// replaced atomically at `close()`; with `append` (plain files only) bytes are added to
    /// the end of the file in place (a crash may keep a prefix of them).
    /// - Throws: `FileStorageError.invalidName`, `.noKey`, `.unsupported` (append with
    ///   encryption); `StoreError.noCurrentUser`; `StoreError.io`.
    public func writer(_ name: String, encryption: FileEncryption = .none, append: Bool = false) throws -> FileWriter {
        let target = try url(of: name)
        if let key = try key(for: encryption) {
            guard !append else { throw FileStorageError.unsupported("append to an encrypted file (\"\(name)\")") }
            return FileWriter(name: name, backend: try EncryptedWriteBackend(target: target, durable: syncsOnClose, storageKey: key,
                                                                             segmentSize: options.segmentSize))
        }
        return FileWriter(name: name, backend: try PlainWriteBackend(target: target, durable: syncsOnClose, append: append))
    }

    /// A reader of `name`. For an encrypted file it authenticates the header and the last
    /// segment first (O(segment size)).
    /// - Throws: `FileStorageError.notFound`, `.invalidName`, `.noKey`, `.wrongKey`,
    ///   `.corrupt`, `.tampered`, `.truncated`, `.extended`; `StoreError.io`.
    public func reader(_ name: String, encryption: FileEncryption = .none) throws -> FileReader {
        let path = try url(of: name).path
        guard Self.isFile(path) else { throw FileStorageError.notFound(name) }
        if let key = try key(for: encryption) {
            return FileReader(name: name, backend: try EncryptedReadBackend(path: path, name: name, storageKey: key))
        }
        return FileReader(name: name, backend: try PlainReadBackend(path: path))
    }

    static func isFile(_ path: String) -> Bool {
        var isDirectory: ObjCBool = false
        return FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory) && !isDirectory.boolValue
    }
}

/// Folder names shared with the Preferences layer.
enum DataCenterNames {
    static func userFolder(_ userId: String) -> String { DataCenter.userFolderName(userId) }
}
