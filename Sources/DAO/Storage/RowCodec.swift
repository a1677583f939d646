import LogStore

/// The byte layout of rows and row keys (FORMAT.md "DAO tables").
///
/// Key: the rowid as 8 bytes big-endian with the sign bit flipped, so keys sort like rowids.
/// Value: format byte 0x01, a varint column count, then per column a type byte and payload:
/// 0 NULL; 1 integer (zigzag varint); 2 real (8 bytes, IEEE 754 big-endian); 3 text (varint
/// length, UTF-8); 4 blob (varint length, bytes). An INTEGER PRIMARY KEY column is stored as
/// NULL (the key holds it).
enum RowCodec {
    static let formatVersion: UInt8 = 1

    static func key(rowid: Int64) -> [UInt8] {
        let bits = (UInt64(bitPattern: rowid) ^ (1 << 63)).bigEndian
        return withUnsafeBytes(of: bits) { [UInt8]($0) }
    }

    static func rowid(key: [UInt8]) -> Int64? {
        guard key.count == 8 else { return nil }
        var bits: UInt64 = 0
        for byte in key { bits = bits << 8 | UInt64(byte) }
        return Int64(bitPattern: bits ^ (1 << 63))
    }

    static func encode(_ values: [SQLValue], skipping skipped: Int? = nil) -> [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(16 + values.count * 9)
        encode(values, skipping: skipped, appendingTo: &out)
        return out
    }

    /// Appends the encoding of `values` to `out` (a table's pending rows encode in place).
    static func encode(_ values: [SQLValue], skipping skipped: Int? = nil, appendingTo out: inout [UInt8]) {
        out.append(formatVersion)
        appendVarint(UInt64(values.count), to: &out)
        for (index, value) in values.enumerated() {
            if index == skipped { out.append(0); continue }
            switch value {
            case .null: out.append(0)
            case .integer(let i):
                out.append(1)
                appendVarint(UInt64(bitPattern: (i << 1) ^ (i >> 63)), to: &out)
            case .real(let r):
                out.append(2)
                let bits = r.bitPattern
                for shift in stride(from: 56, through: 0, by: -8) { out.append(UInt8(truncatingIfNeeded: bits >> UInt64(shift))) }
            case .text(let t):
                out.append(3)
                appendVarint(UInt64(t.utf8.count), to: &out)
                out.append(contentsOf: t.utf8)
            case .invalidText(let b):   // text bytes as they are, valid UTF-8 or not
                out.append(3)
                appendVarint(UInt64(b.count), to: &out)
                out.append(contentsOf: b)
            case .blob(let b):
                out.append(4)
                appendVarint(UInt64(b.count), to: &out)
                out.append(contentsOf: b)
            }
        }
    }

    /// Decodes a row; nil when the bytes are not a row of this format.
    static func decode(_ bytes: UnsafeRawBufferPointer) -> [SQLValue]? {
        var position = 0
        guard bytes.count >= 2, bytes[0] == formatVersion else { return nil }
        position = 1
        guard let count = readVarint(bytes, &position), count < 1 << 20 else { return nil }
        var values: [SQLValue] = []
        values.reserveCapacity(Int(count))
        for _ in 0..<count {
            guard position < bytes.count else { return nil }
            let tag = bytes[position]
            position += 1
            guard let value = readValue(tag: tag, bytes, &position) else { return nil }
            values.append(value)
        }
        return values
    }

    /// Decodes only the columns in `columns` (sorted positions); the others come back NULL.
    /// Used to build indexes without materializing whole rows.
    static func decode(_ bytes: UnsafeRawBufferPointer, columns: [Int]) -> [SQLValue]? {
        guard bytes.count >= 2, bytes[0] == formatVersion else { return nil }
        var position = 1
        guard let count = readVarint(bytes, &position), count < 1 << 20 else { return nil }
        var values = [SQLValue].filled(.null, count: Int(count))
        var next = 0
        for column in 0..<Int(count) {
            guard next < columns.count else { break }
            guard position < bytes.count else { return nil }
            let tag = bytes[position]
            position += 1
            let wanted = columns[next] == column
            if wanted { next += 1 }
            guard let value = readValue(tag: tag, bytes, &position, keep: wanted) else { return nil }
            if wanted { values[column] = value }
        }
        return values
    }

    /// Decodes the columns in `columns` (sorted positions; nil: all) into `values`, which has one
    /// slot per column of the table and is overwritten in place (no allocation per row). Returns
    /// the number of values the row stores, or nil when the bytes are not a row.
    static func decode(_ bytes: UnsafeRawBufferPointer, columns: [Int]?, into values: inout [SQLValue]) -> Int? {
        guard let columns else { return decode(bytes, columnList: nil, into: &values) }
        return columns.withUnsafeBufferPointer { decode(bytes, columnList: $0, into: &values) }
    }

    /// `decode(_:columns:into:)` with the columns as a buffer (nil: all): a row read's closure
    /// that captures the buffer, not the array, retains and releases nothing per row.
    static func decode(_ bytes: UnsafeRawBufferPointer, columnList columns: UnsafeBufferPointer<Int>?, into values: inout [SQLValue]) -> Int? {
        guard bytes.count >= 2, bytes[0] == formatVersion, let base = bytes.baseAddress else { return nil }
        let end = bytes.count
        var position = 1
        guard let count = readShortVarint(base, &position, end), count < 1 << 20 else { return nil }
        let stored = min(Int(count), values.count)
        // Written through one buffer pointer: `values[column] =` checked the array's
        // uniqueness for every column.
        return values.withUnsafeMutableBufferPointer { out -> Int? in
            var next = 0
            for column in 0..<stored {
                let wanted: Bool
                if let columns {
                    guard next < columns.count else { break }
                    wanted = columns[next] == column
                    if wanted { next += 1 }
                } else {
                    wanted = true
                }
                guard position < end else { return nil }
                let tag = base.load(fromByteOffset: position, as: UInt8.self)
                position += 1
                guard let value = readValue(tag: tag, bytes, &position, keep: wanted) else { return nil }
                if wanted { out[column] = value }
            }
            return Int(count)
        }
    }

    /// Finds the stored values of `columns` (ascending positions) in the row `bytes` without
    /// building any value: each column's type byte (0 NULL, 1 integer, 2 real, 3 text, 4 blob;
    /// `absentColumn` when the row stores fewer columns: one added later) and its payload (an
    /// integer as its bits, a real as its bit pattern, a text or blob as its offset in `bytes`
    /// times 2^32 plus its length) go to `tags` and `payloads`, one slot per entry of
    /// `columns`. False when the bytes are not a row of this format.
    /// - Complexity: O(the last column asked for).
    @inline(__always)
    static func peekValues(_ bytes: UnsafeRawBufferPointer, columns: UnsafeBufferPointer<Int>,
                            tags: UnsafeMutableBufferPointer<UInt8>, payloads: UnsafeMutableBufferPointer<UInt64>) -> Bool {
        guard bytes.count >= 2, bytes[0] == formatVersion, let base = bytes.baseAddress else { return false }
        let end = bytes.count
        var position = 1
        guard let count = readShortVarint(base, &position, end), count < 1 << 20 else { return false }
        var column = 0
        for (slot, wanted) in columns.enumerated() {
            guard wanted < Int(count) else {
                for rest in slot..<columns.count { tags[rest] = absentColumn }
                return true
            }
            while true {
                guard position < end else { return false }
                let tag = base.load(fromByteOffset: position, as: UInt8.self)
                position += 1
                let keep = column == wanted
                switch tag {
                case 0:
                    if keep { payloads[slot] = 0 }
                case 1:
                    if keep {
                        guard let raw = readShortVarint(base, &position, end) else { return false }
                        payloads[slot] = (raw >> 1) ^ (0 &- (raw & 1))
                    } else {
                        guard skipVarint(base, &position, end) else { return false }
                    }
                case 2:
                    guard end - position >= 8 else { return false }
                    if keep { payloads[slot] = UInt64(bigEndian: base.loadUnaligned(fromByteOffset: position, as: UInt64.self)) }
                    position += 8
                case 3, 4:
                    guard let length = readShortVarint(base, &position, end), length <= UInt64(end - position) else { return false }
                    if keep { payloads[slot] = UInt64(position) << 32 | length }   // a row is far below 4 GiB
                    position += Int(length)
                default:
                    return false
                }
                column += 1
                if keep { tags[slot] = tag; break }
            }
        }
        return true
    }

    /// Moves past a varint without decoding it; false for what `Varint.read` refuses (one that
    /// runs past `end`, is longer than 10 bytes or holds more than 64 bits).
    @inline(__always)
    private static func skipVarint(_ base: UnsafeRawPointer, _ position: inout Int, _ end: Int) -> Bool {
        let start = position
        let limit = min(end, position + 10)
        while position < limit {
            let byte = base.load(fromByteOffset: position, as: UInt8.self)
            position += 1
            if byte < 0x80 { return position - start < 10 || byte <= 1 }
        }
        return false
    }

    /// The type byte `peekNumbers` gives a column the row does not store.
    static let absentColumn: UInt8 = 0xFF

    /// A varint with the one-byte case inline (column counts, small integers, short lengths).
    @inline(__always)
    private static func readShortVarint(_ base: UnsafeRawPointer, _ position: inout Int, _ end: Int) -> UInt64? {
        guard position < end else { return nil }
        let first = base.load(fromByteOffset: position, as: UInt8.self)
        if first < 0x80 { position += 1; return UInt64(first) }
        guard let read = Varint.read(base, at: position, limit: end) else { return nil }
        position = read.next
        return read.value
    }

    /// Reads one stored value of type `tag` at `position` and moves past it. With `keep` false
    /// the value is skipped without being built (and `.null` returned). Nil when the bytes are
    /// not a value of this format.
    @inline(__always)
    static func readValue(tag: UInt8, _ bytes: UnsafeRawBufferPointer, _ position: inout Int, keep: Bool = true) -> SQLValue? {
        guard let base = bytes.baseAddress else { return nil }
        let end = bytes.count
        switch tag {
        case 0:
            return .null
        case 1:
            guard let raw = readShortVarint(base, &position, end) else { return nil }
            return keep ? .integer(Int64(bitPattern: (raw >> 1) ^ (0 &- (raw & 1)))) : .null
        case 2:
            guard end - position >= 8 else { return nil }
            defer { position += 8 }
            guard keep else { return .null }
            return .real(Double(bitPattern: UInt64(bigEndian: base.loadUnaligned(fromByteOffset: position, as: UInt64.self))))
        case 3, 4:
            guard let length = readShortVarint(base, &position, end), length <= UInt64(end - position) else { return nil }
            defer { position += Int(length) }
            guard keep else { return .null }
            let slice = UnsafeRawBufferPointer(start: base + position, count: Int(length))
            return tag == 3 ? .text(utf8: slice) : .blob([UInt8](slice))
        default:
            return nil
        }
    }

    /// LogStore's LEB128 varint (FORMAT.md "Varints"), the one implementation of the package.
    @inline(__always)
    static func appendVarint(_ value: UInt64, to out: inout [UInt8]) {
        Varint.append(value, to: &out)
    }

    /// Reads a varint at `position` and moves past it; nil when it runs past the end or is
    /// longer than 10 bytes.
    @inline(__always)
    static func readVarint(_ bytes: UnsafeRawBufferPointer, _ position: inout Int) -> UInt64? {
        guard let base = bytes.baseAddress, let read = Varint.read(base, at: position, limit: bytes.count) else { return nil }
        position = read.next
        return read.value
    }
}
