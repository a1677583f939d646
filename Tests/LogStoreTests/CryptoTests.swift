import Foundation
import XCTest
@testable import LogStore

private func hex(_ text: String) -> [UInt8] {
    var bytes: [UInt8] = []
    var index = text.startIndex
    while index < text.endIndex {
        let next = text.index(index, offsetBy: 2)
        bytes.append(UInt8(text[index..<next], radix: 16)!)
        index = next
    }
    return bytes
}

extension StoreError {
    var isTampered: Bool { if case .tampered = self { return true } else { return false } }
    var wrongKeyID: UInt32? { if case .wrongKey(let id) = self { return id } else { return nil } }
    var isCryptRequired: Bool { if case .cryptRequired = self { return true } else { return false } }
}

/// AES-256-GCM through the same `AESGCM` type the engine seals records with.
final class AESGCMKnownAnswerTests: XCTestCase {
    /// (key, nonce, aad, plaintext, ciphertext, tag): the AES-256 cases 13, 14 and 16 of the
    /// GCM specification's test vectors (McGrew and Viega), as NIST's CAVP files carry them.
    private let vectors: [(String, String, String, String, String, String)] = [
        (String(repeating: "00", count: 32), String(repeating: "00", count: 12), "", "", "", "530f8afbc74536b9a963b4f1c4cb738b"),
        (String(repeating: "00", count: 32), String(repeating: "00", count: 12), "", String(repeating: "00", count: 16),
         "cea7403d4d606b6e074ec5d3baf39d18", "d0d1c8a799996bf0265b98b5d48ab919"),
        ("feffe9928665731c6d6a8f9467308308feffe9928665731c6d6a8f9467308308", "cafebabefacedbaddecaf888",
         "feedfacedeadbeeffeedfacedeadbeefabaddad2",
         "d9313225f88406e5a55909c5aff5269a86a7a9531534f7da2e4c303d8a318a721c3c0c95956809532fcf0e2449a6b525b16aedf5aa0de657ba637b39",
         "522dc1f099567d07f47f37a32a84427d643a8cdcbfe5c0c97598a2bd2555d1aa8cb08e48590dbb3da7b08b1056828838c5f61e6393ba7a0abcc9f662",
         "76fc6ece0f4e1768cddf8853bb2d551b"),
    ]

    func testSealMatchesTheVectorsAndOpenRecoversThePlaintext() throws {
        for (index, vector) in vectors.enumerated() {
            let cipher = try AESGCM(key: hex(vector.0))
            let nonce = hex(vector.1), aad = hex(vector.2), plaintext = hex(vector.3)
            var sealed = [UInt8](repeating: 0, count: plaintext.count + AESGCM.tagSize)
            try plaintext.withUnsafeBytes { p in
                try nonce.withUnsafeBytes { n in
                    try aad.withUnsafeBytes { a in
                        try sealed.withUnsafeMutableBytes { out in try cipher.seal(p, nonce: n, aad: a, into: out.baseAddress!) }
                    }
                }
            }
            XCTAssertEqual(sealed, hex(vector.4) + hex(vector.5), "vector \(index)")
            let opened = try sealed.withUnsafeBytes { s in
                try nonce.withUnsafeBytes { n in try aad.withUnsafeBytes { a in try cipher.open(s, nonce: n, aad: a, what: "vector") } }
            }
            XCTAssertEqual(opened, plaintext, "vector \(index)")
            // Any flipped bit of ciphertext or tag, and any change of the AAD, is refused.
            for position in 0..<sealed.count {
                var bad = sealed
                bad[position] ^= 0x01
                assertStoreError(try bad.withUnsafeBytes { s in
                    try nonce.withUnsafeBytes { n in try aad.withUnsafeBytes { a in try cipher.open(s, nonce: n, aad: a, what: "v") } }
                }, { $0.isTampered }, "vector \(index) byte \(position)")
            }
            assertStoreError(try sealed.withUnsafeBytes { s in
                try nonce.withUnsafeBytes { n in try [UInt8](aad + [1]).withUnsafeBytes { a in try cipher.open(s, nonce: n, aad: a, what: "v") } }
            }, { $0.isTampered })
        }
    }

    func testTruncatedTagIsRefused() throws {
        let cipher = try AESGCM(key: [UInt8](repeating: 7, count: 32))
        assertStoreError(try [UInt8](repeating: 0, count: 15).withUnsafeBytes { s in
            try [UInt8](repeating: 0, count: 12).withUnsafeBytes { n in try cipher.open(s, nonce: n, aad: UnsafeRawBufferPointer(start: nil, count: 0), what: "short") }
        }, { $0.isTampered })
    }

    func testHKDFMatchesRFC5869CaseOne() throws {
        let okm = try CryptoPrimitives.hkdfSHA256(secret: [UInt8](repeating: 0x0b, count: 22), salt: hex("000102030405060708090a0b0c"),
                                                  info: hex("f0f1f2f3f4f5f6f7f8f9"), length: 42)
        XCTAssertEqual(okm, hex("3cb25f25faacd57a90434f64d0362f2a2d2d0a90cf1a5a4c5db02d56ecc4c5bf34007208d5b887185865"))
    }

    /// RFC 4231 cases 1, 2, 6 and 7: a short key, a key shorter than the digest, and keys longer
    /// than a block (hashed first).
    func testHMACMatchesRFC4231() throws {
        XCTAssertEqual(try CryptoPrimitives.hmacSHA256(key: [UInt8](repeating: 0x0b, count: 20), message: Array("Hi There".utf8)),
                       hex("b0344c61d8db38535ca8afceaf0bf12b881dc200c9833da726e9376c2e32cff7"))
        XCTAssertEqual(try CryptoPrimitives.hmacSHA256(key: Array("Jefe".utf8), message: Array("what do ya want for nothing?".utf8)),
                       hex("5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843"))
        XCTAssertEqual(try CryptoPrimitives.hmacSHA256(key: [UInt8](repeating: 0xaa, count: 131),
                                                       message: Array("Test Using Larger Than Block-Size Key - Hash Key First".utf8)),
                       hex("60e431591ee0b67f0d8a26aacbf5b77f8e0bc6213728c5140546040f0ee37f54"))
        let message = "This is a test using a larger than block-size key and a larger than block-size data. "
            + "The key needs to be hashed before being used by the HMAC algorithm."
        XCTAssertEqual(try CryptoPrimitives.hmacSHA256(key: [UInt8](repeating: 0xaa, count: 131), message: Array(message.utf8)),
                       hex("9b09ffa71b942fcb27635fbcd5b0e944bfdc63644f0713938a7f51535c3a35e2"))
        XCTAssertEqual(try CryptoPrimitives.hmacSHA256(key: [UInt8](repeating: 0xaa, count: 64), message: []).count, 32)
    }
}

/// Encrypted records in a store: default key, custom crypt, plain, wrong keys, tampering.
final class EncryptedStoreTests: StoreTestCase {
    private let key = [UInt8](repeating: 0x42, count: 32)

    private func encryptedOptions(key: [UInt8]? = nil, keyID: UInt32 = 1) -> LogStore.Options {
        var options = self.options()
        options.encryption = .init(key: key ?? self.key, keyID: keyID)
        return options
    }

    /// A custom crypt that XORs every byte with 0x5A (and counts nothing: it only has to differ).
    private let xorCrypt = DataCrypt(encrypt: { $0.map { $0 ^ 0x5A } }, decrypt: { $0.map { $0 ^ 0x5A } })

    func testEncryptedValuesRoundTripAndNeverAppearInTheFiles() throws {
        let directory = temporary.make()
        let secret = b("attack at dawn, bring the blue folder")
        do {
            let store = try LogStore(directory: directory, options: encryptedOptions())
            for i in 0..<200 { try store.put(secret + b("\(i)"), forKey: b("k\(i)")) }
            XCTAssertEqual(try store.get(forKey: b("k7")), secret + b("7"))
            try store.close()
        }
        for (_, url) in try segmentFiles(directory) {
            let bytes = Array(try Data(contentsOf: url))
            XCTAssertNil(bytes.firstRange(of: Array(secret.prefix(12))), "plaintext found in \(url.lastPathComponent)")
        }
        let store = try LogStore(directory: directory, options: encryptedOptions())
        XCTAssertEqual(try store.get(forKey: b("k199")), secret + b("199"))
        try store.compact()
        XCTAssertEqual(try store.get(forKey: b("k0")), secret + b("0"))
        XCTAssertEqual(try store.verify().problems, [])
    }

    func testWrongKeyForAKnownIDFailsAtOpen() throws {
        let directory = temporary.make()
        try LogStore(directory: directory, options: encryptedOptions()).close()
        assertStoreError(try LogStore(directory: directory, options: encryptedOptions(key: [UInt8](repeating: 1, count: 32))),
                         { $0.wrongKeyID == 1 })
        // The failed open released the lock: the right key still opens.
        XCTAssertNoThrow(try LogStore(directory: directory, options: encryptedOptions()).close())
    }

    func testRecordUnderAnUnknownKeyIDFailsAtRead() throws {
        let directory = temporary.make()
        do {
            let store = try LogStore(directory: directory, options: encryptedOptions(keyID: 9))
            try store.put(b("v"), forKey: b("k"))
            try store.close()
        }
        let plain = try LogStore(directory: directory, options: options())
        assertStoreError(try plain.get(forKey: b("k")), { $0.wrongKeyID == 9 })
    }

    func testPlainDefaultAndCustomCryptsInOneStore() throws {
        let store = try LogStore(directory: temporary.make(), options: encryptedOptions())
        try store.put(b("plain"), forKey: b("p"), crypt: .plain)
        try store.put(b("default"), forKey: b("d"), crypt: .default)
        try store.put(b("custom"), forKey: b("c"), crypt: xorCrypt)
        try store.put(b("policy"), forKey: b("n"))
        XCTAssertEqual(try store.get(forKey: b("p")), b("plain"))
        XCTAssertEqual(try store.get(forKey: b("d")), b("default"))
        XCTAssertEqual(try store.get(forKey: b("n")), b("policy"))
        assertStoreError(try store.get(forKey: b("c")), { $0.isCryptRequired })
        XCTAssertEqual(try store.get(forKey: b("c"), crypt: xorCrypt), b("custom"))
        // Default-crypt values read the same whatever crypt is passed.
        XCTAssertEqual(try store.get(forKey: b("d"), crypt: xorCrypt), b("default"))
        var flagsByKey: [String: UInt8] = [:]
        try store.forEachRecord { record in if record.space == 0 { flagsByKey[String(decoding: record.key, as: UTF8.self)] = record.flags } }
        XCTAssertEqual(flagsByKey["p"].map { $0 & 0x30 }, 0)
        XCTAssertEqual(flagsByKey["d"].map { $0 & 0x30 }, 0x10)
        XCTAssertEqual(flagsByKey["n"].map { $0 & 0x30 }, 0x10)
        XCTAssertEqual(flagsByKey["c"].map { $0 & 0x30 }, 0x20)
        assertStoreError(try store.entries(space: 0), { $0.isCryptRequired })
        XCTAssertEqual(try store.entries(space: 0, crypt: xorCrypt).count, 4)
    }

    func testDefaultCryptWithoutAKeyIsATypedError() throws {
        var keyless = options()
        keyless.encryption = nil   // whatever the test mode: this is about a store without a key
        let store = try LogStore(directory: temporary.make(), options: keyless)
        assertStoreError(try store.put(b("v"), forKey: b("k"), crypt: .default), { $0.isCryptRequired })
        XCTAssertNil(try store.get(forKey: b("k")))
    }

    func testKeyDerivedFromAnApplicationKeyIsStable() throws {
        let first = try LogStore.Options.Encryption(deriving: "my-app-key")
        let second = try LogStore.Options.Encryption(deriving: "my-app-key")
        XCTAssertEqual(first.key, second.key)
        XCTAssertEqual(first.key.count, 32)
        XCTAssertNotEqual(first.key, try LogStore.Options.Encryption(deriving: "other-app-key").key)
    }

    /// Flips a byte in each region of an encrypted record, fixing the CRC each time (the CRC
    /// is no defence against an attacker): every change is refused, none yields a value.
    func testTamperingWithAnyRegionOfAnEncryptedRecordIsRefused() throws {
        let directory = temporary.make()
        do {
            let store = try LogStore(directory: directory, options: encryptedOptions())
            try store.put(b("the secret value"), forKey: b("the-key"))
            try store.close()
        }
        let segment = try segmentFiles(directory)[0].url
        let record = try records(in: segment).first { $0.header.space == 0 }!
        let header = record.header
        let regions: [(String, Int)] = [
            ("sequence", record.offset + 5),
            ("key", record.offset + header.keyOffset + 2),
            ("nonce", record.offset + header.nonceOffset + 3),
            ("ciphertext", record.offset + header.valueOffset + 1),
            ("tag", record.offset + header.totalLength - 2),
        ]
        for (region, position) in regions {
            let copy = try copyStore(directory, label: region)
            let url = copy.appendingPathComponent(segment.lastPathComponent)
            try modifyFile(url) { bytes in
                bytes[position] ^= 0x04
                bytes.withUnsafeMutableBytes { raw in
                    RecordCodec.rewriteFlags(RecordFlags(rawValue: raw[record.offset + 4]), record: raw.baseAddress! + record.offset,
                                             length: header.totalLength)
                }
            }
            try FileManager.default.removeItem(at: copy.appendingPathComponent("index.snapshot"))
            let store = try LogStore(directory: copy, options: encryptedOptions())
            if region == "key" {
                // A changed key is another key: the original is gone, and the moved record is refused.
                XCTAssertNil(try store.get(forKey: b("the-key")))
                var altered = b("the-key")
                altered[2] ^= 0x04
                assertStoreError(try store.get(forKey: altered), { $0.isTampered }, region)
            } else {
                assertStoreError(try store.get(forKey: b("the-key")), { $0.isTampered }, region)
            }
            XCTAssertTrue(try store.verify().problems.contains { $0.contains("authentication") }, "verify must catch \(region)")
            try store.close()
        }
    }

    func testEncryptedBatchesSurviveCompactionWhichClearsBatchFlags() throws {
        let directory = temporary.make()
        let store = try LogStore(directory: directory, options: encryptedOptions())
        var batch = LogStore.WriteBatch()
        for i in 0..<50 { batch.put(b("value \(i)"), forKey: b("key \(i)")) }
        try store.write(batch)
        try store.compact()
        try store.close()
        try FileManager.default.removeItem(at: directory.appendingPathComponent("index.snapshot"))
        let reopened = try LogStore(directory: directory, options: encryptedOptions())
        for i in 0..<50 { XCTAssertEqual(try reopened.get(forKey: b("key \(i)")), b("value \(i)")) }
    }
}

/// Regression: the flag byte bound into the AAD must be the one written, `hasExpiry` included.
final class EncryptedExpiryTests: StoreTestCase {
    func testEncryptedValuesWithAnExpiryReadBack() throws {
        var options = self.options()
        options.encryption = .init(key: [UInt8](repeating: 3, count: 32), keyID: 1)
        let directory = temporary.make()
        let store = try LogStore(directory: directory, options: options)
        try store.put(b("soon"), forKey: b("ttl"), expiresAt: Date().addingTimeInterval(3600))
        var batch = LogStore.WriteBatch()
        batch.put(b("later"), forKey: b("ttl2"), expiresAt: Date().addingTimeInterval(7200))
        batch.put(b("x"), forKey: b("other"))
        try store.write(batch)
        XCTAssertEqual(try store.get(forKey: b("ttl")), b("soon"))
        XCTAssertEqual(try store.get(forKey: b("ttl2")), b("later"))
        try store.close()
        let reopened = try LogStore(directory: directory, options: options)
        XCTAssertEqual(try reopened.get(forKey: b("ttl")), b("soon"))
    }
}

final class BorrowedReadTests: StoreTestCase {
    /// An encrypting, compressing store holding a plain value at "p" and an encrypted,
    /// compressed one at "e".
    private func storeWithPlainAndEncodedValues() throws -> LogStore {
        var options = self.options()
        options.encryption = .init(key: [UInt8](repeating: 5, count: 32), keyID: 1)
        options.compression = .init(level: 3, threshold: 16)
        let store = try LogStore(directory: temporary.make(), options: options)
        try store.put(b("plain value"), forKey: b("p"), crypt: .plain)
        try store.put(Array(repeating: 0x41, count: 500), forKey: b("e"))
        return store
    }

    func testWithValueLendsPlainAndDecodesEncodedValues() throws {
        let store = try storeWithPlainAndEncodedValues()
        XCTAssertEqual(try store.withValue(forKey: b("p")) { Array($0) }, b("plain value"))
        XCTAssertEqual(try store.withValue(forKey: b("e")) { $0.count }, 500)
        XCTAssertNil(try store.withValue(forKey: b("absent")) { $0.count })
        try store.put(b("gone"), forKey: b("x"), expiresAt: Date(timeIntervalSinceNow: -1))
        XCTAssertNil(try store.withValue(forKey: b("x")) { $0.count })
    }

    /// The key-as-bytes read the DAO uses for rows: the same answers as `withValue`, the
    /// plain value lent, the encrypted and compressed one decoded, absent and expired keys
    /// not read, in another space too.
    func testWithValueBytesForKeyBytesReadsAsWithValue() throws {
        let store = try storeWithPlainAndEncodedValues()
        try store.put(b("other space"), forKey: b("p"), space: 7, crypt: .plain)
        try store.put(b("gone"), forKey: b("x"), expiresAt: Date(timeIntervalSinceNow: -1))
        func read(_ key: String, space: LogStore.KeySpace = 0) throws -> [UInt8]? {
            var value: [UInt8]?
            let found = try b(key).withUnsafeBytes { key in
                try store.withValueBytes(forKeyBytes: key, space: space) { value = Array($0) }
            }
            XCTAssertEqual(found, value != nil)
            return value
        }
        XCTAssertEqual(try read("p"), b("plain value"))
        XCTAssertEqual(try read("e"), Array(repeating: 0x41, count: 500))
        XCTAssertEqual(try read("p", space: 7), b("other space"))
        XCTAssertNil(try read("absent"))
        XCTAssertNil(try read("x"))
        XCTAssertNil(try read("e", space: 7))
        try store.close()
        XCTAssertThrowsError(try read("p"))
    }
}
