import LogStore

/// How a file's bytes are kept: as given, or encrypted (FORMAT.md, "Encrypted files"). The
/// counterpart of the source's plain `ZFileInputStream`/`ZFileOutputStream` and encrypting
/// `ZSecurityFileInputStream`/`ZSecurityFileOutputStream`.
public enum FileEncryption: Sendable, Equatable {
    /// The bytes as given (ZFileInputStream/ZFileOutputStream).
    case none
    /// Segmented AES-256-GCM under the storage's default key (the DataCenter's key).
    case storageKey
    /// Segmented AES-256-GCM under this 32-byte key.
    case key([UInt8])

    /// Whether the file is encrypted.
    public var isEncrypted: Bool { self != .none }
}

extension FileEncryption {
    /// The file encryption of a crypt the other layers take: `DataCrypt.default` is
    /// `.storageKey`, `DataCrypt.plain` is `.none`.
    /// - Throws: `FileStorageError.unsupported` for a custom encrypt/decrypt pair: a pair of
    ///   whole-value functions cannot give authenticated segments with random access; pass
    ///   `.key(_)` with a key of the application's instead.
    public init(_ crypt: DataCrypt) throws {
        if crypt.isStoreKey {
            self = .storageKey
        } else if crypt.isCustom {
            throw FileStorageError.unsupported("a custom DataCrypt for files (use FileEncryption.key)")
        } else {
            self = .none
        }
    }
}
