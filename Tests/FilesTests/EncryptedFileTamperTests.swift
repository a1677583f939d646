import Files
import Foundation
import LogStore
import XCTest

/// Every way an encrypted file can be altered is a typed error that says where, and no
/// plaintext of a segment that does not authenticate is returned.
final class EncryptedFileTamperTests: XCTestCase {
    private static let key = [UInt8](repeating: 0x42, count: 32)
    private static let segmentSize = 64
    private static let headerSize = 72
    private static let stored = segmentSize + 16
    private var folder: URL!
    private var storage: FileStorage!

    override func setUpWithError() throws {
        folder = makeFilesTestFolder(name)
        storage = try FileStorage(folder: folder, options: .init(key: Self.key, segmentSize: Self.segmentSize))
    }

    override func tearDownWithError() throws {
        if let folder { try? FileManager.default.removeItem(at: folder) }
    }

    private var path: String { folder.appendingPathComponent("f").path }
    /// Replaces the file's bytes (without Data.write, which fsyncs on Linux).
    private func writeRaw(_ bytes: [UInt8]) throws {
        try SystemFile(path: path, flags: O_WRONLY | O_CREAT | O_TRUNC).write(bytes, at: 0)
    }
    private func readAll() throws -> Data { try storage.data(of: "f", encryption: .storageKey) }

    /// A 200-byte file: 4 segments (64, 64, 64, 8 bytes), 72 + 200 + 64 = 336 bytes.
    private func writeSmallFile() throws -> (plain: [UInt8], file: [UInt8]) {
        let plain = testBytes(200, seed: 5)
        try storage.write(plain, to: "f", encryption: .storageKey)
        let file = [UInt8](try Data(contentsOf: URL(fileURLWithPath: path)))
        XCTAssertEqual(file.count, Self.headerSize + 200 + 4 * 16)
        XCTAssertEqual(try readAll(), Data(plain))
        return (plain, file)
    }

    func testEverySingleByteTamperIsDetected() throws {
        let (_, original) = try writeSmallFile()
        for position in 0..<original.count {
            for flip: UInt8 in [0x01, 0xFF] {
                var tampered = original
                tampered[position] ^= flip
                try writeRaw(tampered)
                XCTAssertThrowsError(try readAll(), "byte \(position) ^ \(flip)") { error in
                    guard let error = error as? FileStorageError else { return XCTFail("byte \(position): \(error)") }
                    switch error {
                    case .tampered(_, let segment, let offset):
                        XCTAssertGreaterThanOrEqual(position, Self.headerSize, "\(error)")
                        XCTAssertEqual(segment, (position - Self.headerSize) / Self.stored, "byte \(position): \(error)")
                        XCTAssertEqual(offset, Int64(Self.headerSize + segment * Self.stored))
                    case .wrongKey, .corrupt, .unsupportedVersion:
                        XCTAssertLessThan(position, Self.headerSize, "byte \(position): \(error)")
                    default: XCTFail("byte \(position): \(error)")
                    }
                }
            }
        }
    }

    func testTruncationAtEverySegmentBoundaryAndInsideTags() throws {
        let (_, original) = try writeSmallFile()
        for segments in 1...3 {
            try writeRaw(Array(original.prefix(Self.headerSize + segments * Self.stored)))
            XCTAssertThrowsError(try readAll(), "\(segments) segments kept") {
                XCTAssertEqual($0 as? FileStorageError, .truncated(file: "f", segment: segments - 1))
            }
        }
        for length in [0, 10, Self.headerSize, Self.headerSize + 15] {
            try writeRaw(Array(original.prefix(length)))
            XCTAssertThrowsError(try readAll(), "length \(length)") { error in
                guard case FileStorageError.corrupt = error else { return XCTFail("length \(length): \(error)") }
            }
        }
        for cut in 1..<Self.stored {
            try writeRaw(Array(original.dropLast(cut)))
            XCTAssertThrowsError(try readAll(), "cut \(cut)")
        }
    }

    func testSwappedDuplicatedAndAppendedSegments() throws {
        let (_, original) = try writeSmallFile()
        func segment(_ i: Int) -> [UInt8] {
            let start = Self.headerSize + i * Self.stored
            return Array(original[start..<min(original.count, start + Self.stored)])
        }
        let header = Array(original.prefix(Self.headerSize))
        // Segments 0 and 1 swapped: the first one read fails where it is.
        try writeRaw(header + segment(1) + segment(0) + segment(2) + segment(3))
        XCTAssertThrowsError(try readAll()) { XCTAssertEqual($0 as? FileStorageError, .tampered(file: "f", segment: 0, offset: Int64(Self.headerSize))) }
        // Segment 2 replaced by a copy of segment 1.
        try writeRaw(header + segment(0) + segment(1) + segment(1) + segment(3))
        XCTAssertThrowsError(try readAll()) { XCTAssertEqual($0 as? FileStorageError, .tampered(file: "f", segment: 2, offset: Int64(Self.headerSize + 2 * Self.stored))) }
        // A full segment appended after the last one: the old last segment says it was last.
        let full = try writeFull()
        try writeRaw(full + Array(full[Self.headerSize..<(Self.headerSize + Self.stored)]))
        XCTAssertThrowsError(try readAll()) { XCTAssertEqual($0 as? FileStorageError, .extended(file: "f", segment: 2)) }
        // A segment of another file with the same key and name.
        let other = try writeFull()
        var spliced = full
        spliced.replaceSubrange(Self.headerSize..<(Self.headerSize + Self.stored), with: other[Self.headerSize..<(Self.headerSize + Self.stored)])
        try writeRaw(spliced)
        XCTAssertThrowsError(try readAll()) { XCTAssertEqual($0 as? FileStorageError, .tampered(file: "f", segment: 0, offset: Int64(Self.headerSize))) }
    }

    /// A file of exactly 3 full segments; returns its bytes.
    private func writeFull() throws -> [UInt8] {
        try storage.write(testBytes(3 * Self.segmentSize, seed: 9), to: "f", encryption: .storageKey)
        return [UInt8](try Data(contentsOf: URL(fileURLWithPath: path)))
    }

    func testWrongKeyAndPlainReadOfAnEncryptedFile() throws {
        let (plain, file) = try writeSmallFile()
        let other = try FileStorage(folder: folder, options: .init(key: [UInt8](repeating: 0x43, count: 32), segmentSize: Self.segmentSize))
        XCTAssertThrowsError(try other.data(of: "f", encryption: .storageKey)) { XCTAssertEqual($0 as? FileStorageError, .wrongKey(file: "f")) }
        XCTAssertEqual(try storage.data(of: "f", encryption: .none), Data(file), "a plain read returns the ciphertext")
        XCTAssertNil(file.firstRange(of: plain.prefix(16)))
        try storage.write(Data("plain text, not encrypted".utf8), to: "p")
        XCTAssertThrowsError(try storage.data(of: "p", encryption: .storageKey)) { error in
            guard case FileStorageError.corrupt(_, 0, _) = error else { return XCTFail("\(error)") }
        }
    }

    func testRandomAccessDecryptsOnlyTheSegmentsItTouches() throws {
        let (plain, original) = try writeSmallFile()
        var tampered = original
        tampered[Self.headerSize + 5] ^= 1  // inside segment 0
        try writeRaw(tampered)
        let reader = try storage.reader("f", encryption: .storageKey)
        try reader.seek(to: 130)  // segment 2
        XCTAssertEqual(try reader.read(upTo: 40), Data(plain[130..<170]))
        try reader.seek(to: 10)
        XCTAssertThrowsError(try reader.read(upTo: 10)) {
            XCTAssertEqual($0 as? FileStorageError, .tampered(file: "f", segment: 0, offset: Int64(Self.headerSize)))
        }
        // No byte of the failed read was returned through a buffer either.
        var buffer = [UInt8](repeating: 0xEE, count: 10)
        try reader.seek(to: 10)
        XCTAssertThrowsError(try buffer.withUnsafeMutableBytes { try reader.read(into: $0) })
        XCTAssertEqual(buffer, [UInt8](repeating: 0xEE, count: 10))
    }

    /// Batches of 128 KiB and more are sealed and opened on two threads (SegmentBatch): a
    /// 512 KiB file (8,192 segments) reads back whole and from an offset, and a tamper in either
    /// half, or in both, is reported at the first segment that fails.
    func testLargeBatchesSplitBetweenThreadsStillReportTheFirstBadSegment() throws {
        let plain = testBytes(512 << 10, seed: 11)
        try storage.write(plain, to: "f", encryption: .storageKey)
        XCTAssertEqual(try readAll(), Data(plain))
        let reader = try storage.reader("f", encryption: .storageKey)
        try reader.seek(to: 1000)
        XCTAssertEqual(try reader.read(upTo: 300_000), Data(plain[1000..<301_000]))
        let original = [UInt8](try Data(contentsOf: URL(fileURLWithPath: path)))
        for bad in [[100], [7000], [6000, 300], [8191]] {
            var tampered = original
            for segment in bad { tampered[Self.headerSize + segment * Self.stored + 3] ^= 0x10 }
            try writeRaw(tampered)
            let first = bad.min()!
            XCTAssertThrowsError(try readAll(), "\(bad)") {
                XCTAssertEqual($0 as? FileStorageError, .tampered(file: "f", segment: first, offset: Int64(Self.headerSize + first * Self.stored)))
            }
        }
    }
}
