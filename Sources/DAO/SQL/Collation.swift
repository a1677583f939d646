/// SQLite's built-in collating sequences: how two texts compare (any other pair of values
/// compares as `SQLValues.compare` says; a collation changes text against text only).
///
/// - `binary`: memcmp, then length (the default).
/// - `nocase`: as binary after the 26 ASCII capitals are mapped to lower case (SQLite's
///   `sqlite3StrNICmp`; 'É' and 'é' stay different), except that a NUL both texts hold at the
///   same place ends the comparison there, and the longer text is then the greater.
/// - `rtrim`: as binary after trailing spaces (0x20) are dropped.
///
/// Each is a fold followed by the binary comparison, so a folded text also serves as an index
/// key (FORMAT.md "DAO index keys") and as a grouping or DISTINCT key.
enum Collation: UInt8, Sendable, Equatable {
    case binary, nocase, rtrim

    /// The collation a name gives (any case), or nil for an unknown one.
    init?(name: String) {
        switch name.uppercased() {
        case "BINARY": self = .binary
        case "NOCASE": self = .nocase
        case "RTRIM": self = .rtrim
        default: return nil
        }
    }

    /// Its name as SQLite spells it in schema text and pragmas.
    var name: String {
        switch self {
        case .binary: return "BINARY"
        case .nocase: return "NOCASE"
        case .rtrim: return "RTRIM"
        }
    }

    /// The collation named, or SQLite's error for an unknown name.
    /// - Throws: `SQLExecutionError` "no such collation sequence: name".
    static func named(_ name: String) throws -> Collation {
        guard let collation = Collation(name: name) else { throw SQLExecutionError("no such collation sequence: \(name)") }
        return collation
    }

    /// `value` as this collation compares it: a text folded, anything else unchanged.
    /// O(length of the text); a text the fold does not change is handed back as it is.
    func fold(_ value: SQLValue) -> SQLValue {
        switch (self, value) {
        case (.binary, _): return value
        case (_, .text(let text)):
            let bytes = Array(text.utf8)
            let folded = fold(bytes)
            return folded.count == bytes.count && folded == bytes ? value : .text(bytes: folded)
        case (_, .invalidText(let bytes)):
            return .text(bytes: fold(bytes))
        default:
            return value
        }
    }

    /// Text bytes folded (`binary`: unchanged).
    func fold(_ bytes: [UInt8]) -> [UInt8] {
        switch self {
        case .binary:
            return bytes
        case .nocase:
            if let nul = bytes.firstIndex(of: 0) {
                // sqlite3StrNICmp stops where both texts hold a NUL (after equal bytes), and
                // then the lengths decide: the folded bytes before the NUL, the NUL, then the
                // length as 8 big-endian bytes compare the same way.
                var key = bytes[..<nul].map { $0 >= 0x41 && $0 <= 0x5A ? $0 + 0x20 : $0 }
                key.append(0)
                withUnsafeBytes(of: UInt64(bytes.count).bigEndian) { key.append(contentsOf: $0) }
                return key
            }
            guard bytes.contains(where: { $0 >= 0x41 && $0 <= 0x5A }) else { return bytes }
            return bytes.map { $0 >= 0x41 && $0 <= 0x5A ? $0 + 0x20 : $0 }
        case .rtrim:
            var end = bytes.count
            while end > 0 && bytes[end - 1] == 0x20 { end -= 1 }
            return end == bytes.count ? bytes : Array(bytes[..<end])
        }
    }

    /// SQLite's order of two values under this collation (negative, zero, positive): the order
    /// of their folds (`fold`), worked out on the bytes as they lie, without making the folds
    /// (a NOCASE comparison runs per row).
    @inline(__always)
    func compare(_ a: SQLValue, _ b: SQLValue) -> Int {
        if self == .binary { return SQLValues.compare(a, b) }
        switch (a, b) {
        case (.text(var x), .text(var y)):
            return x.withUTF8 { px in y.withUTF8 { py in compareText(UnsafeRawBufferPointer(px), UnsafeRawBufferPointer(py)) } }
        case (.text(var x), .invalidText(let y)):
            return x.withUTF8 { px in y.withUnsafeBytes { compareText(UnsafeRawBufferPointer(px), $0) } }
        case (.invalidText(let x), .text(var y)):
            return x.withUnsafeBytes { px in y.withUTF8 { compareText(px, UnsafeRawBufferPointer($0)) } }
        case (.invalidText(let x), .invalidText(let y)):
            return x.withUnsafeBytes { px in y.withUnsafeBytes { compareText(px, $0) } }
        default:
            return SQLValues.compare(a, b)   // a collation changes text against text only
        }
    }

    /// Two texts' bytes under NOCASE or RTRIM.
    private func compareText(_ x: UnsafeRawBufferPointer, _ y: UnsafeRawBufferPointer) -> Int {
        var xCount = x.count, yCount = y.count
        if self == .rtrim {
            while xCount > 0 && x[xCount - 1] == 0x20 { xCount -= 1 }
            while yCount > 0 && y[yCount - 1] == 0x20 { yCount -= 1 }
        }
        for i in 0..<min(xCount, yCount) {
            var p = x[i], q = y[i]
            if self == .nocase {
                if p == 0 && q == 0 { break }   // sqlite3StrNICmp stops at a NUL both hold
                if p >= 0x41 && p <= 0x5A { p += 0x20 }
                if q >= 0x41 && q <= 0x5A { q += 0x20 }
            }
            if p != q { return p < q ? -1 : 1 }
        }
        return xCount < yCount ? -1 : (xCount > yCount ? 1 : 0)
    }
}
