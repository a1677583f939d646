import Foundation
import XCTest
@testable import Preferences
import LogStore

final class CustomStorageTests: PreferencesTestCase {
    func testNamedStorageLivesUnderDocuments() throws {
        let storage = try CustomStorage.named("Contact")
        try storage.commonPreferences.setString("v", forKey: "k")
        XCTAssertEqual(storage.path, root.appendingPathComponent("Documents/Contact", isDirectory: true))
        XCTAssertTrue(FileManager.default.fileExists(atPath: storage.path.appendingPathComponent("common").path))
        XCTAssertTrue(try CustomStorage.named("Contact") === storage, "named returns the live storage")
        XCTAssertEqual(try CustomStorage.named("Contact").commonPreferences.string(forKey: "k"), "v")
        XCTAssertThrowsError(try CustomStorage.named("../escape"))
        XCTAssertThrowsError(try CustomStorage.named(""))
        // Separate from the DataCenter's own preferences.
        XCTAssertNil(center.commonPreferences.string(forKey: "k", business: "default"))
    }

    func testSecondLiveInstanceOnAPathIsAlreadyOpen() throws {
        let path = root.appendingPathComponent("custom", isDirectory: true)
        let first = try CustomStorage(path: path)
        XCTAssertThrowsError(try CustomStorage(path: path)) { error in
            guard case StoreError.alreadyOpen(let url) = error else { return XCTFail("\(error)") }
            XCTAssertEqual(url, path)
        }
        XCTAssertThrowsError(try CustomStorage(path: root.appendingPathComponent("x/../custom", isDirectory: true)))
        try first.commonPreferences.set(1, forKey: "k")
        let handle = first.commonPreferences
        try first.close()
        try first.close()
        XCTAssertThrowsError(try handle.set(2, forKey: "k")) { error in
            guard case StoreError.closed = error else { return XCTFail("\(error)") }
        }
        XCTAssertThrowsError(try first.commonPreferences.set(2, forKey: "k"))
        let second = try CustomStorage(path: path)
        XCTAssertEqual(second.commonPreferences.integer(forKey: "k"), 1)
    }

    func testReleasedInstanceFreesThePath() throws {
        let path = root.appendingPathComponent("released", isDirectory: true)
        do {
            let storage = try CustomStorage(path: path)
            try storage.commonPreferences.set(1, forKey: "k")
        }
        let again = try CustomStorage(path: path)
        XCTAssertEqual(again.commonPreferences.integer(forKey: "k"), 1)
    }

    func testResetEmptiesTheStorage() throws {
        let storage = try CustomStorage.named("R")
        let handle = storage.commonPreferences
        try handle.set(1, forKey: "k")
        try storage.reset()
        XCTAssertThrowsError(try handle.set(2, forKey: "k"))
        XCTAssertFalse(storage.commonPreferences.contains("k"))
        try storage.commonPreferences.set(3, forKey: "k")
        XCTAssertEqual(storage.commonPreferences.integer(forKey: "k"), 3)
        try storage.close()
        XCTAssertThrowsError(try storage.reset())
    }

    func testUserPreferencesFollowTheCurrentUser() throws {
        let storage = try CustomStorage.named("U")
        XCTAssertNil(storage.userPreferences)
        try center.setCurrentUserId("u1")
        let u1 = try XCTUnwrap(storage.userPreferences)
        try u1.set(1, forKey: "k")
        try center.setCurrentUserId("u2")
        let u2 = try XCTUnwrap(storage.userPreferences)
        XCTAssertEqual(u2.integer(forKey: "k", default: -1), -1)
        XCTAssertThrowsError(try u1.set(2, forKey: "k"), "the previous user's store closed on the switch")
        try center.setCurrentUserId("u1")
        XCTAssertEqual(storage.userPreferences?.integer(forKey: "k"), 1)
        try center.setCurrentUserId(nil)
        XCTAssertNil(storage.userPreferences)
    }

    func testEncryptionUsesTheDataCentersDefaultKey() throws {
        let storage = try CustomStorage.named("E")
        try storage.commonPreferences.setString("s", forKey: "k", crypt: .default)
        XCTAssertEqual(storage.commonPreferences.string(forKey: "k"), "s")
        try storage.commonPreferences.setString("c", forKey: "c", crypt: xorCrypt())
        XCTAssertNil(storage.commonPreferences.string(forKey: "c"))
        XCTAssertThrowsError(try storage.commonPreferences.object(String.self, forKey: "c"))
    }
}
