import Foundation
import XCTest
@testable import Preferences
import LogStore

/// The statements of FORMAT.md, "Records of the layers above the engine", Preferences, that a
/// reader holding only the spec relies on (issue 22, items 1, 2, 3 and 6).
final class FormatSpecTests: PreferencesTestCase {
    private func liveRecords(_ store: LogStore) throws -> [LogStore.RecordInfo] {
        var records: [LogStore.RecordInfo] = []
        try store.forEachRecord { if $0.isLive, !$0.isTombstone { records.append($0) } }
        return records
    }

    func testFoldersOfTheSpecExample() throws {
        try center.setCurrentUserId("u1")
        try center.userPreferences?.set(1, forKey: "x", business: "b")
        try center.currentVersionStorage.commonPreferences.set(2, forKey: "y")
        try center.setCurrentUserId(nil)
        let preferences = root.appendingPathComponent("Documents/Preferences").path
        XCTAssertTrue(FileManager.default.fileExists(atPath: preferences + "/user-08c47b07b56747f3"), "FORMAT.md's example for \"u1\"")
        XCTAssertTrue(FileManager.default.fileExists(atPath: preferences + "/common"))
        XCTAssertTrue(FileManager.default.fileExists(atPath: root.appendingPathComponent("CurrentVersion/common").path))
        XCTAssertEqual(StableHash.hex("u1"), "08c47b07b56747f3")
        XCTAssertEqual(StableHash.hex("a").count, 16)
        XCTAssertEqual(StableHash.hex("a"), StableHash.hex("a").lowercased())
    }

    func testCustomStorageAndVersionStoragePreferencesUseBusinessDefault() throws {
        try center.currentVersionStorage.commonPreferences.set(2, forKey: "y")
        let store = try center.currentVersionStorage.logStore(userDependent: false)
        let space = try XCTUnwrap(try store.namedSpaces()["prefs:default"])
        XCTAssertEqual(try liveRecords(store).filter { $0.space == space }.map(\.key), [Array("y".utf8)])
    }

    func testEveryStoreHasKeyIDOneAndPurgeableSetsFlag0x40() throws {
        try prefs.setObject(["a": 1], forKey: "p", business: "b", options: .purgeable)
        try prefs.setObject(["a": 1], forKey: "q", business: "b")
        let store = try center.logStore(userDependent: false)
        let records = try liveRecords(store)
        let keychecks = records.filter { $0.space == 0xFFFF_FFFF && $0.key.starts(with: Array("keycheck/".utf8)) }
        XCTAssertEqual(keychecks.map { String(decoding: $0.key, as: UTF8.self) }, ["keycheck/1"])
        let space = try store.space(named: "prefs:b")
        let p = try XCTUnwrap(records.first { $0.space == space && $0.key == Array("p".utf8) })
        let q = try XCTUnwrap(records.first { $0.space == space && $0.key == Array("q".utf8) })
        XCTAssertEqual(p.flags & 0x40, 0x40)
        XCTAssertEqual(q.flags & 0x40, 0)
        XCTAssertEqual(p.value, q.value, "the flag is the only difference")
    }
}
