import XCTest
@testable import LogStore

/// `forEachStoredValue(space:parts:partsUsed:_:)`: every live record of one space, once, with its value lent
/// only when it is stored plain and passes its checksum.
final class SpaceWalkTests: StoreTestCase {
    private func walk(_ store: LogStore, space: LogStore.KeySpace) throws -> [[UInt8]: [UInt8]?] {
        var seen: [[UInt8]: [UInt8]?] = [:]
        try store.forEachStoredValue(space: space, parts: 1, partsUsed: { XCTAssertEqual($0, 1) }) { _, key, value in
            XCTAssertFalse(seen.keys.contains(Array(key)), "a key walked twice")
            let lent: [UInt8]? = value.map { Array($0) }
            seen.updateValue(lent, forKey: Array(key))   // a nil value kept, not a removal
        }
        return seen
    }

    func testTheWalkSeesTheLiveRecordsOfItsSpaceOnly() throws {
        var options = LogStore.Options()
        options.segmentSize = 16 << 10
        let store = try LogStore(directory: temporary.make(), options: options)
        for i in 0..<500 { try store.put(b("v\(i)"), forKey: b("k\(i)"), space: 3) }
        for i in 0..<100 { try store.put(b("other"), forKey: b("k\(i)"), space: 4) }
        for i in 0..<50 { try store.delete(forKey: b("k\(i * 2)"), space: 3) }
        for i in 400..<500 { try store.put(b("w\(i)"), forKey: b("k\(i)"), space: 3) }
        try store.put(b("gone"), forKey: b("expired"), space: 3, expiresAt: Date(timeIntervalSinceNow: -1))
        var expected: [[UInt8]: [UInt8]?] = [:]
        for i in 0..<500 where !(i < 100 && i % 2 == 0) { expected[b("k\(i)")] = b(i >= 400 ? "w\(i)" : "v\(i)") }
        XCTAssertEqual(try walk(store, space: 3), expected)
        XCTAssertEqual(try walk(store, space: 4).count, 100)
        XCTAssertEqual(try walk(store, space: 9).count, 0)
        try store.compact()
        XCTAssertEqual(try walk(store, space: 3), expected, "after compaction")
        try store.close()
        XCTAssertThrowsError(try store.forEachStoredValue(space: 3, parts: 1, partsUsed: { _ in }) { _, _, _ in }) { error in
            guard case StoreError.closed = error else { return XCTFail("\(error)") }
        }
    }

    /// A large space walked in two parts at once (on a machine with two cores) still visits
    /// each record once, and each part sees only its own records.
    func testTheWalkInPartsVisitsEachRecordOnce() throws {
        var options = LogStore.Options()
        options.segmentSize = 1 << 20
        let store = try LogStore(directory: temporary.make(), options: options)
        let total = 40_000
        var batch = LogStore.WriteBatch()
        for i in 0..<total { batch.put(b("value \(i)"), forKey: b("key \(i)"), space: 7) }
        try store.write(batch)
        try store.put(b("elsewhere"), forKey: b("key 1"), space: 8)
        let lock = NSLock()
        var seen: [[UInt8]: Int] = [:]
        var parts = 0
        try store.forEachStoredValue(space: 7, parts: 2, partsUsed: { parts = $0 }) { part, key, value in
            XCTAssertEqual(value.map { Array($0) }, b("value ") + Array(key.dropFirst(4)))
            lock.lock()
            seen[Array(key), default: 0] += 1
            lock.unlock()
            XCTAssertTrue(part < parts)
        }
        XCTAssertEqual(parts, ProcessInfo.processInfo.activeProcessorCount > 1 ? 2 : 1)
        XCTAssertEqual(seen.count, total)
        XCTAssertTrue(seen.values.allSatisfy { $0 == 1 })
        try store.close()
    }

    /// Encrypted and compressed records are walked without a value (the caller reads them by
    /// key), and so is a record whose bytes no longer match its checksum.
    func testRecordsThatCannotBeLentComeWithoutAValue() throws {
        var options = LogStore.Options()
        options.encryption = LogStore.Options.Encryption(key: Array(repeating: 5, count: 32), keyID: 1)
        options.compression = LogStore.Options.Compression(level: 3, threshold: 64)
        let directory = temporary.make()
        var store = try LogStore(directory: directory, options: options)
        try store.put(b("secret"), forKey: b("encrypted"), space: 1)
        try store.put(Array(repeating: 7, count: 4096), forKey: b("compressed"), space: 1, crypt: .plain)
        try store.put(b("in the clear, marker-0123456789"), forKey: b("plain"), space: 1, crypt: .plain)
        try store.put(b("in the clear too"), forKey: b("damaged"), space: 1, crypt: .plain)
        try store.close()
        // Damage the last record's value: it must come back without a value, not with its bytes.
        let segment = try XCTUnwrap(try FileManager.default.contentsOfDirectory(atPath: directory.path).filter { $0.hasSuffix(".seg") }.sorted().last)
        let url = directory.appendingPathComponent(segment)
        var bytes = try Data(contentsOf: url)
        let range = try XCTUnwrap(bytes.range(of: Data(b("in the clear too"))))
        bytes[range.lowerBound] ^= 0x01
        try bytes.write(to: url)
        store = try LogStore(directory: directory, options: options)
        let seen = try walk(store, space: 1)
        XCTAssertEqual(Set(seen.keys), [b("encrypted"), b("compressed"), b("plain"), b("damaged")])
        XCTAssertEqual(seen[b("encrypted")], .some(nil))
        XCTAssertEqual(seen[b("compressed")], .some(nil))
        XCTAssertEqual(seen[b("damaged")], .some(nil))
        XCTAssertEqual(seen[b("plain")], .some(b("in the clear, marker-0123456789")))
        try store.close()
    }
}
