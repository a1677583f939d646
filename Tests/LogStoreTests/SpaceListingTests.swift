import XCTest
import CChecksum
@testable import LogStore

/// The keydir split by key space: listing, entries and removeAll of one space see that space
/// only, through writes, deletes, reopen (snapshot and full scan), compaction and many spaces;
/// and a store whose snapshot is the older, unspaced version 1 still opens.
final class SpaceListingTests: StoreTestCase {
    /// Keys of `count` in `space`, named so that their order is their number's.
    private func keys(_ count: Int, _ tag: String) -> [[UInt8]] { (0..<count).map { b(String(format: "\(tag)-%05d", $0)) } }

    func testListingSeesOnlyItsSpaceThroughReopenAndCompaction() throws {
        let directory = temporary.make()
        // A big space, a small one, and more spaces than the short scan list holds (8), so the
        // lookup by dictionary is exercised too.
        let big = keys(3000, "big"), small = keys(100, "small")
        let extraSpaces: [LogStore.KeySpace] = Array(10..<22)
        do {
            let store = try LogStore(directory: directory, options: options(segmentSize: 32 << 10))
            for key in big { try store.put(key + b("=v"), forKey: key, space: 0) }
            for key in small { try store.put(key + b("=s"), forKey: key, space: 5) }
            for space in extraSpaces { try store.put(b("x\(space)"), forKey: b("only"), space: space) }
            // Same key bytes in two spaces are two keys.
            try store.put(b("in space 5"), forKey: big[0], space: 5)
            XCTAssertEqual(try store.keys(space: 5), (small + [big[0]]).sorted { $0.lexicographicallyPrecedes($1) })
            XCTAssertEqual(try store.keys(space: 5, prefix: b("small-0009")), keys(100, "small").filter { $0.starts(with: b("small-0009")) })
            XCTAssertEqual(try store.entries(space: 5).count, 101)
            XCTAssertEqual(try store.keys(space: 4), [])
            for space in extraSpaces { XCTAssertEqual(try store.entries(space: space).map(\.value), [b("x\(space)")]) }
            // Deletes and overwrites move between tables' slots, never across spaces.
            for key in small.prefix(50) { try store.delete(forKey: key, space: 5) }
            for key in big.prefix(1000) { try store.put(b("new"), forKey: key, space: 0) }
            try store.removeAll(space: extraSpaces[3])
            XCTAssertEqual(try store.keys(space: extraSpaces[3]), [])
            XCTAssertEqual(try store.keys(space: 5).count, 51)
            XCTAssertEqual(try store.keys(space: 0).count, 3000)
            try store.close()
        }
        func check(_ store: LogStore, _ context: String) throws {
            XCTAssertEqual(try store.keys(space: 5), (Array(small.suffix(50)) + [big[0]]).sorted { $0.lexicographicallyPrecedes($1) }, context)
            XCTAssertEqual(try store.keys(space: 0), big, context)
            XCTAssertEqual(try store.get(forKey: big[0], space: 0), b("new"), context)
            XCTAssertEqual(try store.get(forKey: big[2999], space: 0), big[2999] + b("=v"), context)
            XCTAssertEqual(try store.get(forKey: big[0], space: 5), b("in space 5"), context)
            for (index, space) in extraSpaces.enumerated() {
                XCTAssertEqual(try store.keys(space: space), index == 3 ? [] : [b("only")], "\(context), space \(space)")
            }
        }
        // Reopen through the snapshot, then without it (full scan), then after a compaction.
        var store = try LogStore(directory: directory, options: options(segmentSize: 32 << 10))
        XCTAssertEqual(store.recoveryReport, [])
        try check(store, "snapshot")
        try store.close()
        try FileManager.default.removeItem(at: directory.appendingPathComponent("index.snapshot"))
        store = try LogStore(directory: directory, options: options(segmentSize: 32 << 10))
        try check(store, "full scan")
        try store.compact()
        try check(store, "compacted")
        try store.removeAll(space: 0)
        XCTAssertEqual(try store.keys(space: 0), [])
        XCTAssertEqual(try store.keys(space: 5).count, 51, "removeAll of space 0 leaves space 5")
        try store.close()
        store = try LogStore(directory: directory, options: options(segmentSize: 32 << 10))
        XCTAssertEqual(try store.keys(space: 0), [])
        XCTAssertEqual(try store.keys(space: 5).count, 51)
        XCTAssertEqual(try store.verify().problems, [])
        try store.close()
    }

    /// A store closed by a version that wrote snapshot version 1 (one table for every space)
    /// opens: the snapshot is reported as not used, every segment is read, nothing is lost, and
    /// the next close writes version 2.
    func testVersion1SnapshotStoreOpens() throws {
        let directory = temporary.make()
        var expected: [LogStore.KeySpace: [[UInt8]: [UInt8]]] = [:]
        do {
            let store = try LogStore(directory: directory, options: options())
            for index in 0..<500 {
                let space = LogStore.KeySpace(index % 3)
                try store.put(b("value \(index)"), forKey: b("k\(index)"), space: space)
                expected[space, default: [:]][b("k\(index)")] = b("value \(index)")
            }
            try store.close()
        }
        let snapshotURL = directory.appendingPathComponent("index.snapshot")
        let written = try [UInt8](Data(contentsOf: snapshotURL))
        let (current, currentKeydir) = try written.withUnsafeBytes { try IndexSnapshot.decode($0, path: "v3") }
        let version2 = current.encodeVersion2(keydir: currentKeydir)
        try Data(Self.version1(of: version2)).write(to: snapshotURL)
        var store = try LogStore(directory: directory, options: options())
        XCTAssertTrue(store.recoveryReport.contains { $0.contains("index snapshot not used") && $0.contains("version 1") }, "\(store.recoveryReport)")
        for space: LogStore.KeySpace in 0..<3 { try assertContents(store, expected[space] ?? [:], space: space) }
        try store.close()
        XCTAssertEqual(try [UInt8](Data(contentsOf: snapshotURL))[4], 3, "the next close writes version 3")
        store = try LogStore(directory: directory, options: options())
        XCTAssertEqual(store.recoveryReport, [])
        for space: LogStore.KeySpace in 0..<3 { try assertContents(store, expected[space] ?? [:], space: space) }
        try store.close()
    }

    /// The version 1 snapshot of the same keydir (FORMAT.md as of version 1): the header with
    /// the table capacity at offset 40, the segments, then every entry of one table.
    static func version1(of version2: [UInt8]) throws -> [UInt8] {
        let (snapshot, keydirs) = try version2.withUnsafeBytes { try IndexSnapshot.decode($0, path: "v2") }
        let table = KeyDir()
        keydirs.forEach { _, entry in table.insert(tag: entry.tag, location: entry.location) }
        var bytes = Array(version2[0..<IndexSnapshot.headerSize + snapshot.segments.count * IndexSnapshot.segmentRecordSize])
        bytes[4] = 1
        bytes.replaceSubrange(40..<44, with: withUnsafeBytes(of: UInt32(table.capacity).littleEndian, Array.init))
        var previous = -1
        table.forEachSlot { slot, entry in
            Varint.append(UInt64(slot - previous - 1), to: &bytes)
            previous = slot
            LittleEndian.append32(entry.tag, to: &bytes)
            Varint.append(UInt64(entry.segment), to: &bytes)
            LittleEndian.append32(entry.offset, to: &bytes)
        }
        LittleEndian.append32(bytes.withUnsafeBytes { cs_crc32c_extend(0, $0.baseAddress, $0.count) }, to: &bytes)
        return bytes
    }
}
