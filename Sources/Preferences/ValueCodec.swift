import Foundation

/// How a preference value is laid out in its LogStore record, so that `object(forKey:)` can
/// decode it without being told.
///
/// Every value is one tag byte followed by the payload. The whole of it (tag included) is what
/// LogStore protects with the call's crypt, so an encrypted value hides its kind too.
///
/// | tag  | written by                 | payload                                          |
/// | ---- | -------------------------- | ------------------------------------------------ |
/// | 0x01 | `set(_: Int)`              | 8 bytes, two's complement, little-endian         |
/// | 0x02 | `set(_: Int64)`            | 8 bytes, two's complement, little-endian         |
/// | 0x03 | `set(_: Bool)`             | 1 byte, 0x00 or 0x01                             |
/// | 0x04 | `set(_: Double)`           | 8 bytes, IEEE 754 binary64 bits, little-endian   |
/// | 0x05 | `setString`                | the string's UTF-8, no terminator                |
/// | 0x06 | `setObject` (property list)| binary property list (`bplist00`)                |
/// | 0x07 | `archiveObject` (NSCoding) | NSKeyedArchiver output (a binary property list)  |
/// | 0x08 | `archive` (Encodable)      | PropertyListEncoder output, binary format        |
/// | 0x09 | `saveJSON` (Encodable)     | JSONEncoder output, UTF-8                        |
///
/// Tag 0x00 and 0x0A...0xFF are reserved: readers treat such a value as undecodable (getters
/// give their default, typed reads throw `decodingFailed`). A value whose payload is shorter
/// than its tag requires is undecodable the same way.
enum ValueTag: UInt8, Sendable {
    case int = 0x01
    case int64 = 0x02
    case bool = 0x03
    case double = 0x04
    case string = 0x05
    case propertyList = 0x06
    case keyedArchive = 0x07
    case codablePropertyList = 0x08
    case json = 0x09

    /// The kind's name in `PreferencesError.typeMismatch`.
    var kindName: String {
        switch self {
        case .int: return "int"
        case .int64: return "int64"
        case .bool: return "bool"
        case .double: return "double"
        case .string: return "string"
        case .propertyList: return "plist"
        case .keyedArchive: return "archive"
        case .codablePropertyList: return "codable-plist"
        case .json: return "json"
        }
    }
}

/// A stored number of any of the scalar kinds; they convert among themselves.
enum StoredNumber: Sendable, Equatable {
    case integer(Int64)
    case double(Double)
    case bool(Bool)

    var int64: Int64? {
        switch self {
        case .integer(let value): return value
        case .double(let value):
            // Truncates toward zero, as NSNumber does; out of range or NaN has no value.
            guard value.isFinite, value >= -9.223372036854775808e18, value < 9.223372036854775808e18 else { return nil }
            return Int64(value)
        case .bool(let value): return value ? 1 : 0
        }
    }

    var int: Int? { int64.flatMap { Int(exactly: $0) } }

    var double: Double {
        switch self {
        case .integer(let value): return Double(value)
        case .double(let value): return value
        case .bool(let value): return value ? 1 : 0
        }
    }

    var bool: Bool {
        switch self {
        case .integer(let value): return value != 0
        case .double(let value): return value != 0
        case .bool(let value): return value
        }
    }

    /// The number an `NSNumber` holds, keeping booleans and floating point apart.
    init(_ number: NSNumber) {
        switch String(cString: number.objCType) {
        case "c", "B": self = .bool(number.boolValue)
        case "f", "d": self = .double(number.doubleValue)
        default: self = .integer(number.int64Value)
        }
    }
}

/// Encodes and decodes the tagged value layout described at `ValueTag`.
enum ValueCodec {
    static func encode(tag: ValueTag, payload: some Sequence<UInt8>) -> [UInt8] {
        var bytes: [UInt8] = [tag.rawValue]
        bytes.append(contentsOf: payload)
        return bytes
    }

    static func encode(_ value: Int) -> [UInt8] { fixedWidth(.int, UInt64(bitPattern: Int64(value))) }
    static func encode(_ value: Int64) -> [UInt8] { fixedWidth(.int64, UInt64(bitPattern: value)) }
    static func encode(_ value: Double) -> [UInt8] { fixedWidth(.double, value.bitPattern) }
    static func encode(_ value: Bool) -> [UInt8] { [ValueTag.bool.rawValue, value ? 1 : 0] }
    static func encode(_ value: String) -> [UInt8] { encode(tag: .string, payload: value.utf8) }

    private static func fixedWidth(_ tag: ValueTag, _ bits: UInt64) -> [UInt8] {
        var bytes: [UInt8] = [tag.rawValue]
        withUnsafeBytes(of: bits.littleEndian) { bytes.append(contentsOf: $0) }
        return bytes
    }

    /// The tag and payload of `bytes`; nil for an empty value or a reserved tag.
    static func split(_ bytes: [UInt8]) -> (tag: ValueTag, payload: ArraySlice<UInt8>)? {
        guard let first = bytes.first, let tag = ValueTag(rawValue: first) else { return nil }
        return (tag, bytes.dropFirst())
    }

    private static func readUInt64(_ payload: ArraySlice<UInt8>) -> UInt64? {
        guard payload.count == 8 else { return nil }
        var bits: UInt64 = 0
        for (shift, byte) in payload.enumerated() { bits |= UInt64(byte) << (8 * UInt64(shift)) }
        return bits
    }

    /// The number stored by a scalar tag, or by a property list whose root is a number;
    /// nil for every other kind (strings included) and for malformed payloads.
    static func number(tag: ValueTag, payload: ArraySlice<UInt8>) -> StoredNumber? {
        switch tag {
        case .int, .int64:
            return readUInt64(payload).map { .integer(Int64(bitPattern: $0)) }
        case .double:
            return readUInt64(payload).map { .double(Double(bitPattern: $0)) }
        case .bool:
            guard payload.count == 1, let byte = payload.first, byte <= 1 else { return nil }
            return .bool(byte == 1)
        case .propertyList:
            guard let number = try? propertyList(payload) as? NSNumber else { return nil }
            return StoredNumber(number)
        case .string, .keyedArchive, .codablePropertyList, .json:
            return nil
        }
    }

    /// The string stored by `setString`, or by `setObject` with a String root; nil otherwise.
    static func string(tag: ValueTag, payload: ArraySlice<UInt8>) -> String? {
        switch tag {
        case .string: return String(validating: payload, as: UTF8.self)
        case .propertyList: return (try? propertyList(payload)) as? String
        default: return nil
        }
    }

    static func propertyList(_ payload: ArraySlice<UInt8>) throws -> Any {
        try PropertyListSerialization.propertyList(from: Data(payload), options: [], format: nil)
    }

    /// `value` with every array and dictionary, at any depth, as NSMutableArray /
    /// NSMutableDictionary (PropertyListSerialization's `.mutableContainers`, which
    /// swift-corelibs-foundation ignores). Leaves stay as they are. O(elements).
    static func mutableContainers(_ value: Any) -> Any {
        if let array = value as? [Any] {
            let result = NSMutableArray(capacity: array.count)
            for element in array { result.add(mutableContainers(element)) }
            return result
        }
        if let dictionary = value as? [AnyHashable: Any] {
            let result = NSMutableDictionary(capacity: dictionary.count)
            for (key, element) in dictionary { result[key] = mutableContainers(element) }
            return result
        }
        return value
    }

    static func unarchive(_ payload: ArraySlice<UInt8>) throws -> Any? {
        let unarchiver = try NSKeyedUnarchiver(forReadingFrom: Data(payload))
        unarchiver.requiresSecureCoding = false
        defer { unarchiver.finishDecoding() }
        return unarchiver.decodeObject(forKey: NSKeyedArchiveRootObjectKey)
    }

    /// The value as `object(forKey:)` returns it: scalars as Int / Int64 / Bool / Double,
    /// strings as String, property lists and JSON as Foundation objects, archives unarchived.
    /// Nil when the payload does not decode.
    static func object(tag: ValueTag, payload: ArraySlice<UInt8>) -> Any? {
        switch tag {
        case .int: return number(tag: tag, payload: payload)?.int64.flatMap { Int(exactly: $0) }
        case .int64: return number(tag: tag, payload: payload)?.int64
        case .bool: return number(tag: tag, payload: payload)?.bool
        case .double: return number(tag: tag, payload: payload)?.double
        case .string: return String(validating: payload, as: UTF8.self)
        // key_value.md 2.2.3.1: a property list stored with setObject reads back mutable.
        case .propertyList: return (try? propertyList(payload)).map(mutableContainers)
        case .codablePropertyList: return try? propertyList(payload)
        case .json: return try? JSONSerialization.jsonObject(with: Data(payload), options: [.fragmentsAllowed])
        case .keyedArchive: return (try? unarchive(payload)) ?? nil
        }
    }
}
