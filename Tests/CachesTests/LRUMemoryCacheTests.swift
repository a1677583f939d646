import Foundation
import XCTest
@testable import Caches

final class LRUMemoryCacheTests: XCTestCase {
    func testSetGetAndNilRemoves() {
        let cache = LRUMemoryCache<Int>(capacity: 10)
        cache.setObject(1, forKey: "a")
        XCTAssertEqual(cache.object(forKey: "a"), 1)
        cache.setObject(2, forKey: "a")
        XCTAssertEqual(cache.object(forKey: "a"), 2)
        cache.setObject(nil, forKey: "a")
        XCTAssertNil(cache.object(forKey: "a"))
        XCTAssertEqual(cache.count, 0)
        cache.setObject(3, forKey: "b")
        cache.removeObject(forKey: "b")
        cache.removeObject(forKey: "absent")
        XCTAssertFalse(cache.objectExists(forKey: "b"))
        XCTAssertNil(cache.object(forKey: "never"))
    }

    func testEvictsLeastRecentlyUsedAndReadsRenewRecency() {
        let cache = LRUMemoryCache<Int>(capacity: 3)
        cache.setObject(1, forKey: "a")
        cache.setObject(2, forKey: "b")
        cache.setObject(3, forKey: "c")
        XCTAssertEqual(cache.object(forKey: "a"), 1)   // a is now the most recent; b the least
        cache.setObject(4, forKey: "d")
        XCTAssertNil(cache.object(forKey: "b"))
        XCTAssertEqual(cache.allKeys(), ["d", "a", "c"])
        cache.setObject(5, forKey: "e")
        XCTAssertFalse(cache.objectExists(forKey: "c"))
        XCTAssertEqual(cache.count, 3)
    }

    func testExpireMakesEntriesInvisibleToEveryCall() throws {
        let cache = LRUMemoryCache<String>(capacity: 10)
        let now = Date().timeIntervalSince1970
        cache.setObject("past", forKey: "p", expire: now - 1)
        cache.setObject("soon", forKey: "s", expire: now + 0.3)
        cache.setObject("later", forKey: "l", expire: now + 3600)
        cache.setObject("never", forKey: "n", expire: 0)
        XCTAssertNil(cache.object(forKey: "p"))
        XCTAssertFalse(cache.objectExists(forKey: "p"))
        XCTAssertEqual(cache.object(forKey: "s"), "soon")
        XCTAssertEqual(cache.count, 3)
        Thread.sleep(forTimeInterval: 0.4)
        XCTAssertFalse(cache.objectExists(forKey: "s"))
        XCTAssertEqual(Set(cache.peekObjects(10, fromHead: true)), ["later", "never"])
        XCTAssertEqual(cache.count, 2)
        XCTAssertEqual(Set(cache.allKeys()), ["l", "n"])
        XCTAssertNil(cache.object(forKey: "s"))
    }

    func testRegexRemovalSearchesAnywhereInTheKey() throws {
        let cache = LRUMemoryCache<Int>(capacity: 100)
        for key in ["user.1", "user.22", "xuser.3", "group.1", "User.4"] { cache.setObject(1, forKey: key) }
        try cache.removeObjects(matchingRegex: "user\\.\\d")
        XCTAssertEqual(Set(cache.allKeys()), ["group.1", "User.4"], "a match anywhere removes; case-sensitive")
        try cache.removeObjects(matchingRegex: "^g")
        XCTAssertEqual(cache.allKeys(), ["User.4"])
        XCTAssertThrowsError(try cache.removeObjects(matchingRegex: "("))
        XCTAssertEqual(cache.allKeys(), ["User.4"], "an invalid pattern removes nothing")
    }

    func testPrefixSuffixAndKeysRemoval() {
        let cache = LRUMemoryCache<Int>(capacity: 100)
        for key in ["img.a.png", "img.b.jpg", "doc.c.png", "doc.d.txt", "e"] { cache.setObject(1, forKey: key) }
        cache.removeObjects(withPrefix: "img.")
        XCTAssertEqual(Set(cache.allKeys()), ["doc.c.png", "doc.d.txt", "e"])
        cache.removeObjects(withSuffix: ".png")
        XCTAssertEqual(Set(cache.allKeys()), ["doc.d.txt", "e"])
        cache.removeObjects(forKeys: Set(["e", "missing"]))
        XCTAssertEqual(cache.allKeys(), ["doc.d.txt"])
        cache.removeAllObjects()
        XCTAssertEqual(cache.count, 0)
        cache.setObject(9, forKey: "after")
        XCTAssertEqual(cache.object(forKey: "after"), 9, "usable after removeAll")
    }

    func testPeekAndExistsLeaveTheOrderAlone() {
        let cache = LRUMemoryCache<Int>(capacity: 3)
        cache.setObject(1, forKey: "a")
        cache.setObject(2, forKey: "b")
        cache.setObject(3, forKey: "c")
        XCTAssertEqual(cache.peekObjects(2, fromHead: true), [3, 2])
        XCTAssertEqual(cache.peekObjects(2, fromHead: false), [1, 2])
        XCTAssertEqual(cache.peekObjects(10, fromHead: false), [1, 2, 3])
        XCTAssertEqual(cache.peekObjects(0, fromHead: true), [])
        XCTAssertTrue(cache.objectExists(forKey: "a"))
        cache.setObject(4, forKey: "d")
        XCTAssertFalse(cache.objectExists(forKey: "a"), "peek and exists did not make a recent")
    }

    func testResetCapacityShrinksAtOnce() {
        let cache = LRUMemoryCache<Int>(capacity: 5)
        for i in 0..<5 { cache.setObject(i, forKey: "k\(i)") }
        cache.resetCapacity(2)
        XCTAssertEqual(cache.allKeys(), ["k4", "k3"])
        cache.resetCapacity(4)
        for i in 5..<8 { cache.setObject(i, forKey: "k\(i)") }
        XCTAssertEqual(cache.allKeys(), ["k7", "k6", "k5", "k4"])
        XCTAssertEqual(cache.currentCapacity, 4)
    }

    func testMemoryWarningEmptiesOnlyWhenHandled() {
        let cache = LRUMemoryCache<Int>(capacity: 5)
        cache.setObject(1, forKey: "a")
        XCTAssertFalse(cache.handleMemoryWarning)
        cache.didReceiveMemoryWarning()
        XCTAssertEqual(cache.count, 1)
        NotificationCenter.default.post(name: .lruMemoryCacheMemoryWarning, object: nil)
        XCTAssertEqual(cache.count, 1, "not handled: the warning is ignored")
        cache.handleMemoryWarning = true
        cache.didReceiveMemoryWarning()
        XCTAssertEqual(cache.count, 0)
        cache.setObject(2, forKey: "b")
        NotificationCenter.default.post(name: .lruMemoryCacheMemoryWarning, object: nil)
        XCTAssertEqual(cache.count, 0, "the posted warning empties a handling cache")
    }

    func testAddObjectsAndCostAndAgeLimits() {
        let cache = LRUMemoryCache<Int>(capacity: 0, totalCostLimit: 10)
        cache.addObjects(["a": 1, "b": 2, "c": 3])
        XCTAssertEqual(cache.count, 3, "capacity 0: no count limit")
        cache.setObject(4, forKey: "big", cost: 6)
        cache.setObject(5, forKey: "bigger", cost: 6)
        XCTAssertFalse(cache.objectExists(forKey: "big"))
        XCTAssertEqual(cache.currentTotalCost, 6)
        XCTAssertEqual(cache.allKeys(), ["bigger"], "over the cost limit, least recently used go first, whatever their cost")

        let aged = LRUMemoryCache<Int>(capacity: 10, ageLimit: 0.2)
        aged.setObject(1, forKey: "x")
        XCTAssertEqual(aged.object(forKey: "x"), 1)
        Thread.sleep(forTimeInterval: 0.3)
        XCTAssertNil(aged.object(forKey: "x"))
        XCTAssertEqual(aged.count, 0)
    }

    func testConcurrentUseKeepsTheLimitAndValues() {
        let cache = LRUMemoryCache<Int>(capacity: 100)
        DispatchQueue.concurrentPerform(iterations: 8) { worker in
            for i in 0..<5_000 {
                let key = "k\((i * 7 + worker) % 300)"
                if i % 3 == 0 { cache.setObject(i, forKey: key) } else if let value = cache.object(forKey: key) {
                    XCTAssertEqual(value % 3, 0)
                }
            }
        }
        XCTAssertLessThanOrEqual(cache.count, 100)
        XCTAssertEqual(cache.allKeys().count, cache.count)
    }
}
