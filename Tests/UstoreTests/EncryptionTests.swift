import Foundation
import LogStore
import XCTest

/// `--key-hex`, `--key-id`, `--app-key`, `--compress-level`, `--compress-threshold`, and what
/// `dump` shows of encrypted and compressed records.
final class EncryptionTests: UstoreTestCase {
    /// FORMAT.md's example key: the bytes 0 to 31.
    static let keyHex = (0..<32).map { String(format: "%02x", $0) }.joined()
    static let otherKeyHex = String(repeating: "ab", count: 32)
    /// A value zstd shrinks a lot.
    static let compressible = Array(String(repeating: #"{"name":"ann","age":42}"#, count: 40).utf8)

    /// The bytes of every segment file of `store`, concatenated.
    func segmentBytes(_ store: URL) throws -> [UInt8] {
        try segmentFiles(in: store).flatMap { [UInt8](try Data(contentsOf: $0)) }
    }

    func dumpRecords(_ arguments: [String]) throws -> [[String: Any]] {
        try ustoreOK(["dump"] + arguments).lines.map { try parseObject($0) }
    }

    func testEncryptedValueRoundTripsAndIsNotStoredInTheClear() throws {
        let store = try makeStorePath()
        let secret = Array("the launch code is 0000".utf8)
        try ustoreOK(["put", store.path, "code", "-", "--key-hex", Self.keyHex], stdin: secret)

        XCTAssertEqual(try ustoreOK(["get", store.path, "code", "--key-hex", Self.keyHex]).stdout, secret)
        XCTAssertNil(try segmentBytes(store).firstRange(of: Array("launch code".utf8)), "plaintext in a segment")
        // Other subcommands open it with the key too.
        XCTAssertEqual(try parseJSON(try ustoreOK(["keys", store.path, "--key-hex", Self.keyHex]).stdoutText) as? [String], ["code"])
        XCTAssertEqual(try parseObject(try ustoreOK(["verify", store.path, "--key-hex", Self.keyHex]).stdoutText)["ok"] as? Bool, true)
        try ustoreOK(["delete", store.path, "code", "--key-hex", Self.keyHex])
        XCTAssertEqual(try ustore(["get", store.path, "code", "--key-hex", Self.keyHex]).status, 1)
    }

    func testWrongKeyExitsTwoNamingTheKeyID() throws {
        let store = try makeStorePath()
        try ustoreOK(["put", store.path, "k", "v", "--key-hex", Self.keyHex, "--key-id", "7"])

        for command in [["get", store.path, "k"], ["put", store.path, "k2", "v2"], ["dump", store.path], ["stats", store.path]] {
            let run = try ustore(command + ["--key-hex", Self.otherKeyHex, "--key-id", "7"])
            XCTAssertEqual(run.status, 2, "\(command[0]): \(run.stderr)")
            XCTAssertTrue(run.stdout.isEmpty)
            XCTAssertEqual(run.stderr.split(separator: "\n").count, 1, run.stderr)
            XCTAssertTrue(run.stderr.contains("key id 7"), run.stderr)
        }
        // No key at all: the store opens, but the value cannot be read.
        let keyless = try ustore(["get", store.path, "k"])
        XCTAssertEqual(keyless.status, 2)
        XCTAssertTrue(keyless.stderr.contains("key id 7"), keyless.stderr)
        // The right key still works: the failed opens changed nothing.
        XCTAssertEqual(try ustoreOK(["get", store.path, "k", "--key-hex", Self.keyHex, "--key-id", "7"]).stdoutText, "v")
    }

    func testAppKeyDerivesTheLibrarysKey() throws {
        let store = try makeStorePath()
        try ustoreOK(["put", store.path, "k", "derived", "--app-key", "correct horse"])
        XCTAssertEqual(try ustoreOK(["get", store.path, "k", "--app-key", "correct horse"]).stdoutText, "derived")
        XCTAssertEqual(try ustore(["get", store.path, "k", "--app-key", "wrong horse"]).status, 2)
        // The same key given as hex: ustore derives exactly what the library derives.
        let derived = try LogStore.Options.Encryption(deriving: "correct horse", keyID: 1).key
        let hex = derived.map { String(format: "%02x", $0) }.joined()
        XCTAssertEqual(try ustoreOK(["get", store.path, "k", "--key-hex", hex]).stdoutText, "derived")
    }

    func testBadKeyArgumentsAreUsageErrors() throws {
        let store = try makeStorePath()
        for arguments in [["--key-hex", "0011"], ["--key-hex", String(repeating: "zz", count: 32)],
                          ["--key-id", "3"], ["--key-hex", Self.keyHex, "--app-key", "x"],
                          ["--compress-level", "0"], ["--compress-threshold", "-1"]] {
            let run = try ustore(["put", store.path, "k", "v"] + arguments)
            XCTAssertEqual(run.status, 64, "\(arguments): \(run.stderr)")
        }
        XCTAssertFalse(FileManager.default.fileExists(atPath: store.path), "a usage error opens nothing")
    }

    func testCompressedPutGetAndThreshold() throws {
        let store = try makeStorePath()
        let options = ["--compress-level", "3", "--compress-threshold", "32"]
        try ustoreOK(["put", store.path, "doc", "-"] + options, stdin: Self.compressible)
        try ustoreOK(["put", store.path, "short", "tiny value"] + options)

        XCTAssertEqual(try ustoreOK(["get", store.path, "doc"]).stdout, Self.compressible, "reading needs no option")
        XCTAssertEqual(try ustoreOK(["get", store.path, "short"]).stdoutText, "tiny value")
        let records = try dumpRecords([store.path])
        let doc = try XCTUnwrap(records.first { $0["key"] as? String == "doc" })
        let stored = try XCTUnwrap(Data(base64Encoded: try XCTUnwrap(doc["value_base64"] as? String)))
        XCTAssertEqual(try XCTUnwrap(doc["flags"] as? Int) & 0x08, 0x08, "compressed flag")
        XCTAssertEqual(Array(stored.prefix(4)), [0x28, 0xB5, 0x2F, 0xFD], "a zstd frame")
        XCTAssertLessThan(stored.count, Self.compressible.count / 4)
        XCTAssertEqual(doc["value_decoded_base64"] as? String, Data(Self.compressible).base64EncodedString())
        let short = try XCTUnwrap(records.first { $0["key"] as? String == "short" })
        XCTAssertEqual(short["flags"] as? Int, 0, "below the threshold: stored as given")
    }

    func testDumpShowsStoredAndDecodedValues() throws {
        let store = try makeStorePath()
        let key = ["--key-hex", Self.keyHex]
        try ustoreOK(["put", store.path, "a", "first"] + key)
        try ustoreOK(["put", store.path, "a", "second"] + key)
        try ustoreOK(["put", store.path, "doc", "-", "--compress-level", "5"] + key, stdin: Self.compressible)
        try ustoreOK(["put", store.path, "gone", "x"] + key)
        try ustoreOK(["delete", store.path, "gone"] + key)
        // A custom crypt's value: nothing outside the application can decode it.
        var options = LogStore.Options()
        options.encryption = .init(key: try XCTUnwrap(Hex.bytes(Self.keyHex)), keyID: 1)
        let logStore = try LogStore(directory: store, options: options)
        let xor = DataCrypt(encrypt: { $0.map { $0 ^ 0x5A } }, decrypt: { $0.map { $0 ^ 0x5A } })
        try logStore.put(Array("mine".utf8), forKey: Array("custom".utf8), crypt: xor)
        try logStore.close()

        let records = try dumpRecords([store.path] + key).filter { $0["space"] as? Int == 0 }
        func decoded(_ record: [String: Any]) -> String? {
            (record["value_decoded_base64"] as? String).flatMap { Data(base64Encoded: $0) }.map { String(decoding: $0, as: UTF8.self) }
        }
        XCTAssertEqual(records.map { $0["key"] as? String }, ["a", "a", "doc", "gone", "gone", "custom"])
        for record in records { XCTAssertNotNil(record["value_decoded_base64"], "the field is always there: \(record)") }

        let (oldA, newA, doc, putGone, tombstone, custom) = (records[0], records[1], records[2], records[3], records[4], records[5])
        XCTAssertEqual(decoded(newA), "second")
        XCTAssertNil(newA["error"])
        XCTAssertNotEqual(newA["value_base64"] as? String, Data("second".utf8).base64EncodedString(), "stored encrypted")
        XCTAssertEqual(try XCTUnwrap(newA["flags"] as? Int) & 0x10, 0x10)
        XCTAssertEqual(Data(base64Encoded: try XCTUnwrap(newA["value_base64"] as? String))?.count, 6 + 16, "ciphertext and tag")
        XCTAssertEqual(try XCTUnwrap(doc["flags"] as? Int) & 0x18, 0x18, "compressed, then encrypted")
        XCTAssertEqual(decoded(doc), String(decoding: Self.compressible, as: UTF8.self))
        // Superseded encrypted records and a custom crypt: null, with the reason.
        for record in [oldA, putGone] {
            XCTAssertTrue(record["value_decoded_base64"] is NSNull)
            XCTAssertTrue((record["error"] as? String)?.contains("superseded") == true, "\(record)")
        }
        XCTAssertTrue(tombstone["value_decoded_base64"] is NSNull)
        XCTAssertNil(tombstone["error"], "a tombstone has no value, which is not an error")
        XCTAssertTrue(custom["value_decoded_base64"] is NSNull)
        XCTAssertTrue((custom["error"] as? String)?.contains("custom crypt") == true, "\(custom)")
        XCTAssertEqual(custom["value_base64"] as? String, Data("mine".utf8.map { $0 ^ 0x5A }).base64EncodedString())

        // Without the key the records are still listed, as stored; decoding fails with the key id.
        let keyless = try dumpRecords([store.path]).filter { $0["space"] as? Int == 0 }
        XCTAssertEqual(keyless.map { $0["value_base64"] as? String }, records.map { $0["value_base64"] as? String })
        XCTAssertTrue(keyless[1]["value_decoded_base64"] is NSNull)
        XCTAssertTrue((keyless[1]["error"] as? String)?.contains("key id 1") == true, "\(keyless[1])")
    }
}

/// Hexadecimal spelling of test keys.
enum Hex {
    static func bytes(_ text: String) -> [UInt8]? {
        let digits = Array(text)
        guard digits.count % 2 == 0 else { return nil }
        return stride(from: 0, to: digits.count, by: 2).compactMap { UInt8(String(digits[$0...$0 + 1]), radix: 16) }
    }
}
