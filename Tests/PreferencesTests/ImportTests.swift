import Foundation
import XCTest
@testable import Preferences
import LogStore

final class ImportTests: PreferencesTestCase {
    func testImportUserDefaultsSuite() throws {
        let suite = "prefs-tests-\(UUID().uuidString)"
        let defaults = try XCTUnwrap(UserDefaults(suiteName: suite))
        defer { defaults.removePersistentDomain(forName: suite) }
        defaults.set(5, forKey: "int")
        defaults.set(true, forKey: "flag")
        defaults.set(2.5, forKey: "double")
        defaults.set("text", forKey: "string")
        defaults.set([1, 2], forKey: "array")
        defaults.set(["k": "v"], forKey: "dict")
        let result = try center.importUserDefaults(suiteName: suite, into: "imported")
        XCTAssertEqual(result.imported, ["array", "dict", "double", "flag", "int", "string"])
        XCTAssertEqual(result.skipped, [])
        XCTAssertEqual(prefs.object(forKey: "int", business: "imported") as? Int, 5)
        XCTAssertEqual(prefs.object(forKey: "flag", business: "imported") as? Bool, true)
        XCTAssertEqual(prefs.double(forKey: "double", business: "imported"), 2.5)
        XCTAssertEqual(prefs.string(forKey: "string", business: "imported"), "text")
        XCTAssertEqual(prefs.object(forKey: "array", business: "imported") as? [Int], [1, 2])
        XCTAssertEqual(prefs.object(forKey: "dict", business: "imported") as? [String: String], ["k": "v"])
    }

    func testImportPropertyListFileIntoUserPreferences() throws {
        let file = root.appendingPathComponent("in.plist")
        let plist: [String: Any] = ["a": 1, "b": "x", "c": [true], "d": Date(timeIntervalSince1970: 0)]
        try PropertyListSerialization.data(fromPropertyList: plist, format: .xml, options: 0).write(to: file)
        XCTAssertThrowsError(try center.importPropertyList(at: file, into: "b", common: false)) { error in
            guard case StoreError.noCurrentUser = error else { return XCTFail("\(error)") }
        }
        try center.setCurrentUserId("u")
        let result = try center.importPropertyList(at: file, into: "b", common: false)
        XCTAssertEqual(result.imported, ["a", "b", "c", "d"])
        let user = try XCTUnwrap(center.userPreferences)
        XCTAssertEqual(user.integer(forKey: "a", business: "b"), 1)
        XCTAssertEqual(user.string(forKey: "b", business: "b"), "x")
        XCTAssertEqual(user.object(forKey: "d", business: "b") as? Date, Date(timeIntervalSince1970: 0))
        XCTAssertFalse(prefs.contains("a", business: "b"))
    }

    func testImportPropertyListErrors() throws {
        let notPlist = root.appendingPathComponent("bad.plist")
        try Data("not a plist".utf8).write(to: notPlist)
        XCTAssertThrowsError(try center.importPropertyList(at: notPlist, into: "b")) { error in
            guard case PreferencesError.notPropertyList = error else { return XCTFail("\(error)") }
        }
        let array = root.appendingPathComponent("array.plist")
        try PropertyListSerialization.data(fromPropertyList: [1], format: .binary, options: 0).write(to: array)
        XCTAssertThrowsError(try center.importPropertyList(at: array, into: "b"))
        XCTAssertThrowsError(try center.importPropertyList(at: root.appendingPathComponent("missing.plist"), into: "b")) { error in
            guard case StoreError.io = error else { return XCTFail("\(error)") }
        }
    }
}
