#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Index keys as memcomparable bytes (FORMAT.md "DAO index keys"): comparing two encodings with
/// memcmp gives SQLite's order of the values (BINARY collation, `SQLValues.compare`): NULL <
/// numbers (integers and reals compared by value) < text < blob, DESC columns inverted. An
/// index entry is its columns' encodings then the row key (8 bytes, sign bit flipped), so
/// entries with equal keys sort by rowid.
///
/// Every column's encoding is prefix-free, so a probe made of the first k columns compares
/// with an entry's first bytes exactly as the k columns would.
enum IndexKeyCodec {
    static let nullTag: UInt8 = 0x05
    static let numberTag: UInt8 = 0x10
    static let textTag: UInt8 = 0x20
    static let blobTag: UInt8 = 0x30

    /// Appends the encoding of `value` (inverted when `descending`).
    static func append(_ value: SQLValue, descending: Bool, to out: inout [UInt8]) {
        let start = out.count
        switch value {
        case .null: out.append(nullTag)
        case .integer(let i): appendNumber(Double(i), tiebreak: tiebreak(i), to: &out)
        case .real(let r): appendNumber(r, tiebreak: 0, to: &out)
        case .text(let t):
            out.append(textTag)
            var t = t
            t.withUTF8 { appendEscaped(UnsafeRawBufferPointer($0), to: &out) }
        case .invalidText(let b):
            out.append(textTag)
            b.withUnsafeBytes { appendEscaped($0, to: &out) }
        case .blob(let b):
            out.append(blobTag)
            b.withUnsafeBytes { appendEscaped($0, to: &out) }
        }
        if descending {
            for i in start..<out.count { out[i] = ~out[i] }
        }
    }

    /// The encoding of the leading key columns `key` (a probe; `key.count` <= columns).
    static func probe(_ key: [SQLValue], descending: [Bool]) -> [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(key.count * 12)
        for (i, value) in key.enumerated() { append(value, descending: descending[i], to: &out) }
        return out
    }

    /// The entry of a row whose key columns are `key`, then its rowid.
    static func entry(_ key: [SQLValue], rowid: Int64, descending: [Bool]) -> [UInt8] {
        entry(columns: Array(key.indices), of: key, rowid: rowid, descending: descending)
    }

    /// The entry of a row, its `columns` of `row` (one slot per table column) then its rowid,
    /// in one array sized for it at once (built through a key array and a probe, it was made
    /// and grown three times an index an insert).
    /// With `collations`, each column's text is folded by its collation first.
    static func entry(columns: [Int], of row: [SQLValue], rowid: Int64, descending: [Bool], collations: [Collation]? = nil) -> [UInt8] {
        var capacity = 8
        for column in columns { capacity += encodedBound(row[column]) }
        var out: [UInt8] = []
        out.reserveCapacity(capacity)
        if let collations {
            for (i, column) in columns.enumerated() { append(collations[i].fold(row[column]), descending: descending[i], to: &out) }
        } else {
            for (i, column) in columns.enumerated() { append(row[column], descending: descending[i], to: &out) }
        }
        appendRowid(rowid, to: &out)
        return out
    }

    /// The most bytes `append` writes for `value` (each zero byte of a text or blob escaped).
    private static func encodedBound(_ value: SQLValue) -> Int {
        switch value {
        case .null: return 1
        case .integer, .real: return 11
        case .text(let t): return 3 + 2 * t.utf8.count
        case .invalidText(let b), .blob(let b): return 3 + 2 * b.count
        }
    }

    static func appendRowid(_ rowid: Int64, to out: inout [UInt8]) {
        let bits = UInt64(bitPattern: rowid) ^ (1 << 63)
        for shift in stride(from: 56, through: 0, by: -8) { out.append(UInt8(truncatingIfNeeded: bits >> UInt64(shift))) }
    }

    /// The rowid at the end of an entry (its last 8 bytes).
    @inline(__always)
    static func rowid(ofEntry entry: UnsafeRawBufferPointer) -> Int64 {
        var bits: UInt64 = 0
        for i in (entry.count - 8)..<entry.count { bits = bits << 8 | UInt64(entry[i]) }
        return Int64(bitPattern: bits ^ (1 << 63))
    }

    /// Numbers: the value rounded to the nearest double, as 8 order-preserving bytes, then the
    /// exact remainder (integer minus that double: nonzero only beyond 2^53, at most 1024 in
    /// magnitude) as a big-endian u16 biased by 0x8000. -0.0 is 0.0; NaN sorts below -inf.
    private static func appendNumber(_ value: Double, tiebreak: Int, to out: inout [UInt8]) {
        out.append(numberTag)
        let d = value == 0 ? 0.0 : value
        var bits: UInt64
        if d.isNaN {
            bits = 0
        } else {
            bits = d.bitPattern
            bits = bits & (1 << 63) != 0 ? ~bits : bits | (1 << 63)
        }
        for shift in stride(from: 56, through: 0, by: -8) { out.append(UInt8(truncatingIfNeeded: bits >> UInt64(shift))) }
        let biased = UInt16(truncatingIfNeeded: tiebreak + 0x8000)
        out.append(UInt8(truncatingIfNeeded: biased >> 8))
        out.append(UInt8(truncatingIfNeeded: biased))
    }

    /// `i` minus `Double(i)`, computed exactly.
    private static func tiebreak(_ i: Int64) -> Int {
        let d = Double(i)
        if d >= 9223372036854775808.0 { return Int(i &- Int64.max) - 1 }
        return Int(i &- Int64(d))
    }

    /// Text and blob bytes: 0x00 becomes 00 FF, then the terminator 00 00 (so a shorter
    /// string sorts first, as memcmp-then-length does).
    private static func appendEscaped(_ bytes: UnsafeRawBufferPointer, to out: inout [UInt8]) {
        out.reserveCapacity(out.count + bytes.count + 2)
        for byte in bytes {
            out.append(byte)
            if byte == 0 { out.append(0xFF) }
        }
        out.append(0)
        out.append(0)
    }

    /// memcmp order of an entry's first bytes against `probe`: 0 when the entry starts with the
    /// probe (or equals it).
    @inline(__always)
    static func compare(_ entry: UnsafeRawBufferPointer, _ probe: UnsafeRawBufferPointer) -> Int {
        let common = min(entry.count, probe.count)
        if common > 0, let a = entry.baseAddress, let b = probe.baseAddress {
            let c = memcmp(a, b, common)
            if c != 0 { return Int(c) }
        }
        return entry.count < probe.count ? -1 : 0
    }
}
