/// Reading values back out of index entries, for scans that an index covers (every column the
/// query reads is in the index, so the row itself is not read).
///
/// The encoding is built for order, not for round trips: an integer and a real of the same value
/// encode alike. A column's affinity settles the type where the stored values allow only one
/// reading (an INTEGER or NUMERIC column holds an integral real in range as an integer, a REAL
/// column holds no integer, a TEXT column no number); where it does not, decoding reports the
/// entry as undecodable and the caller reads the row instead.
extension IndexKeyCodec {
    /// Decodes the key columns of `entry` (in index order, `descending` per column) and passes
    /// each value with its position in the index to `body`. False when a value's type cannot be
    /// told from the bytes and `affinities` (or the bytes are malformed): nothing to trust then.
    @inline(__always)
    static func decodeKey(_ entry: UnsafeRawBufferPointer, descending: UnsafeBufferPointer<Bool>, affinities: UnsafeBufferPointer<Affinity>,
                          _ body: (Int, SQLValue) -> Void) -> Bool {
        var at = 0
        for column in 0..<descending.count {
            let invert: UInt8 = descending[column] ? 0xFF : 0
            guard at < entry.count else { return false }
            let tag = entry[at] ^ invert
            at += 1
            switch tag {
            case nullTag:
                body(column, .null)
            case numberTag:
                guard entry.count - at >= 10 else { return false }
                var bits: UInt64 = 0
                for i in 0..<8 { bits = bits << 8 | UInt64(entry[at + i] ^ invert) }
                let biased = UInt16(entry[at + 8] ^ invert) << 8 | UInt16(entry[at + 9] ^ invert)
                at += 10
                bits = bits & (1 << 63) != 0 ? bits & ~(1 << 63) : ~bits
                guard let value = number(Double(bitPattern: bits), tiebreak: Int(biased) - 0x8000, affinity: affinities[column]) else {
                    return false
                }
                body(column, value)
            case textTag, blobTag:
                // Ascending and without an escaped zero byte (the common case): the value is
                // the bytes up to the terminator, taken as they are.
                if invert == 0, let end = plainEnd(entry, from: at) {
                    let bytes = UnsafeRawBufferPointer(rebasing: entry[at..<end])
                    at = end + 2
                    body(column, tag == textTag ? .text(utf8: bytes) : .blob(Array(bytes)))
                    continue
                }
                var bytes: [UInt8] = []
                var closed = false
                while at + 1 < entry.count {
                    let byte = entry[at] ^ invert
                    if byte != 0 { bytes.append(byte); at += 1; continue }
                    let next = entry[at + 1] ^ invert
                    at += 2
                    if next == 0 { closed = true; break }
                    guard next == 0xFF else { return false }
                    bytes.append(0)
                }
                guard closed else { return false }
                body(column, tag == textTag ? .text(bytes: bytes) : .blob(bytes))
            default:
                return false
            }
        }
        return true
    }

    /// Where the terminator (0x00 0x00) of the text or blob starting at `from` is, when no
    /// escaped zero byte (0x00 0xFF) comes before it; nil otherwise (or when there is none).
    @inline(__always)
    private static func plainEnd(_ entry: UnsafeRawBufferPointer, from: Int) -> Int? {
        var i = from
        while i + 1 < entry.count {
            if entry[i] == 0 { return entry[i + 1] == 0 ? i : nil }
            i += 1
        }
        return nil
    }

    /// The stored number that encodes as `value` with `tiebreak`, in a column of `affinity`;
    /// nil when two stored values share the encoding.
    private static func number(_ value: Double, tiebreak: Int, affinity: Affinity) -> SQLValue? {
        switch affinity {
        case .integer, .numeric:
            // Only integers have a remainder; an integral real in range was stored as an integer
            // (`SQLValues.apply`), except at -2^63, where Int64.min and the real are alike.
            if tiebreak != 0 {
                if value >= 9223372036854775808.0 { return .integer(Int64.max &+ Int64(tiebreak + 1)) }
                if value == -9223372036854775808.0 { return .integer(Int64.min &+ Int64(tiebreak)) }
                guard let base = SQLValues.exactInteger(value) else { return nil }
                return .integer(base &+ Int64(tiebreak))
            }
            if let integer = SQLValues.exactInteger(value) { return .integer(integer) }
            if value == -9223372036854775808.0 || value == 9223372036854775808.0 { return nil }
            return .real(value)
        case .real:
            // A REAL column stores integers as reals; an exact remainder means one was not.
            return tiebreak == 0 ? .real(value) : nil
        case .text, .blob:
            // A TEXT column turns numbers into text; a column without affinity keeps both kinds.
            return nil
        }
    }
}
