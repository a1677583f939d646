import Foundation

/// Decodes a `Decodable` record from one table row (column name -> `DAOValue`), reversing
/// `DAORowEncoder`'s mapping.
///
/// Conversions are those SQLite applies when reading a column as a type, made strict where they
/// would lose information: an integer column reads as any integer type whose range holds it, a
/// real with an integral value reads as an integer, integers read as `Double`, text holding a
/// number reads as that number, `Bool` reads integers and reals (non-zero is true), `Date` reads
/// seconds since 1970, `Data` and `[UInt8]` read blobs (or text's UTF-8 bytes), `String` reads
/// text (or an integer's or real's decimal spelling; a text whose bytes are not valid UTF-8
/// reads with each ill-formed sequence replaced by U+FFFD, and its exact bytes read as `Data`
/// or `[UInt8]` through `Dao`), and other nested `Decodable` values read
/// the JSON text `DAORowEncoder` wrote. A missing column or `.null` reads as `nil` for optionals
/// and throws `DecodingError.valueNotFound` / `.keyNotFound` otherwise.
public struct DAORowDecoder: Sendable {
    /// A decoder.
    public init() {}

    /// Decodes `type` from `row`.
    /// - Throws: `DecodingError` naming the column that does not convert.
    public func decode<T: Decodable>(_ type: T.Type, from row: [String: DAOValue]) throws -> T {
        try T(from: RowDecoderCore(row: row))
    }

    /// Decodes `type` from the values of one result row with their column names.
    /// - Throws: as `decode(_:from:)`.
    public func decode<T: Decodable>(_ type: T.Type, columns: [String], values: [DAOValue]) throws -> T {
        var row: [String: DAOValue] = [:]
        for (column, value) in zip(columns, values) { row[column] = value }
        return try decode(type, from: row)
    }

    /// Decodes `type` from row `index` of `result`, reading a `Data` or `[UInt8]` property from
    /// a text that is not valid UTF-8 as its exact bytes (`SQLResult.textBytes(row:column:)`).
    func decode<T: Decodable>(_ type: T.Type, columns: [String], rowAt index: Int, of result: SQLResult) throws -> T {
        var row: [String: DAOValue] = [:]
        var exactTexts: [String: [UInt8]] = [:]
        for (column, (name, value)) in zip(columns, result.rows[index]).enumerated() {
            row[name] = value
            if let bytes = result.invalidTexts[SQLResult.CellPosition(row: index, column: column)] { exactTexts[name] = bytes }
        }
        return try T(from: RowDecoderCore(row: row, exactTexts: exactTexts))
    }

    /// The JSON decoder of nested values, matching `DAORowEncoder.jsonText`.
    static func jsonDecoder() -> JSONDecoder {
        let decoder = JSONDecoder()
        decoder.dateDecodingStrategy = .secondsSince1970
        return decoder
    }

    /// Converts one column's value to `T`.
    static func leaf<T: Decodable>(_ type: T.Type, from value: DAOValue, codingPath: [any CodingKey]) throws -> T {
        func mismatch() -> DecodingError {
            .typeMismatch(T.self, .init(codingPath: codingPath, debugDescription: "column value \(value) does not convert to \(T.self)"))
        }
        if value == .null {
            throw DecodingError.valueNotFound(T.self, .init(codingPath: codingPath, debugDescription: "column is NULL"))
        }
        let converted: Any?
        do { converted = try scalar(T.self, from: value) } catch { throw mismatch() }
        if let converted {
            guard let typed = converted as? T else { throw mismatch() }
            return typed
        }
        // Any other nested value was stored as JSON text.
        let json: Data
        switch value {
        case .text(let s): json = Data(s.utf8)
        case .blob(let b): json = Data(b)
        case .integer(let i): json = Data(String(i).utf8)
        case .real(let d): json = Data(String(d).utf8)
        case .null: throw mismatch()
        }
        do {
            return try jsonDecoder().decode(T.self, from: json)
        } catch {
            throw DecodingError.dataCorrupted(.init(codingPath: codingPath, debugDescription: "column does not hold \(T.self) as JSON", underlyingError: error))
        }
    }

    /// `value` converted to `type` when `type` is one of the scalar types of the mapping (nil when
    /// it is a nested type stored as JSON).
    /// - Throws: `DecodingError.typeMismatch` when it is a scalar type the value does not convert to.
    static func scalar(_ type: Any.Type, from value: DAOValue) throws -> Any? {
        let mismatch = DecodingError.typeMismatch(type, .init(codingPath: [], debugDescription: "column value \(value) does not convert to \(type)"))
        func require(_ converted: Any?) throws -> Any {
            guard let converted else { throw mismatch }
            return converted
        }
        switch type {
        case is DAOValue.Type: return value
        case is Bool.Type: return try require(numeric(value).map { !$0.isZero })
        case is Double.Type: return try require(numeric(value))
        case is Float.Type: return try require(numeric(value).map { Float($0) })
        case is Date.Type: return try require(numeric(value).map { Date(timeIntervalSince1970: $0) })
        case is String.Type:
            switch value {
            case .text(let s): return s
            case .integer(let i): return String(i)
            case .real(let d): return String(d)
            default: throw mismatch
            }
        case is Data.Type, is [UInt8].Type:
            let bytes: [UInt8]
            switch value {
            case .blob(let b): bytes = b
            case .text(let s): bytes = Array(s.utf8)
            default: throw mismatch
            }
            return type == Data.self ? Data(bytes) : bytes
        case is URL.Type:
            guard case .text(let s) = value else { throw mismatch }
            return try require(URL(string: s))
        case let integerType as any FixedWidthInteger.Type:
            return try require(exactInteger(value).flatMap { integerType.init(exactly: $0) })
        default: return nil
        }
    }

    /// The value as a Double when it is a number or text spelling one.
    static func numeric(_ value: DAOValue) -> Double? {
        switch value {
        case .integer(let i): return Double(i)
        case .real(let d): return d
        case .text(let s): return Double(s.trimmingCharacters(in: .whitespaces))
        default: return nil
        }
    }

    /// The value as an Int64 when it is one exactly (integral reals and integer text included).
    static func exactInteger(_ value: DAOValue) -> Int64? {
        switch value {
        case .integer(let i): return i
        case .real(let d): return Int64(exactly: d)
        case .text(let s):
            let trimmed = s.trimmingCharacters(in: .whitespaces)
            return Int64(trimmed) ?? Double(trimmed).flatMap { Int64(exactly: $0) }
        default: return nil
        }
    }
}

/// The `Decoder` handed to the record's `init(from:)`.
struct RowDecoderCore: Decoder {
    let row: [String: DAOValue]
    /// The exact bytes of the row's texts that are not valid UTF-8, by column.
    var exactTexts: [String: [UInt8]] = [:]
    var codingPath: [any CodingKey] = []
    var userInfo: [CodingUserInfoKey: Any] { [:] }

    func container<Key: CodingKey>(keyedBy type: Key.Type) throws -> KeyedDecodingContainer<Key> {
        KeyedDecodingContainer(RowKeyedDecodingContainer<Key>(row: row, exactTexts: exactTexts, codingPath: codingPath))
    }

    func unkeyedContainer() throws -> any UnkeyedDecodingContainer {
        throw DecodingError.typeMismatch([Any].self, .init(codingPath: codingPath, debugDescription: "a table row is a keyed container"))
    }

    func singleValueContainer() throws -> any SingleValueDecodingContainer {
        throw DecodingError.typeMismatch(Any.self, .init(codingPath: codingPath, debugDescription: "a table row is a keyed container"))
    }
}

/// Reads each key from the column of that name.
struct RowKeyedDecodingContainer<Key: CodingKey>: KeyedDecodingContainerProtocol {
    let row: [String: DAOValue]
    let exactTexts: [String: [UInt8]]
    var codingPath: [any CodingKey]

    var allKeys: [Key] { row.keys.compactMap { Key(stringValue: $0) } }

    func contains(_ key: Key) -> Bool { row[key.stringValue] != nil }

    func decodeNil(forKey key: Key) throws -> Bool { (row[key.stringValue] ?? .null) == .null }

    func decode<T: Decodable>(_ type: T.Type, forKey key: Key) throws -> T {
        guard let value = row[key.stringValue] else {
            throw DecodingError.keyNotFound(key, .init(codingPath: codingPath, debugDescription: "no column \"\(key.stringValue)\" in the row"))
        }
        if let bytes = exactTexts[key.stringValue] {
            if let data = Data(bytes) as? T { return data }
            if let array = bytes as? T { return array }
        }
        return try DAORowDecoder.leaf(T.self, from: value, codingPath: codingPath + [key])
    }

    func nestedContainer<NestedKey: CodingKey>(keyedBy type: NestedKey.Type, forKey key: Key) throws -> KeyedDecodingContainer<NestedKey> {
        throw DecodingError.typeMismatch([String: Any].self, .init(codingPath: codingPath + [key], debugDescription: "a column holds a value, not a container; decode a nested Decodable instead"))
    }

    func nestedUnkeyedContainer(forKey key: Key) throws -> any UnkeyedDecodingContainer {
        throw DecodingError.typeMismatch([Any].self, .init(codingPath: codingPath + [key], debugDescription: "a column holds a value, not a container; decode a nested Decodable instead"))
    }

    func superDecoder() throws -> any Decoder { RowDecoderCore(row: row, exactTexts: exactTexts, codingPath: codingPath) }

    func superDecoder(forKey key: Key) throws -> any Decoder {
        throw DecodingError.typeMismatch([String: Any].self, .init(codingPath: codingPath + [key], debugDescription: "a column holds a value, not a decoder"))
    }
}
