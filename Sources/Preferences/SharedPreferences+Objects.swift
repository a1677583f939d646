import Foundation
import LogStore

extension SharedPreferences {
    /// Stores a property list (numbers, String, Data, Date, arrays and dictionaries of those) as
    /// a binary property list (tag 0x06); nil removes the key. `object(forKey:)` returns it as
    /// Foundation objects.
    /// - Throws: `PreferencesError.notPropertyList`; `StoreError` from the store or the crypt.
    public func setObject(_ plist: Any?, forKey key: String, business: String, crypt: DataCrypt? = nil, options: DataOptions = []) throws {
        guard let plist = unwrapped(plist) else {
            try removeObject(forKey: key, business: business)
            return
        }
        guard PropertyListSerialization.propertyList(plist, isValidFor: .binary) else { throw PreferencesError.notPropertyList }
        let data: Data
        do {
            data = try PropertyListSerialization.data(fromPropertyList: plist, format: .binary, options: 0)
        } catch {
            throw PreferencesError.notPropertyList
        }
        try write(ValueCodec.encode(tag: .propertyList, payload: data), forKey: key, business: business, crypt: crypt, options: options)
    }

    /// Stores an NSCoding object through NSKeyedArchiver (tag 0x07); nil removes the key.
    /// `object(forKey:)` unarchives it (its class must be loaded under the same name).
    public func archiveObject(_ object: (some NSObject & NSCoding)?, forKey key: String, business: String, crypt: DataCrypt? = nil, options: DataOptions = []) throws {
        guard let object else {
            try removeObject(forKey: key, business: business)
            return
        }
        let data: Data
        do {
            data = try NSKeyedArchiver.archivedData(withRootObject: object, requiringSecureCoding: false)
        } catch {
            throw PreferencesError.decodingFailed("archiving \(type(of: object)): \(error)")
        }
        try write(ValueCodec.encode(tag: .keyedArchive, payload: data), forKey: key, business: business, crypt: crypt, options: options)
    }

    /// Stores an Encodable value through PropertyListEncoder, binary format (tag 0x08).
    /// Read it back with `object(_:forKey:business:crypt:)`.
    /// - Throws: `PreferencesError.decodingFailed` when the encoder refuses the value.
    public func archive(_ value: some Encodable, forKey key: String, business: String, crypt: DataCrypt? = nil, options: DataOptions = []) throws {
        let encoder = PropertyListEncoder()
        encoder.outputFormat = .binary
        let data: Data
        do { data = try encoder.encode(value) } catch { throw PreferencesError.decodingFailed("encoding \(type(of: value)): \(error)") }
        try write(ValueCodec.encode(tag: .codablePropertyList, payload: data), forKey: key, business: business, crypt: crypt, options: options)
    }

    /// Stores an Encodable value as JSON through JSONEncoder (tag 0x09); `object(forKey:)`
    /// returns it as JSONSerialization objects.
    public func saveJSON(_ value: some Encodable, forKey key: String, business: String, crypt: DataCrypt? = nil, options: DataOptions = []) throws {
        let data: Data
        do { data = try JSONEncoder().encode(value) } catch { throw PreferencesError.decodingFailed("encoding \(type(of: value)): \(error)") }
        try write(ValueCodec.encode(tag: .json, payload: data), forKey: key, business: business, crypt: crypt, options: options)
    }

    /// The value under `key`, decoded by the method it was stored with: typed scalars as
    /// Int / Int64 / Bool / Double, strings as String, property lists (`setObject`, `archive`)
    /// and JSON as Foundation objects, archives as the unarchived object. Nil when absent,
    /// undecodable, or written with a custom crypt that is not passed.
    public func object(forKey key: String, business: String, crypt: DataCrypt? = nil) -> Any? {
        guard let (tag, payload) = tagged(forKey: key, business: business, crypt: crypt) else { return nil }
        return ValueCodec.object(tag: tag, payload: payload)
    }

    /// The value under `key` decoded as `T`; nil when absent. Property lists and Codable
    /// archives decode with PropertyListDecoder, JSON with JSONDecoder; scalars convert among
    /// the numeric types; strings decode as String; an NSCoding archive is returned if its
    /// object is a `T`.
    /// - Throws: `StoreError.cryptRequired` for a custom-crypt value read without its crypt;
    ///   `PreferencesError.typeMismatch` when the stored kind cannot be a `T`;
    ///   `PreferencesError.decodingFailed` when the payload does not decode as `T`;
    ///   `StoreError` from the store (`closed`, `tampered`, ...).
    public func object<T: Decodable>(_ type: T.Type, forKey key: String, business: String, crypt: DataCrypt? = nil) throws -> T? {
        guard let bytes = try rawValue(forKey: key, business: business, crypt: crypt) else { return nil }
        guard let (tag, payload) = ValueCodec.split(bytes) else {
            throw PreferencesError.decodingFailed("\(key): unknown value tag \(bytes.first.map(String.init) ?? "none")")
        }
        let mismatch = PreferencesError.typeMismatch(key: key, stored: tag.kindName)
        switch tag {
        case .int, .int64, .bool, .double:
            guard let number = ValueCodec.number(tag: tag, payload: payload) else {
                throw PreferencesError.decodingFailed("\(key): malformed \(tag.kindName) payload")
            }
            guard let value: T = Self.convert(number, to: type) else { throw mismatch }
            return value
        case .string:
            guard type == String.self else { throw mismatch }
            guard let string = String(validating: payload, as: UTF8.self) else {
                throw PreferencesError.decodingFailed("\(key): invalid UTF-8")
            }
            return string as? T
        case .propertyList, .codablePropertyList:
            do { return try PropertyListDecoder().decode(type, from: Data(payload)) } catch {
                throw PreferencesError.decodingFailed("\(key): \(error)")
            }
        case .json:
            do { return try JSONDecoder().decode(type, from: Data(payload)) } catch {
                throw PreferencesError.decodingFailed("\(key): \(error)")
            }
        case .keyedArchive:
            guard let object = try? ValueCodec.unarchive(payload), let value = object as? T else { throw mismatch }
            return value
        }
    }

    /// A stored number as one of the numeric types (or Bool); nil for any other `T`.
    static func convert<T>(_ number: StoredNumber, to type: T.Type) -> T? {
        if type == Int.self { return number.int as? T }
        if type == Int64.self { return number.int64 as? T }
        if type == Double.self { return number.double as? T }
        if type == Bool.self { return number.bool as? T }
        if type == Int32.self { return number.int64.flatMap { Int32(exactly: $0) } as? T }
        if type == Float.self { return Float(number.double) as? T }
        return nil
    }
}

/// `value` with any number of Optional layers removed; nil when one of them is nil.
/// (`Any` hides optionals: a `String?` passed as `Any?` arrives as `Optional<Any>(Optional<String>)`.)
func unwrapped(_ value: Any?) -> Any? {
    guard let value else { return nil }
    let mirror = Mirror(reflecting: value)
    guard mirror.displayStyle == .optional else { return value }
    guard let child = mirror.children.first else { return nil }
    return unwrapped(child.value)
}
