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
