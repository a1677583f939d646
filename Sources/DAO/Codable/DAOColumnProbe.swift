import Foundation

/// The columns of a `Decodable` record type, found by decoding one instance from a decoder that
/// answers every key with a placeholder and records the keys and the types asked for.
///
/// Used to create a record's table before any instance exists. Optionals are recorded as
/// nullable (their `decodeIfPresent` is answered with nil). A nested type whose decoding rejects
/// every placeholder (for example an enum with no raw value for `""`, `0` or `false`) makes the
/// probe throw `DAOError.unsupported` naming the column.
public enum DAOColumnProbe {
    /// The SQLite affinity a column of a Swift type gets.
    public enum Affinity: String, Sendable, Equatable {
        case integer = "INTEGER", real = "REAL", text = "TEXT", blob = "BLOB"
    }

    /// One column of a record type.
    public struct Column: Sendable, Equatable {
        /// The coding key's string value.
        public var name: String
        /// The affinity of the Swift type.
        public var affinity: Affinity
        /// Whether the property is optional (decoded with `decodeIfPresent`).
        public var optional: Bool
    }

    /// The columns of `type` in the order its `init(from:)` asks for them.
    /// - Throws: `DAOError.unsupported` when `type` is not decoded from a keyed container or a
    ///   nested value cannot be built from a placeholder.
    public static func columns<T: Decodable>(of type: T.Type) throws -> [Column] {
        let recorder = ProbeRecorder()
        do {
            _ = try T(from: ProbeDecoder(recorder: recorder))
        } catch let error as DAOError {
            throw error
        } catch {
            throw DAOError.unsupported("record type \(T.self) cannot be probed for its columns: \(error)")
        }
        guard !recorder.columns.isEmpty else {
            throw DAOError.unsupported("record type \(T.self) decodes no keyed columns")
        }
        return recorder.columns
    }

    /// The affinity of a leaf Swift type.
    static func affinity(of type: Any.Type) -> Affinity {
        switch type {
        case is Bool.Type, is any FixedWidthInteger.Type: return .integer
        case is Double.Type, is Float.Type, is Date.Type: return .real
        case is Data.Type, is [UInt8].Type: return .blob
        default: return .text
        }
    }

    /// A placeholder value of a scalar type, nil for other types.
    static func placeholder(_ type: Any.Type) -> Any? {
        switch type {
        case is DAOValue.Type: return DAOValue.null
        case is Bool.Type: return false
        case is String.Type: return ""
        case is Double.Type: return 0.0
        case is Float.Type: return Float(0)
        case is Date.Type: return Date(timeIntervalSince1970: 0)
        case is Data.Type: return Data()
        case is [UInt8].Type: return [UInt8]()
        case is URL.Type: return URL(fileURLWithPath: "/")
        case let integer as any FixedWidthInteger.Type: return integer.zero
        default: return nil
        }
    }
}

private extension FixedWidthInteger {
    static var zero: Self { 0 }
}

/// The keys and types the probe saw.
final class ProbeRecorder {
    var columns: [DAOColumnProbe.Column] = []

    func record(_ name: String, _ type: Any.Type, optional: Bool) {
        guard !columns.contains(where: { $0.name == name }) else { return }
        columns.append(.init(name: name, affinity: DAOColumnProbe.affinity(of: type), optional: optional))
    }
}

/// Answers the record's top-level keyed container.
struct ProbeDecoder: Decoder {
    let recorder: ProbeRecorder
    var codingPath: [any CodingKey] { [] }
    var userInfo: [CodingUserInfoKey: Any] { [:] }

    func container<Key: CodingKey>(keyedBy type: Key.Type) throws -> KeyedDecodingContainer<Key> {
        KeyedDecodingContainer(ProbeKeyedContainer<Key>(recorder: recorder))
    }

    func unkeyedContainer() throws -> any UnkeyedDecodingContainer {
        throw DAOError.unsupported("a record must decode from a keyed container, not an unkeyed one")
    }

    func singleValueContainer() throws -> any SingleValueDecodingContainer {
        throw DAOError.unsupported("a record must decode from a keyed container, not a single value")
    }
}

/// Records every key asked for and answers with a placeholder.
struct ProbeKeyedContainer<Key: CodingKey>: KeyedDecodingContainerProtocol {
    let recorder: ProbeRecorder
    var codingPath: [any CodingKey] { [] }
    var allKeys: [Key] { [] }

    /// Answered true so that `decodeIfPresent` goes on to `decodeNil`, which records the key.
    func contains(_ key: Key) -> Bool { true }

    func decodeNil(forKey key: Key) throws -> Bool {
        // Only optionals ask, and hand-written code that calls this directly gives no type:
        // such a column is TEXT unless a typed call recorded it first.
        recorder.record(key.stringValue, String.self, optional: true)
        return true
    }

    func decodeIfPresent<T: Decodable>(_ type: T.Type, forKey key: Key) throws -> T? {
        recorder.record(key.stringValue, T.self, optional: true)
        return nil
    }

    func decode<T: Decodable>(_ type: T.Type, forKey key: Key) throws -> T {
        recorder.record(key.stringValue, T.self, optional: false)
        if let value = DAOColumnProbe.placeholder(T.self) as? T { return value }
        // A nested value (stored as JSON text): build one from placeholders all the way down,
        // else from the first JSON placeholder its decoding accepts.
        if let value = try? T(from: PlaceholderDecoder(depth: 0)) { return value }
        let decoder = DAORowDecoder.jsonDecoder()
        for json in ["{}", "[]", "\"\"", "0", "false", "null"] {
            if let value = try? decoder.decode(T.self, from: Data(json.utf8)) { return value }
        }
        throw DAOError.unsupported("column \"\(key.stringValue)\" of type \(T.self) cannot be built from a placeholder to probe the record's columns")
    }

    // Synthesized code calls these overloads for optional scalars; their defaults would reach
    // `decodeNil` without the type, so each records its type here.
    func decodeIfPresent(_ type: Bool.Type, forKey key: Key) throws -> Bool? { try absent(type, key) }
    func decodeIfPresent(_ type: String.Type, forKey key: Key) throws -> String? { try absent(type, key) }
    func decodeIfPresent(_ type: Double.Type, forKey key: Key) throws -> Double? { try absent(type, key) }
    func decodeIfPresent(_ type: Float.Type, forKey key: Key) throws -> Float? { try absent(type, key) }
    func decodeIfPresent(_ type: Int.Type, forKey key: Key) throws -> Int? { try absent(type, key) }
    func decodeIfPresent(_ type: Int8.Type, forKey key: Key) throws -> Int8? { try absent(type, key) }
    func decodeIfPresent(_ type: Int16.Type, forKey key: Key) throws -> Int16? { try absent(type, key) }
    func decodeIfPresent(_ type: Int32.Type, forKey key: Key) throws -> Int32? { try absent(type, key) }
    func decodeIfPresent(_ type: Int64.Type, forKey key: Key) throws -> Int64? { try absent(type, key) }
    func decodeIfPresent(_ type: UInt.Type, forKey key: Key) throws -> UInt? { try absent(type, key) }
    func decodeIfPresent(_ type: UInt8.Type, forKey key: Key) throws -> UInt8? { try absent(type, key) }
    func decodeIfPresent(_ type: UInt16.Type, forKey key: Key) throws -> UInt16? { try absent(type, key) }
    func decodeIfPresent(_ type: UInt32.Type, forKey key: Key) throws -> UInt32? { try absent(type, key) }
    func decodeIfPresent(_ type: UInt64.Type, forKey key: Key) throws -> UInt64? { try absent(type, key) }

    private func absent<V>(_ type: V.Type, _ key: Key) throws -> V? {
        recorder.record(key.stringValue, V.self, optional: true)
        return nil
    }

    func nestedContainer<NestedKey: CodingKey>(keyedBy type: NestedKey.Type, forKey key: Key) throws -> KeyedDecodingContainer<NestedKey> {
        throw DAOError.unsupported("column \"\(key.stringValue)\": nested containers; decode a nested Decodable value instead")
    }

    func nestedUnkeyedContainer(forKey key: Key) throws -> any UnkeyedDecodingContainer {
        throw DAOError.unsupported("column \"\(key.stringValue)\": nested containers; decode a nested Decodable value instead")
    }

    func superDecoder() throws -> any Decoder { ProbeDecoder(recorder: recorder) }

    func superDecoder(forKey key: Key) throws -> any Decoder {
        throw DAOError.unsupported("column \"\(key.stringValue)\": super decoders")
    }
}

/// Decodes any nested value from placeholders: every key present with a placeholder, every
/// unkeyed container empty, optionals nil. Used only to build one throwaway instance.
struct PlaceholderDecoder: Decoder {
    let depth: Int
    var codingPath: [any CodingKey] { [] }
    var userInfo: [CodingUserInfoKey: Any] { [:] }

    /// A placeholder of `T`, built recursively (types nested deeper than 32 levels are refused).
    func value<T: Decodable>(_ type: T.Type) throws -> T {
        if let value = DAOColumnProbe.placeholder(T.self) as? T { return value }
        guard depth < 32 else { throw DAOError.unsupported("\(T.self) nests too deep to probe") }
        return try T(from: PlaceholderDecoder(depth: depth + 1))
    }

    func container<Key: CodingKey>(keyedBy type: Key.Type) throws -> KeyedDecodingContainer<Key> {
        KeyedDecodingContainer(Keyed<Key>(decoder: self))
    }

    func unkeyedContainer() throws -> any UnkeyedDecodingContainer { Unkeyed(decoder: self) }

    func singleValueContainer() throws -> any SingleValueDecodingContainer { Single(decoder: self) }

    struct Keyed<Key: CodingKey>: KeyedDecodingContainerProtocol {
        let decoder: PlaceholderDecoder
        var codingPath: [any CodingKey] { [] }
        var allKeys: [Key] { [] }
        func contains(_ key: Key) -> Bool { true }
        func decodeNil(forKey key: Key) throws -> Bool { true }
        func decode<T: Decodable>(_ type: T.Type, forKey key: Key) throws -> T { try decoder.value(T.self) }
        func nestedContainer<NestedKey: CodingKey>(keyedBy type: NestedKey.Type, forKey key: Key) throws -> KeyedDecodingContainer<NestedKey> {
            try decoder.container(keyedBy: type)
        }
        func nestedUnkeyedContainer(forKey key: Key) throws -> any UnkeyedDecodingContainer { Unkeyed(decoder: decoder) }
        func superDecoder() throws -> any Decoder { decoder }
        func superDecoder(forKey key: Key) throws -> any Decoder { decoder }
    }

    struct Unkeyed: UnkeyedDecodingContainer {
        let decoder: PlaceholderDecoder
        var codingPath: [any CodingKey] { [] }
        var count: Int? { 0 }
        var isAtEnd: Bool { true }
        var currentIndex: Int { 0 }
        private func end() -> DecodingError {
            .valueNotFound(Any.self, .init(codingPath: [], debugDescription: "placeholder arrays are empty"))
        }
        mutating func decodeNil() throws -> Bool { throw end() }
        mutating func decode<T: Decodable>(_ type: T.Type) throws -> T { throw end() }
        mutating func nestedContainer<NestedKey: CodingKey>(keyedBy type: NestedKey.Type) throws -> KeyedDecodingContainer<NestedKey> { throw end() }
        mutating func nestedUnkeyedContainer() throws -> any UnkeyedDecodingContainer { throw end() }
        mutating func superDecoder() throws -> any Decoder { throw end() }
    }

    struct Single: SingleValueDecodingContainer {
        let decoder: PlaceholderDecoder
        var codingPath: [any CodingKey] { [] }
        func decodeNil() -> Bool { false }
        func decode<T: Decodable>(_ type: T.Type) throws -> T { try decoder.value(T.self) }
    }
}
