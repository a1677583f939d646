import Foundation
import XCTest
@testable import LogStore

/// `AESGCM` reuses keyed contexts (one per direction in an atomic slot, a locked pool behind
/// it): these check that reuse never leaks state between calls or threads, and that a refused
/// tag leaves no usable plaintext and does not break the next call.
final class AESGCMContextTests: XCTestCase {
    private static let key = [UInt8]((0..<32).map { UInt8($0 &* 7 &+ 3) })

    private static func nonce(_ index: Int) -> [UInt8] {
        var bytes = [UInt8](repeating: 0xA5, count: AESGCM.nonceSize)
        withUnsafeBytes(of: UInt64(index).littleEndian) { bytes.replaceSubrange(0..<8, with: $0) }
        return bytes
    }

    private static func seal(_ cipher: AESGCM, _ plaintext: [UInt8], nonce: [UInt8], prefix: UInt8?, aad: [UInt8]) throws -> [UInt8] {
        var sealed = [UInt8](repeating: 0, count: plaintext.count + AESGCM.tagSize)
        try plaintext.withUnsafeBytes { p in
            try nonce.withUnsafeBytes { n in
                try aad.withUnsafeBytes { a in
                    try sealed.withUnsafeMutableBytes { out in
                        // An empty buffer may have no address; seal still wants one for the tag.
                        guard let base = out.baseAddress else { throw StoreError.io(operation: "test buffer", errno: EIO) }
                        try cipher.seal(p, nonce: n, aadPrefix: prefix, aad: a, into: base)
                    }
                }
            }
        }
        return sealed
    }

    private static func open(_ cipher: AESGCM, _ sealed: [UInt8], nonce: [UInt8], prefix: UInt8?, aad: [UInt8]) throws -> [UInt8] {
        try sealed.withUnsafeBytes { s in
            try nonce.withUnsafeBytes { n in
                try aad.withUnsafeBytes { a in try cipher.open(s, nonce: n, aadPrefix: prefix, aad: a, what: "test") }
            }
        }
    }

    /// The same inputs through a fresh `AESGCM` (new contexts) and a reused one give the same
    /// bytes, for every length 0...64 and a 4 KiB segment, with and without the prefix byte.
    func testReusedContextsGiveTheBytesOfFreshOnes() throws {
        let reused = try AESGCM(key: Self.key)
        for length in Array(0...64) + [4096] {
            for prefix in [nil, UInt8(0x41)] as [UInt8?] {
                let plaintext = (0..<length).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ length) }
                let aad = (0..<(length % 40)).map { UInt8(truncatingIfNeeded: $0 &+ 9) }
                let nonce = Self.nonce(length)
                let fresh = try Self.seal(try AESGCM(key: Self.key), plaintext, nonce: nonce, prefix: prefix, aad: aad)
                let again = try Self.seal(reused, plaintext, nonce: nonce, prefix: prefix, aad: aad)
                XCTAssertEqual(fresh, again, "length \(length), prefix \(String(describing: prefix))")
                XCTAssertEqual(try Self.open(reused, again, nonce: nonce, prefix: prefix, aad: aad), plaintext)
                // The prefix byte is part of the additional data: dropping it is refused.
                if prefix != nil {
                    XCTAssertThrowsError(try Self.open(reused, again, nonce: nonce, prefix: nil, aad: aad))
                }
            }
        }
    }

    /// A refused tag zeroes the caller's buffer, throws a typed error, and the next open on the
    /// same cipher (its context freed and replaced) still works.
    func testRefusedTagThenTheNextOpenStillWorks() throws {
        let cipher = try AESGCM(key: Self.key)
        let plaintext = [UInt8](repeating: 0x5A, count: 100), aad: [UInt8] = [1, 2, 3], nonce = Self.nonce(1)
        let sealed = try Self.seal(cipher, plaintext, nonce: nonce, prefix: 7, aad: aad)
        for index in [0, 50, sealed.count - 1] {
            var bad = sealed
            bad[index] ^= 0x01
            XCTAssertThrowsError(try Self.open(cipher, bad, nonce: nonce, prefix: 7, aad: aad)) { error in
                XCTAssertTrue((error as? StoreError)?.isTampered == true, "\(error)")
            }
            var output = [UInt8](repeating: 0xFF, count: plaintext.count)
            let verified = try bad.withUnsafeBytes { s in
                try nonce.withUnsafeBytes { n in
                    try aad.withUnsafeBytes { a in
                        try output.withUnsafeMutableBytes { try cipher.open(s, nonce: n, aadPrefix: 7, aad: a, into: $0.baseAddress!) }
                    }
                }
            }
            XCTAssertFalse(verified)
            XCTAssertEqual(output, [UInt8](repeating: 0, count: plaintext.count), "no byte of a refused plaintext is left")
            XCTAssertEqual(try Self.open(cipher, sealed, nonce: nonce, prefix: 7, aad: aad), plaintext)
        }
    }

    /// Many threads seal and open through one `AESGCM` at once (more threads than the slot, so
    /// the pool and new contexts are used too); every result matches a single-threaded one.
    func testConcurrentSealAndOpenMatchSingleThreadedResults() throws {
        let cipher = try AESGCM(key: Self.key)
        let reference = try AESGCM(key: Self.key)
        let count = 400
        let expected = try (0..<count).map { index in
            try Self.seal(reference, [UInt8](repeating: UInt8(truncatingIfNeeded: index), count: 1 + index % 300),
                          nonce: Self.nonce(index), prefix: UInt8(truncatingIfNeeded: index), aad: [UInt8(index % 5)])
        }
        let failures = LockedCounter()
        DispatchQueue.concurrentPerform(iterations: 8) { worker in
            for round in 0..<3 {
                for index in stride(from: (worker + round) % 8, to: count, by: 8) {
                    let plaintext = [UInt8](repeating: UInt8(truncatingIfNeeded: index), count: 1 + index % 300)
                    do {
                        let sealed = try Self.seal(cipher, plaintext, nonce: Self.nonce(index), prefix: UInt8(truncatingIfNeeded: index),
                                                   aad: [UInt8(index % 5)])
                        let opened = try Self.open(cipher, expected[index], nonce: Self.nonce(index),
                                                   prefix: UInt8(truncatingIfNeeded: index), aad: [UInt8(index % 5)])
                        if sealed != expected[index] || opened != plaintext { failures.add() }
                        // A refused tag on some calls, so contexts are freed while others are in use.
                        if index % 17 == 0 {
                            var bad = sealed
                            bad[bad.count - 1] ^= 0x80
                            if (try? Self.open(cipher, bad, nonce: Self.nonce(index), prefix: UInt8(truncatingIfNeeded: index),
                                               aad: [UInt8(index % 5)])) != nil { failures.add() }
                        }
                    } catch {
                        failures.add()
                    }
                }
            }
        }
        XCTAssertEqual(failures.value, 0)
    }

    /// The short-message path (AES-NI with libcrypto's GHASH, no EVP; forced where the wide
    /// path exists) and EVP give the same bytes for random keys, nonces, additional data (with
    /// and without the prefix byte) and every length up to past `shortMessageLimit`, and each
    /// opens what the other sealed.
    func testShortMessagePathAgreesWithEVPByteForByte() throws {
        var random = SystemRandomNumberGenerator()
        func bytes(_ count: Int) -> [UInt8] { (0..<count).map { _ in UInt8.random(in: 0...255, using: &random) } }
        let lengths = Array(0...80) + [127, 128, 129, 255, 256, 257, 511, 1000, 1023, 1024, 1025, 1100, 4096]
        for round in 0..<4 {
            let key = bytes(32)
            let short = try AESGCM(key: key, shortMessagePath: true, widePath: false)
            let evp = try AESGCM(key: key, shortMessagePath: false)
            #if arch(x86_64)
            if round == 0 && !short.hasShortMessagePath { print("note: no AES-NI/PCLMULQDQ here; the short path is not used") }
            #endif
            XCTAssertFalse(short.hasWidePath)
            XCTAssertFalse(evp.hasShortMessagePath)
            for length in lengths {
                let plaintext = bytes(length), nonce = bytes(AESGCM.nonceSize), aad = bytes(Int.random(in: 0...70, using: &random))
                let prefix: UInt8? = length % 3 == 0 ? nil : UInt8(truncatingIfNeeded: length)
                let sealedShort = try Self.seal(short, plaintext, nonce: nonce, prefix: prefix, aad: aad)
                let sealedEVP = try Self.seal(evp, plaintext, nonce: nonce, prefix: prefix, aad: aad)
                XCTAssertEqual(sealedShort, sealedEVP, "round \(round), length \(length)")
                XCTAssertEqual(try Self.open(short, sealedEVP, nonce: nonce, prefix: prefix, aad: aad), plaintext)
                XCTAssertEqual(try Self.open(evp, sealedShort, nonce: nonce, prefix: prefix, aad: aad), plaintext)
            }
        }
    }

    /// On the short path a refused tag leaves the output zeroed (no unauthenticated plaintext
    /// escapes), for a flip of every byte of a 100-byte value and its tag.
    func testShortPathRefusalZeroesTheOutput() throws {
        let cipher = try AESGCM(key: Self.key)
        let plaintext = [UInt8]((0..<100).map { UInt8($0 | 0x80) })
        let nonce = Self.nonce(7), aad = [UInt8](repeating: 3, count: 20)
        let sealed = try Self.seal(cipher, plaintext, nonce: nonce, prefix: 0x42, aad: aad)
        for position in 0..<sealed.count {
            var bad = sealed
            bad[position] ^= 0x10
            var output = [UInt8](repeating: 0xEE, count: plaintext.count)
            let verified = try bad.withUnsafeBytes { s in
                try nonce.withUnsafeBytes { n in
                    try aad.withUnsafeBytes { a in
                        try output.withUnsafeMutableBytes { try cipher.open(s, nonce: n, aadPrefix: 0x42, aad: a, into: $0.baseAddress!) }
                    }
                }
            }
            XCTAssertFalse(verified, "byte \(position)")
            XCTAssertEqual(output, [UInt8](repeating: 0, count: plaintext.count), "byte \(position): output not wiped")
        }
        XCTAssertEqual(try Self.open(cipher, sealed, nonce: nonce, prefix: 0x42, aad: aad), plaintext, "a refusal broke the next open")
    }
}

/// `CAESGCM`'s wide path (VAES, VPCLMULQDQ, AVX2; GCM written from SP 800-38D) against EVP and
/// the specification's vectors: every length to past the 1 KiB of the old limit and larger ones
/// across the 16-block groups, additional data of several lengths with and without the prefix
/// byte, refusals that wipe the output, unaligned and in-place buffers.
final class AESGCMWidePathTests: XCTestCase {
    /// 2 MiB of random bytes that plaintexts, additional data and keys are cut from.
    private static let pool: [UInt8] = (try? CryptoPrimitives.randomBytes(2 << 20)) ?? []
    private static let aadLengths = [0, 1, 13, 16, 17, 72, 600]

    /// Whether /proc/cpuinfo lists the features of the wide path (then it must be taken).
    private static var cpuHasWideFeatures: Bool {
        guard let info = try? String(contentsOfFile: "/proc/cpuinfo", encoding: .utf8),
              let flags = info.split(separator: "\n").first(where: { $0.hasPrefix("flags") }) else { return false }
        let words = Set(flags.split(separator: " ").map(String.init))
        return words.isSuperset(of: ["avx2", "vaes", "vpclmulqdq", "aes", "pclmulqdq"])
    }

    /// A cipher on the wide path; skips (with a note) on a CPU without it, and fails when the
    /// CPU lists the features but the path was not taken.
    private static func wideCipher(_ key: [UInt8]) throws -> AESGCM {
        let cipher = try AESGCM(key: key)
        if !cipher.hasWidePath {
            XCTAssertFalse(cpuHasWideFeatures, "the CPU has VAES/VPCLMULQDQ/AVX2 but the wide path is off")
            throw XCTSkip("no VAES/VPCLMULQDQ/AVX2 here; the wide path is not used")
        }
        return cipher
    }

    private static func slice(_ start: Int, _ count: Int) -> [UInt8] { Array(pool[start ..< start + count]) }

    /// Seals through raw buffers at the given misalignments (bytes past a 64-byte boundary).
    private static func seal(_ cipher: AESGCM, _ plaintext: [UInt8], nonce: [UInt8], prefix: UInt8?, aad: [UInt8],
                             inputOffset: Int = 0, outputOffset: Int = 0) throws -> [UInt8] {
        let input = UnsafeMutableRawBufferPointer.allocate(byteCount: plaintext.count + 64, alignment: 64)
        let output = UnsafeMutableRawBufferPointer.allocate(byteCount: plaintext.count + AESGCM.tagSize + 64, alignment: 64)
        defer { input.deallocate(); output.deallocate() }
        let source = UnsafeMutableRawBufferPointer(rebasing: input[inputOffset ..< inputOffset + plaintext.count])
        source.copyBytes(from: plaintext)
        let base = output.baseAddress! + outputOffset
        try nonce.withUnsafeBytes { n in
            try aad.withUnsafeBytes { a in try cipher.seal(UnsafeRawBufferPointer(source), nonce: n, aadPrefix: prefix, aad: a, into: base) }
        }
        return [UInt8](UnsafeRawBufferPointer(start: base, count: plaintext.count + AESGCM.tagSize))
    }

    /// Opens through raw buffers at the given misalignments; nil when the tag is refused, in
    /// which case the output must be all zeros (checked here).
    private static func open(_ cipher: AESGCM, _ sealed: [UInt8], nonce: [UInt8], prefix: UInt8?, aad: [UInt8],
                             inputOffset: Int = 0, outputOffset: Int = 0, file: StaticString = #filePath, line: UInt = #line) throws -> [UInt8]? {
        let count = sealed.count - AESGCM.tagSize
        let input = UnsafeMutableRawBufferPointer.allocate(byteCount: sealed.count + 64, alignment: 64)
        let output = UnsafeMutableRawBufferPointer.allocate(byteCount: count + 64, alignment: 64)
        defer { input.deallocate(); output.deallocate() }
        let source = UnsafeMutableRawBufferPointer(rebasing: input[inputOffset ..< inputOffset + sealed.count])
        source.copyBytes(from: sealed)
        let base = output.baseAddress! + outputOffset
        base.initializeMemory(as: UInt8.self, repeating: 0xEE, count: count)
        let verified = try nonce.withUnsafeBytes { n in
            try aad.withUnsafeBytes { a in try cipher.open(UnsafeRawBufferPointer(source), nonce: n, aadPrefix: prefix, aad: a, into: base) }
        }
        let result = [UInt8](UnsafeRawBufferPointer(start: base, count: count))
        if !verified {
            XCTAssertTrue(result.allSatisfy { $0 == 0 }, "a refused open left bytes in the output", file: file, line: line)
            return nil
        }
        return result
    }

    /// Byte for byte EVP's output for every plaintext length 0...1100 and larger ones (across
    /// 16-block groups, partial last blocks, 1 MiB + 13), every additional-data length with
    /// and without the prefix byte; each opens what the other sealed.
    func testWidePathAgreesWithEVPByteForByte() throws {
        let key = Self.slice(0, 32)
        let wide = try Self.wideCipher(key)
        let evp = try AESGCM(key: key, shortMessagePath: false)
        XCTAssertFalse(evp.hasWidePath)
        let lengths = Array(0...1100) + [4095, 4096, 4097, 4111, 4112, 4113, 65535, 65536, 65537, 100_000, (1 << 20) + 13]
        var cases = 0
        for length in lengths {
            for (index, aadLength) in Self.aadLengths.enumerated() {
                for prefix in [nil, UInt8(truncatingIfNeeded: length &+ 0x5A)] as [UInt8?] {
                    // Different offsets into the pool per case, so plaintexts, AADs and nonces vary.
                    let start = (length &* 7 &+ index &* 131) % 4096
                    let plaintext = Self.slice(start + 100, length), aad = Self.slice(start + 50, aadLength)
                    let nonce = Self.slice(start, AESGCM.nonceSize)
                    let sealedWide = try Self.seal(wide, plaintext, nonce: nonce, prefix: prefix, aad: aad)
                    let sealedEVP = try Self.seal(evp, plaintext, nonce: nonce, prefix: prefix, aad: aad)
                    let what = "length \(length), aad \(aadLength), prefix \(String(describing: prefix))"
                    XCTAssertEqual(sealedWide, sealedEVP, what)
                    XCTAssertEqual(try Self.open(wide, sealedEVP, nonce: nonce, prefix: prefix, aad: aad), plaintext, what)
                    XCTAssertEqual(try Self.open(evp, sealedWide, nonce: nonce, prefix: prefix, aad: aad), plaintext, what)
                    cases += 1
                    if sealedWide != sealedEVP { return }  // one failure says enough; 15k more would bury it
                }
            }
        }
        XCTAssertEqual(cases, lengths.count * Self.aadLengths.count * 2)
    }

    /// The AES-256 cases 13-16 of McGrew and Viega's GCM specification (96-bit IVs), as literal
    /// hex: (key, nonce, aad, plaintext, ciphertext, tag). Sealed by the wide path and by EVP.
    func testSpecificationVectorsThirteenToSixteen() throws {
        let zeroKey = String(repeating: "00", count: 32), key = "feffe9928665731c6d6a8f9467308308feffe9928665731c6d6a8f9467308308"
        let plaintext = "d9313225f88406e5a55909c5aff5269a86a7a9531534f7da2e4c303d8a318a72"
            + "1c3c0c95956809532fcf0e2449a6b525b16aedf5aa0de657ba637b391aafd255"
        let ciphertext = "522dc1f099567d07f47f37a32a84427d643a8cdcbfe5c0c97598a2bd2555d1aa"
            + "8cb08e48590dbb3da7b08b1056828838c5f61e6393ba7a0abcc9f662898015ad"
        let vectors: [(String, String, String, String, String, String)] = [
            (zeroKey, String(repeating: "00", count: 12), "", "", "", "530f8afbc74536b9a963b4f1c4cb738b"),
            (zeroKey, String(repeating: "00", count: 12), "", String(repeating: "00", count: 16),
             "cea7403d4d606b6e074ec5d3baf39d18", "d0d1c8a799996bf0265b98b5d48ab919"),
            (key, "cafebabefacedbaddecaf888", "", plaintext, ciphertext, "b094dac5d93471bdec1a502270e3cc6c"),
            (key, "cafebabefacedbaddecaf888", "feedfacedeadbeeffeedfacedeadbeefabaddad2", String(plaintext.dropLast(8)),
             String(ciphertext.dropLast(8)), "76fc6ece0f4e1768cddf8853bb2d551b"),
        ]
        for (index, vector) in vectors.enumerated() {
            let number = 13 + index
            let wide = try Self.wideCipher(hexBytes(vector.0)), evp = try AESGCM(key: hexBytes(vector.0), shortMessagePath: false)
            let nonce = hexBytes(vector.1), aad = hexBytes(vector.2), text = hexBytes(vector.3)
            let expected = hexBytes(vector.4) + hexBytes(vector.5)
            XCTAssertEqual(try Self.seal(wide, text, nonce: nonce, prefix: nil, aad: aad), expected, "test case \(number), wide")
            XCTAssertEqual(try Self.seal(evp, text, nonce: nonce, prefix: nil, aad: aad), expected, "test case \(number), EVP")
            XCTAssertEqual(try Self.open(wide, expected, nonce: nonce, prefix: nil, aad: aad), text, "test case \(number)")
        }
    }

    /// A flipped bit anywhere in the ciphertext or tag, in the additional data or the prefix
    /// byte, or a dropped prefix, is refused and the output left all zeros (checked in `open`).
    func testTamperedCiphertextTagOrAdditionalDataIsRefusedAndWiped() throws {
        let wide = try Self.wideCipher(Self.slice(32, 32))
        for length in [1, 15, 16, 255, 256, 257, 4096, 4097, 70_000] {
            let plaintext = Self.slice(1000, length), aad = Self.slice(70, 72), nonce = Self.slice(90, 12)
            let sealed = try Self.seal(wide, plaintext, nonce: nonce, prefix: 0x42, aad: aad)
            XCTAssertEqual(try Self.open(wide, sealed, nonce: nonce, prefix: 0x42, aad: aad), plaintext)
            let positions = Set([0, 1, length / 2, length - 1, length, length + 15] + (0..<40).map { ($0 &* 7919) % sealed.count })
            for position in positions.sorted() {
                var bad = sealed
                bad[position] ^= UInt8(1 << (position % 8))
                XCTAssertNil(try Self.open(wide, bad, nonce: nonce, prefix: 0x42, aad: aad), "length \(length), byte \(position)")
            }
            for position in [0, 35, 71] {
                var badAAD = aad
                badAAD[position] ^= 0x80
                XCTAssertNil(try Self.open(wide, sealed, nonce: nonce, prefix: 0x42, aad: badAAD), "length \(length), aad byte \(position)")
            }
            XCTAssertNil(try Self.open(wide, sealed, nonce: nonce, prefix: 0x43, aad: aad), "length \(length), prefix")
            XCTAssertNil(try Self.open(wide, sealed, nonce: nonce, prefix: nil, aad: aad), "length \(length), no prefix")
            var badNonce = nonce
            badNonce[11] ^= 1
            XCTAssertNil(try Self.open(wide, sealed, nonce: badNonce, prefix: 0x42, aad: aad), "length \(length), nonce")
            // The cipher still works after the refusals (their contexts were freed).
            XCTAssertEqual(try Self.open(wide, sealed, nonce: nonce, prefix: 0x42, aad: aad), plaintext)
        }
    }

    /// A text past GCM's limit of 2^39 - 256 bits per nonce (2^36 - 32 bytes) is refused with an
    /// error before a byte is read or written (the buffer claims 2^36 - 31 bytes; only 64 exist).
    func testTextPastGCMsLimitIsRefused() throws {
        let wide = try Self.wideCipher(Self.slice(160, 32))
        var small = [UInt8](repeating: 0x33, count: 64)
        let nonce = Self.slice(0, 12)
        try small.withUnsafeMutableBytes { buffer in
            let claimed = UnsafeRawBufferPointer(start: buffer.baseAddress, count: (1 << 36) - 31)
            try nonce.withUnsafeBytes { n in
                XCTAssertThrowsError(try wide.seal(claimed, nonce: n, aad: UnsafeRawBufferPointer(start: nil, count: 0),
                                                   into: buffer.baseAddress!))
            }
        }
        XCTAssertEqual(small, [UInt8](repeating: 0x33, count: 64), "nothing written")
    }

    /// On EVP (no `CAESGCM` path), a message of 2^31 bytes or more, whose length EVP cannot
    /// take, is refused with an error before a byte is read or written, sealing and opening.
    func testEVPRefusesLengthsPastInt32() throws {
        let evp = try AESGCM(key: Self.slice(160, 32), shortMessagePath: false)
        var small = [UInt8](repeating: 0x33, count: 64)
        let nonce = Self.slice(0, 12)
        try small.withUnsafeMutableBytes { buffer in
            let claimed = UnsafeRawBufferPointer(start: buffer.baseAddress, count: 1 << 31)
            try nonce.withUnsafeBytes { n in
                let none = UnsafeRawBufferPointer(start: nil, count: 0)
                XCTAssertThrowsError(try evp.seal(claimed, nonce: n, aad: none, into: buffer.baseAddress!))
                XCTAssertThrowsError(try evp.open(UnsafeRawBufferPointer(start: buffer.baseAddress, count: (1 << 31) + 16), nonce: n,
                                                  aad: none, into: buffer.baseAddress!))
            }
        }
        XCTAssertEqual(small, [UInt8](repeating: 0x33, count: 64), "nothing written")
    }

    /// Input and output at every misalignment 0...15 (and 33) give the bytes of aligned buffers.
    func testUnalignedBuffers() throws {
        let key = Self.slice(64, 32)
        let wide = try Self.wideCipher(key)
        for length in [0, 5, 16, 100, 4096, 4097, 65_536 + 3] {
            let plaintext = Self.slice(3000, length), aad = Self.slice(10, 17), nonce = Self.slice(20, 12)
            let reference = try Self.seal(wide, plaintext, nonce: nonce, prefix: 9, aad: aad)
            for (inputOffset, outputOffset) in (0...15).map({ ($0, (16 - $0) % 16) }) + [(33, 33), (1, 1), (7, 0), (0, 9)] {
                let what = "length \(length), offsets \(inputOffset)/\(outputOffset)"
                XCTAssertEqual(try Self.seal(wide, plaintext, nonce: nonce, prefix: 9, aad: aad,
                                             inputOffset: inputOffset, outputOffset: outputOffset), reference, what)
                XCTAssertEqual(try Self.open(wide, reference, nonce: nonce, prefix: 9, aad: aad,
                                             inputOffset: inputOffset, outputOffset: outputOffset), plaintext, what)
            }
        }
    }

    /// Sealing and opening in place (output at the input's address, as the raw-pointer API
    /// allows) give the bytes of separate buffers, on the wide path and on the libcrypto path.
    func testInPlaceSealAndOpen() throws {
        let key = Self.slice(128, 32)
        let wide = try Self.wideCipher(key)
        let short = try AESGCM(key: key, shortMessagePath: true, widePath: false)
        for (cipher, lengths) in [(wide, [0, 1, 31, 256, 4096, 4097, 70_001]), (short, [0, 1, 31, 256, 1024])] {
            for length in lengths {
                let plaintext = Self.slice(5000, length), aad = Self.slice(11, 13), nonce = Self.slice(40, 12)
                let reference = try Self.seal(cipher, plaintext, nonce: nonce, prefix: 1, aad: aad)
                var buffer = plaintext + [UInt8](repeating: 0, count: AESGCM.tagSize)
                try buffer.withUnsafeMutableBytes { bytes in
                    try nonce.withUnsafeBytes { n in
                        try aad.withUnsafeBytes { a in
                            let text = UnsafeRawBufferPointer(rebasing: bytes[..<length])
                            try cipher.seal(text, nonce: n, aadPrefix: 1, aad: a, into: bytes.baseAddress!)
                        }
                    }
                }
                XCTAssertEqual(buffer, reference, "seal, length \(length), wide \(cipher.hasWidePath)")
                let verified = try buffer.withUnsafeMutableBytes { bytes in
                    try nonce.withUnsafeBytes { n in
                        try aad.withUnsafeBytes { a in
                            try cipher.open(UnsafeRawBufferPointer(bytes), nonce: n, aadPrefix: 1, aad: a, into: bytes.baseAddress!)
                        }
                    }
                }
                XCTAssertTrue(verified)
                XCTAssertEqual(Array(buffer[..<length]), plaintext, "open, length \(length), wide \(cipher.hasWidePath)")
            }
        }
    }
}

private func hexBytes(_ text: String) -> [UInt8] {
    var bytes: [UInt8] = []
    var index = text.startIndex
    while index < text.endIndex {
        let next = text.index(index, offsetBy: 2)
        bytes.append(UInt8(text[index..<next], radix: 16) ?? 0)
        index = next
    }
    return bytes
}

private final class LockedCounter: @unchecked Sendable {
    private let lock = NSLock()
    private var count = 0
    func add() { lock.lock(); count += 1; lock.unlock() }
    var value: Int { lock.lock(); defer { lock.unlock() }; return count }
}
