import Foundation
import LogStore
import XCTest

/// `ustore export` / `ustore import` round trips, `ustore rekey`, and the progress line.
final class ExportImportTests: UstoreTestCase {
    static let keyHex = String(repeating: "11", count: 32)
    static let otherKeyHex = String(repeating: "22", count: 32)

    /// A store with keys and values of every kind: spaces, binary bytes, an expiring value, an
    /// already expired one, a deleted one, a DAO table (a named space).
    func makeVariedStore(key: [String] = []) throws -> URL {
        let store = try makeStorePath()
        try ustoreOK(["put", store.path, "plain", "hello"] + key)
        try ustoreOK(["put", store.path, "binary", "-"] + key, stdin: [0, 255, 10, 13, 0x80, 0xC3])
        try ustoreOK(["put", store.path, "other", "in space 7", "--space", "7"] + key)
        try ustoreOK(["put", store.path, "soon", "expires in an hour", "--expires-in", "3600"] + key)
        try ustoreOK(["put", store.path, "gone", "expired", "--expires-in", "0.001"] + key)
        try ustoreOK(["put", store.path, "deleted", "x"] + key)
        try ustoreOK(["delete", store.path, "deleted"] + key)
        try ustoreOK(["sql", store.path, "CREATE TABLE t(id INTEGER PRIMARY KEY, name TEXT)"] + key)
        try ustoreOK(["sql", store.path, "INSERT INTO t(name) VALUES ('ann'), (NULL)"] + key)
        return store
    }

    func records(_ exported: String) throws -> [[String: Any]] {
        try exported.split(separator: "\n").dropFirst().map { try parseObject(String($0)) }
    }

    func testRoundTripKeepsKeysValuesSpacesExpiryAndTables() throws {
        let store = try makeVariedStore()
        // A purgeable value (the cache cleaner's mark), written through the library.
        let logStore = try LogStore(directory: store)
        try logStore.put(Array("cached".utf8), forKey: Array("purge me".utf8), crypt: nil, purgeable: true)
        try logStore.close()
        let exported = try ustoreOK(["export", store.path]).stdoutText
        XCTAssertEqual(exported.split(separator: "\n").first, #"{"format":"ustore-export","version":1}"#)
        let lines = try records(exported)
        let keys = lines.compactMap { $0["key_base64"] as? String }.compactMap { Data(base64Encoded: $0) }.map { String(decoding: $0, as: UTF8.self) }
        XCTAssertFalse(keys.contains("gone"), "expired values are not exported")
        XCTAssertFalse(keys.contains("deleted"))
        let soon = try XCTUnwrap(lines.first { ($0["key_base64"] as? String) == Data("soon".utf8).base64EncodedString() })
        let expiresAt = try XCTUnwrap(soon["expiresAt"] as? Int)
        XCTAssertEqual(Double(expiresAt) / 1000, Date().timeIntervalSince1970 + 3600, accuracy: 120)
        XCTAssertTrue(lines.contains { $0["spaceName"] as? String == "dao.table.t" })

        let copy = try makeStorePath("copy")
        let imported = try parseObject(try ustoreOK(["import", copy.path], stdin: Array(exported.utf8)).stdoutText)
        XCTAssertEqual(imported["imported"] as? Int, lines.count)
        XCTAssertEqual(try ustoreOK(["get", copy.path, "plain"]).stdoutText, "hello")
        XCTAssertEqual(try ustoreOK(["get", copy.path, "binary"]).stdout, [0, 255, 10, 13, 0x80, 0xC3])
        XCTAssertEqual(try ustoreOK(["get", copy.path, "other", "--space", "7"]).stdoutText, "in space 7")
        XCTAssertEqual(try ustoreOK(["get", copy.path, "soon"]).stdoutText, "expires in an hour")
        XCTAssertEqual(try ustore(["get", copy.path, "gone"]).status, 1)
        XCTAssertEqual(try ustoreOK(["sql", copy.path, "SELECT id, name FROM t ORDER BY id"]).stdoutText,
                       #"{"ok":true,"rows":[[1,"ann"],[2,null]]}"# + "\n")
        let purgeable = try ustoreOK(["dump", copy.path]).lines.map { try parseObject($0) }.filter { $0["key"] as? String == "purge me" }
        XCTAssertEqual(purgeable.map { ($0["flags"] as? Int ?? 0) & 0x40 }, [0x40], "the purgeable flag is kept")
        // The copy exports to the same lines (expiry included).
        XCTAssertEqual(try ustoreOK(["export", copy.path]).stdoutText, exported)
    }

    /// A record damaged after the store was closed (its index snapshot still points at it):
    /// export fails naming its space instead of leaving the key out, and with
    /// `--skip-undecodable` leaves it out and says so.
    func testADamagedRecordFailsTheExportInsteadOfVanishing() throws {
        let store = try makeStorePath()
        let logStore = try LogStore(directory: store)
        for i in 0 ..< 20 { try logStore.put(Array("value-\(i)-\(String(repeating: "v", count: 40))".utf8), forKey: Array("key-\(i)".utf8)) }
        try logStore.close()   // writes the index snapshot
        let segment = try XCTUnwrap(FileManager.default.contentsOfDirectory(atPath: store.path).first { $0.hasSuffix(".seg") })
        let url = store.appendingPathComponent(segment)
        var bytes = [UInt8](try Data(contentsOf: url))
        let needle = Array("value-7-".utf8)
        let at = try XCTUnwrap((0 ... bytes.count - needle.count).first { Array(bytes[$0 ..< $0 + needle.count]) == needle })
        bytes[at + 3] ^= 0x20
        try Data(bytes).write(to: url)

        let failed = try ustore(["export", store.path])
        XCTAssertNotEqual(failed.status, 0, "an export that silently lost key-7")
        XCTAssertTrue(failed.stderr.contains("cannot be read"), failed.stderr)
        let skipped = try ustoreOK(["export", store.path, "--skip-undecodable"])
        let keys = try records(skipped.stdoutText).compactMap { $0["key_base64"] as? String }
            .compactMap { Data(base64Encoded: $0) }.map { String(decoding: $0, as: UTF8.self) }
        XCTAssertEqual(Set(keys), Set((0 ..< 20).filter { $0 != 7 }.map { "key-\($0)" }))
        XCTAssertTrue(skipped.stderr.contains("left out"), skipped.stderr)
    }

    func testEncryptedStoreMovesToAnotherKeyAndNeedsItsKeyToExport() throws {
        let store = try makeVariedStore(key: ["--key-hex", Self.keyHex])
        let keyless = try ustore(["export", store.path])
        XCTAssertEqual(keyless.status, 2, "encrypted values cannot be exported without the key")
        XCTAssertTrue(keyless.stderr.contains("--skip-undecodable"), keyless.stderr)
        XCTAssertTrue(keyless.stdout.isEmpty)
        let skipped = try ustoreOK(["export", store.path, "--skip-undecodable"])
        XCTAssertTrue(skipped.stderr.contains("left out"), skipped.stderr)

        let exportFile = store.deletingLastPathComponent().appendingPathComponent("export.jsonl")
        try ustoreOK(["export", store.path, "--key-hex", Self.keyHex, "--output", exportFile.path])
        let copy = try makeStorePath("copy")
        try ustoreOK(["import", copy.path, "--input", exportFile.path, "--key-hex", Self.otherKeyHex])
        XCTAssertEqual(try ustoreOK(["get", copy.path, "binary", "--key-hex", Self.otherKeyHex]).stdout, [0, 255, 10, 13, 0x80, 0xC3])
        XCTAssertEqual(try ustoreOK(["sql", copy.path, "SELECT name FROM t WHERE id = 1", "--key-hex", Self.otherKeyHex]).stdoutText,
                       #"{"ok":true,"rows":[["ann"]]}"# + "\n")
        // Imported values were encrypted with the new store's key: the old key does not read them.
        XCTAssertEqual(try ustore(["get", copy.path, "plain", "--key-hex", Self.keyHex]).status, 2)
        XCTAssertNil(try segmentFiles(in: copy).flatMap { [UInt8](try Data(contentsOf: $0)) }.firstRange(of: Array("expires in an hour".utf8)))
    }

    func testMalformedImportWritesNothingAndNamesTheLine() throws {
        let store = try makeStorePath()
        try ustoreOK(["put", store.path, "kept", "as it was"])
        let good = #"{"space":0,"key_base64":"YQ==","value_base64":"Yg=="}"#
        for (input, message) in [
            ("not json\n", "export line 1"),
            (#"{"format":"ustore-export","version":9}"# + "\n", "version 9"),
            (#"{"format":"ustore-export","version":1}"# + "\n" + good + "\n" + #"{"space":0,"key_base64":"%%","value_base64":""}"#, "export line 3"),
            (#"{"format":"ustore-export","version":1}"# + "\n" + #"{"space":2147483650,"key_base64":"YQ==","value_base64":""}"#, "spaceName"),
        ] {
            let run = try ustore(["import", store.path], stdin: Array(input.utf8))
            XCTAssertEqual(run.status, 2, input)
            XCTAssertTrue(run.stderr.contains(message), "\(input): \(run.stderr)")
        }
        XCTAssertEqual(try parseJSON(try ustoreOK(["keys", store.path]).stdoutText) as? [String], ["kept"], "nothing was written")
    }

    func testRekeyChangesTheKeyAndRetiresTheOldOne() throws {
        let store = try makeVariedStore(key: ["--key-hex", Self.keyHex])
        try ustoreOK(["rekey", store.path, "--key-hex", Self.keyHex, "--new-key-hex", Self.otherKeyHex])
        XCTAssertEqual(try ustoreOK(["get", store.path, "plain", "--key-hex", Self.otherKeyHex, "--key-id", "2"]).stdoutText, "hello")
        XCTAssertEqual(try ustoreOK(["sql", store.path, "SELECT count(*) FROM t", "--key-hex", Self.otherKeyHex, "--key-id", "2"]).stdoutText,
                       #"{"ok":true,"rows":[[2]]}"# + "\n")
        let old = try ustore(["get", store.path, "plain", "--key-hex", Self.keyHex])
        XCTAssertEqual(old.status, 2)
        XCTAssertTrue(old.stderr.contains("key id 1"), old.stderr)
        XCTAssertEqual(try ustore(["rekey", store.path, "--new-key-hex", Self.keyHex]).status, 64, "the current key is required")
    }

    func testProgressLineOnlyWhenStderrIsATerminal() throws {
        let store = try makeVariedStore(key: ["--key-hex", Self.keyHex])
        // stderr is a file: nothing but the result.
        let quiet = try ustoreOK(["rekey", store.path, "--key-hex", Self.keyHex, "--new-key-hex", Self.otherKeyHex])
        XCTAssertEqual(quiet.stderr, "")
        // On a terminal, the rekey shows its progress and erases it at the end.
        let binary = try XCTUnwrap(UstoreBinary.url)
        let terminal = try PseudoTerminal(binary: binary, arguments: [
            "rekey", store.path, "--key-hex", Self.otherKeyHex, "--key-id", "2", "--new-key-hex", Self.keyHex, "--new-key-id", "3"])
        terminal.expect("rekey 100%")
        terminal.expect("\r\u{1B}[K")
        terminal.expect("\"liveKeys\"")
        XCTAssertEqual(terminal.waitForExit(), 0)
    }
}
