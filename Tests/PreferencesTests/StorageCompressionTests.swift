import Foundation
import XCTest
@testable import Preferences
import LogStore

/// `StorageCompression`: DataCenter and CustomStorage stores compressing with zstd and trained
/// dictionaries (issue 22), off by default.
final class StorageCompressionTests: PreferencesTestCase {
    /// A JSON-like value of ~120 bytes, alike from key to key as real preferences are.
    private func value(_ i: Int) -> String {
        "{\"user\":\"user-\(i)\",\"theme\":\"dark\",\"fontSize\":\(12 + i % 5),\"notifications\":{\"email\":true,\"push\":\(i % 2 == 0)}}"
    }

    /// Records of `space` in `store`: (count with flag 0x08 compressed, count without).
    private func compressedCounts(_ store: LogStore, space: String) throws -> (compressed: Int, plain: Int) {
        let space = try store.space(named: space)
        var compressed = 0, plain = 0
        try store.forEachRecord { record in
            guard record.space == space, record.isLive, !record.isTombstone else { return }
            if record.flags & 0x08 != 0 { compressed += 1 } else { plain += 1 }
        }
        return (compressed, plain)
    }

    func testOffByDefault() throws {
        XCTAssertNil(center.compression)
        for i in 0..<150 { try prefs.setString(value(i), forKey: "k\(i)", business: "b") }
        let store = try center.logStore(userDependent: false)
        let counts = try compressedCounts(store, space: "prefs:b")
        XCTAssertEqual(counts.compressed, 0)
        XCTAssertEqual(counts.plain, 150)
        XCTAssertEqual(try center.trainCompressionDictionaries(), 0)
        XCTAssertNil(store.compressionDictionaryID(space: try store.space(named: "prefs:b")))
    }

    func testDataCenterStoresTrainADictionaryAtOpenAndCompressLaterValuesWithIt() throws {
        let compressedRoot = root.appendingPathComponent("compressed", isDirectory: true)
        var compressed: DataCenter? = try DataCenter(root: compressedRoot, appKey: "k", appVersion: "1",
                                                     compression: StorageCompression())
        // Before a dictionary: ~120-byte values are above the threshold but zstd alone hardly
        // shrinks them; some may be kept raw.
        for i in 0..<150 { try compressed?.commonPreferences.setString(value(i), forKey: "k\(i)", business: "b", crypt: .default) }
        compressed = nil   // closes the stores
        let reopened = try DataCenter(root: compressedRoot, appKey: "k", appVersion: "1", compression: StorageCompression())
        let store = try reopened.logStore(userDependent: false)
        let space = try store.space(named: "prefs:b")
        XCTAssertNotNil(store.compressionDictionaryID(space: space), "trained at open: 150 >= 100 values")
        for i in 0..<150 { try reopened.commonPreferences.setString(value(i + 1000), forKey: "k\(i)", business: "b", crypt: .default) }
        let counts = try compressedCounts(store, space: "prefs:b")
        XCTAssertEqual(counts.compressed, 150, "every rewritten value is compressed with the dictionary")
        for i in 0..<150 { XCTAssertEqual(reopened.commonPreferences.string(forKey: "k\(i)", business: "b", crypt: .default), value(i + 1000)) }
        var sizes: [Int] = []
        try store.forEachRecord { if $0.space == space, $0.isLive { sizes.append($0.value.count) } }
        // Stored: tag byte + the string, compressed, then the 16-byte GCM tag.
        XCTAssertLessThan(sizes.reduce(0, +), 150 * (1 + value(1000).utf8.count + 16) / 2, "the dictionary at least halves them")
        XCTAssertEqual(try reopened.trainCompressionDictionaries(), 0, "a space with a dictionary gets no second one")
    }

    func testCustomStorageOptionOverridesTheDataCenters() throws {
        let path = root.appendingPathComponent("custom", isDirectory: true)
        let storage = try CustomStorage(path: path, compression: StorageCompression(dictionaryMinimumValues: 50))
        XCTAssertNotNil(storage.compression)
        for i in 0..<60 { try storage.commonPreferences.setString(value(i), forKey: "k\(i)") }
        XCTAssertEqual(try storage.trainCompressionDictionaries(), 1, "prefs:default, 60 >= 50 values")
        for i in 0..<60 { try storage.commonPreferences.setString(value(i + 7), forKey: "k\(i)") }
        let store = try storage.logStore(userDependent: false)
        XCTAssertEqual(try compressedCounts(store, space: "prefs:default").compressed, 60)
        XCTAssertEqual(try storage.logStoreLocation(userDependent: false).compresses, true)
        for i in 0..<60 { XCTAssertEqual(storage.commonPreferences.string(forKey: "k\(i)"), value(i + 7)) }
        try storage.close()
        // The same folder opened without compression reads every value.
        let plain = try CustomStorage(path: path)
        XCTAssertNil(plain.compression)
        for i in 0..<60 { XCTAssertEqual(plain.commonPreferences.string(forKey: "k\(i)"), value(i + 7)) }
        try plain.close()
    }

    func testCustomStoragesAndVersionStorageFollowACompressedDataCenter() throws {
        try DataCenter.configure(root: root.appendingPathComponent("c2", isDirectory: true), appKey: "k", appVersion: "1",
                                 compression: StorageCompression(threshold: 16))
        let center = DataCenter.default
        XCTAssertEqual(center.compression?.threshold, 16)
        XCTAssertEqual(center.currentVersionStorage.compression?.threshold, 16)
        let named = try CustomStorage.named("Chat")
        XCTAssertEqual(named.compression?.threshold, 16)
        try named.commonPreferences.setString(String(repeating: "abc", count: 40), forKey: "long")
        XCTAssertEqual(try compressedCounts(named.logStore(userDependent: false), space: "prefs:default").compressed, 1)
        try named.close()
        let off = try CustomStorage.named("Plain", compression: nil)
        XCTAssertNil(off.compression)
        try off.close()
    }
}
