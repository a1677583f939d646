import CChecksum

/// The parsed header of one record (FORMAT.md, "Records"). Offsets are relative to the
/// record's first byte.
///
/// Stored compactly (48 bytes instead of ~100 with `Int` and optional fields): every keyed
/// read and write copies a header a few times, and the lengths are bounded by the format
/// (key <= 64 KiB, value <= 1 GiB, header < 100 bytes), so the `Int` properties are views of
/// 32- and 16-bit fields.
struct RecordHeader: Sendable, Equatable {
    var sequence: UInt64
    /// The expiry when `hasExpiryValue`, else 0.
    private var storedExpiry: UInt64
    var space: UInt32
    private var storedKeyLength: UInt32
    private var storedValueLength: UInt32
    /// Key id of an encrypted record, else 0.
    var keyID: UInt32
    private var storedRawLength: UInt32
    private var storedTotalLength: UInt32
    private var storedKeyOffset: UInt16
    private var storedNonceOffset: UInt16
    var flags: RecordFlags
    private var hasExpiryValue: Bool

    init(flags: RecordFlags, sequence: UInt64, space: UInt32, keyLength: Int, valueLength: Int, expiresAtMillis: UInt64?,
         keyID: UInt32 = 0, nonceOffset: Int = 0, rawLength: Int = 0, keyOffset: Int, totalLength: Int) {
        self.sequence = sequence
        storedExpiry = expiresAtMillis ?? 0
        self.space = space
        storedKeyLength = UInt32(truncatingIfNeeded: keyLength)
        storedValueLength = UInt32(truncatingIfNeeded: valueLength)
        self.keyID = keyID
        storedRawLength = UInt32(truncatingIfNeeded: rawLength)
        storedTotalLength = UInt32(truncatingIfNeeded: totalLength)
        storedKeyOffset = UInt16(truncatingIfNeeded: keyOffset)
        storedNonceOffset = UInt16(truncatingIfNeeded: nonceOffset)
        self.flags = flags
        hasExpiryValue = expiresAtMillis != nil
    }

    var keyLength: Int {
        get { Int(storedKeyLength) }
        set { storedKeyLength = UInt32(truncatingIfNeeded: newValue) }
    }
    /// Length of the value as stored (after compression and encryption).
    var valueLength: Int {
        get { Int(storedValueLength) }
        set { storedValueLength = UInt32(truncatingIfNeeded: newValue) }
    }
    /// Absolute expiry in milliseconds since 1970-01-01 UTC; nil when the record never expires.
    var expiresAtMillis: UInt64? {
        get { hasExpiryValue ? storedExpiry : nil }
        set { storedExpiry = newValue ?? 0; hasExpiryValue = newValue != nil }
    }
    /// Offset of the 12-byte nonce of an encrypted record, else 0.
    var nonceOffset: Int {
        get { Int(storedNonceOffset) }
        set { storedNonceOffset = UInt16(truncatingIfNeeded: newValue) }
    }
    /// Decompressed length of a compressed record, else 0.
    var rawLength: Int {
        get { Int(storedRawLength) }
        set { storedRawLength = UInt32(truncatingIfNeeded: newValue) }
    }
    var keyOffset: Int {
        get { Int(storedKeyOffset) }
        set { storedKeyOffset = UInt16(truncatingIfNeeded: newValue) }
    }
    var totalLength: Int {
        get { Int(storedTotalLength) }
        set { storedTotalLength = UInt32(truncatingIfNeeded: newValue) }
    }

    var valueOffset: Int { keyOffset + keyLength }

    /// A placeholder for a header yet to be found (all zero, no flags).
    static var empty: RecordHeader {
        RecordHeader(flags: [], sequence: 0, space: 0, keyLength: 0, valueLength: 0, expiresAtMillis: nil, keyOffset: 0, totalLength: 0)
    }

    /// True when the record has expired at `nowMillis`.
    @inline(__always)
    func isExpired(nowMillis: UInt64) -> Bool {
        hasExpiryValue && storedExpiry <= nowMillis
    }
}

/// Encodes and decodes records. Pure functions over memory: no I/O, no state.
enum RecordCodec {
    /// Largest key accepted, in bytes.
    static let maxKeyLength = 65_536
    /// Largest stored value accepted, in bytes (1 GiB).
    static let maxValueLength = 1 << 30
    static let checksumSize = 4
    static let nonceSize = 12

    /// What a write needs to say about a record besides its key and value.
    struct Fields: Sendable {
        var flags: RecordFlags
        var sequence: UInt64
        var space: UInt32
        var expiresAtMillis: UInt64?
        var keyID: UInt32 = 0
        var nonce = Nonce(prefix: 0, counter: 0)
        var rawLength: Int = 0
    }

    /// A 96-bit AES-GCM nonce: 8 bytes of `prefix` then `counter`, both little-endian
    /// (FORMAT.md, "Nonces"). A value type without storage to count references to.
    struct Nonce: Sendable, Equatable {
        var prefix: UInt64
        var counter: UInt32

        func write(to destination: UnsafeMutableRawPointer) {
            LittleEndian.store64(prefix, destination, 0)
            LittleEndian.store32(counter, destination, 8)
        }
    }

    /// The header `encode` writes for these fields and lengths, without writing anything.
    @inline(__always)
    static func header(for fields: Fields, keyLength: Int, valueLength: Int) -> RecordHeader {
        var flags = fields.flags
        if fields.expiresAtMillis != nil { flags.insert(.hasExpiry) } else { flags.remove(.hasExpiry) }
        var at = checksumSize + 1 + Varint.size(fields.sequence) + Varint.size(UInt64(fields.space))
            + Varint.size(UInt64(keyLength)) + Varint.size(UInt64(valueLength))
        if fields.expiresAtMillis != nil { at += 8 }
        var nonceOffset = 0
        if flags.contains(.encrypted) {
            nonceOffset = at + Varint.size(UInt64(fields.keyID))
            at = nonceOffset + nonceSize
        }
        if flags.contains(.compressed) { at += Varint.size(UInt64(fields.rawLength)) }
        return RecordHeader(flags: flags, sequence: fields.sequence, space: fields.space, keyLength: keyLength,
                            valueLength: valueLength, expiresAtMillis: fields.expiresAtMillis,
                            keyID: flags.contains(.encrypted) ? fields.keyID : 0, nonceOffset: nonceOffset,
                            rawLength: flags.contains(.compressed) ? fields.rawLength : 0,
                            keyOffset: at, totalLength: at + keyLength + valueLength)
    }

    /// Size of the encoded record for these fields and lengths.
    @inline(__always)
    static func encodedSize(_ fields: Fields, keyLength: Int, valueLength: Int) -> Int {
        var size = checksumSize + 1
        size += Varint.size(fields.sequence)
        size += Varint.size(UInt64(fields.space))
        size += Varint.size(UInt64(keyLength))
        size += Varint.size(UInt64(valueLength))
        if fields.expiresAtMillis != nil { size += 8 }
        if fields.flags.contains(.encrypted) { size += Varint.size(UInt64(fields.keyID)) + nonceSize }
        if fields.flags.contains(.compressed) { size += Varint.size(UInt64(fields.rawLength)) }
        return size + keyLength + valueLength
    }

    /// Writes the record at `destination` (which must have room for `encodedSize` bytes) and
    /// returns its length. The checksum is computed last, over the bytes as written.
    @inline(__always)
    static func encode(_ fields: Fields, key: UnsafeRawBufferPointer, value: UnsafeRawBufferPointer,
                       to destination: UnsafeMutableRawPointer) -> Int {
        encode(fields, key: key, valueLength: value.count, to: destination) { record, valueOffset in
            if value.count > 0 { (record + valueOffset).copyMemory(from: value.baseAddress!, byteCount: value.count) }
        }
    }

    /// Writes the header and key at `destination`, lets `writeValue` fill the `valueLength`
    /// value bytes at `valueOffset` (it may read the header and key already in place, as
    /// AES-GCM does for its additional data), then computes the checksum. Returns the length.
    @inline(__always)
    static func encode(_ fields: Fields, key: UnsafeRawBufferPointer, valueLength: Int, to destination: UnsafeMutableRawPointer,
                       writeValue: (_ record: UnsafeMutableRawPointer, _ valueOffset: Int) throws -> Void) rethrows -> Int {
        var flags = fields.flags
        if fields.expiresAtMillis != nil { flags.insert(.hasExpiry) } else { flags.remove(.hasExpiry) }
        var at = checksumSize
        destination.storeBytes(of: flags.rawValue, toByteOffset: at, as: UInt8.self)
        at += 1
        at += Varint.write(fields.sequence, to: destination + at)
        at += Varint.write(UInt64(fields.space), to: destination + at)
        at += Varint.write(UInt64(key.count), to: destination + at)
        at += Varint.write(UInt64(valueLength), to: destination + at)
        if let expiry = fields.expiresAtMillis {
            LittleEndian.store64(expiry, destination, at)
            at += 8
        }
        if flags.contains(.encrypted) {
            at += Varint.write(UInt64(fields.keyID), to: destination + at)
            fields.nonce.write(to: destination + at)
            at += nonceSize
        }
        if flags.contains(.compressed) {
            at += Varint.write(UInt64(fields.rawLength), to: destination + at)
        }
        if key.count > 0 { (destination + at).copyMemory(from: key.baseAddress!, byteCount: key.count) }
        at += key.count
        try writeValue(destination, at)
        at += valueLength
        let crc = cs_crc32c_extend(0, destination + checksumSize, at - checksumSize)
        LittleEndian.store32(crc, destination, 0)
        return at
    }

    /// The flag byte as bound into AES-GCM's additional data: without the batch flags, which
    /// compaction clears when it copies a record.
    @inline(__always)
    static func authenticatedFlags(_ flags: RecordFlags) -> UInt8 {
        flags.subtracting(RecordFlags.batchFlags).rawValue
    }

    /// Parses the header of the record at `offset` in `[base, base + limit)`. Returns nil when
    /// the bytes cannot be a version-1 record header or the record would run past `limit`.
    /// Does not check the checksum: see `checksumMatches`.
    @inline(__always)
    static func decodeHeader(_ base: UnsafeRawPointer, at offset: Int, limit: Int) -> RecordHeader? {
        guard limit - offset >= checksumSize + 5 else { return nil }
        let flags = RecordFlags(rawValue: base.load(fromByteOffset: offset + checksumSize, as: UInt8.self))
        guard !(flags.contains(.encrypted) && flags.contains(.customCrypt)) else { return nil }
        var at = offset + checksumSize + 1
        guard let sequence = Varint.read(base, at: at, limit: limit), sequence.value != 0 else { return nil }
        at = sequence.next
        guard let space = Varint.read(base, at: at, limit: limit), space.value <= UInt64(UInt32.max) else { return nil }
        at = space.next
        guard let keyLength = Varint.read(base, at: at, limit: limit), keyLength.value <= UInt64(maxKeyLength) else { return nil }
        at = keyLength.next
        guard let valueLength = Varint.read(base, at: at, limit: limit), valueLength.value <= UInt64(maxValueLength) else { return nil }
        at = valueLength.next
        if flags.contains(.tombstone) && valueLength.value != 0 { return nil }
        var expiry: UInt64?
        if flags.contains(.hasExpiry) {
            guard limit - at >= 8 else { return nil }
            expiry = LittleEndian.load64(base, at)
            at += 8
        }
        var keyID: UInt32 = 0
        var nonceOffset = 0
        if flags.contains(.encrypted) {
            guard let id = Varint.read(base, at: at, limit: limit), id.value <= UInt64(UInt32.max) else { return nil }
            keyID = UInt32(id.value)
            nonceOffset = id.next - offset
            at = id.next + nonceSize
        }
        var rawLength = 0
        if flags.contains(.compressed) {
            guard let raw = Varint.read(base, at: at, limit: limit), raw.value <= UInt64(maxValueLength) else { return nil }
            rawLength = Int(raw.value)
            at = raw.next
        }
        let total = at - offset + Int(keyLength.value) + Int(valueLength.value)
        guard total <= limit - offset else { return nil }
        return RecordHeader(flags: flags, sequence: sequence.value, space: UInt32(space.value),
                            keyLength: Int(keyLength.value), valueLength: Int(valueLength.value),
                            expiresAtMillis: expiry, keyID: keyID, nonceOffset: nonceOffset,
                            rawLength: rawLength, keyOffset: at - offset, totalLength: total)
    }

    /// True when the stored checksum matches the record's bytes.
    @inline(__always)
    static func checksumMatches(_ base: UnsafeRawPointer, at offset: Int, header: RecordHeader) -> Bool {
        let stored = LittleEndian.load32(base, offset)
        return stored == cs_crc32c_extend(0, base + offset + checksumSize, header.totalLength - checksumSize)
    }

    /// Parses and checks the record at `offset`; nil when it is not a valid record.
    @inline(__always)
    static func validRecord(_ base: UnsafeRawPointer, at offset: Int, limit: Int) -> RecordHeader? {
        guard let header = decodeHeader(base, at: offset, limit: limit),
              checksumMatches(base, at: offset, header: header) else { return nil }
        return header
    }

    /// Rewrites the flag byte of an encoded record and recomputes its checksum.
    static func rewriteFlags(_ flags: RecordFlags, record: UnsafeMutableRawPointer, length: Int) {
        record.storeBytes(of: flags.rawValue, toByteOffset: checksumSize, as: UInt8.self)
        LittleEndian.store32(cs_crc32c_extend(0, record + checksumSize, length - checksumSize), record, 0)
    }
}
