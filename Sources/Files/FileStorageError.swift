import Foundation

/// What went wrong with a file of a `FileStorage`, and where. System call failures arrive as
/// `StoreError.io` (the call, the path and errno); a missing current user as
/// `StoreError.noCurrentUser`.
public enum FileStorageError: Error, Equatable, CustomStringConvertible {
    /// The name is not a relative path inside the storage: empty, absolute, with a `..` or `.`
    /// component, an empty component, a NUL byte, or ending in the temporary suffix `.ustmp`.
    case invalidName(String, reason: String)
    /// No file of that name.
    case notFound(String)
    /// A file of that name exists (rename onto an existing name).
    case alreadyExists(String)
    /// An encrypted file was asked for but the storage has no key and none was given.
    case noKey
    /// The operation does not apply (append to an encrypted file, a custom crypt pair).
    case unsupported(String)
    /// The reader or writer was used after `close()`.
    case closed(String)
    /// A seek beyond the end of the file.
    case invalidOffset(file: String, offset: Int64, size: Int64)
    /// The encrypted file is not in the format (too short, bad magic, bad header field), at the
    /// byte `offset` of the file.
    case corrupt(file: String, offset: Int64, reason: String)
    /// The encrypted file's format version is not one this library reads.
    case unsupportedVersion(file: String, version: UInt8)
    /// The key does not open the file: a wrong key, or a header altered since it was written.
    case wrongKey(file: String)
    /// Segment `segment` (starting at byte `offset` of the file) failed authentication: it was
    /// altered, swapped with another, or belongs to another file.
    case tampered(file: String, segment: Int, offset: Int64)
    /// The file ends after segment `segment`, which was not written as the last one: segments
    /// were cut off the end.
    case truncated(file: String, segment: Int)
    /// Segment `segment` was written as the last one but more bytes follow it.
    case extended(file: String, segment: Int)

    public var description: String {
        switch self {
        case .invalidName(let name, let reason): return "invalid file name \"\(name)\": \(reason)"
        case .notFound(let name): return "no file \"\(name)\""
        case .alreadyExists(let name): return "a file \"\(name)\" already exists"
        case .noKey: return "the storage has no key for encrypted files and none was given"
        case .unsupported(let what): return "not supported: \(what)"
        case .closed(let name): return "\"\(name)\" is closed"
        case .invalidOffset(let file, let offset, let size): return "\(file): offset \(offset) is beyond the end (\(size) bytes)"
        case .corrupt(let file, let offset, let reason): return "\(file): not a valid encrypted file at byte \(offset): \(reason)"
        case .unsupportedVersion(let file, let version): return "\(file): encrypted file format version \(version) is not supported"
        case .wrongKey(let file): return "\(file): the key does not open this file (wrong key, or its header was altered)"
        case .tampered(let file, let segment, let offset): return "\(file): segment \(segment) at byte \(offset) failed authentication (altered, reordered or from another file)"
        case .truncated(let file, let segment): return "\(file): truncated: the file ends after segment \(segment), which was not its last"
        case .extended(let file, let segment): return "\(file): extended: bytes follow segment \(segment), which was written as the last"
        }
    }
}
