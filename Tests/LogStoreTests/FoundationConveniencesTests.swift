import Foundation
@testable import LogStore
import XCTest

/// `Data` and `String` forms of put/get/delete/keys: the same keys and values as the byte calls.
final class FoundationConveniencesTests: StoreTestCase {
    func testStringAndDataCallsNameTheSameKeysAsTheByteCalls() throws {
        let directory = temporary.make("foundation")
        let store = try LogStore(directory: directory, options: options())
        try store.put("grüße", forKey: "greeting")
        try store.put(Data([0, 0xFF, 0x80]), forKey: "blob", space: 3)
        try store.put(Data("by bytes".utf8), forKey: Array("k".utf8))
        XCTAssertEqual(try store.get(forKey: Array("greeting".utf8)), Array("grüße".utf8))
        XCTAssertEqual(try store.string(forKey: "greeting"), "grüße")
        XCTAssertEqual(try store.data(forKey: "blob", space: 3), Data([0, 0xFF, 0x80]))
        XCTAssertNil(try store.data(forKey: "blob"), "another space")
        XCTAssertEqual(try store.data(forKey: Array("k".utf8)), Data("by bytes".utf8))
        XCTAssertEqual(try store.string(forKey: "k"), "by bytes")
        // Invalid UTF-8 reads with replacement characters.
        XCTAssertEqual(try store.string(forKey: "blob", space: 3), "\u{0}\u{FFFD}\u{FFFD}")

        try store.put(Array("x".utf8), forKey: [0xFF, 0xFE])
        XCTAssertEqual(try store.stringKeys(), ["greeting", "k"], "a key that is not UTF-8 is left out")
        XCTAssertEqual(try store.stringKeys(prefix: "gr"), ["greeting"])
        XCTAssertEqual(try store.keys(space: 0).count, 3)

        try store.delete(forKey: "greeting")
        XCTAssertNil(try store.string(forKey: "greeting"))
        try store.put("soon gone", forKey: "ttl", expiresAt: Date().addingTimeInterval(-1))
        XCTAssertNil(try store.string(forKey: "ttl"), "expired")
        try store.close()

        let reopened = try LogStore(directory: directory, options: options())
        XCTAssertEqual(try reopened.data(forKey: "blob", space: 3), Data([0, 0xFF, 0x80]))
        try reopened.close()
        XCTAssertThrowsError(try reopened.string(forKey: "k")) { error in
            guard case StoreError.closed = error else { return XCTFail("\(error)") }
        }
    }
}
