import Foundation
import XCTest
@testable import Preferences
import LogStore

final class DataCenterTests: PreferencesTestCase {
    func testResetWipesTheRootAndClosesEveryEarlierHandle() throws {
        try center.setCurrentUserId("u1")
        let common = center.commonPreferences
        let user = try XCTUnwrap(center.userPreferences)
        let business = center.accessor(forBusiness: "b").commonPreferences
        let version = center.currentVersionStorage
        let custom = try CustomStorage.named("Contacts")
        let customPrefs = custom.commonPreferences
        try common.set(1, forKey: "k", business: "b")
        try user.set(1, forKey: "k", business: "b")
        try customPrefs.set(1, forKey: "k")
        try version.commonPreferences.set(1, forKey: "k")

        try center.reset()

        for (name, write) in [("common", { try common.set(2, forKey: "k", business: "b") }),
                              ("user", { try user.set(2, forKey: "k", business: "b") }),
                              ("business", { try business.set(2, forKey: "k") }),
                              ("custom", { try customPrefs.set(2, forKey: "k") }),
                              ("version", { try version.commonPreferences.set(2, forKey: "k") })] as [(String, () throws -> Void)] {
            XCTAssertThrowsError(try write(), name) { error in
                guard case StoreError.closed = error else { return XCTFail("\(name): \(error)") }
            }
        }
        XCTAssertEqual(common.integer(forKey: "k", business: "b", default: -1), -1, "getters of closed handles give defaults")
        // It works again, empty.
        XCTAssertEqual(center.commonPreferences.integer(forKey: "k", business: "b", default: -1), -1)
        try center.commonPreferences.set(3, forKey: "k", business: "b")
        XCTAssertEqual(center.commonPreferences.integer(forKey: "k", business: "b"), 3)
        XCTAssertEqual(center.currentUserId, "u1")
        XCTAssertEqual(try XCTUnwrap(center.userPreferences).integer(forKey: "k", business: "b", default: -1), -1)
        XCTAssertEqual(center.currentVersionStorage.commonPreferences.integer(forKey: "k", default: -1), -1)
        let reopened = try CustomStorage.named("Contacts")
        XCTAssertEqual(reopened.commonPreferences.integer(forKey: "k", default: -1), -1)
        XCTAssertFalse(reopened.commonPreferences.contains("k"))
    }

    func testCurrentVersionStorageIsWipedWhenTheVersionChanges() throws {
        try center.currentVersionStorage.commonPreferences.set(1, forKey: "k")
        try center.commonPreferences.set(1, forKey: "k", business: "b")
        // Same version: kept.
        try DataCenter.configure(root: root, appKey: "test-app-key", appVersion: "1.0")
        XCTAssertEqual(DataCenter.default.currentVersionStorage.commonPreferences.integer(forKey: "k"), 1)
        // Upgrade: wiped; common preferences kept.
        try DataCenter.configure(root: root, appKey: "test-app-key", appVersion: "2.0")
        XCTAssertEqual(DataCenter.default.currentVersionStorage.commonPreferences.integer(forKey: "k", default: -1), -1)
        XCTAssertEqual(DataCenter.default.commonPreferences.integer(forKey: "k", business: "b"), 1)
        try DataCenter.default.currentVersionStorage.commonPreferences.set(2, forKey: "k")
        // Downgrade: wiped too.
        try DataCenter.configure(root: root, appKey: "test-app-key", appVersion: "1.5")
        XCTAssertEqual(DataCenter.default.currentVersionStorage.commonPreferences.integer(forKey: "k", default: -1), -1)
    }

    func testAlreadyOpenRoot() throws {
        XCTAssertThrowsError(try DataCenter(root: root, appKey: "test-app-key", appVersion: "1.0")) { error in
            guard case StoreError.alreadyOpen = error else { return XCTFail("\(error)") }
        }
    }

    func testLoggingSwitch() {
        DataCenter.loggingEnabled = true
        XCTAssertTrue(DataCenter.loggingEnabled)
        DataCenter.loggingEnabled = false
        XCTAssertFalse(DataCenter.loggingEnabled)
    }

    func testPreferencesForUserWithoutSwitching() throws {
        let other = try center.preferences(forUser: "bob")
        try other.set(5, forKey: "k", business: "b")
        XCTAssertNil(center.userPreferences)
        try center.setCurrentUserId("bob")
        XCTAssertTrue(center.userPreferences === other)
        XCTAssertEqual(center.userPreferences?.integer(forKey: "k", business: "b"), 5)
    }
}

final class DataCenterConfigureTests: PreferencesTestCase {
    func testConfigureRetiresThePreviousDefault() throws {
        let old = center!
        let oldPrefs = old.commonPreferences
        try oldPrefs.set(1, forKey: "k", business: "b")
        try DataCenter.configure(root: root, appKey: "test-app-key", appVersion: "1.0")
        XCTAssertFalse(DataCenter.default === old)
        XCTAssertThrowsError(try oldPrefs.set(2, forKey: "k", business: "b"))
        XCTAssertThrowsError(try old.commonPreferences.set(2, forKey: "k", business: "b"), "a retired DataCenter does not reopen")
        XCTAssertThrowsError(try old.reset())
        XCTAssertEqual(DataCenter.default.commonPreferences.integer(forKey: "k", business: "b"), 1)
    }
}
