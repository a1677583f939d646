import Foundation
import XCTest
@testable import Preferences
import LogStore

struct Profile: Codable, Equatable {
    var name: String
    var age: Int
    var tags: [String]
}

final class Point: NSObject, NSCoding {
    let x: Int
    let y: Int
    init(x: Int, y: Int) { self.x = x; self.y = y }
    func encode(with coder: NSCoder) {
        coder.encode(x, forKey: "x")
        coder.encode(y, forKey: "y")
    }
    required init?(coder: NSCoder) {
        x = coder.decodeInteger(forKey: "x")
        y = coder.decodeInteger(forKey: "y")
    }
}

final class SharedPreferencesTests: PreferencesTestCase {
    /// After a failed fsync the store refuses writes until reopened; a removal that finds nothing
    /// to delete must be refused too (a put that threw may be on disk), while reads go on.
    func testRemovalsAreRefusedAfterAFailedSync() throws {
        try prefs.set(1, forKey: "k", business: "b")
        // Let the background syncer's round for that write finish first: its sync-mark file's
        // fdatasync (whose failure only leaves recovery an older mark) would otherwise take
        // the one injected fault instead of the segment's.
        try prefs.sync()
        FaultInjection.arm(failAt: 0, fault: .error(EIO), only: [.fdatasync])
        XCTAssertThrowsError(try prefs.sync())
        FaultInjection.disarm()
        XCTAssertThrowsError(try prefs.removeAll(business: "never-used"))
        XCTAssertThrowsError(try prefs.removeObjects(like: "nothing%", business: "b"))
        XCTAssertThrowsError(try prefs.set(2, forKey: "k", business: "b"))
        XCTAssertEqual(prefs.integer(forKey: "k", business: "b"), 1)
    }

    func testTypedScalarsRoundTripWithDefaults() throws {
        XCTAssertEqual(prefs.integer(forKey: "i", business: "b"), 0)
        XCTAssertEqual(prefs.integer(forKey: "i", business: "b", default: 7), 7)
        XCTAssertEqual(prefs.int64(forKey: "l", business: "b", default: -1), -1)
        XCTAssertTrue(prefs.bool(forKey: "f", business: "b", default: true))
        XCTAssertEqual(prefs.double(forKey: "d", business: "b", default: 2.5), 2.5)

        try prefs.set(42, forKey: "i", business: "b")
        try prefs.set(Int64.max, forKey: "l", business: "b")
        try prefs.set(true, forKey: "f", business: "b")
        try prefs.set(-3.25, forKey: "d", business: "b")
        XCTAssertEqual(prefs.integer(forKey: "i", business: "b", default: 7), 42)
        XCTAssertEqual(prefs.int64(forKey: "l", business: "b"), Int64.max)
        XCTAssertTrue(prefs.bool(forKey: "f", business: "b"))
        XCTAssertEqual(prefs.double(forKey: "d", business: "b"), -3.25)
        try prefs.set(Int.min, forKey: "i", business: "b")
        XCTAssertEqual(prefs.integer(forKey: "i", business: "b"), Int.min)
    }

    func testBusinessesAreSeparateNamespaces() throws {
        try prefs.set(1, forKey: "k", business: "a")
        try prefs.set(2, forKey: "k", business: "b")
        XCTAssertEqual(prefs.integer(forKey: "k", business: "a"), 1)
        XCTAssertEqual(prefs.integer(forKey: "k", business: "b"), 2)
        XCTAssertEqual(prefs.allKeys(business: "a"), ["k"])
        XCTAssertEqual(prefs.allKeys(business: "never"), [])
        try prefs.removeAll(business: "a")
        XCTAssertEqual(prefs.integer(forKey: "k", business: "b"), 2)
        XCTAssertFalse(prefs.contains("k", business: "a"))
    }

    func testStrings() throws {
        XCTAssertNil(prefs.string(forKey: "s", business: "b"))
        try prefs.setString("héllo 世界", forKey: "s", business: "b")
        XCTAssertEqual(prefs.string(forKey: "s", business: "b"), "héllo 世界")
        try prefs.setString("", forKey: "e", business: "b")
        XCTAssertEqual(prefs.string(forKey: "e", business: "b"), "")
        try prefs.setString(nil, forKey: "s", business: "b")
        XCTAssertNil(prefs.string(forKey: "s", business: "b"))
        XCTAssertFalse(prefs.contains("s", business: "b"))
    }

    func testPropertyListObjects() throws {
        let date = Date(timeIntervalSince1970: 1_700_000_000)
        let plist: [String: Any] = ["n": 1, "s": "x", "a": [1, 2, 3], "d": Data([1, 2]), "t": date, "nested": ["k": true]]
        try prefs.setObject(plist, forKey: "p", business: "b")
        let back = try XCTUnwrap(prefs.object(forKey: "p", business: "b") as? [String: Any])
        XCTAssertEqual(back["s"] as? String, "x")
        XCTAssertEqual((back["n"] as? NSNumber)?.intValue, 1)
        XCTAssertEqual((back["a"] as? [Any])?.count, 3)
        XCTAssertEqual(back["d"] as? Data, Data([1, 2]))
        XCTAssertEqual(back["t"] as? Date, date)
        XCTAssertEqual(((back["nested"] as? [String: Any])?["k"] as? NSNumber)?.boolValue, true)

        try prefs.setObject(["str"], forKey: "array", business: "b")
        XCTAssertEqual(prefs.object(forKey: "array", business: "b") as? [String], ["str"])
        XCTAssertThrowsError(try prefs.setObject(Point(x: 1, y: 2), forKey: "bad", business: "b")) { error in
            guard case PreferencesError.notPropertyList = error else { return XCTFail("\(error)") }
        }
        XCTAssertFalse(prefs.contains("bad", business: "b"))
        try prefs.setObject(nil, forKey: "array", business: "b")
        XCTAssertNil(prefs.object(forKey: "array", business: "b"))
        let none: String? = nil
        try prefs.setObject(["x"], forKey: "o", business: "b")
        try prefs.setObject(none, forKey: "o", business: "b")
        XCTAssertFalse(prefs.contains("o", business: "b"))
    }

    func testNSCodingArchive() throws {
        try prefs.archiveObject(Point(x: 3, y: 4), forKey: "pt", business: "b")
        let point = try XCTUnwrap(prefs.object(forKey: "pt", business: "b") as? Point)
        XCTAssertEqual(point.x, 3)
        XCTAssertEqual(point.y, 4)
        try prefs.archiveObject(nil as Point?, forKey: "pt", business: "b")
        XCTAssertFalse(prefs.contains("pt", business: "b"))
    }

    func testEncodableThroughPropertyListAndJSON() throws {
        let profile = Profile(name: "ann", age: 30, tags: ["a", "b"])
        try prefs.archive(profile, forKey: "plist", business: "b")
        try prefs.saveJSON(profile, forKey: "json", business: "b")
        XCTAssertEqual(try prefs.object(Profile.self, forKey: "plist", business: "b"), profile)
        XCTAssertEqual(try prefs.object(Profile.self, forKey: "json", business: "b"), profile)
        // Untyped: Foundation objects.
        let json = try XCTUnwrap(prefs.object(forKey: "json", business: "b") as? [String: Any])
        XCTAssertEqual(json["name"] as? String, "ann")
        let plist = try XCTUnwrap(prefs.object(forKey: "plist", business: "b") as? [String: Any])
        XCTAssertEqual(plist["tags"] as? [String], ["a", "b"])
        XCTAssertNil(try prefs.object(Profile.self, forKey: "absent", business: "b"))
        // A plist written by setObject decodes as Decodable too.
        try prefs.setObject(["name": "bo", "age": 2, "tags": [String]()] as [String: Any], forKey: "raw", business: "b")
        XCTAssertEqual(try prefs.object(Profile.self, forKey: "raw", business: "b"), Profile(name: "bo", age: 2, tags: []))
    }

    func testObjectForKeyReturnsScalarsAsSwiftValues() throws {
        try prefs.set(5, forKey: "i", business: "b")
        try prefs.set(Int64(6), forKey: "l", business: "b")
        try prefs.set(true, forKey: "f", business: "b")
        try prefs.set(1.5, forKey: "d", business: "b")
        try prefs.setString("s", forKey: "s", business: "b")
        XCTAssertEqual(prefs.object(forKey: "i", business: "b") as? Int, 5)
        XCTAssertEqual(prefs.object(forKey: "l", business: "b") as? Int64, 6)
        XCTAssertEqual(prefs.object(forKey: "f", business: "b") as? Bool, true)
        XCTAssertEqual(prefs.object(forKey: "d", business: "b") as? Double, 1.5)
        XCTAssertEqual(prefs.object(forKey: "s", business: "b") as? String, "s")
        XCTAssertNil(prefs.object(forKey: "none", business: "b"))
    }

    func testKeysDictionaryContainsRemove() throws {
        try prefs.set(1, forKey: "b", business: "x")
        try prefs.setString("v", forKey: "a", business: "x")
        try prefs.setString("secret", forKey: "c", business: "x", crypt: xorCrypt())
        XCTAssertEqual(prefs.allKeys(business: "x"), ["a", "b", "c"])
        let dictionary = prefs.dictionary(business: "x")
        XCTAssertEqual(dictionary.count, 2, "the custom-crypt value is left out")
        XCTAssertEqual(dictionary["a"] as? String, "v")
        XCTAssertEqual(dictionary["b"] as? Int, 1)
        XCTAssertTrue(prefs.contains("c", business: "x"))
        XCTAssertFalse(prefs.contains("z", business: "x"))
        try prefs.removeObject(forKey: "a", business: "x")
        try prefs.removeObject(forKey: "never-there", business: "x")
        try prefs.removeObject(forKey: "k", business: "never-written")
        XCTAssertEqual(prefs.allKeys(business: "x"), ["b", "c"])
        try prefs.sync()
    }

    func testRemoveObjectsLike() throws {
        for key in ["user.1", "user.22", "USER.3", "userX4", "other", "é.1", "É.2"] {
            try prefs.set(1, forKey: key, business: "b")
        }
        try prefs.removeObjects(like: "user._", business: "b")
        XCTAssertEqual(prefs.allKeys(business: "b").sorted(), ["other", "userX4", "user.22", "É.2", "é.1"].sorted())
        try prefs.removeObjects(like: "é%", business: "b")
        XCTAssertEqual(prefs.allKeys(business: "b").sorted(), ["other", "userX4", "user.22", "É.2"].sorted())
        try prefs.removeObjects(like: "%", business: "b")
        XCTAssertEqual(prefs.allKeys(business: "b"), [])
        try prefs.removeObjects(like: "%", business: "never-written")
    }

    func testChangesYieldSetAndRemovedKeys() async throws {
        let stream = prefs.changes(business: "b")
        let other = prefs.changes(business: "other")
        try prefs.set(1, forKey: "a", business: "b")
        try prefs.setString("x", forKey: "c", business: "b")
        try prefs.set(2, forKey: "z", business: "other")
        try prefs.removeObject(forKey: "a", business: "b")
        try prefs.set(1, forKey: "p1", business: "b")
        try prefs.set(1, forKey: "p2", business: "b")
        try prefs.removeAll(business: "b")
        let keys = await collect(stream, count: 8)
        XCTAssertEqual(keys, ["a", "c", "a", "p1", "p2", "c", "p1", "p2"])
        let otherKeys = await collect(other, count: 1)
        XCTAssertEqual(otherKeys, ["z"])
    }

    func testBusinessPreferencesForwardEveryCall() async throws {
        let accessor = center.accessor(forBusiness: "biz")
        let business = accessor.commonPreferences
        let stream = business.changes()
        try business.set(1, forKey: "i")
        try business.set(Int64(2), forKey: "l")
        try business.set(true, forKey: "f")
        try business.set(0.5, forKey: "d")
        try business.setString("s", forKey: "s")
        try business.setObject([1, 2], forKey: "p")
        try business.archiveObject(Point(x: 1, y: 1), forKey: "pt")
        try business.archive(Profile(name: "n", age: 1, tags: []), forKey: "c")
        try business.saveJSON(["k": 1], forKey: "j")
        XCTAssertEqual(business.integer(forKey: "i"), 1)
        XCTAssertEqual(business.int64(forKey: "l"), 2)
        XCTAssertTrue(business.bool(forKey: "f"))
        XCTAssertEqual(business.double(forKey: "d"), 0.5)
        XCTAssertEqual(business.string(forKey: "s"), "s")
        XCTAssertEqual(business.object(forKey: "p") as? [Int], [1, 2])
        XCTAssertEqual(try business.object(Profile.self, forKey: "c")?.name, "n")
        XCTAssertEqual(try business.object([String: Int].self, forKey: "j"), ["k": 1])
        XCTAssertEqual(business.allKeys().count, 9)
        XCTAssertEqual(business.dictionary().count, 9)
        XCTAssertTrue(business.contains("pt"))
        // The same data through the business-taking API.
        XCTAssertEqual(center.commonPreferences.integer(forKey: "i", business: "biz"), 1)
        try business.removeObject(forKey: "i")
        try business.removeObjects(like: "_")
        XCTAssertEqual(business.allKeys(), ["pt"])
        try business.removeAll()
        XCTAssertEqual(business.allKeys(), [])
        try business.sync()
        let keys = await collect(stream, count: 9)
        XCTAssertEqual(keys, ["i", "l", "f", "d", "s", "p", "pt", "c", "j"])
    }

    func testPreferencesPersistAcrossReopen() throws {
        try prefs.set(9, forKey: "k", business: "b")
        try prefs.setString("v", forKey: "s", business: "b", crypt: .default)
        try DataCenter.configure(root: root, appKey: "test-app-key", appVersion: "1.0")
        let reopened = DataCenter.default.commonPreferences
        XCTAssertEqual(reopened.integer(forKey: "k", business: "b"), 9)
        XCTAssertEqual(reopened.string(forKey: "s", business: "b"), "v")
    }
}
