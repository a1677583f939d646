import Files
import Foundation
import LogStore
import Preferences
import XCTest

/// The four examples of the source's Android file storage (seed 000, section 4.1.3: file to
/// text, text to file, insert a file, delete a file), ported through `FileInputStream` and
/// `FileOutputStream` (the ZFileInputStream/ZSecurityFileInputStream counterparts), for both
/// locations (ZFile: internal, ZExternalFile: external) and both stream kinds.
final class AndroidExamplesTests: FilesTestCase {
    private static let bufferSize = 4096  // DEFAULT_BUFFER_SIZE

    /// file2String: reads the whole file through an input stream into text; nil on failure.
    private func fileToString(_ storage: FileStorage, _ name: String, _ encryption: FileEncryption) -> String? {
        guard let stream = try? FileInputStream(storage: storage, name: name, encryption: encryption) else { return nil }
        stream.open()
        defer { stream.close() }
        var collected = Data()
        var buffer = [UInt8](repeating: 0, count: Self.bufferSize)
        while true {
            let n = stream.read(&buffer, maxLength: buffer.count)
            if n < 0 { return nil }
            if n == 0 { break }
            collected.append(contentsOf: buffer[0..<n])
        }
        return String(data: collected, encoding: .utf8)
    }

    /// string2File: writes `text` through an output stream in buffer-sized pieces; true on success.
    private func stringToFile(_ text: String, _ storage: FileStorage, _ name: String, _ encryption: FileEncryption) -> Bool {
        guard let stream = try? FileOutputStream(storage: storage, name: name, encryption: encryption) else { return false }
        stream.open()
        let bytes = Array(text.utf8)
        var offset = 0
        while offset < bytes.count {
            let count = min(Self.bufferSize, bytes.count - offset)
            let written = bytes[offset...].withUnsafeBufferPointer { stream.write($0.baseAddress!, maxLength: count) }
            if written < 0 { return false }
            offset += written
        }
        stream.close()
        return stream.streamStatus == .closed
    }

    /// insertFile: writes "<name> <date>" to the file, creates it if missing, lists it.
    private func insertFile(_ storage: FileStorage, _ name: String, _ encryption: FileEncryption, into list: inout [String]) throws -> String {
        let formatter = DateFormatter()
        formatter.dateFormat = "yyyy-MM-dd HH:mm:ss"
        let content = "\(name) \(formatter.string(from: Date()))"
        XCTAssertTrue(stringToFile(content, storage, name, encryption))
        if !(try storage.exists(name)) { try storage.create(name, encryption: encryption) }
        list.append(name)
        return content
    }

    /// deleteFile: deletes the file and unlists it.
    private func deleteFile(_ storage: FileStorage, _ name: String, from list: inout [String]) throws {
        try storage.delete(name)
        list.removeAll { $0 == name }
    }

    private func runExamples(location: FileStorage.Location, encryption: FileEncryption) throws {
        let storage = try center.fileStorage(location)
        let text = String(repeating: "Unified storage 统一存储 — line\n", count: 700)  // > several buffers
        XCTAssertTrue(stringToFile(text, storage, "texts/long.txt", encryption))
        XCTAssertEqual(fileToString(storage, "texts/long.txt", encryption), text)

        let raw = try rawBytes(storage, "texts/long.txt")
        if encryption.isEncrypted {
            XCTAssertNil(raw.firstRange(of: Array("Unified storage".utf8)), "plaintext visible in the encrypted file")
            XCTAssertNotEqual(fileToString(storage, "texts/long.txt", .none), text)
        } else {
            XCTAssertEqual(raw, Array(text.utf8))
        }

        var listed: [String] = []
        let first = try insertFile(storage, "a.txt", encryption, into: &listed)
        let second = try insertFile(storage, "dir/b.txt", encryption, into: &listed)
        XCTAssertEqual(fileToString(storage, "a.txt", encryption), first)
        XCTAssertEqual(fileToString(storage, "dir/b.txt", encryption), second)
        XCTAssertEqual(try storage.list(), ["a.txt", "dir/b.txt", "texts/long.txt"])
        XCTAssertEqual(listed, ["a.txt", "dir/b.txt"])

        try deleteFile(storage, "a.txt", from: &listed)
        XCTAssertFalse(try storage.exists("a.txt"))
        XCTAssertNil(fileToString(storage, "a.txt", encryption))
        XCTAssertEqual(try storage.list(), ["dir/b.txt", "texts/long.txt"])
        XCTAssertEqual(listed, ["dir/b.txt"])

        // Where the source puts them.
        let folder = try storage.folder()
        switch location {
        case .internal: XCTAssertEqual(folder.path, root.appendingPathComponent("Files/common").path)
        case .external(let url): XCTAssertEqual(folder.path, url.appendingPathComponent("common").path)
        }
    }

    func testInternalPlain() throws { try runExamples(location: .internal, encryption: .none) }
    func testInternalEncrypted() throws { try runExamples(location: .internal, encryption: .storageKey) }
    func testExternalPlain() throws { try runExamples(location: .external(external), encryption: .none) }
    func testExternalEncrypted() throws { try runExamples(location: .external(external), encryption: .storageKey) }
}
