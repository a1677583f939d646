#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// One value inside the SQL engine: SQLite's five storage classes, with text kept as bytes.
///
/// SQLite keeps a TEXT value's bytes as they are, valid UTF-8 or not (`CAST(x'8e30' AS TEXT)`
/// is a text of two bytes), and compares, sorts, hashes and stores those bytes. A Swift
/// `String` is always valid Unicode, so the public `DAOValue.text(String)` cannot hold such a
/// value. Inside the engine a text that is valid UTF-8 is `.text(String)` (the common case,
/// which every text function handles directly) and one that is not is `.invalidText` with its
/// exact bytes; `text(bytes:)` picks between the two, so the same bytes always give the same
/// case. Values cross to `DAOValue` only where a result leaves the library
/// (`SQLResult.rows`): there an invalid text is repaired, and its bytes stay available
/// (`SQLResult.textBytes(row:column:)`).
enum SQLValue: Sendable, ExpressibleByIntegerLiteral, ExpressibleByStringLiteral, ExpressibleByFloatLiteral,
    ExpressibleByNilLiteral
{
    case null
    case integer(Int64)
    case real(Double)
    /// Text whose bytes are valid UTF-8.
    case text(String)
    case blob([UInt8])
    /// Text whose bytes are not valid UTF-8, kept exactly (never valid UTF-8: see `text(bytes:)`).
    case invalidText([UInt8])

    init(integerLiteral value: Int64) { self = .integer(value) }
    init(stringLiteral value: String) { self = .text(value) }
    init(floatLiteral value: Double) { self = .real(value) }
    init(nilLiteral: ()) { self = .null }

    /// A text value of these bytes: `.text` when they are valid UTF-8, `.invalidText` otherwise.
    @inline(__always)
    static func text<Bytes: Collection<UInt8>>(bytes: Bytes) -> SQLValue {
        if let value = bytes.withContiguousStorageIfAvailable({ text(utf8: UnsafeRawBufferPointer($0)) }) { return value }
        return Array(bytes).withUnsafeBytes { text(utf8: $0) }
    }

    /// A text value of the bytes at `buffer` (see `text(bytes:)`).
    static func text(utf8 buffer: UnsafeRawBufferPointer) -> SQLValue {
        // The string is made from the bytes as they are, validated, and what is not valid is
        // replaced; the bytes were valid exactly when it changed nothing. (String(validating:) is
        // generic and resolves its type metadata at run time on every call; String(decoding:)
        // does the same work in ~65 more instructions for a short text.)
        var string: String
        if #available(macOS 11.0, iOS 14.0, tvOS 14.0, watchOS 7.0, *) {
            string = String(unsafeUninitializedCapacity: buffer.count) { target in
                UnsafeMutableRawBufferPointer(target).copyMemory(from: buffer)
                return buffer.count
            }
        } else {
            string = String(decoding: buffer, as: UTF8.self)
        }
        if isASCII(buffer) { return .text(string) }   // the common case, without a second pass
        let unchanged = string.withUTF8 { decoded -> Bool in
            guard decoded.count == buffer.count else { return false }
            guard let x = decoded.baseAddress, let y = buffer.baseAddress else { return true }   // both empty
            return memcmp(x, y, buffer.count) == 0
        }
        return unchanged ? .text(string) : .invalidText(Array(buffer))
    }

    /// Whether every byte is below 0x80 (eight at a time).
    @inline(__always)
    private static func isASCII(_ buffer: UnsafeRawBufferPointer) -> Bool {
        var i = 0
        var any: UInt64 = 0
        while i + 8 <= buffer.count {
            any |= buffer.loadUnaligned(fromByteOffset: i, as: UInt64.self)
            i += 8
        }
        while i < buffer.count {
            any |= UInt64(buffer[i])
            i += 1
        }
        return any & 0x8080_8080_8080_8080 == 0
    }

    /// A public value as the engine's.
    @inline(__always)
    init(_ value: DAOValue) {
        switch value {
        case .null: self = .null
        case .integer(let i): self = .integer(i)
        case .real(let r): self = .real(r)
        case .text(let t): self = .text(t)
        case .blob(let b): self = .blob(b)
        }
    }

    /// Whether the value is text (valid UTF-8 or not).
    var isText: Bool {
        switch self {
        case .text, .invalidText: return true
        default: return false
        }
    }
}

extension SQLValue: Equatable {
    /// Same storage class and same bytes (text compares by its bytes, as SQLite's BINARY
    /// collation does, not by Unicode canonical equivalence as `String ==` would).
    static func == (a: SQLValue, b: SQLValue) -> Bool {
        switch (a, b) {
        case (.null, .null): return true
        case (.integer(let x), .integer(let y)): return x == y
        case (.real(let x), .real(let y)): return x == y
        case (.text(let x), .text(let y)): return x.utf8.elementsEqual(y.utf8)
        case (.blob(let x), .blob(let y)): return x == y
        case (.invalidText(let x), .invalidText(let y)): return x == y
        default: return false
        }
    }
}

extension DAOValue {
    /// An engine value as the public one: an invalid text's bytes repaired as
    /// `String(decoding:as:)` does (each ill-formed sequence becomes U+FFFD).
    @inline(__always)
    init(_ value: SQLValue) {
        switch value {
        case .null: self = .null
        case .integer(let i): self = .integer(i)
        case .real(let r): self = .real(r)
        case .text(let t): self = .text(t)
        case .blob(let b): self = .blob(b)
        case .invalidText(let bytes): self = .text(String(decoding: bytes, as: UTF8.self))
        }
    }
}
