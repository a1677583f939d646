import Foundation
import XCTest
@testable import Preferences
import LogStore

/// API.md "Behaviour decisions": numeric kinds convert among themselves, strings and numbers do
/// not, getters never throw, typed reads throw.
final class MismatchMatrixTests: PreferencesTestCase {
    override func setUpWithError() throws {
        try super.setUpWithError()
        try prefs.set(3, forKey: "int", business: "m")
        try prefs.set(Int64(1) << 40, forKey: "int64", business: "m")
        try prefs.set(true, forKey: "bool", business: "m")
        try prefs.set(2.75, forKey: "double", business: "m")
        try prefs.set(-2.75, forKey: "negative", business: "m")
        try prefs.set(1e300, forKey: "huge", business: "m")
        try prefs.set(Double.nan, forKey: "nan", business: "m")
        try prefs.setString("12", forKey: "string", business: "m")
        try prefs.setObject(8, forKey: "plistNumber", business: "m")
        try prefs.setObject("text", forKey: "plistString", business: "m")
        try prefs.setObject([1], forKey: "plistArray", business: "m")
        try prefs.saveJSON(5, forKey: "json", business: "m")
        try prefs.archiveObject(Point(x: 1, y: 2), forKey: "archive", business: "m")
    }

    func testNumericGettersConvertAmongNumericKinds() {
        XCTAssertEqual(prefs.integer(forKey: "int", business: "m"), 3)
        XCTAssertEqual(prefs.int64(forKey: "int", business: "m"), 3)
        XCTAssertEqual(prefs.double(forKey: "int", business: "m"), 3)
        XCTAssertTrue(prefs.bool(forKey: "int", business: "m"))

        XCTAssertEqual(prefs.integer(forKey: "int64", business: "m"), 1 << 40)
        XCTAssertEqual(prefs.double(forKey: "int64", business: "m"), 1_099_511_627_776)

        XCTAssertEqual(prefs.integer(forKey: "bool", business: "m"), 1)
        XCTAssertEqual(prefs.int64(forKey: "bool", business: "m"), 1)
        XCTAssertEqual(prefs.double(forKey: "bool", business: "m"), 1)

        XCTAssertEqual(prefs.integer(forKey: "double", business: "m"), 2, "truncated toward zero")
        XCTAssertEqual(prefs.integer(forKey: "negative", business: "m"), -2)
        XCTAssertEqual(prefs.int64(forKey: "double", business: "m"), 2)
        XCTAssertTrue(prefs.bool(forKey: "double", business: "m"))
        XCTAssertEqual(prefs.integer(forKey: "huge", business: "m", default: 77), 77, "out of range gives the default")
        XCTAssertEqual(prefs.int64(forKey: "nan", business: "m", default: 78), 78)

        XCTAssertEqual(prefs.integer(forKey: "plistNumber", business: "m"), 8)
        XCTAssertEqual(prefs.double(forKey: "plistNumber", business: "m"), 8)
    }

    func testStringsAndNumbersDoNotMix() {
        XCTAssertEqual(prefs.integer(forKey: "string", business: "m", default: -1), -1)
        XCTAssertEqual(prefs.int64(forKey: "string", business: "m", default: -1), -1)
        XCTAssertEqual(prefs.double(forKey: "string", business: "m", default: -1), -1)
        XCTAssertFalse(prefs.bool(forKey: "string", business: "m"))
        XCTAssertTrue(prefs.bool(forKey: "string", business: "m", default: true))
        XCTAssertEqual(prefs.integer(forKey: "plistString", business: "m", default: -1), -1)
        for key in ["int", "int64", "bool", "double", "plistNumber", "plistArray", "json", "archive"] {
            XCTAssertNil(prefs.string(forKey: key, business: "m"), key)
        }
        XCTAssertEqual(prefs.string(forKey: "plistString", business: "m"), "text")
        for key in ["plistArray", "json", "archive"] {
            XCTAssertEqual(prefs.integer(forKey: key, business: "m", default: -5), -5, key)
        }
    }

    func testTypedObjectConvertsOrThrows() throws {
        XCTAssertEqual(try prefs.object(Int.self, forKey: "int", business: "m"), 3)
        XCTAssertEqual(try prefs.object(Double.self, forKey: "int", business: "m"), 3)
        XCTAssertEqual(try prefs.object(Int64.self, forKey: "bool", business: "m"), 1)
        XCTAssertEqual(try prefs.object(Bool.self, forKey: "double", business: "m"), true)
        XCTAssertEqual(try prefs.object(String.self, forKey: "string", business: "m"), "12")
        XCTAssertEqual(try prefs.object(String.self, forKey: "plistString", business: "m"), "text")
        XCTAssertEqual(try prefs.object([Int].self, forKey: "plistArray", business: "m"), [1])
        XCTAssertEqual(try prefs.object(Int.self, forKey: "json", business: "m"), 5)

        assertMismatch(try prefs.object(Int.self, forKey: "string", business: "m"), stored: "string")
        assertMismatch(try prefs.object(String.self, forKey: "int", business: "m"), stored: "int")
        assertMismatch(try prefs.object(Profile.self, forKey: "double", business: "m"), stored: "double")
        assertMismatch(try prefs.object(Profile.self, forKey: "archive", business: "m"), stored: "archive")
        assertDecodingFailed(try prefs.object(Profile.self, forKey: "plistArray", business: "m"))
        assertDecodingFailed(try prefs.object(Profile.self, forKey: "json", business: "m"))
        assertDecodingFailed(try prefs.object([String].self, forKey: "plistArray", business: "m"))
    }

    func testUnknownTagIsUndecodable() throws {
        let store = try prefs.store()
        let space = try prefs.writableSpace("m")
        try store.put([0xEE, 1, 2], forKey: Array("weird".utf8), space: space, crypt: .plain)
        XCTAssertEqual(prefs.integer(forKey: "weird", business: "m", default: 4), 4)
        XCTAssertNil(prefs.object(forKey: "weird", business: "m"))
        XCTAssertNil(prefs.string(forKey: "weird", business: "m"))
        assertDecodingFailed(try prefs.object(Int.self, forKey: "weird", business: "m"))
        try store.put([ValueTag.int.rawValue, 1], forKey: Array("short".utf8), space: space, crypt: .plain)
        XCTAssertEqual(prefs.integer(forKey: "short", business: "m", default: 4), 4)
        assertDecodingFailed(try prefs.object(Int.self, forKey: "short", business: "m"))
    }

    func testValueEncodingTagBytes() throws {
        let store = try prefs.store()
        let space = try prefs.writableSpace("m")
        func raw(_ key: String) throws -> [UInt8] { try XCTUnwrap(store.get(forKey: Array(key.utf8), space: space)) }
        XCTAssertEqual(try raw("int"), [0x01, 3, 0, 0, 0, 0, 0, 0, 0])
        XCTAssertEqual(try raw("int64"), [0x02, 0, 0, 0, 0, 0, 0x01, 0, 0])
        XCTAssertEqual(try raw("bool"), [0x03, 0x01])
        XCTAssertEqual(try raw("double"), [0x04] + withUnsafeBytes(of: (2.75).bitPattern.littleEndian, Array.init))
        XCTAssertEqual(try raw("string"), [0x05, 0x31, 0x32])
        XCTAssertEqual(try raw("plistNumber").first, 0x06)
        XCTAssertEqual(Array(try raw("plistNumber").dropFirst().prefix(8)), Array("bplist00".utf8))
        XCTAssertEqual(try raw("archive").first, 0x07)
        try prefs.archive(Profile(name: "a", age: 1, tags: []), forKey: "codable", business: "m")
        XCTAssertEqual(try raw("codable").first, 0x08)
        XCTAssertEqual(try raw("json"), [0x09, 0x35])
        XCTAssertEqual(SharedPreferences.spaceName("m"), "prefs:m")
        XCTAssertNotNil(try store.namedSpaces()["prefs:m"])
    }

    private func assertMismatch<T>(_ expression: @autoclosure () throws -> T, stored: String, file: StaticString = #filePath, line: UInt = #line) {
        XCTAssertThrowsError(try expression(), file: file, line: line) { error in
            guard case PreferencesError.typeMismatch(_, let kind) = error else { return XCTFail("\(error)", file: file, line: line) }
            XCTAssertEqual(kind, stored, file: file, line: line)
        }
    }

    private func assertDecodingFailed<T>(_ expression: @autoclosure () throws -> T, file: StaticString = #filePath, line: UInt = #line) {
        XCTAssertThrowsError(try expression(), file: file, line: line) { error in
            guard case PreferencesError.decodingFailed = error else { return XCTFail("\(error)", file: file, line: line) }
        }
    }
}
