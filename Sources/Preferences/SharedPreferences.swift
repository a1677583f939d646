import Foundation
import LogStore

/// APSharedPreferences: typed key-value preferences in one LogStore store, under business
/// namespaces.
///
/// **Layout.** Each business gets its own LogStore key space, allocated by name
/// (`store.space(named: "prefs:" + business)`), and each preference is one record in it whose
/// key is the preference key's UTF-8 and whose value is a tag byte and a payload (see
/// `ValueTag`). A space per business, rather than one space with business-prefixed keys, makes
/// `allKeys`, `removeAll` and `removeObjects(like:)` a listing of one space with no prefix
/// parsing, lets any character appear in a business name or key with no escaping, and lets a
/// whole business be dropped without touching the others; the cost is one catalog entry per
/// business. Reads of a business never written do not register its name.
///
/// **Crypt.** Values go through LogStore's `DataCrypt`: without a crypt they are stored plain
/// (even though the store holds the DataCenter's default key); `DataCrypt.default` encrypts with
/// that key and reads back without passing a crypt; a custom crypt's values need it to be read.
/// Typed scalars (`set(_: Int ...)`) are always plain, as in the source.
///
/// **Errors.** Getters never throw: absent, undecodable, custom-crypt-without-crypt values and
/// closed stores give the default (or nil). Numeric kinds convert among themselves (int, int64,
/// double; bool is 0/1); a string read as a number, or a number read as a string, gives the
/// default or nil. Setters throw `StoreError` (`closed` after `DataCenter.reset()` or a user
/// switch closed this store) and `PreferencesError`.
///
/// Thread-safe: any call from any thread or task. Writes are visible at once and durable as the
/// store's durability mode says; `sync()` forces them to stable storage.
public final class SharedPreferences: Sendable {
    /// The store, or why it could not be opened.
    enum Backend: Sendable {
        case open(LogStore)
        case failed(any Error)
    }

    let backend: Backend
    /// The folder of the store (for diagnostics and tests).
    let directory: URL
    private let spaces = Locked<[String: LogStore.KeySpace]>([:])
    let broadcaster = ChangeBroadcaster()

    init(backend: Backend, directory: URL) {
        self.backend = backend
        self.directory = directory
    }

    /// The store, or the error that kept it from opening.
    func store() throws -> LogStore {
        switch backend {
        case .open(let store): return store
        case .failed(let error): throw error
        }
    }

    /// Closes the store: every later write throws `StoreError.closed`, reads give defaults and
    /// change streams end.
    func close() {
        if case .open(let store) = backend {
            do { try store.close() } catch { PreferencesLog.warning("closing \(directory.path): \(error)") }
        }
        broadcaster.finishAll()
    }

    static func spaceName(_ business: String) -> String { "prefs:" + business }

    /// The key space of `business` if it was ever written; nil otherwise (nothing registered).
    func existingSpace(_ business: String) throws -> LogStore.KeySpace? {
        if let space = spaces.withLock({ $0[business] }) { return space }
        guard let space = try store().namedSpaces()[Self.spaceName(business)] else { return nil }
        spaces.withLock { $0[business] = space }
        return space
    }

    /// The key space of `business`, registered on first use.
    func writableSpace(_ business: String) throws -> LogStore.KeySpace {
        if let space = spaces.withLock({ $0[business] }) { return space }
        let space = try store().space(named: Self.spaceName(business))
        spaces.withLock { $0[business] = space }
        return space
    }

    /// The stored (tagged) bytes of `key`, decrypted with `crypt`; throws what LogStore throws.
    func rawValue(forKey key: String, business: String, crypt: DataCrypt?) throws -> [UInt8]? {
        guard let space = try existingSpace(business) else { return nil }
        return try store().get(forKey: Array(key.utf8), space: space, crypt: crypt)
    }

    /// The tag and payload of `key`, or nil for anything a getter treats as absent.
    func tagged(forKey key: String, business: String, crypt: DataCrypt? = nil) -> (tag: ValueTag, payload: ArraySlice<UInt8>)? {
        do {
            guard let bytes = try rawValue(forKey: key, business: business, crypt: crypt) else { return nil }
            return ValueCodec.split(bytes)
        } catch {
            PreferencesLog.info("reading \(business)/\(key): \(error)")
            return nil
        }
    }

    /// Stores already tagged bytes; nil `crypt` stores them plain.
    func write(_ bytes: [UInt8], forKey key: String, business: String, crypt: DataCrypt?, options: DataOptions = []) throws {
        let space = try writableSpace(business)
        try store().put(bytes, forKey: Array(key.utf8), space: space, crypt: crypt ?? .plain,
                        purgeable: options.contains(.purgeable))
        broadcaster.publish(key, business: business)
    }

    func number(forKey key: String, business: String) -> StoredNumber? {
        // Fast path: scalar tags are read in place (no copy of the value); anything else, such
        // as a property list holding a number, takes the general path below.
        enum InPlace { case absent, number(StoredNumber?), other }
        do {
            guard let space = try existingSpace(business) else { return nil }
            let found = try store().withValue(forKey: Array(key.utf8), space: space) { bytes -> InPlace in
                guard let first = bytes.first, let tag = ValueTag(rawValue: first) else { return .number(nil) }
                switch tag {
                case .int, .int64, .double:
                    guard bytes.count == 9 else { return .number(nil) }
                    var bits: UInt64 = 0
                    for index in 1...8 { bits |= UInt64(bytes[index]) << (8 * UInt64(index - 1)) }
                    return .number(tag == .double ? .double(Double(bitPattern: bits)) : .integer(Int64(bitPattern: bits)))
                case .bool:
                    guard bytes.count == 2, bytes[1] <= 1 else { return .number(nil) }
                    return .number(.bool(bytes[1] == 1))
                default:
                    return .other
                }
            } ?? .absent
            switch found {
            case .absent: return nil
            case .number(let number): return number
            case .other: break
            }
        } catch {
            PreferencesLog.info("reading \(business)/\(key): \(error)")
            return nil
        }
        guard let (tag, payload) = tagged(forKey: key, business: business) else { return nil }
        return ValueCodec.number(tag: tag, payload: payload)
    }

    // MARK: Typed scalars

    /// The integer under `key`; `defaultValue` when absent, not a number, or out of `Int`'s range.
    /// Int64, Double (truncated toward zero) and Bool (0/1) values convert.
    public func integer(forKey key: String, business: String, default defaultValue: Int = 0) -> Int {
        number(forKey: key, business: business)?.int ?? defaultValue
    }

    /// The 64-bit integer under `key`; `defaultValue` when absent or not a number.
    public func int64(forKey key: String, business: String, default defaultValue: Int64 = 0) -> Int64 {
        number(forKey: key, business: business)?.int64 ?? defaultValue
    }

    /// The Boolean under `key` (a number is true when nonzero); `defaultValue` when absent or
    /// not a number.
    public func bool(forKey key: String, business: String, default defaultValue: Bool = false) -> Bool {
        number(forKey: key, business: business)?.bool ?? defaultValue
    }

    /// The double under `key`; `defaultValue` when absent or not a number.
    public func double(forKey key: String, business: String, default defaultValue: Double = 0) -> Double {
        number(forKey: key, business: business)?.double ?? defaultValue
    }

    /// Stores an integer (tag 0x01), plain.
    public func set(_ value: Int, forKey key: String, business: String) throws {
        try write(ValueCodec.encode(value), forKey: key, business: business, crypt: nil)
    }

    /// Stores a 64-bit integer (tag 0x02), plain.
    public func set(_ value: Int64, forKey key: String, business: String) throws {
        try write(ValueCodec.encode(value), forKey: key, business: business, crypt: nil)
    }

    /// Stores a Boolean (tag 0x03), plain.
    public func set(_ value: Bool, forKey key: String, business: String) throws {
        try write(ValueCodec.encode(value), forKey: key, business: business, crypt: nil)
    }

    /// Stores a double (tag 0x04), plain.
    public func set(_ value: Double, forKey key: String, business: String) throws {
        try write(ValueCodec.encode(value), forKey: key, business: business, crypt: nil)
    }

    // MARK: Strings

    /// The string stored by `setString` (or by `setObject` with a String); nil when absent, of
    /// another kind, or written with a custom crypt that is not passed.
    public func string(forKey key: String, business: String, crypt: DataCrypt? = nil) -> String? {
        guard let (tag, payload) = tagged(forKey: key, business: business, crypt: crypt) else { return nil }
        return ValueCodec.string(tag: tag, payload: payload)
    }

    /// Stores `value` as UTF-8 (tag 0x05) protected by `crypt` (nil: plain); nil removes the key.
    public func setString(_ value: String?, forKey key: String, business: String, crypt: DataCrypt? = nil) throws {
        guard let value else {
            try removeObject(forKey: key, business: business)
            return
        }
        try write(ValueCodec.encode(value), forKey: key, business: business, crypt: crypt)
    }
}
