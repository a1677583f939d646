import Foundation

/// Everything that can go wrong in a store, as a value you can switch over.
///
/// Every case says what went wrong and, where it applies, where: the file, the segment and the
/// byte offset. A throwing call leaves the store as it was before the call.
public enum StoreError: Error, Sendable {
    /// Another opener (this process or another) holds the store's lock.
    case locked(URL)
    /// A CustomStorage or DataCenter path is already live in this process.
    case alreadyOpen(URL)
    /// The handle was closed, or invalidated by a reset.
    case closed
    /// A write was attempted on a store opened read-only.
    case readOnly
    /// A userDependent object was used while no user is set.
    case noCurrentUser
    /// The key's check value does not match the one the store keeps for that key id.
    case wrongKey(keyID: UInt32)
    /// A value written with a custom crypt was read without it.
    case cryptRequired(key: String)
    /// Authentication failed: the record was altered.
    case tampered(String)
    /// A file is not what FORMAT.md says it should be; the message names the file and offset.
    case corrupt(String)
    /// A key or value is larger than the store accepts; the payload is the offending size.
    case valueTooLarge(Int)
    /// A system call failed; `operation` names the call and the file.
    case io(operation: String, errno: Int32)
}

extension StoreError: CustomStringConvertible {
    public var description: String {
        switch self {
        case .locked(let url): return "store at \(url.path) is locked by another opener"
        case .alreadyOpen(let url): return "\(url.path) is already open in this process"
        case .closed: return "the store handle is closed"
        case .readOnly: return "the store is open read-only"
        case .noCurrentUser: return "no current user is set"
        case .wrongKey(let id): return "wrong key for key id \(id)"
        case .cryptRequired(let key): return "value of \(key) needs its custom crypt to be read"
        case .tampered(let what): return "authentication failed: \(what)"
        case .corrupt(let what): return "corrupt: \(what)"
        case .valueTooLarge(let size): return "too large: \(size) bytes"
        case .io(let operation, let code): return "\(operation) failed: \(String(cString: strerror(code))) (errno \(code))"
        }
    }
}
