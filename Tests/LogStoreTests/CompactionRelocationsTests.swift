import XCTest
@testable import LogStore

/// The compact log of records a compaction copied (issue 16): what goes in comes out, in order,
/// whatever the locations do.
final class CompactionRelocationsTests: XCTestCase {
    private typealias Relocation = CompactionRelocations.Relocation

    private func decoded(_ log: CompactionRelocations) throws -> [Relocation] {
        var out: [Relocation] = []
        try log.forEach { out.append($0) }
        return out
    }

    private func assertSame(_ a: [Relocation], _ b: [Relocation], file: StaticString = #filePath, line: UInt = #line) {
        XCTAssertEqual(a.count, b.count, file: file, line: line)
        for (x, y) in zip(a, b) {
            XCTAssertEqual(x.tag, y.tag, file: file, line: line)
            XCTAssertEqual(x.space, y.space, file: file, line: line)
            XCTAssertEqual(x.old, y.old, file: file, line: line)
            XCTAssertEqual(x.new, y.new, file: file, line: line)
            XCTAssertEqual(x.length, y.length, file: file, line: line)
        }
    }

    func testEmptyLog() throws {
        let log = CompactionRelocations()
        XCTAssertEqual(log.count, 0)
        XCTAssertEqual(try decoded(log).count, 0)
    }

    /// A compaction's shape: inputs walked forward with dead records skipped, outputs filled in
    /// order and rolled, plus the extremes (offsets near 4 GiB, maximal ids, tags and spaces,
    /// an old offset that goes back, a new location that does not follow the previous one).
    func testRoundTripKeepsEveryField() throws {
        var rng = SeededRandom(seed: 16)
        var expected: [Relocation] = []
        var newSegment: UInt32 = 100
        var newOffset = UInt32(SegmentHeader.size)
        for input in [UInt32(3), 4, 7, 9] {
            var oldOffset = UInt32(SegmentHeader.size)
            for _ in 0..<40_000 {
                let length = Int.random(in: 20...4_000, using: &rng)
                oldOffset += UInt32(length) * UInt32.random(in: 1...3, using: &rng)
                if newOffset > 1 << 26 {
                    newSegment += 1
                    newOffset = UInt32(SegmentHeader.size)
                }
                expected.append(Relocation(tag: UInt32.random(in: 1...UInt32.max, using: &rng),
                                           space: UInt32.random(in: 0...3, using: &rng) == 0 ? UInt32.max : 0,
                                           old: RecordLocation(segment: input, offset: oldOffset),
                                           new: RecordLocation(segment: newSegment, offset: newOffset), length: length))
                newOffset += UInt32(length)
            }
        }
        expected.append(Relocation(tag: UInt32.max, space: UInt32.max, old: RecordLocation(segment: UInt32.max, offset: UInt32.max - 1),
                                   new: RecordLocation(segment: UInt32.max, offset: UInt32.max - 2), length: Int(UInt32.max)))
        expected.append(Relocation(tag: 1, space: 0, old: RecordLocation(segment: UInt32.max, offset: 0),
                                   new: RecordLocation(segment: 0, offset: 0), length: 0))
        expected.append(Relocation(tag: 2, space: 5, old: RecordLocation(segment: 1, offset: 8),
                                   new: RecordLocation(segment: 0, offset: 0), length: 1))
        var log = CompactionRelocations()
        for relocation in expected { try log.append(relocation) }
        XCTAssertEqual(log.count, expected.count)
        assertSame(try decoded(log), expected)
        // More than one chunk was used, and each entry is far smaller than a 32-byte struct.
        XCTAssertGreaterThan(log.byteCount, CompactionRelocations.chunkSize)
        XCTAssertLessThan(log.byteCount, expected.count * 14)
    }

    /// The benchmark's shape: 100-byte records, every third one live, in one output.
    func testTypicalEntryIsAboutEightBytes() throws {
        var log = CompactionRelocations()
        for i in 0..<100_000 {
            try log.append(Relocation(tag: UInt32(truncatingIfNeeded: i &* 2_654_435_761) | 1, space: 0,
                                  old: RecordLocation(segment: 1, offset: UInt32(32 + i * 369)),
                                  new: RecordLocation(segment: 9, offset: UInt32(32 + i * 123)), length: 123))
        }
        XCTAssertLessThanOrEqual(log.byteCount, 100_000 * 8 + 16, "the first entry spells its locations out")
        var index = 0
        try log.forEach { relocation in
            XCTAssertEqual(relocation.old, RecordLocation(segment: 1, offset: UInt32(32 + index * 369)))
            XCTAssertEqual(relocation.new, RecordLocation(segment: 9, offset: UInt32(32 + index * 123)))
            index += 1
        }
        XCTAssertEqual(index, 100_000)
    }

    /// With a spill path, full chunks go to an unlinked file: one chunk stays in memory, no file
    /// is left in the directory, and the log reads back the same.
    func testSpilledLogReadsBackTheSame() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("relocations-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        var inMemory = CompactionRelocations()
        var spilled = CompactionRelocations(spillPath: directory.appendingPathComponent("log.tmp").path)
        var rng = SeededRandom(seed: 4)
        var offset: UInt32 = 32
        for i in 0..<400_000 {
            offset += UInt32.random(in: 30...600, using: &rng)
            let relocation = Relocation(tag: UInt32.random(in: 1...UInt32.max, using: &rng), space: UInt32(i % 3),
                                        old: RecordLocation(segment: 2 + UInt32(i / 100_000), offset: offset % (1 << 30)),
                                        new: RecordLocation(segment: 50, offset: UInt32(32 + i * 100)), length: 100)
            try inMemory.append(relocation)
            try spilled.append(relocation)
        }
        XCTAssertGreaterThan(spilled.byteCount, 2 * CompactionRelocations.chunkSize)
        XCTAssertEqual(spilled.byteCount, inMemory.byteCount)
        XCTAssertEqual(spilled.chunksInMemory, 1)
        XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: directory.path), [])
        assertSame(try decoded(spilled), try decoded(inMemory))
        XCTAssertEqual(try decoded(spilled).count, 400_000)
    }
}
