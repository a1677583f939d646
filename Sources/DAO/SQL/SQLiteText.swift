#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Text as SQLite's functions read it: bytes (valid UTF-8 or not), and SQLite's rule for where
/// a character starts and what it decodes to.
///
/// SQLite never validates text. A character is a byte below 0xC0 on its own (so a stray
/// continuation byte counts as one character), or a byte from 0xC0 up with every continuation
/// byte (10xxxxxx) after it (`SQLITE_SKIP_UTF8`). `sqlite3Utf8Read` decodes such a character
/// to a code point, and gives U+FFFD for an overlong form, a surrogate or U+FFFE/U+FFFF. For
/// valid UTF-8 both rules agree with Unicode scalars, so functions may take the `String` path
/// for `.text` and this one for everything else.
enum SQLiteText {
    /// The bytes of a value's text form, all of them (`sqlite3_value_text` with
    /// `sqlite3_value_bytes`): a text's as kept, a blob's as they are, a number's text; nil for
    /// NULL.
    static func bytes(of value: SQLValue) -> [UInt8]? {
        switch value {
        case .null: return nil
        case .text(let text): return Array(text.utf8)
        case .invalidText(let bytes), .blob(let bytes): return bytes
        case .integer, .real: return Array((SQLValues.text(of: value) ?? "").utf8)
        }
    }

    /// The value as text (`sqlite3_value_text` then a TEXT result): text stays, a blob's bytes
    /// become a text of the same bytes, a number its text form; NULL stays NULL.
    static func textValue(of value: SQLValue) -> SQLValue {
        switch value {
        case .null, .text, .invalidText: return value
        case .blob(let bytes): return .text(bytes: bytes)
        case .integer, .real: return .text(SQLValues.text(of: value) ?? "")
        }
    }

    /// The bytes before the first NUL (what SQLite's character-walking functions see).
    static func beforeNul(_ bytes: [UInt8]) -> ArraySlice<UInt8> {
        if let nul = bytes.firstIndex(of: 0) { return bytes[..<nul] }
        return bytes[...]
    }

    /// The bytes before the first NUL of a buffer.
    @inline(__always)
    static func beforeNul(_ buffer: UnsafeBufferPointer<UInt8>) -> UnsafeBufferPointer<UInt8> {
        guard let base = buffer.baseAddress, let nul = memchr(base, 0, buffer.count) else { return buffer }
        return UnsafeBufferPointer(start: base, count: UnsafeRawPointer(nul) - UnsafeRawPointer(base))
    }

    /// The index just past the character starting at `index` (`SQLITE_SKIP_UTF8`).
    @inline(__always)
    static func characterEnd<C: Collection<UInt8>>(_ bytes: C, after index: C.Index) -> C.Index {
        var i = bytes.index(after: index)
        if bytes[index] >= 0xC0 {
            while i < bytes.endIndex, bytes[i] & 0xC0 == 0x80 { i = bytes.index(after: i) }
        }
        return i
    }

    /// The number of characters before the first NUL (SQLite's `length()` of a text).
    static func characterCount(_ bytes: [UInt8]) -> Int {
        let text = beforeNul(bytes)
        var count = 0
        var i = text.startIndex
        while i < text.endIndex {
            i = characterEnd(text, after: i)
            count += 1
        }
        return count
    }

    /// The index `count` characters after `start`, or the end of `bytes` when there are fewer.
    static func index(_ bytes: ArraySlice<UInt8>, _ start: Int, advancedBy count: Int) -> Int {
        var i = start, left = count
        while left > 0, i < bytes.endIndex {
            i = characterEnd(bytes, after: i)
            left -= 1
        }
        return i
    }

    /// The code points of `bytes` as `sqlite3Utf8Read` decodes them, character by character.
    static func codePoints<C: Collection<UInt8>>(_ bytes: C) -> [UInt32] {
        var points: [UInt32] = []
        points.reserveCapacity(bytes.count)
        var i = bytes.startIndex
        while i < bytes.endIndex {
            let end = characterEnd(bytes, after: i)
            points.append(decode(bytes[i..<end]))
            i = end
        }
        return points
    }

    /// One character's code point (`sqlite3Utf8Read`): a byte below 0xC0 is its own value; a
    /// lead byte's payload bits then six bits per continuation byte, U+FFFD when the result is
    /// below 0x80, a surrogate, or U+FFFE/U+FFFF.
    static func decode<C: Collection<UInt8>>(_ character: C) -> UInt32 {
        guard let lead = character.first else { return 0 }
        guard lead >= 0xC0 else { return UInt32(lead) }
        var c = UInt32(leadPayload(lead))
        for byte in character.dropFirst() { c = (c &<< 6) &+ UInt32(byte & 0x3F) }
        if c < 0x80 || c & 0xFFFF_F800 == 0xD800 || c & 0xFFFF_FFFE == 0xFFFE { return 0xFFFD }
        return c
    }

    /// The payload bits of a lead byte from 0xC0 up (SQLite's `sqlite3Utf8Trans1`).
    private static func leadPayload(_ lead: UInt8) -> UInt8 {
        switch lead {
        case 0xC0...0xDF: return lead - 0xC0
        case 0xE0...0xEF: return lead - 0xE0
        case 0xF0...0xF7: return lead - 0xF0
        case 0xF8...0xFB: return lead - 0xF8
        case 0xFC...0xFD: return lead - 0xFC
        default: return 0
        }
    }
}
