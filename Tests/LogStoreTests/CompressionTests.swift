import Foundation
import XCTest
@testable import LogStore

/// zstd per record: when it applies, that it round-trips, and that hostile frames are refused.
final class CompressionTests: StoreTestCase {
    private func compressedOptions(threshold: Int = 64) -> LogStore.Options {
        var options = self.options()
        options.compression = .init(level: 3, threshold: threshold)
        return options
    }

    private func jsonLike(_ i: Int) -> [UInt8] {
        b(#"{"id":\#(i),"name":"user number \#(i)","email":"user\#(i)@example.com","tags":["a","b","c"],"active":true,"score":\#(i * 7)}"#)
    }

    private func flags(of key: [UInt8], in store: LogStore) throws -> RecordFlags? {
        var flags: RecordFlags?
        try store.forEachRecord { if $0.key == key && $0.isLive { flags = RecordFlags(rawValue: $0.flags) } }
        return flags
    }

    func testCompressibleValuesAreStoredSmallerAndReadBackExactly() throws {
        let directory = temporary.make()
        let store = try LogStore(directory: directory, options: compressedOptions())
        let big = [UInt8](repeating: 0x61, count: 10_000) + jsonLike(1)
        try store.put(big, forKey: b("big"))
        XCTAssertEqual(try store.get(forKey: b("big")), big)
        XCTAssertEqual(try flags(of: b("big"), in: store)?.contains(.compressed), true)
        XCTAssertLessThan(store.statistics.liveBytes, 1_000)
        try store.close()
        // Readable by a store opened without compression options.
        let plain = try LogStore(directory: directory, options: options())
        XCTAssertEqual(try plain.get(forKey: b("big")), big)
    }

    func testSmallAndIncompressibleValuesAreStoredRaw() throws {
        let store = try LogStore(directory: temporary.make(), options: compressedOptions(threshold: 256))
        try store.put([UInt8](repeating: 0, count: 100), forKey: b("small"))
        var generator = SeededRandom(seed: 7)
        let noise = (0..<4096).map { _ in UInt8.random(in: 0...255, using: &generator) }
        try store.put(noise, forKey: b("noise"))
        XCTAssertEqual(try flags(of: b("small"), in: store)?.contains(.compressed), false)
        XCTAssertEqual(try flags(of: b("noise"), in: store)?.contains(.compressed), false)
        XCTAssertEqual(try store.get(forKey: b("noise")), noise)
    }

    func testCompressionThenEncryptionRoundTripsThroughCompactionAndReopen() throws {
        let directory = temporary.make()
        var options = compressedOptions()
        options.encryption = .init(key: [UInt8](repeating: 9, count: 32), keyID: 3)
        do {
            let store = try LogStore(directory: directory, options: options)
            for i in 0..<300 { try store.put(jsonLike(i) + jsonLike(i), forKey: b("k\(i)")) }
            XCTAssertEqual(try flags(of: b("k5"), in: store), [.compressed, .encrypted])
            try store.compact()
            try store.close()
        }
        let store = try LogStore(directory: directory, options: options)
        for i in stride(from: 0, to: 300, by: 37) { XCTAssertEqual(try store.get(forKey: b("k\(i)")), jsonLike(i) + jsonLike(i)) }
    }

    func testCustomCryptAppliesAfterCompression() throws {
        let seen = LockedBytes()
        let crypt = DataCrypt(encrypt: { seen.set($0); return $0.reversed() }, decrypt: { $0.reversed() })
        let store = try LogStore(directory: temporary.make(), options: compressedOptions())
        let value = [UInt8](repeating: 0x41, count: 5_000)
        try store.put(value, forKey: b("k"), crypt: crypt)
        XCTAssertLessThan(seen.get().count, 200, "the custom crypt must see the compressed frame")
        XCTAssertEqual(try store.get(forKey: b("k"), crypt: crypt), value)
    }

    /// A record whose frame declares more than its raw length (a decompression bomb) or whose
    /// frame is garbage is `corrupt`, never expanded.
    func testFramesThatDisagreeWithTheRecordAreRefused() throws {
        let codec = ZstdCodec(level: 3)
        let payload = [UInt8](repeating: 0x7A, count: 1 << 20)
        let frame = try XCTUnwrap(payload.withUnsafeBytes { codec.compress($0) })
        XCTAssertLessThan(frame.count, 1_000)
        assertStoreError(try frame.withUnsafeBytes { try codec.decompress($0, rawLength: 100, what: "bomb") }, { $0.isCorrupt })
        assertStoreError(try [UInt8](repeating: 0x33, count: 64).withUnsafeBytes { try codec.decompress($0, rawLength: 10, what: "junk") },
                         { $0.isCorrupt })
        XCTAssertEqual(try frame.withUnsafeBytes { try codec.decompress($0, rawLength: payload.count, what: "ok") }, payload)

        // Through the store: rewrite a compressed record's raw length (and its checksum).
        let directory = temporary.make()
        do {
            let store = try LogStore(directory: directory, options: compressedOptions())
            try store.put(payload, forKey: b("bomb"))
            try store.close()
        }
        let segment = try segmentFiles(directory)[0].url
        let record = try records(in: segment).first { $0.header.flags.contains(.compressed) }!
        try modifyFile(segment) { bytes in
            // The raw length is the last varint before the key: make it 1 (varint 0x01 padded
            // to the same width with continuation bytes, which readers accept).
            let end = record.offset + record.header.keyOffset
            let width = Varint.size(UInt64(record.header.rawLength))
            for i in 0..<width { bytes[end - width + i] = i == width - 1 ? 0x00 : (i == 0 ? 0x81 : 0x80) }
            bytes.withUnsafeMutableBytes { raw in
                RecordCodec.rewriteFlags(record.header.flags, record: raw.baseAddress! + record.offset, length: record.header.totalLength)
            }
        }
        try FileManager.default.removeItem(at: directory.appendingPathComponent("index.snapshot"))
        let store = try LogStore(directory: directory, options: compressedOptions())
        // Encrypted, the raw length is authenticated (FORMAT.md: AES-GCM is opened first).
        assertStoreError(try store.get(forKey: b("bomb")), { mode.encrypts ? $0.isTampered : $0.isCorrupt })
    }
}

/// Trained dictionaries per key space: small values that zstd alone cannot shrink.
final class DictionaryTests: StoreTestCase {
    private func record(_ i: Int) -> [UInt8] {
        b(#"{"id":\#(i),"type":"order","status":"shipped","currency":"EUR","amount":\#(i % 977),"items":\#(i % 7)}"#)
    }

    func testTrainedDictionaryShrinksSmallValuesAndSurvivesReopenAndCompaction() throws {
        let directory = temporary.make()
        var options = self.options(segmentSize: 1 << 20)
        options.compression = .init(level: 3, threshold: 32)
        var store = try LogStore(directory: directory, options: options)
        for i in 0..<3000 { try store.put(record(i), forKey: b("o\(i)"), space: 5) }
        let plainBytes = store.statistics.liveBytes
        let id = try XCTUnwrap(try store.trainCompressionDictionary(space: 5))
        XCTAssertNotEqual(id, 0)
        for i in 0..<3000 { try store.put(record(i + 5000), forKey: b("o\(i)"), space: 5) }
        let trainedBytes = store.statistics.liveBytes
        XCTAssertLessThan(Double(trainedBytes), Double(plainBytes) * 0.7, "plain \(plainBytes), with dictionary \(trainedBytes)")
        // Other spaces are untouched by space 5's dictionary.
        try store.put(record(1), forKey: b("x"), space: 6)
        XCTAssertEqual(try store.get(forKey: b("x"), space: 6), record(1))
        XCTAssertEqual(try store.get(forKey: b("o42"), space: 5), record(5042))
        try store.compact()
        try store.close()
        store = try LogStore(directory: directory, options: options)
        for i in stride(from: 0, to: 3000, by: 97) { XCTAssertEqual(try store.get(forKey: b("o\(i)"), space: 5), record(i + 5000)) }
        // Writes after reopen still use the dictionary.
        let before = store.statistics.liveBytes
        try store.put(record(99_999), forKey: b("o1"), space: 5)
        XCTAssertLessThan(store.statistics.liveBytes - before, 60)
    }

    func testAFrameWhoseDictionaryIsMissingIsCorruptNotGarbage() throws {
        let directory = temporary.make()
        var options = self.options()
        options.compression = .init(level: 3, threshold: 32)
        do {
            let store = try LogStore(directory: directory, options: options)
            for i in 0..<500 { try store.put(record(i), forKey: b("o\(i)"), space: 2) }
            XCTAssertNotNil(try store.trainCompressionDictionary(space: 2))
            try store.put(record(7), forKey: b("new"), space: 2)
            // Remove the dictionary behind the store's back (as a hostile or broken copy would).
            for key in try store.keys(space: LogStore.engineSpace, prefix: b("zdict/")) {
                try store.delete(forKey: key, space: LogStore.engineSpace)
            }
            try store.close()
        }
        let store = try LogStore(directory: directory, options: options)
        assertStoreError(try store.get(forKey: b("new"), space: 2), { $0.isCorrupt })
        XCTAssertEqual(try store.get(forKey: b("o3"), space: 2), record(3), "values written before training need no dictionary")
    }

    func testTooLittleToLearnFromGivesNil() throws {
        var options = self.options()
        options.compression = .init()
        let store = try LogStore(directory: temporary.make(), options: options)
        try store.put(b("one"), forKey: b("k"), space: 3)
        XCTAssertNil(try store.trainCompressionDictionary(space: 3))
    }
}

/// A byte array shared with a @Sendable closure.
final class LockedBytes: @unchecked Sendable {
    private let lock = NSLock()
    private var bytes: [UInt8] = []
    func set(_ value: [UInt8]) { lock.lock(); bytes = value; lock.unlock() }
    func get() -> [UInt8] { lock.lock(); defer { lock.unlock() }; return bytes }
}

final class IncompressibleDetectionTests: XCTestCase {
    func testRandomBytesLookIncompressibleAndTextDoesNot() {
        var generator = SeededRandom(seed: 11)
        let random = (0..<4096).map { _ in UInt8.random(in: 0...255, using: &generator) }
        let text = Array(String(repeating: #"{"name":"user","id":12345,"tags":["a","b"]},"#, count: 100).utf8)
        let base64 = Array(Data(random).base64EncodedString().utf8)
        random.withUnsafeBytes { XCTAssertTrue(ZstdCodec.looksIncompressible($0)) }
        text.withUnsafeBytes { XCTAssertFalse(ZstdCodec.looksIncompressible($0)) }
        base64.withUnsafeBytes { XCTAssertFalse(ZstdCodec.looksIncompressible($0), "64 symbols: zstd still gains ~25%") }
        Array(random.prefix(500)).withUnsafeBytes { XCTAssertFalse(ZstdCodec.looksIncompressible($0), "short values are always tried") }
    }
}
