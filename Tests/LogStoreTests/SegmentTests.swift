import XCTest
@testable import LogStore

/// Builds segment images in memory: a header followed by records.
struct SegmentImage {
    var bytes: [UInt8]
    var offsets: [Int] = []
    var sequence: UInt64 = 1

    init(id: UInt32 = 1, flags: UInt32 = 0) {
        bytes = SegmentHeader(segmentID: id, flags: flags, createdMillis: 1).encoded()
    }

    mutating func append(key: [UInt8], value: [UInt8], flags: RecordFlags = [], space: UInt32 = 0, expiresAtMillis: UInt64? = nil) {
        let fields = RecordCodec.Fields(flags: flags, sequence: sequence, space: space, expiresAtMillis: expiresAtMillis)
        sequence += 1
        let size = RecordCodec.encodedSize(fields, keyLength: key.count, valueLength: value.count)
        let at = bytes.count
        bytes += [UInt8](repeating: 0, count: size)
        _ = bytes.withUnsafeMutableBytes { dest in
            key.withUnsafeBytes { k in value.withUnsafeBytes { v in RecordCodec.encode(fields, key: k, value: v, to: dest.baseAddress! + at) } }
        }
        offsets.append(at)
    }

    /// Runs a scanner over the image and returns its events and final state.
    func scan() -> (records: [Int], corrupt: [Range<Int>], tailIsClean: Bool, validEnd: Int, events: [String]) {
        bytes.withUnsafeBytes { raw in
            var scanner = SegmentScanner(base: raw.baseAddress!, limit: raw.count)
            var records: [Int] = []
            var corrupt: [Range<Int>] = []
            var events: [String] = []
            while let event = scanner.next() {
                switch event {
                case .record(let offset, _):
                    records.append(offset)
                    events.append("r\(offset)")
                case .corrupt(let range):
                    corrupt.append(range)
                    events.append("c\(range)")
                }
            }
            return (records, corrupt, scanner.tailIsClean, scanner.validEnd, events)
        }
    }
}

final class SegmentScannerTests: XCTestCase {
    private func image(records count: Int, seed: UInt64 = 1) -> SegmentImage {
        var image = SegmentImage()
        var rng = SeededRandom(seed: seed)
        for i in 0..<count {
            let value = (0..<Int.random(in: 0...200, using: &rng)).map { _ in UInt8.random(in: 0...255, using: &rng) }
            image.append(key: b("key-\(i)"), value: value, flags: i % 5 == 4 ? [.purgeable] : [], space: UInt32(i % 3),
                         expiresAtMillis: i % 7 == 0 ? 99 : nil)
        }
        return image
    }

    func testEmptySegment() {
        let result = SegmentImage().scan()
        XCTAssertEqual(result.records, [])
        XCTAssertTrue(result.tailIsClean)
        XCTAssertEqual(result.validEnd, SegmentHeader.size)
    }

    func testCleanZeroTail() {
        var image = image(records: 50)
        let end = image.bytes.count
        for extra in [0, 1, 7, 8, 4096] {
            let padded = image.bytes + [UInt8](repeating: 0, count: extra)
            var copy = image
            copy.bytes = padded
            let result = copy.scan()
            XCTAssertEqual(result.records, image.offsets, "zero tail of \(extra)")
            XCTAssertEqual(result.corrupt, [])
            XCTAssertTrue(result.tailIsClean)
            XCTAssertEqual(result.validEnd, end)
        }
        image.bytes += [UInt8](repeating: 0, count: 100)
        XCTAssertTrue(image.scan().tailIsClean)
    }

    func testTornTail() {
        let image = image(records: 30)
        let last = image.offsets.last!
        // Every cut inside the last record leaves the others and reports a torn (unclean) tail,
        // except a cut exactly at its start (then the file just ends there).
        for cut in (last + 1)..<image.bytes.count {
            var torn = image
            torn.bytes = Array(image.bytes[..<cut]) + [UInt8](repeating: 0, count: 64)
            let result = torn.scan()
            XCTAssertEqual(result.records, Array(image.offsets.dropLast()), "cut at \(cut)")
            XCTAssertEqual(result.corrupt, [], "cut at \(cut)")
            XCTAssertEqual(result.validEnd, last)
            // A cut that keeps only zero bytes of the record (its checksum may start with zeros) is clean.
            let keptNonZero = image.bytes[last..<cut].contains { $0 != 0 }
            XCTAssertEqual(result.tailIsClean, !keptNonZero, "cut at \(cut)")
        }
        // Garbage after the last record.
        var garbage = image
        var rng = SeededRandom(seed: 99)
        garbage.bytes += (0..<300).map { _ in UInt8.random(in: 1...255, using: &rng) }
        let result = garbage.scan()
        XCTAssertEqual(result.records, image.offsets)
        XCTAssertFalse(result.tailIsClean)
        XCTAssertEqual(result.validEnd, image.bytes.count)
        XCTAssertEqual(result.corrupt, [])
    }

    func testCorruptionInTheMiddleResyncs() {
        let image = image(records: 40)
        for victim in [0, 1, 17, 38] {
            for position in [0, 4, 5, 6, 12] {
                var broken = image
                let start = image.offsets[victim]
                let next = image.offsets[victim + 1]
                guard start + position < next else { continue }
                broken.bytes[start + position] ^= 0x5A
                let result = broken.scan()
                var expected = image.offsets
                expected.remove(at: victim)
                XCTAssertEqual(result.records, expected, "record \(victim) byte \(position)")
                XCTAssertEqual(result.corrupt, [start..<next], "record \(victim) byte \(position)")
                XCTAssertTrue(result.tailIsClean)
                XCTAssertEqual(result.validEnd, image.bytes.count)
            }
        }
        // A zeroed hole spanning three records, then more records.
        var holed = image
        for i in image.offsets[10]..<image.offsets[13] { holed.bytes[i] = 0 }
        let result = holed.scan()
        XCTAssertEqual(result.records, Array(image.offsets[..<10]) + Array(image.offsets[13...]))
        XCTAssertEqual(result.corrupt, [image.offsets[10]..<image.offsets[13]])
        // Two separate corruptions.
        var twice = image
        twice.bytes[image.offsets[3] + 1] ^= 1
        twice.bytes[image.offsets[30] + 9] ^= 1
        XCTAssertEqual(twice.scan().corrupt, [image.offsets[3]..<image.offsets[4], image.offsets[30]..<image.offsets[31]])
        // Corruption in the last record: nothing valid follows, so it is a torn tail, not a range.
        var lastBroken = image
        lastBroken.bytes[image.offsets.last! + 5] ^= 0xFF
        let tail = lastBroken.scan()
        XCTAssertEqual(tail.corrupt, [])
        XCTAssertFalse(tail.tailIsClean)
        XCTAssertEqual(tail.validEnd, image.offsets.last!)
    }
}

/// The segment file itself: create, append through the mapping, trim, reopen.
final class SegmentFileTests: StoreTestCase {
    func testCreateAppendTrimReopen() throws {
        let directory = temporary.make("segment")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let path = directory.appendingPathComponent(StoreFileName.segment(5)).path
        let segment = try Segment.create(path: path, id: 5, flags: 0, capacity: 1 << 20, initialAllocation: 4096)
        XCTAssertEqual(segment.length, SegmentHeader.size)
        XCTAssertEqual(try fileSize(URL(fileURLWithPath: path)), 4096, "space reserved up front")
        var written: [(Int, [UInt8], [UInt8])] = []
        for i in 0..<500 {
            let key = b("k\(i)")
            let value = [UInt8](repeating: UInt8(i % 251), count: i % 300)
            let fields = RecordCodec.Fields(flags: [], sequence: UInt64(i + 1), space: 0, expiresAtMillis: nil)
            let size = RecordCodec.encodedSize(fields, keyLength: key.count, valueLength: value.count)
            try segment.reserve(size)
            let at = segment.length
            let n = key.withUnsafeBytes { k in value.withUnsafeBytes { v in RecordCodec.encode(fields, key: k, value: v, to: segment.base + at) } }
            segment.length += n
            written.append((at, key, value))
        }
        XCTAssertGreaterThan(try fileSize(URL(fileURLWithPath: path)), segment.length - 1)
        try segment.trimToLength()
        XCTAssertEqual(try fileSize(URL(fileURLWithPath: path)), segment.length)
        let length = segment.length
        let reopened = try Segment.open(path: path, writable: false, capacity: 0)
        XCTAssertEqual(reopened.id, 5)
        XCTAssertEqual(reopened.length, length)
        XCTAssertFalse(reopened.header.isCompactionOutput)
        let found = try records(in: URL(fileURLWithPath: path))
        XCTAssertEqual(found.map(\.offset), written.map(\.0))
        for ((offset, key, value), record) in zip(written, found) {
            let base = UnsafeRawPointer(reopened.base)
            XCTAssertEqual([UInt8](UnsafeRawBufferPointer(start: base + offset + record.header.keyOffset, count: key.count)), key)
            XCTAssertEqual([UInt8](UnsafeRawBufferPointer(start: base + offset + record.header.valueOffset, count: value.count)), value)
        }
        // A writable reopen maps room to grow; zeroTail clears stale bytes.
        let writable = try Segment.open(path: path, writable: true, capacity: 1 << 20)
        XCTAssertEqual(writable.remainingCapacity, (1 << 20) - length)
        writable.zeroTail(from: written[250].0)
        XCTAssertEqual(try records(in: URL(fileURLWithPath: path)).count, 250)
    }

    func testOpenRejectsShortAndForeignFiles() throws {
        let directory = temporary.make("segment")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let short = directory.appendingPathComponent("00000001.seg")
        try Data([1, 2, 3]).write(to: short)
        XCTAssertThrowsError(try Segment.open(path: short.path, writable: false, capacity: 0))
        let foreign = directory.appendingPathComponent("00000002.seg")
        try Data(repeating: 0x41, count: 100).write(to: foreign)
        XCTAssertThrowsError(try Segment.open(path: foreign.path, writable: false, capacity: 0))
    }

    func testCompactionOutputRollsAndFlags() throws {
        let directory = temporary.make("output")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        var nextID: UInt32 = 10
        var output = CompactionOutput(directory: directory.path, segmentSize: 4096) {
            defer { nextID += 1 }
            return nextID
        }
        var source = SegmentImage()
        for i in 0..<100 {
            source.append(key: b("key-\(i)"), value: [UInt8](repeating: UInt8(i), count: 100), flags: i % 2 == 0 ? [.batchContinues] : [])
        }
        var locations: [RecordLocation] = []
        try source.bytes.withUnsafeBytes { raw in
            for (index, offset) in source.offsets.enumerated() {
                let end = index + 1 < source.offsets.count ? source.offsets[index + 1] : raw.count
                locations.append(try output.append(raw.baseAddress! + offset, length: end - offset, flags: index % 2 == 0 ? [] : nil))
            }
        }
        let produced = try output.finish()
        XCTAssertGreaterThan(produced.count, 1, "rolled past the segment size")
        XCTAssertEqual(produced.map(\.id), Array(10..<(10 + UInt32(produced.count))))
        XCTAssertEqual(produced.map(\.recordCount).reduce(0, +), 100)
        for file in produced {
            XCTAssertTrue(file.temporaryPath.hasSuffix(".seg.tmp"))
            XCTAssertFalse(FileManager.default.fileExists(atPath: file.finalPath), "not renamed before commit")
            let url = URL(fileURLWithPath: file.temporaryPath)
            XCTAssertEqual(try fileSize(url), file.length)
            XCTAssertLessThanOrEqual(file.length, 4096)
            let header = try segmentHeader(url)
            XCTAssertTrue(header.isCompactionOutput)
            XCTAssertEqual(header.segmentID, file.id)
            let found = try records(in: url)
            XCTAssertEqual(found.count, file.recordCount)
            for record in found {
                XCTAssertFalse(record.header.flags.contains(.batchContinues), "batch flags cleared")
                XCTAssertTrue(locations.contains(RecordLocation(segment: file.id, offset: UInt32(record.offset))))
            }
        }
        output.discard()
        for file in produced { XCTAssertFalse(FileManager.default.fileExists(atPath: file.temporaryPath)) }
    }
}
