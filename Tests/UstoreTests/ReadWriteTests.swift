import Foundation
import LogStore
import XCTest

/// `put`, `get`, `delete` and `keys`.
final class ReadWriteTests: UstoreTestCase {
    func testBinaryValueFromStdinRoundTripsExactly() throws {
        let store = try makeStorePath()
        // Every byte value, ending in a newline that must come back as is, and nothing added.
        let value = (0...255).map(UInt8.init) + [0x00, 0x0A]
        let put = try ustoreOK(["put", store.path, "blob", "-"], stdin: value)
        XCTAssertTrue(put.stdout.isEmpty)

        let get = try ustoreOK(["get", store.path, "blob"])
        XCTAssertEqual(get.stdout, value)
    }

    func testValueArgumentRoundTripsWithoutNewline() throws {
        let store = try makeStorePath()
        try ustoreOK(["put", store.path, "greeting", "héllo wörld"])
        XCTAssertEqual(try ustoreOK(["get", store.path, "greeting"]).stdout, Array("héllo wörld".utf8))
        // A later put replaces the value.
        try ustoreOK(["put", store.path, "greeting", "bye"])
        XCTAssertEqual(try ustoreOK(["get", store.path, "greeting"]).stdout, Array("bye".utf8))
    }

    func testGetOfAbsentKeyExitsOne() throws {
        let store = try makeStorePath()
        try ustoreOK(["put", store.path, "present", "1"])

        let missing = try ustore(["get", store.path, "absent"])
        XCTAssertEqual(missing.status, 1)
        XCTAssertTrue(missing.stdout.isEmpty)
        XCTAssertTrue(missing.stderr.contains("absent"), missing.stderr)

        // The same key in another space is a different key.
        XCTAssertEqual(try ustore(["get", store.path, "present", "--space", "4"]).status, 1)
    }

    func testSpacesAreSeparate() throws {
        let store = try makeStorePath()
        try ustoreOK(["put", store.path, "k", "zero"])
        try ustoreOK(["put", store.path, "k", "seven", "--space", "7"])
        XCTAssertEqual(try ustoreOK(["get", store.path, "k"]).stdoutText, "zero")
        XCTAssertEqual(try ustoreOK(["get", store.path, "k", "--space", "7"]).stdoutText, "seven")
    }

    func testDeleteRemovesTheKey() throws {
        let store = try makeStorePath()
        try ustoreOK(["put", store.path, "doomed", "x"])
        try ustoreOK(["put", store.path, "kept", "y"])
        try ustoreOK(["delete", store.path, "doomed"])

        XCTAssertEqual(try ustore(["get", store.path, "doomed"]).status, 1)
        XCTAssertEqual(try ustoreOK(["get", store.path, "kept"]).stdoutText, "y")
        XCTAssertEqual(try parseJSON(try ustoreOK(["keys", store.path]).stdoutText) as? [String], ["kept"])
        // Deleting an absent key is not an error.
        try ustoreOK(["delete", store.path, "never-there"])
    }

    func testKeysFiltersByPrefixAndSpace() throws {
        let store = try makeStorePath()
        for key in ["user:2", "item:1", "user:1", "user"] { try ustoreOK(["put", store.path, key, "v"]) }
        try ustoreOK(["put", store.path, "user:9", "v", "--space", "5"])

        XCTAssertEqual(try parseJSON(try ustoreOK(["keys", store.path, "--prefix", "user:"]).stdoutText) as? [String],
                       ["user:1", "user:2"])
        XCTAssertEqual(try parseJSON(try ustoreOK(["keys", store.path]).stdoutText) as? [String],
                       ["item:1", "user", "user:1", "user:2"])
        XCTAssertEqual(try parseJSON(try ustoreOK(["keys", store.path, "--space", "5"]).stdoutText) as? [String], ["user:9"])
        XCTAssertEqual(try parseJSON(try ustoreOK(["keys", store.path, "--prefix", "zzz"]).stdoutText) as? [String], [])
    }

    func testKeysEscapesQuotesAndControlCharacters() throws {
        let store = try makeStorePath()
        let awkward = "a\"b\\c\nd\te\u{01}f\u{7F}g€"
        try ustoreOK(["put", store.path, awkward, "v"])
        let run = try ustoreOK(["keys", store.path])
        XCTAssertEqual(run.lines.count, 1, "one JSON array on one line")
        XCTAssertEqual(try parseJSON(run.stdoutText) as? [String], [awkward])
        XCTAssertEqual(try ustoreOK(["get", store.path, awkward]).stdoutText, "v")
    }

    func testKeysShowsNonUTF8KeysAsBase64() throws {
        let store = try makeStorePath()
        let logStore = try LogStore(directory: store)
        try logStore.put([1], forKey: [0xFF, 0xFE, 0x41])
        try logStore.put([2], forKey: Array("plain".utf8))
        try logStore.close()

        let keys = try XCTUnwrap(try parseJSON(try ustoreOK(["keys", store.path]).stdoutText) as? [Any])
        XCTAssertEqual(keys.count, 2)
        XCTAssertEqual(keys.first as? String, "plain")
        XCTAssertEqual((keys.last as? [String: Any])?["base64"] as? String, "//5B")
    }

    func testExpiresInMakesTheValueExpire() throws {
        let store = try makeStorePath()
        try ustoreOK(["put", store.path, "brief", "soon gone", "--expires-in", "0.3"])
        try ustoreOK(["put", store.path, "lasting", "stays", "--expires-in", "3600"])
        Thread.sleep(forTimeInterval: 0.8)
        XCTAssertEqual(try ustore(["get", store.path, "brief"]).status, 1)
        XCTAssertEqual(try ustoreOK(["get", store.path, "lasting"]).stdoutText, "stays")

        let rejected = try ustore(["put", store.path, "k", "v", "--expires-in", "0"])
        XCTAssertEqual(rejected.status, 64, "a usage error")
        XCTAssertTrue(rejected.stderr.contains("expires-in"), rejected.stderr)
    }

    func testPutCreatesMissingDirectories() throws {
        let store = try makeStorePath().appendingPathComponent("nested/deeper", isDirectory: true)
        XCTAssertFalse(FileManager.default.fileExists(atPath: store.path))
        try ustoreOK(["put", store.path, "k", "v"])
        XCTAssertFalse(try segmentFiles(in: store).isEmpty)
        XCTAssertEqual(try ustoreOK(["get", store.path, "k"]).stdoutText, "v")
    }

    func testReadOnlyCommandsDoNotCreateAStore() throws {
        let store = try makeStorePath()
        for arguments in [["get", store.path, "k"], ["keys", store.path], ["stats", store.path], ["dump", store.path]] {
            let run = try ustore(arguments)
            XCTAssertEqual(run.status, 2, "\(arguments)")
            XCTAssertTrue(run.stderr.hasPrefix("ustore: "), run.stderr)
            XCTAssertEqual(run.stderr.split(separator: "\n").count, 1, "one-line message: \(run.stderr)")
        }
        XCTAssertFalse(FileManager.default.fileExists(atPath: store.path))
    }
}
