import Foundation

/// APDataOptions: per-value options of `setObject`, `archiveObject`, `archive` and `saveJSON`.
///
/// Encryption is not an option here: it is chosen by the `crypt` argument of each call, as in
/// the source (whose `DefaultEncrypted` / `CustomEncrypted` bits were informational only).
public struct DataOptions: OptionSet, Sendable {
    /// The raw bits, numbered as the source's `APDataOptions`.
    public let rawValue: UInt32

    /// Options from raw bits.
    public init(rawValue: UInt32) { self.rawValue = rawValue }

    /// The value may be deleted by the cache cleaner's clean-preferences task. Stored as the
    /// LogStore record's purgeable flag (FORMAT.md, "Records": flag 0x40).
    public static let purgeable = DataOptions(rawValue: 1 << 31)
}

/// What can go wrong in the Preferences layer beyond the engine's `StoreError`.
public enum PreferencesError: Error, Sendable {
    /// `setObject` was given something that is not a property list (numbers, String, Data,
    /// Date, arrays and dictionaries of those).
    case notPropertyList
    /// The stored bytes could not be decoded as the requested type; the payload says why.
    case decodingFailed(String)
    /// The stored value is of another kind than the one requested (for example a string read
    /// as a `Decodable` struct); `stored` names the stored kind ("int", "string", "archive", ...).
    case typeMismatch(key: String, stored: String)
}
