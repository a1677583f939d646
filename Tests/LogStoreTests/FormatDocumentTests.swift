import Foundation
import XCTest
@testable import LogStore

/// Holds FORMAT.md to the bytes: the worked example's hex dump must be exactly what the engine
/// writes for the operations the example lists.
final class FormatDocumentTests: XCTestCase {
    private var formatDocument: String {
        get throws {
            let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
            return try String(contentsOf: root.appendingPathComponent("FORMAT.md"), encoding: .utf8)
        }
    }

    /// The bytes of the hex dump between `<!-- NAME-begin -->` and `<!-- NAME-end -->`: each line
    /// is an offset, a colon, then hex byte pairs; anything after two spaces is a comment.
    private func documentedBytes(_ name: String) throws -> [UInt8] {
        let text = try formatDocument
        guard let start = text.range(of: "<!-- \(name)-begin -->"), let end = text.range(of: "<!-- \(name)-end -->") else {
            XCTFail("FORMAT.md has no \(name) block")
            return []
        }
        var bytes: [UInt8] = []
        for line in text[start.upperBound..<end.lowerBound].split(separator: "\n") {
            guard let colon = line.firstIndex(of: ":") else { continue }
            let hexPart = line[line.index(after: colon)...].components(separatedBy: "  ").first { !$0.trimmingCharacters(in: .whitespaces).isEmpty } ?? ""
            for pair in hexPart.split(separator: " ") {
                guard let byte = UInt8(pair, radix: 16) else { XCTFail("bad hex \(pair) in \(name)"); return [] }
                bytes.append(byte)
            }
        }
        return bytes
    }

    /// The operations of the worked example, on a fresh store; returns the first segment's bytes.
    private func exampleSegment() throws -> [UInt8] { try exampleFiles().segment }

    /// The worked example's store: its first segment's bytes and its `SYNCMARK`'s.
    private func exampleFiles() throws -> (segment: [UInt8], syncMark: [UInt8]) {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("format-example-\(UUID())")
        defer { try? FileManager.default.removeItem(at: directory) }
        let store = try LogStore(directory: directory)
        try store.put(Array("hello".utf8), forKey: Array("greeting".utf8))
        try store.put(Array("1".utf8), forKey: Array("session".utf8), space: 7,
                      expiresAt: Date(timeIntervalSince1970: 1_893_456_000))   // 2030-01-01T00:00:00Z
        try store.delete(forKey: Array("greeting".utf8))
        var batch = LogStore.WriteBatch()
        batch.put(Array("1".utf8), forKey: Array("a".utf8))
        batch.put(Array("2".utf8), forKey: Array("b".utf8))
        try store.write(batch)
        try store.close()
        return (Array(try Data(contentsOf: directory.appendingPathComponent("00000001.seg"))),
                Array(try Data(contentsOf: directory.appendingPathComponent(SyncMarkFile.name))))
    }

    /// FORMAT.md's sync mark slot is the newest slot of the example store's `SYNCMARK`.
    func testWorkedExampleSyncMarkMatchesTheEngine() throws {
        let file = try exampleFiles().syncMark
        let newest = try XCTUnwrap(SyncMarkFile.newest(in: file))
        let offset = SyncMarkFile.slotOffsets[newest.slot]
        let slot = Array(file[offset..<(offset + SyncMarkFile.slotSize)])
        XCTAssertEqual(try documentedBytes("syncmark-hex"), slot, "the engine wrote:\n\(hexDump(slot, from: 0))")
        XCTAssertEqual(newest.mark, SyncMark(position: LogPosition(segment: 1, offset: 118), nextSequence: 6))
    }

    private func hexDump(_ bytes: [UInt8], from offset: Int) -> String {
        stride(from: 0, to: bytes.count, by: 16).map { start in
            let row = bytes[start..<min(start + 16, bytes.count)].map { String(format: "%02x", $0) }.joined(separator: " ")
            return String(format: "%08x: ", offset + start) + row
        }.joined(separator: "\n")
    }

    func testWorkedExampleRecordsMatchTheEngine() throws {
        let segment = try exampleSegment()
        let records = Array(segment[SegmentHeader.size...])
        XCTAssertEqual(try documentedBytes("records-hex"), records,
                       "FORMAT.md's record dump differs from the engine's bytes; the engine wrote:\n\(hexDump(records, from: SegmentHeader.size))")
    }

    func testWorkedExampleHeaderMatchesExceptCreationTime() throws {
        let header = Array(try exampleSegment()[..<SegmentHeader.size])
        let documented = try documentedBytes("header-hex")
        XCTAssertEqual(documented.count, SegmentHeader.size)
        // Bytes 16..<24 (creation time) and 28..<32 (the checksum over them) differ per run.
        XCTAssertEqual(Array(documented[0..<16]), Array(header[0..<16]), "engine wrote:\n\(hexDump(header, from: 0))")
        XCTAssertEqual(Array(documented[24..<28]), Array(header[24..<28]))
        // The documented header must be self-consistent: its checksum is CRC-32C of its bytes 0..<28.
        let parsed = documented.withUnsafeBytes { try? SegmentHeader.decode($0.baseAddress!, length: 32, path: "FORMAT.md") }
        XCTAssertEqual(parsed?.segmentID, 1)
    }

    /// The encrypted and compressed records of FORMAT.md, placed in a segment of their own,
    /// must read back through the engine (AES-GCM with the documented key, then zstd).
    func testEncryptedAndCompressedExamplesReadBackThroughTheEngine() throws {
        let encrypted = try documentedBytes("encrypted-hex")
        let compressed = try documentedBytes("compressed-hex")
        XCTAssertEqual(encrypted.count, 49)
        XCTAssertEqual(compressed.count, 52)
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("format-crypto-\(UUID())")
        defer { try? FileManager.default.removeItem(at: directory) }
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let header = SegmentHeader(segmentID: 1, flags: 0, createdMillis: 0).encoded()
        try Data(header + encrypted + compressed).write(to: directory.appendingPathComponent("00000001.seg"))
        var options = LogStore.Options()
        options.encryption = .init(key: (0..<32).map { UInt8($0) }, keyID: 1)
        let store = try LogStore(directory: directory, options: options)
        XCTAssertEqual(store.recoveryReport, [])
        XCTAssertEqual(try store.get(forKey: Array("secret".utf8)), Array("hello".utf8))
        XCTAssertEqual(try store.get(forKey: Array("doc".utf8)),
                       Array(#"{"name":"ann","name2":"ann","name3":"ann","name4":"ann"}"#.utf8))
        // The check value the engine recorded for key id 1 is the one FORMAT.md states.
        XCTAssertEqual(try store.get(forKey: Array("keycheck/1".utf8), space: LogStore.engineSpace),
                       [0xcd, 0x3b, 0x6a, 0xe3, 0x14, 0x78, 0x12, 0xbb, 0x76, 0xc6, 0x66, 0x13, 0x67, 0xa5, 0xd3, 0x51])
    }
}
