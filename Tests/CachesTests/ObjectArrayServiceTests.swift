import Foundation
import XCTest
@testable import Caches
@testable import Preferences
import LogStore

final class ObjectArrayServiceTests: CachesTestCase {
    private var storage: CustomStorage!

    override func setUpWithError() throws {
        try super.setUpWithError()
        storage = try CustomStorage.named("Objects")
    }

    override func tearDownWithError() throws {
        try storage?.close()
        storage = nil
        try super.tearDownWithError()
    }

    func testBackgroundWritesAreVisibleToTheNextCall() throws {
        let objects = try storage.objectArrayService(name: "msgs", userDependent: false, capacity: 0, cacheCapacity: 10, crypted: false, of: Profile.self)
        for i in 0..<200 {
            objects.setObject(Profile(name: "n\(i)", age: i), forKey: "m\(i)")
            XCTAssertTrue(objects.objectExists(forKey: "m\(i)"))
            XCTAssertEqual(objects.object(forKey: "m\(i)")?.age, i)
        }
        XCTAssertEqual(objects.objectCount(), 200)
        XCTAssertEqual(objects.allKeys().count, 200)
        objects.removeObject(forKey: "m0")
        XCTAssertFalse(objects.objectExists(forKey: "m0"))
        XCTAssertNil(objects.object(forKey: "m0"))
        XCTAssertEqual(objects.objectCount(), 199)
        objects.setObject(nil, forKey: "m1")
        XCTAssertEqual(objects.objectCount(), 198)
    }

    func testObjectsLikeBypassTheCacheAndRemovalsLike() async throws {
        let objects = try storage.objectArrayService(name: "like", userDependent: false, capacity: 0, cacheCapacity: 0, crypted: true, of: String.self)
        for key in ["chat_1", "CHAT_2", "chat-3", "note"] { objects.setObject("v-" + key, forKey: key) }
        let chats = await objects.objects(forKeyLike: "chat__")
        XCTAssertEqual(chats, ["chat_1": "v-chat_1", "CHAT_2": "v-CHAT_2", "chat-3": "v-chat-3"])
        let viaCompletion = expectation(description: "objects(forKeyLike:completion:)")
        objects.objects(forKeyLike: "%3") { result in
            XCTAssertEqual(result, ["chat-3": "v-chat-3"])
            viaCompletion.fulfill()
        }
        await fulfillment(of: [viaCompletion], timeout: 10)
        objects.removeObjects(forKeyLike: "CHAT%")
        XCTAssertEqual(objects.allKeys(), ["note"])
        let none = await objects.objects(forKeyLike: "chat%")
        XCTAssertEqual(none, [:], "removed writes do not come back when their background write runs")
        objects.removeAllObjects()
        XCTAssertEqual(objects.objectCount(), 0)
        XCTAssertNil(objects.object(forKey: "note"))
    }

    func testCapacityMemoryCacheAndPersistence() async throws {
        let path = storage.path
        var objects: ObjectArrayService<Int>? = try storage.objectArrayService(name: "ring", userDependent: false, capacity: 3, cacheCapacity: 2, crypted: false)
        for i in 0..<5 { objects?.setObject(i, forKey: "k\(i)") }
        let settled = await objects?.objects(forKeyLike: "%")   // queued behind the writes
        XCTAssertEqual(settled, ["k2": 2, "k3": 3, "k4": 4], "past capacity the oldest writes go")
        XCTAssertNil(objects?.object(forKey: "k0"), "an evicted object is not served from the memory cache")
        XCTAssertEqual(objects?.objectCount(), 3)
        let done = expectation(description: "completion")
        objects?.object(forKey: "k4") { value in
            XCTAssertEqual(value, 4)
            done.fulfill()
        }
        await fulfillment(of: [done], timeout: 10)
        objects = nil
        try storage.close()
        storage = try CustomStorage(path: path)
        let again = try storage.objectArrayService(name: "ring", userDependent: false, capacity: 3, cacheCapacity: 2, crypted: false, of: Int.self)
        XCTAssertEqual(again.allKeys(), ["k2", "k3", "k4"])
        XCTAssertEqual(again.object(forKey: "k3"), 3)
    }

    func testPendingWritesLandInTheStoreOfTheUserWhoMadeThem() throws {
        let objects = try storage.objectArrayService(name: "switching", userDependent: true, capacity: 0, cacheCapacity: 0, crypted: false, of: Int.self)
        objects.setObject(1, forKey: "nobody")
        XCTAssertFalse(objects.objectExists(forKey: "nobody"), "no user: the write is dropped")
        try center.setCurrentUserId("u1")
        for i in 0..<300 { objects.setObject(i, forKey: "k\(i)") }
        try center.setCurrentUserId("u2")   // the resign waits for u1's writes
        XCTAssertEqual(objects.objectCount(), 0, "u2 sees none of u1's pending writes")
        objects.setObject(-1, forKey: "k0")
        XCTAssertEqual(objects.object(forKey: "k0"), -1)
        try center.setCurrentUserId("u1")
        XCTAssertEqual(objects.objectCount(), 300)
        XCTAssertEqual(objects.object(forKey: "k0"), 0)
        XCTAssertEqual(objects.object(forKey: "k299"), 299)
    }

    func testUserSwitchClearsTheMemoryCache() throws {
        let objects = try storage.objectArrayService(name: "mine", userDependent: true, capacity: 0, cacheCapacity: 10, crypted: false, of: String.self)
        try center.setCurrentUserId("u1")
        objects.setObject("u1's", forKey: "k")
        XCTAssertEqual(objects.object(forKey: "k"), "u1's")
        let flushed = expectation(description: "flushed")
        objects.object(forKey: "k") { _ in flushed.fulfill() }
        wait(for: [flushed], timeout: 10)
        try center.setCurrentUserId("u2")
        XCTAssertNil(objects.object(forKey: "k"), "u2 does not see u1's cached object")
        try center.setCurrentUserId("u1")
        XCTAssertEqual(objects.object(forKey: "k"), "u1's")
    }
}
