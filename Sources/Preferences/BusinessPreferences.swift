import Foundation
import LogStore

/// APBusinessPreferences: the calls of `SharedPreferences` bound to one business, so they take
/// no `business:` argument (CustomStorage's preferences use the business "default"; an
/// accessor's use its own). Every call behaves exactly as the `SharedPreferences` call it
/// forwards to.
public final class BusinessPreferences: Sendable {
    /// The preferences of the store this object writes to.
    let preferences: SharedPreferences
    /// The business namespace of every call.
    public let business: String

    init(preferences: SharedPreferences, business: String) {
        self.preferences = preferences
        self.business = business
    }

    /// See `SharedPreferences.integer(forKey:business:default:)`.
    public func integer(forKey key: String, default defaultValue: Int = 0) -> Int {
        preferences.integer(forKey: key, business: business, default: defaultValue)
    }
    /// See `SharedPreferences.int64(forKey:business:default:)`.
    public func int64(forKey key: String, default defaultValue: Int64 = 0) -> Int64 {
        preferences.int64(forKey: key, business: business, default: defaultValue)
    }
    /// See `SharedPreferences.bool(forKey:business:default:)`.
    public func bool(forKey key: String, default defaultValue: Bool = false) -> Bool {
        preferences.bool(forKey: key, business: business, default: defaultValue)
    }
    /// See `SharedPreferences.double(forKey:business:default:)`.
    public func double(forKey key: String, default defaultValue: Double = 0) -> Double {
        preferences.double(forKey: key, business: business, default: defaultValue)
    }
    /// See `SharedPreferences.string(forKey:business:crypt:)`.
    public func string(forKey key: String, crypt: DataCrypt? = nil) -> String? {
        preferences.string(forKey: key, business: business, crypt: crypt)
    }
    /// See `SharedPreferences.set(_:forKey:business:)`.
    public func set(_ value: Int, forKey key: String) throws {
        try preferences.set(value, forKey: key, business: business)
    }
    /// See `SharedPreferences.set(_:forKey:business:)`.
    public func set(_ value: Int64, forKey key: String) throws {
        try preferences.set(value, forKey: key, business: business)
    }
    /// See `SharedPreferences.set(_:forKey:business:)`.
    public func set(_ value: Bool, forKey key: String) throws {
        try preferences.set(value, forKey: key, business: business)
    }
    /// See `SharedPreferences.set(_:forKey:business:)`.
    public func set(_ value: Double, forKey key: String) throws {
        try preferences.set(value, forKey: key, business: business)
    }
    /// See `SharedPreferences.setString(_:forKey:business:crypt:)`.
    public func setString(_ value: String?, forKey key: String, crypt: DataCrypt? = nil) throws {
        try preferences.setString(value, forKey: key, business: business, crypt: crypt)
    }
    /// See `SharedPreferences.setObject(_:forKey:business:crypt:options:)`.
    public func setObject(_ plist: Any?, forKey key: String, crypt: DataCrypt? = nil, options: DataOptions = []) throws {
        try preferences.setObject(plist, forKey: key, business: business, crypt: crypt, options: options)
    }
    /// See `SharedPreferences.archiveObject(_:forKey:business:crypt:options:)`.
    public func archiveObject(_ object: (some NSObject & NSCoding)?, forKey key: String, crypt: DataCrypt? = nil, options: DataOptions = []) throws {
        try preferences.archiveObject(object, forKey: key, business: business, crypt: crypt, options: options)
    }
    /// See `SharedPreferences.archive(_:forKey:business:crypt:options:)`.
    public func archive(_ value: some Encodable, forKey key: String, crypt: DataCrypt? = nil, options: DataOptions = []) throws {
        try preferences.archive(value, forKey: key, business: business, crypt: crypt, options: options)
    }
    /// See `SharedPreferences.saveJSON(_:forKey:business:crypt:options:)`.
    public func saveJSON(_ value: some Encodable, forKey key: String, crypt: DataCrypt? = nil, options: DataOptions = []) throws {
        try preferences.saveJSON(value, forKey: key, business: business, crypt: crypt, options: options)
    }
    /// See `SharedPreferences.object(forKey:business:crypt:)`.
    public func object(forKey key: String, crypt: DataCrypt? = nil) -> Any? {
        preferences.object(forKey: key, business: business, crypt: crypt)
    }
    /// See `SharedPreferences.object(_:forKey:business:crypt:)`.
    public func object<T: Decodable>(_ type: T.Type, forKey key: String, crypt: DataCrypt? = nil) throws -> T? {
        try preferences.object(type, forKey: key, business: business, crypt: crypt)
    }
    /// See `SharedPreferences.allKeys(business:)`.
    public func allKeys() -> [String] { preferences.allKeys(business: business) }
    /// See `SharedPreferences.dictionary(business:)`.
    public func dictionary() -> [String: Any] { preferences.dictionary(business: business) }
    /// See `SharedPreferences.removeObject(forKey:business:)`.
    public func removeObject(forKey key: String) throws {
        try preferences.removeObject(forKey: key, business: business)
    }
    /// See `SharedPreferences.removeObjects(like:business:)`.
    public func removeObjects(like pattern: String) throws {
        try preferences.removeObjects(like: pattern, business: business)
    }
    /// See `SharedPreferences.removeAll(business:)`.
    public func removeAll() throws { try preferences.removeAll(business: business) }
    /// See `SharedPreferences.contains(_:business:)`.
    public func contains(_ key: String) -> Bool { preferences.contains(key, business: business) }
    /// See `SharedPreferences.sync()`.
    public func sync() throws { try preferences.sync() }
    /// See `SharedPreferences.changes(business:)`.
    public func changes() -> AsyncStream<String> { preferences.changes(business: business) }
}
