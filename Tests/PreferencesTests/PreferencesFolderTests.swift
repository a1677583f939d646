import Foundation
import LogStore
@testable import Preferences
import XCTest

/// Where the DataCenter keeps its preferences: the source's default storage is the sandbox's
/// `Documents/Preferences` (seed 000, 4.2; functions/custom_storage/summary.md), so here it is
/// `<root>/Documents/Preferences` (FORMAT.md, "Folders, exactly"), and a root written by DataCenter
/// layout 1 (`<root>/Preferences`) is moved there on open.
final class PreferencesFolderTests: XCTestCase {
    private var folders: [URL] = []

    override func tearDown() {
        for folder in folders { try? FileManager.default.removeItem(at: folder) }
    }

    private func makeRoot() -> URL {
        let root = makeTemporaryFolder(name)
        folders.append(root)
        return root
    }

    func testPreferencesLiveInDocumentsPreferences() throws {
        DataCenter.loggingEnabled = false
        let root = makeRoot()
        let center = try DataCenter(root: root, appKey: "key", appVersion: "1")
        try center.commonPreferences.set(7, forKey: "k", business: "b")
        try center.setCurrentUserId("u1")
        try center.userPreferences?.set(8, forKey: "k", business: "b")
        let expected = root.appendingPathComponent("Documents/Preferences", isDirectory: true)
        XCTAssertEqual(center.preferencesRootPath.standardizedFileURL, expected.standardizedFileURL)
        let names = try FileManager.default.contentsOfDirectory(atPath: expected.path).sorted()
        XCTAssertEqual(names, ["common", "user-08c47b07b56747f3"])
        XCTAssertFalse(FileManager.default.fileExists(atPath: root.appendingPathComponent("Preferences").path))
    }

    func testLayoutOneRootIsMovedIntoDocumentsOnOpen() throws {
        DataCenter.loggingEnabled = false
        let root = makeRoot()
        // A layout 1 root: the same stores, at <root>/Preferences.
        do {
            let center = try DataCenter(root: root, appKey: "key", appVersion: "1")
            try center.commonPreferences.set(41, forKey: "answer", business: "b")
            try center.setCurrentUserId("u1")
            try center.userPreferences?.setString("ann", forKey: "name", business: "b")
            try center.setCurrentUserId(nil)
            try center.commonPreferences.sync()
            center.retire()
        }
        let current = root.appendingPathComponent("Documents/Preferences")
        try FileManager.default.moveItem(at: current, to: root.appendingPathComponent("Preferences"))

        let reopened = try DataCenter(root: root, appKey: "key", appVersion: "1")
        XCTAssertEqual(reopened.commonPreferences.integer(forKey: "answer", business: "b"), 41)
        XCTAssertEqual(try reopened.preferences(forUser: "u1").string(forKey: "name", business: "b"), "ann")
        XCTAssertFalse(FileManager.default.fileExists(atPath: root.appendingPathComponent("Preferences").path))
        XCTAssertTrue(FileManager.default.fileExists(atPath: current.appendingPathComponent("common").path))
    }

    func testCustomStorageNamedPreferencesIsRefusedWhileTheDataCenterOwnsIt() throws {
        DataCenter.loggingEnabled = false
        let root = makeRoot()
        try DataCenter.configure(root: root, appKey: "key", appVersion: "1")
        _ = DataCenter.default.commonPreferences.integer(forKey: "k", business: "b")
        XCTAssertThrowsError(try CustomStorage.named("Preferences")) { error in
            guard case StoreError.alreadyOpen = error else { return XCTFail("\(error)") }
        }
        XCTAssertNoThrow(try CustomStorage.named("Contact"))
    }
}
