import Foundation

/// Encodes an `Encodable` record into one table row: a column name -> `DAOValue` per coding key
/// of the record's top-level keyed container.
///
/// Mapping (the typed Dao and the XML DAO both rely on it; `DAORowDecoder` reverses it):
/// - integers (`Int`, `Int8` ... `UInt64`) -> `.integer` (a `UInt`/`UInt64` above `Int64.max` throws);
/// - `Double`, `Float` -> `.real`; `Bool` -> `.integer(0 or 1)`; `String` -> `.text`;
/// - `Date` -> `.real` seconds since 1970; `Data` and `[UInt8]` -> `.blob`; `URL` -> `.text`;
/// - `nil` (an explicit `encodeNil`) -> `.null`; optionals left out by `encodeIfPresent` are absent
///   from the result (callers that need every column use `encode(_:columns:)`);
/// - any other nested `Encodable` -> `.text` holding its JSON (`JSONEncoder`, dates as seconds
///   since 1970, sorted keys).
///
/// A record whose `encode(to:)` asks for nested containers or a super encoder directly (rather
/// than encoding a nested `Encodable` value) is refused with `EncodingError.invalidValue`.
public struct DAORowEncoder: Sendable {
    /// An encoder.
    public init() {}

    /// The columns `value` encodes, in the order it encoded them, with their values.
    /// - Throws: `EncodingError` when `value` is not a keyed record or a value does not fit.
    public func encodeOrdered<T: Encodable>(_ value: T) throws -> [(column: String, value: DAOValue)] {
        let storage = RowStorage()
        let encoder = RowEncoderCore(storage: storage)
        try value.encode(to: encoder)
        if let failure = storage.failure { throw failure }
        guard storage.sawKeyedContainer else {
            throw EncodingError.invalidValue(value, .init(codingPath: [], debugDescription:
                "\(T.self) does not encode as a keyed container, so it cannot be a table row"))
        }
        return storage.columns.map { ($0, storage.values[$0] ?? .null) }
    }

    /// The row `value` encodes, as a dictionary.
    /// - Throws: as `encodeOrdered(_:)`.
    public func encode<T: Encodable>(_ value: T) throws -> [String: DAOValue] {
        var row: [String: DAOValue] = [:]
        for (column, value) in try encodeOrdered(value) { row[column] = value }
        return row
    }

    /// The row `value` encodes with every one of `columns` present: columns it left out (nil
    /// optionals) are `.null`.
    /// - Throws: as `encodeOrdered(_:)`.
    public func encode<T: Encodable>(_ value: T, columns: [String]) throws -> [String: DAOValue] {
        var row = try encode(value)
        for column in columns where row[column] == nil { row[column] = .null }
        return row
    }

    /// The JSON text a nested value is stored as.
    static func jsonText<T: Encodable>(_ value: T) throws -> String {
        let encoder = JSONEncoder()
        encoder.dateEncodingStrategy = .secondsSince1970
        encoder.outputFormatting = [.sortedKeys]
        return String(decoding: try encoder.encode(value), as: UTF8.self)
    }

    /// The column value of one leaf `value`, whatever its type.
    static func columnValue<T: Encodable>(_ value: T, codingPath: [any CodingKey]) throws -> DAOValue {
        switch value {
        case let v as DAOValue: return v
        case let v as Bool: return .integer(v ? 1 : 0)
        case let v as String: return .text(v)
        case let v as Double: return .real(v)
        case let v as Float: return .real(Double(v))
        case let v as Int: return .integer(Int64(v))
        case let v as Int64: return .integer(v)
        case let v as Int32: return .integer(Int64(v))
        case let v as Int16: return .integer(Int64(v))
        case let v as Int8: return .integer(Int64(v))
        case let v as UInt8: return .integer(Int64(v))
        case let v as UInt16: return .integer(Int64(v))
        case let v as UInt32: return .integer(Int64(v))
        case let v as UInt:
            guard let exact = Int64(exactly: v) else { throw tooLarge(v, codingPath) }
            return .integer(exact)
        case let v as UInt64:
            guard let exact = Int64(exactly: v) else { throw tooLarge(v, codingPath) }
            return .integer(exact)
        case let v as Date: return .real(v.timeIntervalSince1970)
        case let v as Data: return .blob([UInt8](v))
        case let v as [UInt8]: return .blob(v)
        case let v as URL: return .text(v.absoluteString)
        default: return .text(try jsonText(value))
        }
    }

    private static func tooLarge(_ value: Any, _ codingPath: [any CodingKey]) -> EncodingError {
        .invalidValue(value, .init(codingPath: codingPath, debugDescription: "\(value) does not fit a 64-bit signed integer column"))
    }
}

/// What one encoding pass collected.
final class RowStorage {
    var columns: [String] = []
    var values: [String: DAOValue] = [:]
    var failure: EncodingError?
    var sawKeyedContainer = false

    func set(_ value: DAOValue, for column: String) {
        if values.updateValue(value, forKey: column) == nil { columns.append(column) }
    }

    func refuse(_ what: String, codingPath: [any CodingKey]) {
        if failure == nil {
            failure = .invalidValue(what, .init(codingPath: codingPath, debugDescription:
                "a table row cannot hold \(what); encode a nested Codable value instead"))
        }
    }
}

/// The `Encoder` handed to the record's `encode(to:)`.
struct RowEncoderCore: Encoder {
    let storage: RowStorage
    var codingPath: [any CodingKey] = []
    var userInfo: [CodingUserInfoKey: Any] { [:] }

    func container<Key: CodingKey>(keyedBy type: Key.Type) -> KeyedEncodingContainer<Key> {
        storage.sawKeyedContainer = true
        return KeyedEncodingContainer(RowKeyedContainer<Key>(storage: storage, codingPath: codingPath))
    }

    func unkeyedContainer() -> any UnkeyedEncodingContainer {
        storage.refuse("an unkeyed container at the top level", codingPath: codingPath)
        return RefusedUnkeyedContainer(storage: storage, codingPath: codingPath)
    }

    func singleValueContainer() -> any SingleValueEncodingContainer {
        storage.refuse("a single value at the top level", codingPath: codingPath)
        return RefusedSingleValueContainer(codingPath: codingPath)
    }
}

/// Writes each key's leaf value as one column.
struct RowKeyedContainer<Key: CodingKey>: KeyedEncodingContainerProtocol {
    let storage: RowStorage
    var codingPath: [any CodingKey]

    mutating func encodeNil(forKey key: Key) throws { storage.set(.null, for: key.stringValue) }

    mutating func encode<T: Encodable>(_ value: T, forKey key: Key) throws {
        storage.set(try DAORowEncoder.columnValue(value, codingPath: codingPath + [key]), for: key.stringValue)
    }

    mutating func nestedContainer<NestedKey: CodingKey>(keyedBy keyType: NestedKey.Type, forKey key: Key) -> KeyedEncodingContainer<NestedKey> {
        storage.refuse("a nested keyed container", codingPath: codingPath + [key])
        return KeyedEncodingContainer(RowKeyedContainer<NestedKey>(storage: RowStorage(), codingPath: codingPath + [key]))
    }

    mutating func nestedUnkeyedContainer(forKey key: Key) -> any UnkeyedEncodingContainer {
        storage.refuse("a nested unkeyed container", codingPath: codingPath + [key])
        return RefusedUnkeyedContainer(storage: RowStorage(), codingPath: codingPath + [key])
    }

    mutating func superEncoder() -> any Encoder {
        storage.refuse("a super encoder", codingPath: codingPath)
        return RowEncoderCore(storage: RowStorage(), codingPath: codingPath)
    }

    mutating func superEncoder(forKey key: Key) -> any Encoder {
        storage.refuse("a super encoder", codingPath: codingPath + [key])
        return RowEncoderCore(storage: RowStorage(), codingPath: codingPath + [key])
    }
}

/// Accepts and drops values after the encoding was refused (the refusal is thrown at the end).
struct RefusedUnkeyedContainer: UnkeyedEncodingContainer {
    let storage: RowStorage
    var codingPath: [any CodingKey]
    var count: Int = 0
    mutating func encodeNil() throws { count += 1 }
    mutating func encode<T: Encodable>(_ value: T) throws { count += 1 }
    mutating func nestedContainer<NestedKey: CodingKey>(keyedBy keyType: NestedKey.Type) -> KeyedEncodingContainer<NestedKey> {
        KeyedEncodingContainer(RowKeyedContainer<NestedKey>(storage: storage, codingPath: codingPath))
    }
    mutating func nestedUnkeyedContainer() -> any UnkeyedEncodingContainer { self }
    mutating func superEncoder() -> any Encoder { RowEncoderCore(storage: storage, codingPath: codingPath) }
}

/// Accepts and drops a value after the encoding was refused.
struct RefusedSingleValueContainer: SingleValueEncodingContainer {
    var codingPath: [any CodingKey]
    mutating func encodeNil() throws {}
    mutating func encode<T: Encodable>(_ value: T) throws {}
}
