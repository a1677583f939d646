import XCTest
@testable import LogStore

/// The keydir against a reference Dictionary. Keys are integers; each key's entry points at
/// "segment = key", so `matches` can tell keys with the same tag apart, as the engine does by
/// reading the record's key.
final class KeyDirTests: XCTestCase {
    private func location(_ key: Int, version: Int = 0) -> RecordLocation {
        RecordLocation(segment: UInt32(key), offset: UInt32(version))
    }

    private func find(_ keydir: KeyDir, key: Int, tag: UInt32) -> Int? {
        keydir.find(tag: tag) { $0.segment == UInt32(key) }
    }

    /// Every entry sits at its home slot or after it with no empty slot between (linear probing
    /// invariant, which backward-shift deletion must keep).
    private func checkInvariant(_ keydir: KeyDir, file: StaticString = #filePath, line: UInt = #line) {
        let capacity = keydir.capacity
        var occupied = 0
        for slot in 0..<capacity {
            let entry = keydir.entry(at: slot)
            guard entry.tag != 0 else { continue }
            occupied += 1
            let home = Int((UInt64(entry.tag) &* UInt64(capacity)) >> 32)
            var i = home
            while i != slot {
                if keydir.entry(at: i).tag == 0 {
                    XCTFail("empty slot \(i) between home \(home) and entry at \(slot)", file: file, line: line)
                    return
                }
                i = (i + 1) % capacity
            }
        }
        XCTAssertEqual(occupied, keydir.count, "count", file: file, line: line)
        XCTAssertLessThanOrEqual(keydir.count * 4, capacity * 3, "load factor", file: file, line: line)
    }

    func testInsertFindRemoveWithForcedCollisions() {
        let keydir = KeyDir()
        // Ten keys share one tag; they differ only through `matches`.
        for key in 0..<10 { keydir.insert(tag: 42, location: location(key)) }
        XCTAssertEqual(keydir.count, 10)
        for key in 0..<10 { XCTAssertEqual(keydir.entry(at: find(keydir, key: key, tag: 42)!).segment, UInt32(key)) }
        XCTAssertNil(find(keydir, key: 10, tag: 42))
        XCTAssertNil(find(keydir, key: 3, tag: 43))
        XCTAssertNotNil(keydir.find(tag: 42, location: location(3)))
        XCTAssertNil(keydir.find(tag: 42, location: location(3, version: 1)))
        keydir.setLocation(location(3, version: 9), at: find(keydir, key: 3, tag: 42)!)
        XCTAssertNotNil(keydir.find(tag: 42, location: location(3, version: 9)))
        for key in [0, 5, 9, 1] {
            keydir.remove(at: find(keydir, key: key, tag: 42)!)
            checkInvariant(keydir)
        }
        XCTAssertEqual(keydir.count, 6)
        for key in 0..<10 { XCTAssertEqual(find(keydir, key: key, tag: 42) != nil, ![0, 5, 9, 1].contains(key), "key \(key)") }
    }

    func testWrapAroundClusters() {
        // Tags whose home is the last slot push the cluster over the end of the table.
        let keydir = KeyDir()
        let high = UInt32.max
        for key in 0..<6 { keydir.insert(tag: high, location: location(key)) }
        for key in 6..<9 { keydir.insert(tag: 1, location: location(key)) }  // home 0, inside the wrapped cluster
        checkInvariant(keydir)
        XCTAssertEqual(keydir.entry(at: keydir.capacity - 1).tag, high)
        keydir.remove(at: find(keydir, key: 0, tag: high)!)
        checkInvariant(keydir)
        keydir.remove(at: find(keydir, key: 6, tag: 1)!)
        checkInvariant(keydir)
        for key in 1..<6 { XCTAssertNotNil(find(keydir, key: key, tag: high)) }
        for key in 7..<9 { XCTAssertNotNil(find(keydir, key: key, tag: 1)) }
    }

    func testGrowthKeepsEveryEntry() {
        let keydir = KeyDir()
        XCTAssertEqual(keydir.capacity, KeyDir.minimumCapacity)
        var rng = SeededRandom(seed: 11)
        var tags: [UInt32] = []
        for key in 0..<20_000 {
            let tag = UInt32.random(in: 1...UInt32.max, using: &rng)
            tags.append(tag)
            keydir.insert(tag: tag, location: location(key))
        }
        XCTAssertEqual(keydir.count, 20_000)
        XCTAssertGreaterThanOrEqual(keydir.capacity * 3, 20_000 * 4)
        XCTAssertEqual(keydir.capacity & (keydir.capacity - 1), 0, "capacity doubles from a power of two")
        XCTAssertEqual(keydir.memoryBytes, keydir.capacity * KeyDir.entrySize)
        XCTAssertEqual(KeyDir.entrySize, 12, "12 bytes an entry")
        checkInvariant(keydir)
        for (key, tag) in tags.enumerated() { XCTAssertNotNil(find(keydir, key: key, tag: tag), "key \(key)") }
        var visited = 0
        keydir.forEach { _ in visited += 1 }
        XCTAssertEqual(visited, 20_000)
        // reserve grows once, ahead of the inserts.
        let reserved = KeyDir()
        reserved.reserve(10_000)
        let capacity = reserved.capacity
        XCTAssertGreaterThanOrEqual(capacity * 3, 10_000 * 4)
        for key in 0..<10_000 { reserved.insert(tag: tags[key], location: location(key)) }
        XCTAssertEqual(reserved.capacity, capacity)
        reserved.removeAll()
        XCTAssertEqual(reserved.count, 0)
        XCTAssertNil(find(reserved, key: 1, tag: tags[1]))
    }

    /// Random inserts, updates and removals against a Dictionary, with tags drawn from a small
    /// set (many collisions, long clusters, wrap-around) and from the full range.
    func testRandomOperationsMatchReference() {
        for seed: UInt64 in [1, 2, 3, 4] {
            var rng = SeededRandom(seed: seed)
            let keydir = KeyDir()
            var reference: [Int: (tag: UInt32, version: Int)] = [:]
            let tagPool: [UInt32] = [1, 2, 3, UInt32.max, UInt32.max - 1, 1 << 31, (1 << 31) + 1, 0x4000_0000, 0xC000_0000]
            let keySpace = seed.isMultiple(of: 2) ? 300 : 3000
            func tag(of key: Int) -> UInt32 {
                // Deterministic per key: clustered tags for some keys, spread ones for others.
                if key % 3 == 0 { return tagPool[key % tagPool.count] }
                var h = SeededRandom(seed: UInt64(key) &* 0x51ED_2701)
                return UInt32(truncatingIfNeeded: h.next()) | 1
            }
            for step in 0..<20_000 {
                let key = Int.random(in: 0..<keySpace, using: &rng)
                let t = tag(of: key)
                let slot = find(keydir, key: key, tag: t)
                XCTAssertEqual(slot != nil, reference[key] != nil, "seed \(seed) step \(step) key \(key) presence")
                if let slot, let expected = reference[key] {
                    XCTAssertEqual(keydir.entry(at: slot).location, location(key, version: expected.version))
                }
                switch Int.random(in: 0..<10, using: &rng) {
                case 0..<5:
                    if let slot {
                        let version = (reference[key]?.version ?? 0) + 1
                        keydir.setLocation(location(key, version: version), at: slot)
                        reference[key] = (t, version)
                    } else {
                        keydir.insert(tag: t, location: location(key))
                        reference[key] = (t, 0)
                    }
                case 5..<9:
                    if let slot {
                        keydir.remove(at: slot)
                        reference[key] = nil
                    }
                default:
                    // Bulk removal by predicate, now and then.
                    if step % 50 == 0 {
                        let victim = Int.random(in: 0..<7, using: &rng)
                        keydir.removeAll { Int($0.segment) % 7 == victim }
                        reference = reference.filter { $0.key % 7 != victim }
                    }
                }
                if step % 997 == 0 { checkInvariant(keydir) }
                XCTAssertEqual(keydir.count, reference.count)
            }
            checkInvariant(keydir)
            for key in 0..<keySpace {
                let slot = find(keydir, key: key, tag: tag(of: key))
                XCTAssertEqual(slot != nil, reference[key] != nil, "seed \(seed) final key \(key)")
                if let slot, let expected = reference[key] {
                    XCTAssertEqual(keydir.entry(at: slot).location, location(key, version: expected.version))
                }
            }
            var seen = Set<Int>()
            keydir.forEach { XCTAssertTrue(seen.insert(Int($0.segment)).inserted, "entry listed twice") }
            XCTAssertEqual(seen, Set(reference.keys))
        }
    }
}
