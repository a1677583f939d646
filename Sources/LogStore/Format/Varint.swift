/// LEB128 unsigned varints: seven bits a byte, least significant group first, the high bit set
/// on every byte but the last. 300 is `AC 02`. At most 10 bytes for a UInt64.
package enum Varint {
    /// Bytes needed to encode `value`.
    @inline(__always)
    package static func size(_ value: UInt64) -> Int {
        // 1 + floor(bits / 7), with 0 taking one byte.
        let bits = 64 - value.leadingZeroBitCount
        return bits == 0 ? 1 : (bits + 6) / 7
    }

    /// Writes `value` at `pointer` and returns the bytes written.
    @inline(__always)
    package static func write(_ value: UInt64, to pointer: UnsafeMutableRawPointer) -> Int {
        var v = value
        var i = 0
        while v >= 0x80 {
            pointer.storeBytes(of: UInt8(truncatingIfNeeded: v) | 0x80, toByteOffset: i, as: UInt8.self)
            v >>= 7
            i += 1
        }
        pointer.storeBytes(of: UInt8(v), toByteOffset: i, as: UInt8.self)
        return i + 1
    }

    package static func append(_ value: UInt64, to bytes: inout [UInt8]) {
        var v = value
        while v >= 0x80 {
            bytes.append(UInt8(truncatingIfNeeded: v) | 0x80)
            v >>= 7
        }
        bytes.append(UInt8(v))
    }

    /// Reads a varint at `offset` of `[base, base + limit)`. Returns nil when it runs past
    /// `limit` or is longer than 10 bytes (a corrupt encoding); otherwise the value and the
    /// offset just past it.
    @inline(__always)
    package static func read(_ base: UnsafeRawPointer, at offset: Int, limit: Int) -> (value: UInt64, next: Int)? {
        // One byte first: most fields of a record header (space, lengths) are below 128, and the
        // loop below costs ~15 instructions a byte on every keyed read.
        if offset < limit {
            let first = base.load(fromByteOffset: offset, as: UInt8.self)
            if first < 0x80 { return (UInt64(first), offset + 1) }
            // Room for the longest encoding: no bounds check per byte (a 5-byte key space id
            // of the library's half, a 3-byte sequence number).
            if limit - offset >= 10 {
                var result = UInt64(first & 0x7F)
                var shift: UInt64 = 7
                var i = offset + 1
                while shift < 70 {
                    let byte = base.load(fromByteOffset: i, as: UInt8.self)
                    i += 1
                    result |= UInt64(byte & 0x7F) &<< shift
                    if byte < 0x80 { return shift == 63 && byte > 1 ? nil : (result, i) }   // nil: over 64 bits
                    shift += 7
                }
                return nil   // longer than 10 bytes
            }
        }
        var result: UInt64 = 0
        var shift: UInt64 = 0
        var i = offset
        while i < limit {
            let byte = base.load(fromByteOffset: i, as: UInt8.self)
            i += 1
            if shift == 63 && byte > 1 { return nil }  // would overflow 64 bits
            result |= UInt64(byte & 0x7F) << shift
            if byte < 0x80 { return (result, i) }
            shift += 7
            if shift > 63 { return nil }
        }
        return nil
    }
}

/// Little-endian fixed-width integers, read and written unaligned.
enum LittleEndian {
    @inline(__always)
    static func load32(_ base: UnsafeRawPointer, _ offset: Int) -> UInt32 {
        UInt32(littleEndian: base.loadUnaligned(fromByteOffset: offset, as: UInt32.self))
    }
    @inline(__always)
    static func load64(_ base: UnsafeRawPointer, _ offset: Int) -> UInt64 {
        UInt64(littleEndian: base.loadUnaligned(fromByteOffset: offset, as: UInt64.self))
    }
    @inline(__always)
    static func load16(_ base: UnsafeRawPointer, _ offset: Int) -> UInt16 {
        UInt16(littleEndian: base.loadUnaligned(fromByteOffset: offset, as: UInt16.self))
    }
    @inline(__always)
    static func store32(_ value: UInt32, _ base: UnsafeMutableRawPointer, _ offset: Int) {
        base.storeBytes(of: value.littleEndian, toByteOffset: offset, as: UInt32.self)
    }
    @inline(__always)
    static func store64(_ value: UInt64, _ base: UnsafeMutableRawPointer, _ offset: Int) {
        base.storeBytes(of: value.littleEndian, toByteOffset: offset, as: UInt64.self)
    }
    @inline(__always)
    static func store16(_ value: UInt16, _ base: UnsafeMutableRawPointer, _ offset: Int) {
        base.storeBytes(of: value.littleEndian, toByteOffset: offset, as: UInt16.self)
    }
    static func append32(_ value: UInt32, to bytes: inout [UInt8]) {
        withUnsafeBytes(of: value.littleEndian) { bytes.append(contentsOf: $0) }
    }
    static func append64(_ value: UInt64, to bytes: inout [UInt8]) {
        withUnsafeBytes(of: value.littleEndian) { bytes.append(contentsOf: $0) }
    }
    static func append16(_ value: UInt16, to bytes: inout [UInt8]) {
        withUnsafeBytes(of: value.littleEndian) { bytes.append(contentsOf: $0) }
    }
}
