import Files
import Foundation
import XCTest

/// tools/decrypt_file.py, written from FORMAT.md alone, decrypts files the library wrote (and
/// refuses a tampered one, naming the segment).
final class FormatCrossCheckTests: XCTestCase {
    private static let key = (0..<32).map { UInt8($0) }

    private func runDecryptor(_ file: URL) throws -> (status: Int32, output: Data, error: String) {
        let script = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().appendingPathComponent("tools/decrypt_file.py")
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["python3", script.path, file.path, Self.key.map { String(format: "%02x", $0) }.joined()]
        let output = Pipe(), error = Pipe()
        process.standardOutput = output
        process.standardError = error
        try process.run()
        let data = output.fileHandleForReading.readDataToEndOfFile()
        let message = String(decoding: error.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        if message.contains("No module named") { throw XCTSkip("python3 with the cryptography package is not installed (scripts/setup.sh): \(message)") }
        return (process.terminationStatus, data, message)
    }

    func testThePythonDecryptorReadsWhatTheLibraryWrote() throws {
        let folder = makeFilesTestFolder(name)
        defer { try? FileManager.default.removeItem(at: folder) }
        for (segmentSize, length) in [(64 << 10, 0), (64 << 10, 200_000), (64, 1000), (4096, 600_000)] {
            let storage = try FileStorage(folder: folder, options: .init(key: Self.key, segmentSize: segmentSize))
            let plain = testBytes(length, seed: UInt8(truncatingIfNeeded: length))
            try storage.write(plain, to: "x.bin", encryption: .storageKey)
            let result = try runDecryptor(try storage.url(of: "x.bin"))
            XCTAssertEqual(result.status, 0, result.error)
            XCTAssertEqual(result.output, Data(plain), "segment size \(segmentSize), \(length) bytes")
        }
        let storage = try FileStorage(folder: folder, options: .init(key: Self.key, segmentSize: 1000))
        try storage.write(testBytes(3000), to: "t.bin", encryption: .storageKey)
        let url = try storage.url(of: "t.bin")
        var raw = [UInt8](try Data(contentsOf: url))
        raw[72 + 1016 + 3] ^= 1
        try Data(raw).write(to: url)
        let result = try runDecryptor(url)
        XCTAssertEqual(result.status, 1)
        XCTAssertTrue(result.error.contains("segment 1 at byte 1088"), result.error)
    }

    /// The worked example of FORMAT.md ("Encrypted files"), byte for byte.
    func testTheWorkedExampleOfFORMATmd() throws {
        let hex = "555346494c4547430100000000000100a0a1a2a3a4a5a6a7a8a9aaabacadaeafb0b1b2b3b4b5b6b7b8b9babbbcbdbebf"
            + "f0f1f2f3f4f5f600e75715d0d7a0f4508b4c871824b3609b978173edc27f2b5389429db705b8cdfde5ecdd3ac9c1a7b5fda3808cb6"
        var bytes: [UInt8] = []
        var index = hex.startIndex
        while index < hex.endIndex {
            let next = hex.index(index, offsetBy: 2)
            bytes.append(UInt8(hex[index..<next], radix: 16)!)
            index = next
        }
        XCTAssertEqual(bytes.count, 101)
        let folder = makeFilesTestFolder(name)
        defer { try? FileManager.default.removeItem(at: folder) }
        let storage = try FileStorage(folder: folder, options: .init(key: Self.key))
        try storage.write(bytes, to: "example")
        XCTAssertEqual(try storage.string(of: "example", encryption: .storageKey), "Hello, ZFile!")
        bytes[100] ^= 1
        try storage.write(bytes, to: "example")
        XCTAssertThrowsError(try storage.string(of: "example", encryption: .storageKey)) {
            XCTAssertEqual($0 as? FileStorageError, .tampered(file: "example", segment: 0, offset: 72))
        }
    }
}
