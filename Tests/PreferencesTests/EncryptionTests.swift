import Foundation
import XCTest
@testable import Preferences
import LogStore

final class EncryptionTests: PreferencesTestCase {
    /// The newest record of `key` in `business` as found in the segments.
    private func record(_ key: String, business: String, in preferences: SharedPreferences) throws -> LogStore.RecordInfo? {
        let space = try XCTUnwrap(preferences.existingSpace(business))
        var found: LogStore.RecordInfo?
        try preferences.store().forEachRecord { info in
            if info.space == space, info.key == Array(key.utf8), info.isLive { found = info }
        }
        return found
    }

    func testValuesWithoutCryptArePlainDespiteTheDefaultKey() throws {
        try prefs.setString("visible", forKey: "s", business: "b")
        try prefs.set(7, forKey: "i", business: "b")
        let info = try XCTUnwrap(record("s", business: "b", in: prefs))
        XCTAssertEqual(info.flags & 0x30, 0, "neither store-key nor custom encrypted")
        XCTAssertEqual(info.value, [0x05] + Array("visible".utf8))
        XCTAssertEqual(try XCTUnwrap(record("i", business: "b", in: prefs)).flags & 0x30, 0)
    }

    func testDefaultCryptReadsBackWithoutPassingACrypt() throws {
        try prefs.setString("secret", forKey: "s", business: "b", crypt: .default)
        try prefs.setObject(["a": 1], forKey: "o", business: "b", crypt: .default)
        XCTAssertEqual(prefs.string(forKey: "s", business: "b"), "secret")
        XCTAssertEqual(prefs.string(forKey: "s", business: "b", crypt: .default), "secret")
        XCTAssertEqual((prefs.object(forKey: "o", business: "b") as? [String: Int])?["a"], 1)
        let info = try XCTUnwrap(record("s", business: "b", in: prefs))
        XCTAssertEqual(info.flags & 0x10, 0x10, "AES-GCM under the store key")
        XCTAssertNil(info.value.firstRange(of: Array("secret".utf8)), "no plaintext on disk")
    }

    func testCustomCryptNeedsItsCrypt() throws {
        let crypt = xorCrypt()
        try prefs.setString("hidden", forKey: "s", business: "b", crypt: crypt)
        try prefs.saveJSON(["k": 2], forKey: "j", business: "b", crypt: crypt)
        XCTAssertNil(prefs.string(forKey: "s", business: "b"))
        XCTAssertNil(prefs.object(forKey: "j", business: "b"))
        XCTAssertEqual(prefs.string(forKey: "s", business: "b", crypt: crypt), "hidden")
        XCTAssertEqual(try prefs.object([String: Int].self, forKey: "j", business: "b", crypt: crypt), ["k": 2])
        XCTAssertThrowsError(try prefs.object([String: Int].self, forKey: "j", business: "b")) { error in
            guard case StoreError.cryptRequired = error else { return XCTFail("\(error)") }
        }
        XCTAssertTrue(prefs.contains("s", business: "b"))
        let info = try XCTUnwrap(record("s", business: "b", in: prefs))
        XCTAssertEqual(info.flags & 0x20, 0x20)
    }

    func testPurgeableOptionSetsTheRecordFlag() throws {
        try prefs.setObject([1], forKey: "p", business: "b", options: .purgeable)
        try prefs.archiveObject(Point(x: 0, y: 0), forKey: "a", business: "b", options: .purgeable)
        try prefs.archive([1], forKey: "c", business: "b", options: .purgeable)
        try prefs.saveJSON([1], forKey: "j", business: "b", crypt: .default, options: .purgeable)
        try prefs.setObject([1], forKey: "keep", business: "b")
        for key in ["p", "a", "c", "j"] {
            XCTAssertEqual(try XCTUnwrap(record(key, business: "b", in: prefs)).flags & 0x40, 0x40, key)
        }
        XCTAssertEqual(try XCTUnwrap(record("keep", business: "b", in: prefs)).flags & 0x40, 0)
        XCTAssertEqual(DataOptions.purgeable.rawValue, 1 << 31)
    }

    func testSuppliedDefaultKeyAndWrongKeys() throws {
        let folder = makeTemporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let key = [UInt8](repeating: 7, count: 32)
        var center: DataCenter? = try DataCenter(root: folder, appKey: "ignored", defaultKey: key, appVersion: "1")
        try center?.commonPreferences.setString("v", forKey: "k", business: "b", crypt: .default)
        XCTAssertThrowsError(try DataCenter(root: folder, appKey: "x", defaultKey: key, appVersion: "1")) { error in
            guard case StoreError.alreadyOpen = error else { return XCTFail("\(error)") }
        }
        center?.invalidate()
        center = nil
        XCTAssertThrowsError(try DataCenter(root: folder, appKey: "other", appVersion: "1")) { error in
            guard case StoreError.wrongKey = error else { return XCTFail("\(error)") }
        }
        let other = makeTemporaryFolder("short-key")
        defer { try? FileManager.default.removeItem(at: other) }
        XCTAssertThrowsError(try DataCenter(root: other, appKey: "x", defaultKey: [1, 2, 3], appVersion: "1")) { error in
            guard case StoreError.wrongKey = error else { return XCTFail("\(error)") }
        }
        let again = try DataCenter(root: folder, appKey: "ignored", defaultKey: key, appVersion: "1")
        XCTAssertEqual(again.commonPreferences.string(forKey: "k", business: "b"), "v")
    }
}
