import Foundation
import XCTest

/// `verify` on good and damaged stores.
final class VerifyTests: UstoreTestCase {
    /// A closed store holding key0...key(count-1), each with a 48-byte value.
    private func makeGoodStore(count: Int = 4) throws -> URL {
        let store = try makeStorePath()
        for index in 0..<count {
            try ustoreOK(["put", store.path, "key\(index)", String(repeating: Character(String(index)), count: 48)])
        }
        return store
    }

    /// The segment and offset of every record, from `dump`.
    private func recordOffsets(_ store: URL) throws -> [(segment: Int, offset: Int)] {
        try ustoreOK(["dump", store.path]).lines.map { line in
            let record = try parseObject(line)
            return (try XCTUnwrap(record["segment"] as? Int), try XCTUnwrap(record["offset"] as? Int))
        }
    }

    /// Runs verify, checks the exit status matches the JSON's "ok", and returns the JSON.
    private func verify(_ store: URL, file: StaticString = #filePath, line: UInt = #line) throws -> (status: Int32, ok: Bool, problems: [String], checked: Int) {
        let run = try ustore(["verify", store.path], file: file, line: line)
        let json = try parseObject(run.stdoutText, file: file, line: line)
        let ok = try XCTUnwrap(json["ok"] as? Bool, file: file, line: line)
        let problems = try XCTUnwrap(json["problems"] as? [String], file: file, line: line)
        XCTAssertEqual(ok, problems.isEmpty, file: file, line: line)
        XCTAssertEqual(run.status, ok ? 0 : 1, run.stderr, file: file, line: line)
        return (run.status, ok, problems, try XCTUnwrap(json["recordsChecked"] as? Int, file: file, line: line))
    }

    func testGoodStoreVerifies() throws {
        let store = try makeGoodStore(count: 5)
        let result = try verify(store)
        XCTAssertEqual(result.status, 0)
        XCTAssertTrue(result.ok)
        XCTAssertEqual(result.problems, [])
        XCTAssertEqual(result.checked, 5)
    }

    func testFlippedByteIsReportedWithFileAndOffset() throws {
        let original = try makeGoodStore()
        let records = try recordOffsets(original)
        XCTAssertEqual(records.count, 4)
        let victim = records[1], next = records[2]
        XCTAssertEqual(victim.segment, next.segment)

        let copy = try copyStore(original)
        let segment = copy.appendingPathComponent(String(format: "%08d.seg", victim.segment))
        var bytes = [UInt8](try Data(contentsOf: segment))
        let target = victim.offset + (next.offset - victim.offset) / 2   // inside the record
        bytes[target] ^= 0x5A
        try Data(bytes).write(to: segment)

        let result = try verify(copy)
        XCTAssertEqual(result.status, 1)
        XCTAssertFalse(result.ok)
        XCTAssertTrue(result.problems.contains { $0.contains(segment.lastPathComponent) && $0.contains("\(victim.offset)") },
                      "no problem names \(segment.lastPathComponent) and offset \(victim.offset): \(result.problems)")
        XCTAssertEqual(result.checked, 3, "the three intact records are still checked")

        // Verify opens read-only: the damaged copy is left exactly as it was.
        XCTAssertEqual([UInt8](try Data(contentsOf: segment)), bytes)
        // And the original store is untouched by the damage to its copy.
        XCTAssertTrue(try verify(original).ok)
    }

    func testGarbageTailIsReportedOnce() throws {
        let copy = try copyStore(try makeGoodStore())
        let segment = try XCTUnwrap(try segmentFiles(in: copy).last)
        let handle = try FileHandle(forWritingTo: segment)
        try handle.seekToEnd()
        try handle.write(contentsOf: Data(repeating: 0xEE, count: 21))
        try handle.close()

        let result = try verify(copy)
        XCTAssertEqual(result.status, 1)
        let garbage = result.problems.filter { $0.contains("garbage") }
        XCTAssertEqual(garbage.count, 1, "\(result.problems)")
        XCTAssertTrue(garbage.first?.contains(segment.lastPathComponent) == true)
        XCTAssertTrue(garbage.first?.contains("21 bytes") == true, "\(garbage)")
        XCTAssertEqual(result.checked, 4)
    }

    func testUnreadableSegmentHeaderIsAProblem() throws {
        let copy = try copyStore(try makeGoodStore())
        let segment = try XCTUnwrap(try segmentFiles(in: copy).first)
        var bytes = [UInt8](try Data(contentsOf: segment))
        bytes[0] ^= 0xFF
        try Data(bytes).write(to: segment)

        let result = try verify(copy)
        XCTAssertEqual(result.status, 1)
        XCTAssertTrue(result.problems.contains { $0.contains("unreadable") && $0.contains(segment.lastPathComponent) },
                      "\(result.problems)")
    }
}
