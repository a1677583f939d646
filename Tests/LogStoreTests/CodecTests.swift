import XCTest
import CChecksum
@testable import LogStore

/// The format layer: varints, records, checksums, the key hash, and the small fixed-layout files.
final class VarintTests: XCTestCase {
    private func encode(_ value: UInt64) -> [UInt8] {
        var bytes: [UInt8] = []
        Varint.append(value, to: &bytes)
        return bytes
    }

    private func read(_ bytes: [UInt8], at offset: Int = 0, limit: Int? = nil) -> (value: UInt64, next: Int)? {
        bytes.withUnsafeBytes { raw -> (value: UInt64, next: Int)? in
            guard let base = raw.baseAddress else { return nil }
            return Varint.read(base, at: offset, limit: limit ?? raw.count)
        }
    }

    func testKnownEncodings() {
        XCTAssertEqual(encode(0), [0x00])
        XCTAssertEqual(encode(1), [0x01])
        XCTAssertEqual(encode(127), [0x7F])
        XCTAssertEqual(encode(128), [0x80, 0x01])
        XCTAssertEqual(encode(300), [0xAC, 0x02])
        XCTAssertEqual(encode(16_383), [0xFF, 0x7F])
        XCTAssertEqual(encode(16_384), [0x80, 0x80, 0x01])
        XCTAssertEqual(encode(UInt64.max), [0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0x01])
    }

    func testRoundTripsAndSizes() {
        var values: [UInt64] = [0, 1, 2, 127, 128, 255, 256, 300, 16_383, 16_384, 1 << 21, (1 << 21) - 1,
                                UInt64(UInt32.max), UInt64(UInt32.max) + 1, 1 << 56, (1 << 63) - 1, 1 << 63, UInt64.max]
        for shift in 0..<64 {
            values.append(1 << UInt64(shift))
            values.append((1 << UInt64(shift)) - 1)
            values.append((1 << UInt64(shift)) + 1)
        }
        var rng = SeededRandom(seed: 1)
        for _ in 0..<2000 { values.append(rng.next() >> UInt64.random(in: 0..<64, using: &rng)) }
        for value in values {
            let bytes = encode(value)
            XCTAssertEqual(bytes.count, Varint.size(value), "size of \(value)")
            XCTAssertLessThanOrEqual(bytes.count, 10)
            // write(to:) and append agree.
            var buffer = [UInt8](repeating: 0xEE, count: 12)
            let written = buffer.withUnsafeMutableBytes { Varint.write(value, to: $0.baseAddress!) }
            XCTAssertEqual(written, bytes.count)
            XCTAssertEqual(Array(buffer[..<written]), bytes)
            XCTAssertEqual(buffer[written], 0xEE, "write must not touch bytes past the varint")
            // Read back at an offset, with trailing bytes that must be ignored.
            let framed = [0x55, 0x66] + bytes + [0x81, 0x00]
            let decoded = read(framed, at: 2)
            XCTAssertEqual(decoded?.value, value)
            XCTAssertEqual(decoded?.next, 2 + bytes.count)
        }
    }

    func testTruncatedIsRejected() {
        for value in [UInt64(128), 300, 1 << 40, UInt64.max] {
            let bytes = encode(value)
            for cut in 0..<bytes.count {
                XCTAssertNil(read(bytes, limit: cut), "\(value) cut to \(cut) bytes")
            }
            XCTAssertNotNil(read(bytes, limit: bytes.count))
        }
        XCTAssertNil(read([0x80]))
        XCTAssertNil(read([0xFF, 0xFF]))
        XCTAssertNil(read([]))
    }

    func testOverlongAndOverflowingAreRejected() {
        // Eleven bytes: longer than any UInt64 needs.
        XCTAssertNil(read([UInt8](repeating: 0x80, count: 10) + [0x00]))
        XCTAssertNil(read([UInt8](repeating: 0xFF, count: 11)))
        // Ten bytes whose last carries more than the one bit left.
        XCTAssertNil(read([UInt8](repeating: 0xFF, count: 9) + [0x02]))
        XCTAssertNil(read([UInt8](repeating: 0x80, count: 9) + [0x7F]))
        // Ten bytes with the continuation bit on the tenth.
        XCTAssertNil(read([UInt8](repeating: 0xFF, count: 9) + [0x81, 0x00]))
        // The largest value that fits is accepted.
        XCTAssertEqual(read([UInt8](repeating: 0xFF, count: 9) + [0x01])?.value, UInt64.max)
        XCTAssertEqual(read([UInt8](repeating: 0x80, count: 9) + [0x01])?.value, 1 << 63)
    }
}

final class RecordCodecTests: XCTestCase {
    private struct Encoded {
        var bytes: [UInt8]
        var length: Int
    }

    private func encode(_ fields: RecordCodec.Fields, key: [UInt8], value: [UInt8], padding: Int = 0) -> Encoded {
        let size = RecordCodec.encodedSize(fields, keyLength: key.count, valueLength: value.count)
        var bytes = [UInt8](repeating: 0xA5, count: size + padding)
        let length = bytes.withUnsafeMutableBytes { dest in
            key.withUnsafeBytes { k in value.withUnsafeBytes { v in RecordCodec.encode(fields, key: k, value: v, to: dest.baseAddress!) } }
        }
        XCTAssertEqual(length, size, "encode writes exactly encodedSize bytes")
        return Encoded(bytes: bytes, length: length)
    }

    private func decode(_ bytes: [UInt8], at offset: Int = 0, limit: Int? = nil) -> RecordHeader? {
        bytes.withUnsafeBytes { RecordCodec.decodeHeader($0.baseAddress!, at: offset, limit: limit ?? $0.count) }
    }

    private func valid(_ bytes: [UInt8], at offset: Int = 0, limit: Int? = nil) -> RecordHeader? {
        bytes.withUnsafeBytes { RecordCodec.validRecord($0.baseAddress!, at: offset, limit: limit ?? $0.count) }
    }

    func testEveryFlagCombinationRoundTrips() {
        var rng = SeededRandom(seed: 42)
        var checked = 0
        var expectedValid = 0
        for raw in UInt8.min...UInt8.max {
            for withExpiry in [false, true] {
                var flags = RecordFlags(rawValue: raw)
                let isTombstone = flags.contains(.tombstone)
                let key = (0..<Int.random(in: 0...40, using: &rng)).map { _ in UInt8.random(in: 0...255, using: &rng) }
                let value = isTombstone ? [] : (0..<Int.random(in: 0...300, using: &rng)).map { _ in UInt8.random(in: 0...255, using: &rng) }
                let expiry: UInt64? = withExpiry ? UInt64.random(in: 1...UInt64.max, using: &rng) : nil
                var fields = RecordCodec.Fields(flags: flags, sequence: UInt64.random(in: 1...UInt64.max, using: &rng) >> UInt64.random(in: 0..<63, using: &rng) | 1,
                                                space: UInt32.random(in: 0...UInt32.max, using: &rng), expiresAtMillis: expiry)
                fields.keyID = UInt32.random(in: 0...UInt32.max, using: &rng)
                fields.nonce = RecordCodec.Nonce(prefix: UInt64.random(in: 0...UInt64.max, using: &rng),
                                                 counter: UInt32.random(in: 0...UInt32.max, using: &rng))
                fields.rawLength = Int.random(in: 0...(1 << 30), using: &rng)
                let encoded = encode(fields, key: key, value: value, padding: 7)
                // encode decides hasExpiry from the expiry field, whatever the flags said.
                if withExpiry { flags.insert(.hasExpiry) } else { flags.remove(.hasExpiry) }
                // Undefined bits (none left once bit 7 became `batchFollower`) and encrypted
                // with customCrypt are rejected; everything else decodes.
                let rejected = (flags.contains(.encrypted) && flags.contains(.customCrypt)) || !RecordFlags.known.isSuperset(of: flags)
                if !rejected { expectedValid += 1 }
                guard let header = decode(encoded.bytes) else {
                    XCTAssertTrue(rejected, "flags \(String(raw, radix: 16)) expiry \(withExpiry) did not decode")
                    continue
                }
                XCTAssertFalse(rejected, "flags \(String(raw, radix: 16)) must not decode")
                checked += 1
                XCTAssertEqual(header.flags, flags)
                XCTAssertEqual(header.sequence, fields.sequence)
                XCTAssertEqual(header.space, fields.space)
                XCTAssertEqual(header.keyLength, key.count)
                XCTAssertEqual(header.valueLength, value.count)
                XCTAssertEqual(header.expiresAtMillis, expiry)
                XCTAssertEqual(header.totalLength, encoded.length)
                if flags.contains(.encrypted) {
                    XCTAssertEqual(header.keyID, fields.keyID)
                    var nonceBytes: [UInt8] = []
                    LittleEndian.append64(fields.nonce.prefix, to: &nonceBytes)
                    LittleEndian.append32(fields.nonce.counter, to: &nonceBytes)
                    XCTAssertEqual(Array(encoded.bytes[header.nonceOffset..<header.nonceOffset + 12]), nonceBytes)
                } else {
                    XCTAssertEqual(header.keyID, 0)
                    XCTAssertEqual(header.nonceOffset, 0)
                }
                XCTAssertEqual(header.rawLength, flags.contains(.compressed) ? fields.rawLength : 0)
                // The header the write path computes instead of parsing back must be the same.
                XCTAssertEqual(RecordCodec.header(for: fields, keyLength: key.count, valueLength: value.count), header)
                XCTAssertEqual(Array(encoded.bytes[header.keyOffset..<header.keyOffset + key.count]), key)
                XCTAssertEqual(Array(encoded.bytes[header.valueOffset..<header.valueOffset + value.count]), value)
                XCTAssertEqual(header.valueOffset + value.count, header.totalLength, "value ends the record")
                XCTAssertNotNil(valid(encoded.bytes), "checksum matches")
                XCTAssertEqual(Array(encoded.bytes[encoded.length...]), [UInt8](repeating: 0xA5, count: 7), "nothing written past the record")
                // Every single-bit flip anywhere in the record is caught (by the parser or the CRC).
                for bit in stride(from: 0, to: encoded.length * 8, by: max(1, encoded.length * 8 / 64)) {
                    var flipped = encoded.bytes
                    flipped[bit / 8] ^= 1 << UInt8(bit % 8)
                    if let other = valid(flipped) {
                        XCTFail("bit \(bit) flipped still valid: \(other)")
                    }
                }
            }
        }
        XCTAssertEqual(checked, expectedValid)
        XCTAssertGreaterThanOrEqual(checked, 2 * 128 - 2 * 32, "at least every combination of the seven original flags but encrypted+customCrypt")
    }

    func testExpiry() {
        let fields = RecordCodec.Fields(flags: [], sequence: 9, space: 1, expiresAtMillis: 1_000)
        let encoded = encode(fields, key: b("k"), value: b("v"))
        let header = decode(encoded.bytes)!
        XCTAssertTrue(header.flags.contains(.hasExpiry))
        XCTAssertFalse(header.isExpired(nowMillis: 999))
        XCTAssertTrue(header.isExpired(nowMillis: 1_000))
        XCTAssertTrue(header.isExpired(nowMillis: 5_000))
        let never = decode(encode(RecordCodec.Fields(flags: [], sequence: 9, space: 1, expiresAtMillis: nil), key: b("k"), value: b("v")).bytes)!
        XCTAssertFalse(never.isExpired(nowMillis: UInt64.max))
        // Clock.millis rounds up and clamps.
        XCTAssertEqual(Clock.millis(of: Date(timeIntervalSince1970: 1.0001)), 1001)
        XCTAssertEqual(Clock.millis(of: Date(timeIntervalSince1970: -5)), 0)
        XCTAssertEqual(Clock.millis(of: Date(timeIntervalSince1970: 2)), 2000)
    }

    func testKnownLayout() {
        // FORMAT.md's example shape: crc32c | flags | seq | space | klen | vlen | key | value.
        let encoded = encode(RecordCodec.Fields(flags: [], sequence: 300, space: 2, expiresAtMillis: nil), key: b("ab"), value: b("xyz"))
        XCTAssertEqual(Array(encoded.bytes[4..<encoded.length]), [0x00, 0xAC, 0x02, 0x02, 0x02, 0x03] + b("ab") + b("xyz"))
        let crc = encoded.bytes.withUnsafeBytes { cs_crc32c_extend(0, $0.baseAddress! + 4, encoded.length - 4) }
        XCTAssertEqual(Array(encoded.bytes[0..<4]), [UInt8(crc & 0xFF), UInt8(crc >> 8 & 0xFF), UInt8(crc >> 16 & 0xFF), UInt8(crc >> 24)])
    }

    /// Builds raw header bytes by hand (with a correct CRC over whatever follows).
    private func handmade(flags: UInt8, sequence: UInt64, space: UInt64, keyLength: UInt64, valueLength: UInt64, body: [UInt8]) -> [UInt8] {
        var bytes: [UInt8] = [0, 0, 0, 0, flags]
        Varint.append(sequence, to: &bytes)
        Varint.append(space, to: &bytes)
        Varint.append(keyLength, to: &bytes)
        Varint.append(valueLength, to: &bytes)
        bytes += body
        let crc = bytes.withUnsafeBytes { cs_crc32c_extend(0, $0.baseAddress! + 4, $0.count - 4) }
        bytes.withUnsafeMutableBytes { LittleEndian.store32(crc, $0.baseAddress!, 0) }
        return bytes
    }

    func testDecodeHeaderRejections() {
        // The handmade builder itself produces valid records.
        XCTAssertNotNil(valid(handmade(flags: 0, sequence: 1, space: 0, keyLength: 1, valueLength: 1, body: [1, 2])))
        // Flag bits the format does not define are rejected. (Bit 7 was reserved in the first
        // draft of format 1; it is now `batchFollower`, so every bit is defined and this loop
        // checks only that defined bits are accepted.)
        for raw in UInt8.min...UInt8.max {
            let flags = RecordFlags(rawValue: raw)
            guard !flags.contains(.tombstone), !flags.contains(.hasExpiry), !flags.contains(.encrypted), !flags.contains(.compressed) else { continue }
            let header = decode(handmade(flags: raw, sequence: 1, space: 0, keyLength: 1, valueLength: 1, body: [1, 2]))
            XCTAssertEqual(header != nil, RecordFlags.known.isSuperset(of: flags), "flags \(String(raw, radix: 16))")
        }
        // Sequence 0 is never written.
        XCTAssertNil(decode(handmade(flags: 0, sequence: 0, space: 0, keyLength: 1, valueLength: 1, body: [1, 2])))
        // Space beyond 32 bits.
        XCTAssertNil(decode(handmade(flags: 0, sequence: 1, space: 1 << 32, keyLength: 1, valueLength: 1, body: [1, 2])))
        // Oversize key and value lengths, even when the buffer would be long enough to hold them.
        let big = [UInt8](repeating: 7, count: RecordCodec.maxKeyLength + 16)
        XCTAssertNotNil(decode(handmade(flags: 0, sequence: 1, space: 0, keyLength: UInt64(RecordCodec.maxKeyLength), valueLength: 0,
                                        body: Array(big[..<RecordCodec.maxKeyLength]))))
        XCTAssertNil(decode(handmade(flags: 0, sequence: 1, space: 0, keyLength: UInt64(RecordCodec.maxKeyLength + 1), valueLength: 0, body: big)))
        XCTAssertNil(decode(handmade(flags: 0, sequence: 1, space: 0, keyLength: 0, valueLength: UInt64(RecordCodec.maxValueLength) + 1, body: big)))
        XCTAssertNil(decode(handmade(flags: 0, sequence: 1, space: 0, keyLength: UInt64.max, valueLength: 0, body: big)))
        // A tombstone with a value.
        XCTAssertNil(decode(handmade(flags: 0x01, sequence: 1, space: 0, keyLength: 1, valueLength: 1, body: [1, 2])))
        // Encrypted and custom crypt at once.
        XCTAssertNil(decode(handmade(flags: 0x30, sequence: 1, space: 0, keyLength: 1, valueLength: 1, body: [UInt8](repeating: 1, count: 40))))
        // Too short for any header.
        XCTAssertNil(decode([0, 0, 0, 0, 0, 1, 0, 0]))
    }

    func testRecordsRunningPastTheLimitAreRejected() {
        var fields = RecordCodec.Fields(flags: [.encrypted, .compressed], sequence: 77, space: 3, expiresAtMillis: 123)
        fields.keyID = 5
        fields.nonce = RecordCodec.Nonce(prefix: 0x0909_0909_0909_0909, counter: 0x0909_0909)
        fields.rawLength = 999
        let encoded = encode(fields, key: b("some key"), value: [UInt8](repeating: 1, count: 100))
        XCTAssertNotNil(valid(encoded.bytes, limit: encoded.length))
        for limit in 0..<encoded.length {
            XCTAssertNil(decode(encoded.bytes, limit: limit), "limit \(limit)")
        }
        // The same, at a non-zero offset.
        let shifted = [UInt8](repeating: 0, count: 13) + Array(encoded.bytes[..<encoded.length])
        XCTAssertNotNil(valid(shifted, at: 13))
        for limit in 13..<shifted.count { XCTAssertNil(decode(shifted, at: 13, limit: limit)) }
    }

    func testRewriteFlagsKeepsTheRecordValid() {
        var encoded = encode(RecordCodec.Fields(flags: [.batchContinues, .purgeable], sequence: 5, space: 0, expiresAtMillis: nil),
                             key: b("k"), value: b("v"))
        encoded.bytes.withUnsafeMutableBytes { RecordCodec.rewriteFlags([.purgeable], record: $0.baseAddress!, length: encoded.length) }
        let header = valid(encoded.bytes)
        XCTAssertEqual(header?.flags, [.purgeable])
        XCTAssertEqual(header?.sequence, 5)
    }
}

final class ChecksumTests: XCTestCase {
    /// Bitwise reference CRC-32C.
    private func reference(_ bytes: ArraySlice<UInt8>, crc: UInt32 = 0) -> UInt32 {
        var c = ~crc
        for byte in bytes {
            c ^= UInt32(byte)
            for _ in 0..<8 { c = (c & 1) != 0 ? (c >> 1) ^ 0x82F6_3B78 : c >> 1 }
        }
        return ~c
    }

    func testKnownAnswer() {
        let check = b("123456789")
        check.withUnsafeBytes { raw in
            XCTAssertEqual(cs_crc32c_extend(0, raw.baseAddress, raw.count), 0xE306_9283)
            XCTAssertEqual(cs_crc32c_extend_portable(0, raw.baseAddress, raw.count), 0xE306_9283)
        }
        XCTAssertEqual(reference(check[...]), 0xE306_9283)
        XCTAssertEqual(cs_crc32c_extend(0, nil, 0), 0)
        XCTAssertEqual(cs_crc32c_extend_portable(0, nil, 0), 0)
        // RFC 3720 (iSCSI) vectors: 32 zero bytes and 32 0xFF bytes.
        let zeros = [UInt8](repeating: 0, count: 32)
        let ones = [UInt8](repeating: 0xFF, count: 32)
        XCTAssertEqual(zeros.withUnsafeBytes { cs_crc32c_extend(0, $0.baseAddress, 32) }, 0x8A91_36AA)
        XCTAssertEqual(ones.withUnsafeBytes { cs_crc32c_extend(0, $0.baseAddress, 32) }, 0x62A8_AB43)
        XCTAssertEqual(zeros.withUnsafeBytes { cs_crc32c_extend_portable(0, $0.baseAddress, 32) }, 0x8A91_36AA)
        XCTAssertEqual(ones.withUnsafeBytes { cs_crc32c_extend_portable(0, $0.baseAddress, 32) }, 0x62A8_AB43)
    }

    func testBothImplementationsAgreeOnManyLengthsAndAlignments() {
        var rng = SeededRandom(seed: 7)
        let data = (0..<1200).map { _ in UInt8.random(in: 0...255, using: &rng) }
        data.withUnsafeBytes { raw in
            for alignment in 0..<8 {
                for length in Array(0...80) + [127, 128, 129, 255, 256, 511, 1000, 1100] {
                    let slice = data[alignment..<alignment + length]
                    let expected = reference(slice)
                    let fast = cs_crc32c_extend(0, raw.baseAddress! + alignment, length)
                    let portable = cs_crc32c_extend_portable(0, raw.baseAddress! + alignment, length)
                    XCTAssertEqual(fast, expected, "sse4.2 path, alignment \(alignment) length \(length)")
                    XCTAssertEqual(portable, expected, "portable path, alignment \(alignment) length \(length)")
                    // Extending in two pieces equals one pass.
                    let split = length / 3
                    let first = cs_crc32c_extend(0, raw.baseAddress! + alignment, split)
                    XCTAssertEqual(cs_crc32c_extend(first, raw.baseAddress! + alignment + split, length - split), expected)
                    let firstPortable = cs_crc32c_extend_portable(0, raw.baseAddress! + alignment, split)
                    XCTAssertEqual(cs_crc32c_extend_portable(firstPortable, raw.baseAddress! + alignment + split, length - split), expected)
                }
            }
        }
    }

    /// Buffers of 12 KiB and more go through three interleaved streams joined by CRC
    /// combination (checksum.c): equal to the table implementation at and around the stream
    /// boundaries, for any starting CRC, and when extended in two pieces.
    func testTheThreeStreamPathAgreesWithThePortableOne() {
        var rng = SeededRandom(seed: 11)
        let data = (0..<(100_000 + 8)).map { _ in UInt8.random(in: 0...255, using: &rng) }
        data.withUnsafeBytes { raw in
            let lengths = [12_287, 12_288, 12_289, 12_295, 24_575, 24_576, 24_583, 36_864 + 5, 65_536, 100_000]
            for alignment in [0, 3, 8] {
                for length in lengths {
                    let start = raw.baseAddress! + alignment
                    let portable = cs_crc32c_extend_portable(0x1234_5678, start, length)
                    XCTAssertEqual(cs_crc32c_extend(0x1234_5678, start, length), portable, "alignment \(alignment) length \(length)")
                    let first = cs_crc32c_extend(0, start, 5_000)
                    XCTAssertEqual(cs_crc32c_extend(first, start + 5_000, length - 5_000), cs_crc32c_extend_portable(0, start, length),
                                   "in two pieces, alignment \(alignment) length \(length)")
                }
            }
        }
    }

    /// The key hash is persisted (index snapshots hold its upper half): it must never change.
    func testHash64IsStable() {
        func hash(_ text: String, seed: UInt64) -> UInt64 {
            let bytes = b(text)
            return bytes.withUnsafeBytes { cs_hash64($0.baseAddress, $0.count, seed) }
        }
        XCTAssertEqual(hash("", seed: 0), 0x6A51_C110_EF28_ABD9)
        XCTAssertEqual(hash("a", seed: 0), 0xD363_47CD_4164_B19F)
        XCTAssertEqual(hash("abc", seed: 0), 0xDA53_5A2F_DC16_9216)
        XCTAssertEqual(hash("123456789", seed: 0), 0x446C_6FC6_31C1_73BA)
        XCTAssertEqual(hash("hello, world", seed: 0), 0xE25C_E084_35FB_8228)
        XCTAssertEqual(hash("The quick brown fox jumps over the lazy dog", seed: 0), 0x9F10_DB34_4757_C027)
        XCTAssertEqual(hash("", seed: 1), 0x499A_6DE2_F997_EDED)
        XCTAssertEqual(hash("abc", seed: 1), 0x916E_2F0F_4B37_9902)
        XCTAssertEqual(hash("The quick brown fox jumps over the lazy dog", seed: 1), 0xF8C2_320D_3962_4230)
        // Lengths around the 8- and 16-byte block edges.
        let data = (0..<1000).map { UInt8(truncatingIfNeeded: $0 * 31 + 7) }
        let expected: [(Int, UInt64)] = [
            (7, 0x9673_4132_790E_B13C), (8, 0xC267_0A3C_9573_AFD8), (15, 0x6BBB_DA3A_3289_2BA3),
            (16, 0xC5B1_0BB5_2BC6_FB91), (17, 0x7EDA_FE3F_0836_065A), (31, 0x5D25_34BD_37D0_EFF1),
            (32, 0x1A83_89CD_508D_772C), (33, 0x8CDD_29B0_B6A7_1525), (63, 0x7601_D9E5_76BC_BB2B),
            (64, 0x6F06_E3A6_A095_551F), (65, 0x12C4_7F22_B78F_9836), (100, 0x75E2_3796_E7F1_7365),
            (255, 0x8860_C06E_E105_849C), (256, 0xA5DC_3728_5A7A_6780), (1000, 0xA3EA_20AC_5040_40BE),
        ]
        data.withUnsafeBytes { raw in
            for (length, value) in expected {
                XCTAssertEqual(cs_hash64(raw.baseAddress, length, 0x9E37_79B9_7F4A_7C15), value, "length \(length)")
            }
        }
        // The keydir's hash of (space, key).
        func keyHash(_ text: String, space: UInt32) -> UInt64 {
            let bytes = b(text)
            return bytes.withUnsafeBytes { KeyDir.hash(space: space, key: $0) }
        }
        XCTAssertEqual(keyHash("key", space: 0), 0x3ABC_8E71_B4EF_F0BD)
        XCTAssertEqual(keyHash("", space: 0), 0x6D57_6B72_B4BD_BF5A)
        XCTAssertEqual(keyHash("key", space: 7), 0xA24D_D191_E83F_1A86)
        XCTAssertEqual(keyHash("", space: 7), 0xABC3_57EC_1625_49BC)
        XCTAssertEqual(keyHash("key", space: 0x8000_0000), 0xFCF9_5C31_0656_7DCD)
        XCTAssertEqual(KeyDir.tag(of: 0x3ABC_8E71_B4EF_F0BD), 0x3ABC_8E71)
        XCTAssertEqual(KeyDir.tag(of: 0x0000_0000_FFFF_FFFF), 1, "tag 0 is reserved for empty slots")
    }

    func testHashDependsOnEveryByteAndLength() {
        var seen = Set<UInt64>()
        var bytes = [UInt8](repeating: 0, count: 40)
        for length in 0...40 {
            XCTAssertTrue(seen.insert(bytes.withUnsafeBytes { cs_hash64($0.baseAddress, length, 0) }).inserted, "zeros of length \(length)")
        }
        for i in 0..<40 {
            bytes[i] = 1
            XCTAssertTrue(seen.insert(bytes.withUnsafeBytes { cs_hash64($0.baseAddress, 40, 0) }).inserted, "byte \(i)")
            bytes[i] = 0
        }
    }
}

final class FileFormatTests: XCTestCase {
    func testSegmentHeaderRoundTripAndRejections() throws {
        let header = SegmentHeader(segmentID: 0x2A, flags: SegmentHeader.compactionOutputFlag, createdMillis: 1_700_000_000_123)
        let bytes = header.encoded()
        XCTAssertEqual(bytes.count, SegmentHeader.size)
        XCTAssertEqual(Array(bytes[0..<4]), b("USEG"))
        let decoded = try bytes.withUnsafeBytes { try SegmentHeader.decode($0.baseAddress!, length: $0.count, path: "x") }
        XCTAssertEqual(decoded, header)
        XCTAssertTrue(decoded.isCompactionOutput)
        for index in 0..<SegmentHeader.size {
            var broken = bytes
            broken[index] ^= 0x10
            XCTAssertThrowsError(try broken.withUnsafeBytes { try SegmentHeader.decode($0.baseAddress!, length: $0.count, path: "x") },
                                 "byte \(index) changed")
        }
        XCTAssertThrowsError(try bytes.withUnsafeBytes { try SegmentHeader.decode($0.baseAddress!, length: 31, path: "x") })
        XCTAssertEqual(StoreFileName.segment(0x2A), "0000002a.seg")
        XCTAssertEqual(StoreFileName.segmentID(of: "0000002a.seg"), 0x2A)
        XCTAssertEqual(StoreFileName.segmentID(of: "ffffffff.seg"), UInt32.max)
        XCTAssertNil(StoreFileName.segmentID(of: "0000002a.seg.tmp"))
        XCTAssertNil(StoreFileName.segmentID(of: "index.snapshot"))
        XCTAssertNil(StoreFileName.segmentID(of: "zzzzzzzz.seg"))
    }

    func testCompactionCommitRoundTripAndRejections() throws {
        let commit = CompactionCommit(newSegments: [9, 10], oldSegments: [1, 2, 3])
        let bytes = commit.encoded()
        XCTAssertEqual(try CompactionCommit.decode(bytes, path: "c"), commit)
        XCTAssertEqual(try CompactionCommit.decode(CompactionCommit(newSegments: [], oldSegments: [4]).encoded(), path: "c"),
                       CompactionCommit(newSegments: [], oldSegments: [4]))
        for index in 0..<bytes.count {
            var broken = bytes
            broken[index] ^= 0x01
            XCTAssertThrowsError(try CompactionCommit.decode(broken, path: "c"), "byte \(index)")
        }
        for cut in 0..<bytes.count { XCTAssertThrowsError(try CompactionCommit.decode(Array(bytes[..<cut]), path: "c")) }
    }

    func testIndexSnapshotRoundTrip() throws {
        let keydir = SpaceKeyDirs()
        var rng = SeededRandom(seed: 3)
        // Three key spaces (one of them the library's half), 500 entries spread over them.
        let spaces: [UInt32] = [0, 7, 0x8000_0001]
        var expected: [UInt32: (space: UInt32, location: RecordLocation)] = [:]
        while expected.count < 500 {
            let tag = UInt32.random(in: 1...UInt32.max, using: &rng)
            guard expected[tag] == nil else { continue }
            let location = RecordLocation(segment: UInt32.random(in: 0...100, using: &rng), offset: UInt32.random(in: 0...UInt32.max, using: &rng))
            let space = spaces[expected.count % spaces.count]
            expected[tag] = (space, location)
            keydir.tableCreating(for: space).insert(tag: tag, location: location)
        }
        _ = keydir.tableCreating(for: 9)   // an empty table is not written
        let snapshot = IndexSnapshot(maxSequence: 123_456, nextSegmentID: 8, activeSegmentID: 7, activeLength: 4096,
                                     segments: [.init(id: 3, length: 100, liveBytes: 50, recordCount: 2),
                                                .init(id: 7, length: 4096, liveBytes: 4000, recordCount: 30)])
        for version2 in [false, true] {
        let bytes = version2 ? snapshot.encodeVersion2(keydir: keydir) : snapshot.encode(keydir: keydir)
        XCTAssertEqual(Array(bytes[4..<6]), version2 ? [2, 0] : [3, 0], "version")
        let (decoded, loaded) = try bytes.withUnsafeBytes { try IndexSnapshot.decode($0, path: "s") }
        XCTAssertEqual(loaded.spaces, spaces, "one table per space that holds keys, in the writer's order")
        for space in spaces {
            XCTAssertEqual(loaded.table(for: space)?.capacity, keydir.table(for: space)?.capacity, "entries go back into the same table")
        }
        XCTAssertNil(loaded.table(for: 9))
        XCTAssertEqual(decoded.maxSequence, 123_456)
        XCTAssertEqual(decoded.nextSegmentID, 8)
        XCTAssertEqual(decoded.activeSegmentID, 7)
        XCTAssertEqual(decoded.activeLength, 4096)
        XCTAssertEqual(decoded.segments, snapshot.segments)
        XCTAssertEqual(loaded.count, expected.count)
        for (tag, item) in expected {
            XCTAssertNotNil(loaded.table(for: item.space)?.find(tag: tag, location: item.location), "tag \(tag) in space \(item.space)")
        }
        // Any corruption or truncation is an error, never a crash or a wrong table.
        for index in stride(from: 0, to: bytes.count, by: 7) {
            var broken = bytes
            broken[index] ^= 0x40
            XCTAssertThrowsError(try broken.withUnsafeBytes { try IndexSnapshot.decode($0, path: "s") }, "byte \(index) of \(bytes.count), version 2: \(version2)")
        }
        for cut in stride(from: 0, to: bytes.count, by: 11) {
            XCTAssertThrowsError(try Array(bytes[..<cut]).withUnsafeBytes { try IndexSnapshot.decode($0, path: "s") })
        }
        }
    }

    /// A keydir of `entries` made-up entries in spaces 0 and 4 (every `spaceFourEvery`-th one in 4),
    /// with the entries it holds.
    private static func keydir(entries: UInt32, spaceFourEvery: UInt32)
        -> (SpaceKeyDirs, [(space: UInt32, tag: UInt32, location: RecordLocation)]) {
        let keydir = SpaceKeyDirs()
        var expected: [(space: UInt32, tag: UInt32, location: RecordLocation)] = []
        for index in UInt32(1)...entries {
            let tag = index &* 2_654_435_761 | 1
            let location = RecordLocation(segment: index % 7, offset: index &* 40)
            let space: UInt32 = index % spaceFourEvery == 0 ? 4 : 0
            keydir.tableCreating(for: space).insert(tag: tag, location: location)
            expected.append((space, tag, location))
        }
        return (keydir, expected)
    }

    /// A version 3 snapshot mapped copy-on-write is served in place: the tables point into the
    /// mapping, find every entry, take writes (in private pages, the file unchanged), and a
    /// flipped byte in a block of slots marks the keydir damaged when that block is touched.
    func testVersion3SnapshotIsServedInPlace() throws {
        let (keydir, expected) = Self.keydir(entries: 5000, spaceFourEvery: 3)
        let snapshot = IndexSnapshot(maxSequence: 9, nextSegmentID: 8, activeSegmentID: 7, activeLength: 64, segments: [])
        let bytes = snapshot.encode(keydir: keydir)
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("logstore-tests-snapshot-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let path = directory.appendingPathComponent("index.snapshot").path

        func mapped(_ bytes: [UInt8]) throws -> SpaceKeyDirs {
            try Data(bytes).write(to: URL(fileURLWithPath: path))
            let file = try SystemFile(path: path, flags: O_RDONLY)
            let region = try file.map(length: bytes.count, writable: false, copyOnWrite: true)
            return try IndexSnapshot.decode(UnsafeRawBufferPointer(start: region.base, count: region.length), path: path, region: region).1
        }
        let served = try mapped(bytes)
        XCTAssertTrue(served.tables.allSatisfy { $0.snapshotBlocks != nil }, "served in place")
        for item in expected {
            XCTAssertNotNil(served.table(for: item.space)?.find(tag: item.tag, location: item.location))
        }
        XCTAssertFalse(served.isDamaged)
        // Writes go to private pages: the file keeps the snapshot's bytes.
        let table = try XCTUnwrap(served.table(for: 0))
        let moved = RecordLocation(segment: 99, offset: 1)
        let slot = try XCTUnwrap(table.find(tag: expected[0].tag, location: expected[0].location))
        table.setLocation(moved, at: slot)
        table.insert(tag: 77, location: moved)
        table.remove(at: try XCTUnwrap(table.find(tag: expected[1].tag, location: expected[1].location)))
        XCTAssertNotNil(table.find(tag: 77, location: moved))
        XCTAssertEqual([UInt8](try Data(contentsOf: URL(fileURLWithPath: path))), bytes)
        // Growing past the mapped table copies it into memory of its own.
        for index in UInt32(1)...4000 { table.insert(tag: index &* 40_503 | 1, location: moved) }
        XCTAssertNil(table.snapshotBlocks)
        XCTAssertNotNil(table.find(tag: expected[3].tag, location: expected[3].location))

        // A flipped byte in the slots: found when its block is first touched, never trusted.
        let slotsStart = IndexSnapshot.alignUp(Int(LittleEndian.load32(bytes, 48)))
        var damagedBytes = bytes
        damagedBytes[slotsStart + 5] ^= 0x01
        let damaged = try mapped(damagedBytes)
        XCTAssertFalse(damaged.isDamaged, "nothing is read at open")
        XCTAssertTrue(damaged.verifyAll() == false && damaged.isDamaged)
        // Decoded from memory, the same bytes are refused at once.
        XCTAssertThrowsError(try damagedBytes.withUnsafeBytes { try IndexSnapshot.decode($0, path: "s") })
    }

    /// A table served from the mapped snapshot gives its pages back to the kernel only while no
    /// slot was written since it was mapped (a written page is the process's only copy of the
    /// change): every entry, changed or not, is found again afterwards.
    func testMappedPagesAreReleasedOnlyWhileUnwritten() throws {
        let (keydir, expected) = Self.keydir(entries: 60_000, spaceFourEvery: 2)
        let bytes = IndexSnapshot(maxSequence: 9, nextSegmentID: 8, activeSegmentID: 7, activeLength: 64, segments: []).encode(keydir: keydir)
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("logstore-tests-release-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let path = directory.appendingPathComponent("index.snapshot").path
        try Data(bytes).write(to: URL(fileURLWithPath: path))
        let file = try SystemFile(path: path, flags: O_RDONLY)
        let region = try file.map(length: bytes.count, writable: false, copyOnWrite: true)
        let served = try IndexSnapshot.decode(UnsafeRawBufferPointer(start: region.base, count: region.length), path: path, region: region).1
        func allFound() -> Bool {
            expected.allSatisfy { served.table(for: $0.space)?.find(tag: $0.tag, location: $0.location) != nil }
        }
        /// Kilobytes of the mapping resident in this process (/proc/self/smaps).
        func residentKB() throws -> Int {
            let start = String(UInt(bitPattern: region.base), radix: 16)
            let smaps = try String(contentsOfFile: "/proc/self/smaps", encoding: .utf8)
            var inRegion = false
            for line in smaps.split(separator: "\n") {
                if let dash = line.firstIndex(of: "-"), line[..<dash].allSatisfy(\.isHexDigit) {
                    inRegion = line[..<dash].drop { $0 == "0" } == start.drop { $0 == "0" }
                } else if inRegion, line.hasPrefix("Rss:") {
                    return Int(line.split(separator: " ")[1]) ?? -1
                }
            }
            return -1
        }
        XCTAssertTrue(allFound())
        let touched = try residentKB()
        served.releaseMappedPages()
        XCTAssertLessThan(try residentKB(), touched / 2, "the unwritten tables' pages left the process")
        XCTAssertTrue(allFound(), "read again from the page cache")

        // A written table keeps its pages: its change is still there after a release.
        let table = try XCTUnwrap(served.table(for: 0))
        let moved = RecordLocation(segment: 99, offset: 1)
        let first = try XCTUnwrap(expected.first { $0.space == 0 })
        table.setLocation(moved, at: try XCTUnwrap(table.find(tag: first.tag, location: first.location)))
        table.insert(tag: 77, location: moved)
        served.releaseMappedPages()
        XCTAssertNotNil(table.find(tag: first.tag, location: moved))
        XCTAssertNotNil(table.find(tag: 77, location: moved))
        XCTAssertTrue(expected.allSatisfy { $0.tag == first.tag || served.table(for: $0.space)?.find(tag: $0.tag, location: $0.location) != nil })
        XCTAssertEqual([UInt8](try Data(contentsOf: URL(fileURLWithPath: path))), bytes)
    }

    /// A snapshot of a table far larger than its entries (after mass deletes) is loaded into a
    /// table sized anew, not a copy of the big one; every entry is still found.
    func testSnapshotOfASparseTableIsReinsertedIntoASmallerTable() throws {
        let keydir = SpaceKeyDirs()
        let table = keydir.tableCreating(for: 3)
        for tag in UInt32(1)...20_000 { table.insert(tag: tag &* 2_654_435_761 | 1, location: RecordLocation(segment: 1, offset: tag)) }
        table.removeAll { $0.offset > 100 }
        let snapshot = IndexSnapshot(maxSequence: 1, nextSegmentID: 2, activeSegmentID: 1, activeLength: 32, segments: [])
        for version2 in [false, true] {
        let bytes = version2 ? snapshot.encodeVersion2(keydir: keydir) : snapshot.encode(keydir: keydir)
        let (_, loaded) = try bytes.withUnsafeBytes { try IndexSnapshot.decode($0, path: "s") }
        XCTAssertEqual(loaded.count, 100)
        let reloaded = try XCTUnwrap(loaded.table(for: 3))
        XCTAssertLessThan(reloaded.capacity, table.capacity)
        table.forEach { XCTAssertNotNil(reloaded.find(tag: $0.tag, location: $0.location)) }
        }
    }

    /// A version 1 snapshot (one table, no key spaces) is intact but not used: decoding says
    /// why, and the store reads its segments instead (`testVersion1SnapshotStoreOpens`).
    func testVersion1SnapshotIsRecognisedAndNotUsed() throws {
        var bytes = IndexSnapshot(maxSequence: 1, nextSegmentID: 2, activeSegmentID: 1, activeLength: 32, segments: [])
            .encodeVersion2(keydir: SpaceKeyDirs())
        bytes[4] = 1
        bytes.removeLast(4)
        let crc = bytes.withUnsafeBytes { cs_crc32c_extend(0, $0.baseAddress, $0.count) }
        LittleEndian.append32(crc, to: &bytes)
        XCTAssertThrowsError(try bytes.withUnsafeBytes { try IndexSnapshot.decode($0, path: "s") }) { error in
            XCTAssertTrue(error is IndexSnapshot.Unusable, "\(error)")
            XCTAssertTrue("\(error)".contains("version 1"), "\(error)")
        }
    }
}
