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

    /// The short-message path (AES-NI with libcrypto's GHASH, no EVP) and EVP give the same
    /// bytes for random keys, nonces, additional data (with and without the prefix byte) and
    /// every length up to past `shortMessageLimit`, and each opens what the other sealed.
    func testShortMessagePathAgreesWithEVPByteForByte() throws {
        var random = SystemRandomNumberGenerator()
        func bytes(_ count: Int) -> [UInt8] { (0..<count).map { _ in UInt8.random(in: 0...255, using: &random) } }
        let lengths = Array(0...80) + [127, 128, 129, 255, 256, 257, 511, 1000, 1023, 1024, 1025, 1100, 4096]
        for round in 0..<4 {
            let key = bytes(32)
            let short = try AESGCM(key: key)
            let evp = try AESGCM(key: key, shortMessagePath: false)
            #if arch(x86_64)
            if round == 0 && !short.hasShortMessagePath { print("note: no AES-NI/PCLMULQDQ here; the short path is not used") }
            #endif
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

private final class LockedCounter: @unchecked Sendable {
    private let lock = NSLock()
    private var count = 0
    func add() { lock.lock(); count += 1; lock.unlock() }
    var value: Int { lock.lock(); defer { lock.unlock() }; return count }
}
