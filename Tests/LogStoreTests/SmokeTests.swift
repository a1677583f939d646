import XCTest
@testable import LogStore

final class SmokeTests: XCTestCase {
    func testPutGetReopenCompact() throws {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("smoke-\(UUID())")
        defer { try? FileManager.default.removeItem(at: dir) }
        var options = LogStore.Options()
        options.segmentSize = 64 << 10
        var store: LogStore? = try LogStore(directory: dir, options: options)
        for i in 0..<5000 { try store!.put(Array("value-\(i)".utf8), forKey: Array("key-\(i)".utf8)) }
        for i in 0..<5000 where i % 2 == 0 { try store!.delete(forKey: Array("key-\(i)".utf8)) }
        XCTAssertEqual(try store!.get(forKey: Array("key-1".utf8)), Array("value-1".utf8))
        XCTAssertNil(try store!.get(forKey: Array("key-2".utf8)))
        XCTAssertEqual(try store!.keys(space: 0).count, 2500)
        try store!.close()
        store = try LogStore(directory: dir, options: options)
        XCTAssertEqual(store!.recoveryReport, [])
        XCTAssertEqual(try store!.keys(space: 0).count, 2500)
        XCTAssertEqual(try store!.get(forKey: Array("key-4999".utf8)), Array("value-4999".utf8))
        try store!.compact()
        XCTAssertEqual(try store!.keys(space: 0).count, 2500)
        XCTAssertEqual(try store!.get(forKey: Array("key-4999".utf8)), Array("value-4999".utf8))
        let stats = store!.statistics
        XCTAssertEqual(stats.deadBytes, 0, "\(stats)")
        XCTAssertEqual(try store!.verify().problems, [])
        store = nil
        // No close: deinit closed it. Remove the snapshot to force a full scan.
        try FileManager.default.removeItem(at: dir.appendingPathComponent("index.snapshot"))
        store = try LogStore(directory: dir, options: options)
        XCTAssertEqual(try store!.keys(space: 0).count, 2500)
        XCTAssertNil(try store!.get(forKey: Array("key-2".utf8)))
        XCTAssertEqual(try store!.get(forKey: Array("key-3".utf8)), Array("value-3".utf8))
    }
}
