import Foundation

/// `Data` and `String` forms of the key-value calls, for code that holds Foundation types.
/// Keys given as `String` are their UTF-8 bytes, so `put(_:forKey: "k")` and
/// `put(_:forKey: Array("k".utf8))` name the same key. These wrap the `[UInt8]` calls (which
/// stay as they are): a `Data` or `String` costs one copy into or out of the store's bytes.
extension LogStore {
    /// Stores `value` under `key` in `space`, replacing any earlier value.
    /// - Throws: as `put(_:forKey:space:expiresAt:)`.
    public func put(_ value: Data, forKey key: String, space: KeySpace = 0, expiresAt: Date? = nil) throws {
        try put([UInt8](value), forKey: Array(key.utf8), space: space, expiresAt: expiresAt)
    }

    /// Stores the UTF-8 bytes of `value` under `key` in `space`, replacing any earlier value.
    /// - Throws: as `put(_:forKey:space:expiresAt:)`.
    public func put(_ value: String, forKey key: String, space: KeySpace = 0, expiresAt: Date? = nil) throws {
        try put(Array(value.utf8), forKey: Array(key.utf8), space: space, expiresAt: expiresAt)
    }

    /// Stores `value` under the byte key `key` in `space`.
    /// - Throws: as `put(_:forKey:space:expiresAt:)`.
    public func put(_ value: Data, forKey key: [UInt8], space: KeySpace = 0, expiresAt: Date? = nil) throws {
        try put([UInt8](value), forKey: key, space: space, expiresAt: expiresAt)
    }

    /// The value of `key` as `Data`; nil when absent, deleted or expired.
    /// - Throws: as `get(forKey:space:)`.
    /// - Complexity: O(1) plus one copy of the value.
    public func data(forKey key: String, space: KeySpace = 0) throws -> Data? {
        try withValue(forKey: Array(key.utf8), space: space) { Data($0) }
    }

    /// The value of the byte key `key` as `Data`; nil when absent, deleted or expired.
    /// - Throws: as `get(forKey:space:)`.
    public func data(forKey key: [UInt8], space: KeySpace = 0) throws -> Data? {
        try withValue(forKey: key, space: space) { Data($0) }
    }

    /// The value of `key` decoded as UTF-8 text (invalid sequences become U+FFFD, as
    /// `String(decoding:as:)` does); nil when absent, deleted or expired.
    /// - Throws: as `get(forKey:space:)`.
    public func string(forKey key: String, space: KeySpace = 0) throws -> String? {
        try withValue(forKey: Array(key.utf8), space: space) { String(decoding: $0, as: UTF8.self) }
    }

    /// Deletes `key` from `space` (see `delete(forKey:space:)`).
    public func delete(forKey key: String, space: KeySpace = 0) throws {
        try delete(forKey: Array(key.utf8), space: space)
    }

    /// The live, unexpired keys of `space` that start with `prefix`, as text, sorted bytewise;
    /// keys that are not valid UTF-8 are left out (`keys(space:prefix:)` lists every key).
    /// - Complexity: as `keys(space:prefix:)`.
    public func stringKeys(space: KeySpace = 0, prefix: String = "") throws -> [String] {
        try keys(space: space, prefix: Array(prefix.utf8)).compactMap { bytes in
            let text = String(decoding: bytes, as: UTF8.self)
            return text.utf8.elementsEqual(bytes) ? text : nil
        }
    }
}
