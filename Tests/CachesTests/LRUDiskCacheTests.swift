import Foundation
import XCTest
@testable import Caches
@testable import Preferences
import LogStore

struct Profile: Codable, Equatable, Sendable {
    var name: String
    var age: Int
}

final class LRUDiskCacheTests: CachesTestCase {
    private func records(in store: LogStore, space: LogStore.KeySpace) throws -> [LogStore.RecordInfo] {
        var result: [LogStore.RecordInfo] = []
        try store.forEachRecord { if $0.space == space { result.append($0) } }
        return result
    }

    func testCodableDataStringAndNSCodingValues() throws {
        let profiles = try LRUDiskCache<Profile>(name: "profiles", capacity: 10, userDependent: false, crypted: false)
        profiles.setObject(Profile(name: "ann", age: 3), forKey: "p1")
        XCTAssertEqual(profiles.object(forKey: "p1"), Profile(name: "ann", age: 3))
        let blobs = try LRUDiskCache<Data>(name: "blobs", capacity: 10, userDependent: false, crypted: false)
        blobs.setObject(Data([1, 2, 3]), forKey: "b")
        XCTAssertEqual(blobs.object(forKey: "b"), Data([1, 2, 3]))
        let strings = try LRUDiskCache<String>(name: "strings", capacity: 10, userDependent: false, crypted: false)
        strings.setObject("héllo", forKey: "s")
        XCTAssertEqual(strings.object(forKey: "s"), "héllo")
        let archived = try LRUDiskCache<NSString>(name: "archived", capacity: 10, userDependent: false, crypted: false)
        archived.setObject("archived" as NSString, forKey: "a")
        XCTAssertEqual(archived.object(forKey: "a"), "archived" as NSString)
        strings.setObject(nil, forKey: "s")
        XCTAssertNil(strings.object(forKey: "s"))
        XCTAssertFalse(strings.objectExists(forKey: "s"))
    }

    func testTrimsPastCapacityPlusATenthBackToCapacityLeastRecentFirst() throws {
        let cache = try LRUDiskCache<Int>(name: "trim", capacity: 20, userDependent: false, crypted: false)
        for i in 0..<20 { cache.setObject(i, forKey: "k\(i)") }
        // Read the five oldest, so k5...k9 become the least recently used.
        for i in 0..<5 { XCTAssertEqual(cache.object(forKey: "k\(i)"), i) }
        for i in 20..<22 { cache.setObject(i, forKey: "k\(i)") }
        XCTAssertEqual(cache.count, 22, "runs up to capacity + max(capacity / 10, 1) = 22 before trimming")
        cache.setObject(22, forKey: "k22")
        XCTAssertEqual(cache.count, 20, "the 23rd trims back to capacity")
        for i in 5..<8 { XCTAssertFalse(cache.objectExists(forKey: "k\(i)"), "k\(i) was least recently used") }
        for i in [0, 4, 8, 9, 21, 22] { XCTAssertTrue(cache.objectExists(forKey: "k\(i)"), "k\(i)") }
        let store = try center.logStore(userDependent: false)
        let space = try store.space(named: "lrucache:trim")
        XCTAssertEqual(try store.keys(space: space).count, 20, "the trimmed records are deleted from the store")
    }

    func testTrimDropsExpiredEntriesBeforeLeastRecentlyUsedOnes() throws {
        let cache = try LRUDiskCache<Int>(name: "trim-expired", capacity: 10, userDependent: false, crypted: false)
        for i in 0..<6 { cache.setObject(i, forKey: "old\(i)") }            // the least recently used
        let soon = Date().timeIntervalSince1970 + 0.3
        for i in 0..<5 { cache.setObject(i, forKey: "short\(i)", expire: soon) }
        Thread.sleep(forTimeInterval: 0.4)
        cache.setObject(99, forKey: "new")   // 12 records > 10 + 1: trim
        XCTAssertEqual(Set(cache.allKeys()), Set((0..<6).map { "old\($0)" } + ["new"]),
                       "the expired entries went; the old live ones stayed, being within capacity")
        let store = try center.logStore(userDependent: false)
        XCTAssertEqual(try store.keys(space: try store.space(named: "lrucache:trim-expired")).count, 7)
    }

    func testExpiredReadsAsNilAndIsRemoved() throws {
        let cache = try LRUDiskCache<String>(name: "expiry", capacity: 10, userDependent: false, crypted: false)
        let now = Date().timeIntervalSince1970
        cache.setObject("gone", forKey: "past", expire: now - 5)
        cache.setObject("soon", forKey: "soon", expire: now + 0.3)
        cache.setObject("kept", forKey: "kept", expire: now + 3600)
        XCTAssertNil(cache.object(forKey: "past"))
        XCTAssertEqual(cache.object(forKey: "soon"), "soon")
        Thread.sleep(forTimeInterval: 0.4)
        XCTAssertFalse(cache.objectExists(forKey: "soon"))
        XCTAssertEqual(cache.count, 1)
        XCTAssertEqual(cache.allKeys(), ["kept"])
        XCTAssertNil(cache.object(forKey: "soon"))
        let store = try center.logStore(userDependent: false)
        let space = try store.space(named: "lrucache:expiry")
        let live = try records(in: store, space: space).filter { $0.isLive && !$0.isTombstone }.map { String(decoding: $0.key, as: UTF8.self) }
        XCTAssertEqual(live, ["kept"], "expired entries are removed on read, not only hidden")
    }

    func testRemovalsLikeKeysAndAll() throws {
        let cache = try LRUDiskCache<Int>(name: "removals", capacity: 100, userDependent: false, crypted: false)
        cache.addObjects(["user_1": 1, "USERx2": 2, "user%3": 3, "group.1": 4, "u": 5])
        XCTAssertEqual(cache.count, 5)
        cache.removeObjects(like: "user_%")
        XCTAssertEqual(Set(cache.allKeys()), ["group.1", "u"], "LIKE: _ is any one character, ASCII case-insensitive")
        cache.removeObjects(forKeys: ["u", "missing"])
        XCTAssertEqual(cache.allKeys(), ["group.1"])
        cache.removeObject(forKey: "group.1")
        XCTAssertEqual(cache.count, 0)
        cache.addObjects(["a": 1, "b": 2])
        cache.removeAllObjects()
        XCTAssertNil(cache.object(forKey: "a"))
        XCTAssertEqual(cache.count, 0)
    }

    /// FORMAT.md, "Caches", LRUDiskCache: `expire` x 1000 rounded up to a whole millisecond, the
    /// same number in the entry record's expiry field and in its order record (issue 22, item 4:
    /// one of them used to truncate).
    func testFractionalExpireIsRoundedUpToTheSameMillisecondInBothRecords() throws {
        let path = root.appendingPathComponent("expiry", isDirectory: true)
        let storage = try CustomStorage(path: path)
        let cache = try LRUDiskCache<Int>(name: "expiry", capacity: 10, userDependent: false, crypted: false, in: storage)
        let base = (Date().timeIntervalSince1970 + 3600).rounded(.down)
        let cases: [(fraction: Double, extraMillis: UInt64)] = [(0.0004, 1), (0.0005, 1), (0.1234, 124), (0.9999, 1000), (0.25, 250), (0, 0)]
        for (i, item) in cases.enumerated() { cache.setObject(i, forKey: "k\(i)", expire: base + item.fraction) }
        cache.flush()
        let store = try storage.logStore(userDependent: false)
        let entries = try records(in: store, space: store.space(named: "lrucache:expiry")).filter(\.isLive)
        let orders = try records(in: store, space: store.space(named: "lrucache-order:expiry")).filter(\.isLive)
        XCTAssertEqual(entries.count, cases.count)
        XCTAssertEqual(orders.count, cases.count)
        for (i, item) in cases.enumerated() {
            let key = Array("k\(i)".utf8)
            let expected = UInt64(base) * 1000 + item.extraMillis
            let entry = try XCTUnwrap(entries.first { $0.key == key }?.expiresAt, "k\(i) has an expiry")
            XCTAssertEqual(UInt64((entry.timeIntervalSince1970 * 1000).rounded()), expected, "entry record of k\(i)")
            let order = try XCTUnwrap(orders.first { $0.key == key }?.value, "k\(i) has an order record")
            XCTAssertEqual(order.count, 16)
            let orderMillis = order[8..<16].reversed().reduce(UInt64(0)) { $0 << 8 | UInt64($1) }
            XCTAssertEqual(orderMillis, expected, "order record of k\(i)")
        }
        try storage.close()
    }

    func testOrderSurvivesReopenWithoutAWritePerRead() throws {
        let path = root.appendingPathComponent("custom", isDirectory: true)
        var storage: CustomStorage? = try CustomStorage(path: path)
        var cache: LRUDiskCache<Int>? = try LRUDiskCache<Int>(name: "order", capacity: 10, userDependent: false, crypted: false, in: storage)
        for i in 0..<10 { cache?.setObject(i, forKey: "k\(i)") }
        cache?.flush()
        let store = try XCTUnwrap(storage?.logStore(userDependent: false))
        var recordCount = 0
        try store.forEachRecord { _ in recordCount += 1 }
        for i in 0..<5 { XCTAssertEqual(cache?.object(forKey: "k\(i)"), i) }
        var afterReads = 0
        try store.forEachRecord { _ in afterReads += 1 }
        XCTAssertEqual(afterReads, recordCount, "reads write nothing")
        cache = nil   // the last cache of the index persists the order
        try storage?.close()
        storage = nil

        let reopened = try CustomStorage(path: path)
        let again = try LRUDiskCache<Int>(name: "order", capacity: 10, userDependent: false, crypted: false, in: reopened)
        XCTAssertEqual(again.count, 10)
        XCTAssertEqual(Array(again.allKeys().suffix(5)), ["k9", "k8", "k7", "k6", "k5"],
                       "k5...k9 rank below the k0...k4 read before the reopen")
        again.setObject(10, forKey: "k10")
        again.setObject(11, forKey: "k11")   // 12 > 10 + 1 -> trim to 10
        XCTAssertEqual(again.count, 10)
        for i in 5..<7 { XCTAssertFalse(again.objectExists(forKey: "k\(i)"), "k\(i)") }
        for i in [0, 1, 2, 3, 4, 7, 8, 9, 10, 11] { XCTAssertTrue(again.objectExists(forKey: "k\(i)"), "k\(i)") }
        try reopened.close()
    }

    func testCryptedCachesStoreCiphertext() throws {
        let secret = "top-secret-value-0123456789"
        let crypted = try LRUDiskCache<String>(name: "secret", capacity: 10, userDependent: false, crypted: true)
        let plain = try LRUDiskCache<String>(name: "open", capacity: 10, userDependent: false, crypted: false)
        crypted.setObject(secret, forKey: "k")
        plain.setObject(secret, forKey: "k")
        XCTAssertEqual(crypted.object(forKey: "k"), secret)
        let store = try center.logStore(userDependent: false)
        let secretRecords = try records(in: store, space: try store.space(named: "lrucache:secret"))
        let openRecords = try records(in: store, space: try store.space(named: "lrucache:open"))
        let needle = Array(secret.utf8)
        func contains(_ haystack: [UInt8]) -> Bool {
            haystack.count >= needle.count && (0...(haystack.count - needle.count)).contains { Array(haystack[$0..<$0 + needle.count]) == needle }
        }
        XCTAssertFalse(secretRecords.contains { contains($0.value) }, "no plaintext on disk")
        XCTAssertTrue(openRecords.contains { contains($0.value) }, "the plain cache stores it as is (the check can fail)")
    }

    func testUserDependentCachesFollowTheCurrentUser() throws {
        let cache = try LRUDiskCache<String>(name: "per-user", capacity: 10, userDependent: true, crypted: false)
        cache.setObject("dropped", forKey: "k")
        XCTAssertNil(cache.object(forKey: "k"), "no user: writes dropped, reads empty")
        try center.setCurrentUserId("u1")
        cache.setObject("one", forKey: "k")
        XCTAssertEqual(cache.object(forKey: "k"), "one")
        try center.setCurrentUserId("u2")
        XCTAssertNil(cache.object(forKey: "k"))
        cache.setObject("two", forKey: "k")
        try center.setCurrentUserId("u1")
        XCTAssertEqual(cache.object(forKey: "k"), "one")
        try center.setCurrentUserId("u2")
        XCTAssertEqual(cache.object(forKey: "k"), "two")
        try center.setCurrentUserId(nil)
        XCTAssertFalse(cache.objectExists(forKey: "k"))
        XCTAssertEqual(cache.count, 0)
    }

    func testOrderIsPersistedBeforeAUsersStoreCloses() throws {
        try center.setCurrentUserId("u1")
        let cache = try LRUDiskCache<Int>(name: "per-user-order", capacity: 4, userDependent: true, crypted: false)
        for i in 0..<4 { cache.setObject(i, forKey: "k\(i)") }
        cache.flush()
        XCTAssertEqual(cache.object(forKey: "k0"), 0)   // k0 becomes the most recent, in memory only
        try center.setCurrentUserId("u2")                // u1's store closes: the order must be saved first
        XCTAssertEqual(cache.count, 0)
        try center.setCurrentUserId("u1")                // reopened, the index is loaded from the store
        XCTAssertEqual(cache.allKeys(), ["k0", "k3", "k2", "k1"])
        for i in 4..<6 { cache.setObject(i, forKey: "k\(i)") }   // 6 > 4 + 1: trim to 4
        XCTAssertEqual(Set(cache.allKeys()), ["k0", "k3", "k4", "k5"])
    }

    func testReadYourWritesAcrossThreads() throws {
        let cache = try LRUDiskCache<Int>(name: "concurrent", capacity: 0, userDependent: false, crypted: false)
        DispatchQueue.concurrentPerform(iterations: 4) { worker in
            for i in 0..<300 {
                let key = "w\(worker)-\(i)"
                cache.setObject(i, forKey: key)
                XCTAssertEqual(cache.object(forKey: key), i, "a write is visible as soon as its call returns")
            }
        }
        XCTAssertEqual(cache.count, 1_200, "capacity 0: no limit")
    }
}
