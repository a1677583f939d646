import Foundation
import LogStore
@testable import Caches
@testable import Preferences
import XCTest

/// The source component's manual, statement by statement, for the layers of this module:
/// ../shared/seeds/mpaas-docs/functions/LRU/lru_memory.md ("MEM"), LRU/lru_disk.md ("DISK"),
/// custom_storage/summary.md ("CS"), custom_storage/APAsyncFileArrayService.md ("FILES"),
/// custom_storage/APObjectArrayService.md ("OBJECTS") and summary.md ("Overview").
/// Completions run on the service's serial queue or the given one, not the main thread
/// (API.swift's doc comment decides; the pages say "main thread").
final class ManualCachesTests: CachesTestCase {
    private var storage: CustomStorage!

    override func setUpWithError() throws {
        try super.setUpWithError()
        storage = try CustomStorage.named("Manual")
    }

    override func tearDownWithError() throws {
        try storage?.close()
        storage = nil
        try super.tearDownWithError()
    }

    private var future: TimeInterval { Date().timeIntervalSince1970 + 3_600 }
    private var past: TimeInterval { Date().timeIntervalSince1970 - 1 }

    // MARK: LRU/lru_memory.md

    /// MEM handleMemoryWarning: "Its value is NO by default. If it is set to YES, the cache will
    /// be cleared when there is a memory warning."
    func testMemoryWarningClearsOnlyWhenHandled() {
        let cache = LRUMemoryCache<Int>(capacity: 10)
        XCTAssertFalse(cache.handleMemoryWarning)
        cache.setObject(1, forKey: "a")
        cache.didReceiveMemoryWarning()
        XCTAssertEqual(cache.object(forKey: "a"), 1)
        cache.handleMemoryWarning = true
        cache.didReceiveMemoryWarning()
        XCTAssertNil(cache.object(forKey: "a"))
    }

    /// MEM handleMemoryWarning: "whether to process the memory warnings in the system": a
    /// posted system-wide warning empties only the caches that handle it.
    func testSystemMemoryWarningReachesHandlingCaches() {
        let handling = LRUMemoryCache<Int>(capacity: 10)
        handling.handleMemoryWarning = true
        let ignoring = LRUMemoryCache<Int>(capacity: 10)
        handling.setObject(1, forKey: "a")
        ignoring.setObject(1, forKey: "a")
        NotificationCenter.default.post(name: .lruMemoryCacheMemoryWarning, object: nil)
        XCTAssertNil(handling.object(forKey: "a"))
        XCTAssertEqual(ignoring.object(forKey: "a"), 1)
    }

    /// MEM initWithCapacity + "the LRU elimination algorithm": past the capacity the least
    /// recently used object goes; a read makes an object recent.
    func testCapacityEvictsLeastRecentlyUsed() {
        let cache = LRUMemoryCache<Int>(capacity: 2)
        cache.setObject(1, forKey: "a")
        cache.setObject(2, forKey: "b")
        XCTAssertEqual(cache.object(forKey: "a"), 1)
        cache.setObject(3, forKey: "c")
        XCTAssertNil(cache.object(forKey: "b"))
        XCTAssertEqual(cache.object(forKey: "a"), 1)
        XCTAssertEqual(cache.object(forKey: "c"), 3)
    }

    /// MEM setObject:forKey: "If the object is nil, the object will be deleted";
    /// setObject:forKey:expire: an expired object is not returned; removeObjectForKey,
    /// removeAllObjects.
    func testMemorySetNilExpireAndRemovals() {
        let cache = LRUMemoryCache<String>(capacity: 10)
        cache.setObject("v", forKey: "k")
        cache.setObject(nil, forKey: "k")
        XCTAssertNil(cache.object(forKey: "k"))
        cache.setObject("late", forKey: "live", expire: future)
        cache.setObject("gone", forKey: "dead", expire: past)
        XCTAssertEqual(cache.object(forKey: "live"), "late")
        XCTAssertNil(cache.object(forKey: "dead"))
        XCTAssertFalse(cache.objectExists(forKey: "dead"))
        cache.removeObject(forKey: "live")
        XCTAssertNil(cache.object(forKey: "live"))
        cache.addObjects(["x": "1", "y": "2"])
        cache.removeAllObjects()
        XCTAssertNil(cache.object(forKey: "x"))
        XCTAssertEqual(cache.peekObjects(10, fromHead: true), [])
    }

    /// MEM addObjects: "adds data in batch ... objects will never expire by default".
    func testMemoryAddObjectsNeverExpire() {
        let cache = LRUMemoryCache<Int>(capacity: 10)
        cache.setObject(0, forKey: "a", expire: past)
        cache.addObjects(["a": 1, "b": 2])
        XCTAssertEqual(cache.object(forKey: "a"), 1, "the batch value replaces the expiring one and does not expire")
        XCTAssertEqual(cache.object(forKey: "b"), 2)
    }

    /// MEM removeObjectsWithRegex / WithPrefix / WithSuffix / WithKeys.
    func testMemoryBatchRemovals() throws {
        let cache = LRUMemoryCache<Int>(capacity: 20)
        for (i, key) in ["img_1", "img_2", "doc_1.pdf", "doc_2.txt", "a1", "b2", "keep"].enumerated() { cache.setObject(i, forKey: key) }
        try cache.removeObjects(matchingRegex: "^img_\\d$")
        XCTAssertFalse(cache.objectExists(forKey: "img_1"))
        XCTAssertFalse(cache.objectExists(forKey: "img_2"))
        cache.removeObjects(withPrefix: "doc_1")
        XCTAssertFalse(cache.objectExists(forKey: "doc_1.pdf"))
        XCTAssertTrue(cache.objectExists(forKey: "doc_2.txt"))
        cache.removeObjects(withSuffix: ".txt")
        XCTAssertFalse(cache.objectExists(forKey: "doc_2.txt"))
        cache.removeObjects(forKeys: Set(["a1", "b2"]))
        XCTAssertFalse(cache.objectExists(forKey: "a1"))
        XCTAssertFalse(cache.objectExists(forKey: "b2"))
        XCTAssertEqual(cache.object(forKey: "keep"), 6)
    }

    /// MEM peekObjects:fromHead: "no LRU cache policy processing will be done. When the fromHead
    /// value is YES, the traversal starts from the head, otherwise, from the end";
    /// objectExistsForKey: "It will not affect LRU".
    func testPeekAndExistsDoNotTouchRecency() {
        let cache = LRUMemoryCache<Int>(capacity: 3)
        cache.setObject(1, forKey: "a")
        cache.setObject(2, forKey: "b")
        cache.setObject(3, forKey: "c")
        XCTAssertEqual(cache.peekObjects(2, fromHead: true), [3, 2])
        XCTAssertEqual(cache.peekObjects(2, fromHead: false), [1, 2])
        XCTAssertTrue(cache.objectExists(forKey: "a"))
        _ = cache.peekObjects(3, fromHead: false)
        cache.setObject(4, forKey: "d")
        XCTAssertFalse(cache.objectExists(forKey: "a"), "neither peek nor exists made 'a' recent")
        XCTAssertEqual(cache.peekObjects(3, fromHead: true), [4, 3, 2])
    }

    /// MEM resetCapacity: "If the new capacity is smaller than the old one, part of the cache
    /// will be deleted" (the least recent part).
    func testResetCapacityShrinks() {
        let cache = LRUMemoryCache<Int>(capacity: 5)
        for i in 0..<5 { cache.setObject(i, forKey: "k\(i)") }
        cache.resetCapacity(2)
        XCTAssertEqual(cache.peekObjects(10, fromHead: true), [4, 3])
        cache.resetCapacity(4)
        cache.setObject(5, forKey: "k5")
        cache.setObject(6, forKey: "k6")
        XCTAssertEqual(cache.peekObjects(10, fromHead: true), [6, 5, 4, 3])
    }

    /// MEM introduction / Overview 1.2: "APLRUMemoryCache is thread-safe".
    func testMemoryCacheIsThreadSafe() {
        let cache = LRUMemoryCache<Int>(capacity: 1_000)
        DispatchQueue.concurrentPerform(iterations: 8) { thread in
            for i in 0..<100 {
                cache.setObject(i, forKey: "t\(thread)-\(i)")
                _ = cache.object(forKey: "t\(thread)-\(i / 2)")
            }
        }
        for thread in 0..<8 { XCTAssertEqual(cache.object(forKey: "t\(thread)-99"), 99) }
        XCTAssertEqual(cache.peekObjects(2_000, fromHead: true).count, 800)
    }

    // MARK: LRU/lru_disk.md

    /// DISK initWithName: "persistence LRU cache ... The cached objects should support the
    /// NSCoding protocol": an NSCoding object survives a new cache instance of the same name.
    func testDiskCacheIsPersistentAndTakesNSCoding() throws {
        do {
            let cache = try LRUDiskCache<NSString>(name: "persist", capacity: 10, userDependent: false, crypted: false)
            cache.setObject("kept" as NSString, forKey: "k")
            cache.flush()
        }
        let again = try LRUDiskCache<NSString>(name: "persist", capacity: 10, userDependent: false, crypted: false)
        XCTAssertEqual(again.object(forKey: "k"), "kept" as NSString)
        let other = try LRUDiskCache<NSString>(name: "other", capacity: 10, userDependent: false, crypted: false)
        XCTAssertNil(other.object(forKey: "k"), "each name is a table of its own")
    }

    /// DISK capacity: "The real capacity will be greater than this value": one past the
    /// capacity is kept; far past it, the least recently used go first.
    func testDiskCapacityIsSoftAndLeastRecentGoesFirst() throws {
        let cache = try LRUDiskCache<Int>(name: "soft", capacity: 10, userDependent: false, crypted: false)
        for i in 0..<11 { cache.setObject(i, forKey: "k\(i)") }
        XCTAssertEqual(cache.count, 11, "the real capacity is greater than 10")
        XCTAssertEqual(cache.object(forKey: "k0"), 0)
        for i in 11..<20 { cache.setObject(i, forKey: "k\(i)") }
        XCTAssertLessThanOrEqual(cache.count, 11)
        XCTAssertEqual(cache.object(forKey: "k0"), 0, "read recently, so kept")
        XCTAssertNil(cache.object(forKey: "k1"))
    }

    /// DISK userDependent: "when APDataCenter.currentUserId is empty, the cache will not be
    /// operable. After the user is switched, the cache will automatically point to the table of
    /// the current user."
    func testDiskCacheUserDependent() throws {
        let cache = try LRUDiskCache<String>(name: "mine", capacity: 10, userDependent: true, crypted: false)
        cache.setObject("dropped", forKey: "k")
        XCTAssertNil(cache.object(forKey: "k"))
        try center.setCurrentUserId("alice")
        XCTAssertNil(cache.object(forKey: "k"), "the write without a user went nowhere")
        cache.setObject("a", forKey: "k")
        try center.setCurrentUserId("bob")
        XCTAssertNil(cache.object(forKey: "k"))
        cache.setObject("b", forKey: "k")
        try center.setCurrentUserId("alice")
        XCTAssertEqual(cache.object(forKey: "k"), "a")
    }

    /// DISK crypted: "Whether to encrypt the data": the value is not plain on disk, and reads back.
    func testDiskCacheCrypted() throws {
        let marker = "disk-secret-\(UUID().uuidString)"
        let cache = try LRUDiskCache<String>(name: "secret", capacity: 10, userDependent: false, crypted: true)
        cache.setObject(marker, forKey: "k")
        cache.flush()
        try center.commonPreferences.sync()
        XCTAssertEqual(cache.object(forKey: "k"), marker)
        XCTAssertFalse(try filesContain(Array(marker.utf8), under: root))
        let plain = try LRUDiskCache<String>(name: "plain", capacity: 10, userDependent: false, crypted: false)
        plain.setObject(marker + "-plain", forKey: "k")
        try center.commonPreferences.sync()
        XCTAssertTrue(try filesContain(Array((marker + "-plain").utf8), under: root), "the probe can see plain values")
    }

    /// DISK setObject:forKey: "The expire value is 0 by default, which means that the object will
    /// never expire"; setObject:forKey:expire: an absolute timestamp since 1970, "If it is nil, the
    /// object for the specific key will be deleted"; objectForKey: "If the specified expiration
    /// time has been reached ... nil will be returned and the object will be deleted."
    func testDiskExpiry() throws {
        let cache = try LRUDiskCache<String>(name: "expiry", capacity: 10, userDependent: false, crypted: false)
        cache.setObject("forever", forKey: "f")
        cache.setObject("forever too", forKey: "zero", expire: 0)
        cache.setObject("later", forKey: "l", expire: future)
        cache.setObject("gone", forKey: "g", expire: past)
        XCTAssertEqual(cache.object(forKey: "f"), "forever")
        XCTAssertEqual(cache.object(forKey: "zero"), "forever too")
        XCTAssertEqual(cache.object(forKey: "l"), "later")
        XCTAssertEqual(cache.count, 3, "an expired object is not counted")
        XCTAssertNil(cache.object(forKey: "g"))
        XCTAssertFalse(cache.allKeys().contains("g"))
        cache.setObject(nil, forKey: "l", expire: future)
        XCTAssertNil(cache.object(forKey: "l"))
        XCTAssertEqual(cache.count, 2)
    }

    /// DISK objectForKey: "If there are uncompleted write operations ... objectForKey will wait
    /// for the uncompleted operation to complete": a read on another thread right after a write
    /// returns sees it.
    func testDiskReadSeesAWriteJustMade() throws {
        let cache = try LRUDiskCache<Int>(name: "rw", capacity: 0, userDependent: false, crypted: false)
        DispatchQueue.concurrentPerform(iterations: 4) { thread in
            for i in 0..<50 {
                cache.setObject(i, forKey: "t\(thread)")
                XCTAssertEqual(cache.object(forKey: "t\(thread)"), i)
            }
        }
    }

    /// DISK removeObjectForKey, removeAllObjects, addObjects, removeObjectsWithSqlLike ("matched
    /// with the LIKE statement of SQLite": `%`, `_`, ASCII case-insensitive), removeObjectsWithKeys.
    func testDiskBatchCalls() throws {
        let cache = try LRUDiskCache<Int>(name: "batch", capacity: 0, userDependent: false, crypted: false)
        cache.addObjects(["img_1": 1, "IMG_2": 2, "img-3": 3, "imgX4": 4, "doc": 5, "a": 6, "b": 7])
        XCTAssertEqual(cache.count, 7)
        cache.removeObjects(like: "img\\_%")  // no ESCAPE: the backslash is a literal character
        XCTAssertEqual(cache.count, 7)
        cache.removeObjects(like: "img_%")
        XCTAssertEqual(Set(cache.allKeys()), ["doc", "a", "b"])
        cache.removeObjects(forKeys: ["a", "b"])
        XCTAssertEqual(cache.allKeys(), ["doc"])
        cache.removeObject(forKey: "doc")
        XCTAssertEqual(cache.count, 0)
        cache.addObjects(["x": 1])
        cache.removeAllObjects()
        XCTAssertNil(cache.object(forKey: "x"))
        XCTAssertEqual(cache.count, 0)
    }

    // MARK: custom_storage/summary.md

    /// CS asyncFileArrayServiceWithName: "name ... cannot be empty"; objectArrayServiceWithName
    /// the same.
    func testServiceNamesCannotBeEmpty() {
        XCTAssertThrowsError(try storage.fileArrayService(name: "", userDependent: false, capacity: 0, crypted: false))
        XCTAssertThrowsError(try storage.objectArrayService(name: "", userDependent: false, capacity: 0, cacheCapacity: 0, crypted: false, of: Int.self))
    }

    /// CS asyncFileArrayServiceWithName: "It will create tables for storage separately in the
    /// database file ..., instead of storing the data in the key-value table": files are not
    /// keys of the storage's preferences.
    func testFileArrayIsNotInTheKeyValueTable() async throws {
        let files = try storage.fileArrayService(name: "voice", userDependent: false, capacity: 0, crypted: false)
        let ok = await files.writeFile(Data([1]), name: "f")
        XCTAssertTrue(ok)
        XCTAssertEqual(storage.commonPreferences.allKeys(), [])
        XCTAssertFalse(storage.commonPreferences.contains("f"))
    }

    /// CS capacity: "When the defined value is exceeded, the earliest data will be cleared
    /// automatically. When the capacity <= 0, it indicates that no capacity limit is set. The
    /// value here is not referring to the byte capacity, but the rows."
    func testFileArrayCapacityInRows() async throws {
        let limited = try storage.fileArrayService(name: "ring", userDependent: false, capacity: 3, crypted: false)
        for i in 0..<5 { _ = await limited.writeFile(Data(repeating: UInt8(i), count: 10_000), name: "f\(i)") }
        XCTAssertEqual(limited.allFileNames().sorted(), ["f2", "f3", "f4"], "rows, not bytes; the earliest cleared")
        for capacity in [0, -1] {
            let open = try storage.fileArrayService(name: "open\(capacity)", userDependent: false, capacity: capacity, crypted: false)
            for i in 0..<20 { _ = await open.writeFile(Data([UInt8(i)]), name: "f\(i)") }
            XCTAssertEqual(open.fileCount(), 20)
        }
    }

    /// CS objectArrayServiceWithName capacity (rows, earliest first) and crypted.
    func testObjectArrayCapacityAndCrypt() throws {
        let marker = "object-secret-\(UUID().uuidString)"
        let objects = try storage.objectArrayService(name: "objs", userDependent: false, capacity: 2, cacheCapacity: 0, crypted: true, of: String.self)
        objects.setObject(marker + "1", forKey: "a")
        objects.setObject(marker + "2", forKey: "b")
        objects.setObject(marker + "3", forKey: "c")
        XCTAssertEqual(objects.allKeys(), ["b", "c"], "the earliest is cleared as soon as the capacity is exceeded")
        XCTAssertEqual(objects.objectCount(), 2)
        XCTAssertFalse(objects.objectExists(forKey: "a"))
        XCTAssertNil(objects.object(forKey: "a"))
        XCTAssertEqual(objects.object(forKey: "c"), marker + "3")
        objects.waitForPendingWrites()
        XCTAssertEqual(objects.allKeys(), ["b", "c"], "and the store agrees once the writes landed")
        try storage.close()
        storage = nil
        XCTAssertFalse(try filesContain(Array(marker.utf8), under: root))
    }

    /// CS objectArrayServiceWithName capacity: what the calls see before the background writes
    /// land is what the store holds after: an overwrite renews an object's age, a write that
    /// pushed an object out keeps it out even when the write is removed again.
    func testObjectArrayCapacityViewMatchesTheStore() throws {
        let objects = try storage.objectArrayService(name: "view", userDependent: false, capacity: 2, cacheCapacity: 2, crypted: false, of: Int.self)
        objects.setObject(1, forKey: "a")
        objects.setObject(2, forKey: "b")
        objects.waitForPendingWrites()
        objects.setObject(11, forKey: "a")       // renews "a": "b" is now the earliest
        objects.setObject(3, forKey: "c")        // pushes "b" out
        objects.removeObject(forKey: "c")
        XCTAssertEqual(objects.allKeys(), ["a"])
        XCTAssertNil(objects.object(forKey: "b"))
        objects.waitForPendingWrites()
        XCTAssertEqual(objects.allKeys(), ["a"])
        XCTAssertEqual(objects.object(forKey: "a"), 11)
        // Many writes at once, without waiting: never more than the capacity, the latest kept.
        for i in 0..<50 { objects.setObject(i, forKey: "k\(i)") }
        XCTAssertEqual(objects.allKeys(), ["k48", "k49"])
        objects.waitForPendingWrites()
        XCTAssertEqual(objects.allKeys(), ["k48", "k49"])
        XCTAssertEqual(objects.object(forKey: "k49"), 49)
    }

    /// CS userDependent of the services: the business does not handle user switching; each
    /// user sees their own rows.
    func testFileArrayUserDependent() async throws {
        let files = try storage.fileArrayService(name: "mine", userDependent: true, capacity: 0, crypted: false)
        try center.setCurrentUserId("alice")
        _ = await files.writeFile(Data([1]), name: "a")
        try center.setCurrentUserId("bob")
        XCTAssertFalse(files.fileExists("a"))
        try center.setCurrentUserId("alice")
        XCTAssertTrue(files.fileExists("a"))
    }

    // MARK: custom_storage/APAsyncFileArrayService.md

    /// FILES: writeFile (completion result, may be nil), readFile (async), readFileSync,
    /// readFilesLike (name -> data, SQLite LIKE), renameFile, removeFile, removeFilesLike,
    /// removeAllFiles, fileExists, allFileNames, fileCount.
    func testFileArrayInterfaces() async throws {
        let files = try storage.fileArrayService(name: "all", userDependent: false, capacity: 0, crypted: true)
        let wrote = await files.writeFile(Data("one".utf8), name: "voice_1.amr")
        XCTAssertTrue(wrote)
        files.writeFile(Data("two".utf8), name: "VOICE_2.amr", completion: nil)
        let written = expectation(description: "completion")
        files.writeFile(Data("note".utf8), name: "note.txt") { ok in
            XCTAssertTrue(ok)
            written.fulfill()
        }
        await fulfillment(of: [written], timeout: 10)
        let read = await files.readFile("voice_1.amr")
        XCTAssertEqual(read, Data("one".utf8))
        XCTAssertEqual(files.readFileSync("VOICE_2.amr"), Data("two".utf8))
        let voices = await files.readFiles(like: "voice%")
        XCTAssertEqual(voices, ["voice_1.amr": Data("one".utf8), "VOICE_2.amr": Data("two".utf8)])
        let renamed = await files.renameFile("note.txt", to: "memo.txt")
        XCTAssertTrue(renamed)
        XCTAssertFalse(files.fileExists("note.txt"))
        XCTAssertEqual(files.readFileSync("memo.txt"), Data("note".utf8))
        XCTAssertEqual(files.allFileNames().sorted(), ["VOICE_2.amr", "memo.txt", "voice_1.amr"])
        XCTAssertEqual(files.fileCount(), 3)
        files.removeFile("memo.txt")
        XCTAssertFalse(files.fileExists("memo.txt"))
        files.removeFiles(like: "VOICE\\_%")   // no ESCAPE: nothing named with a backslash
        XCTAssertEqual(files.fileCount(), 2)
        files.removeFiles(like: "voice_%")
        XCTAssertEqual(files.fileCount(), 0)
        _ = await files.writeFile(Data([1]), name: "x")
        files.removeAllFiles()
        XCTAssertEqual(files.allFileNames(), [])
        let missing = await files.readFile("x")
        XCTAssertNil(missing)
    }

    // MARK: custom_storage/APObjectArrayService.md

    /// OBJECTS: setObject (write IO asynchronous, visible at once), objectForKey (reads the
    /// database when not cached: a new service instance), objectForKey:completion:,
    /// objectsForKeyLike, removeObjectForKey, removeObjectsForKeyLike, removeAllObjects,
    /// objectExistsForKey, allKeys, objectCount.
    func testObjectArrayInterfaces() async throws {
        var objects: ObjectArrayService<Int>? = try storage.objectArrayService(name: "o", userDependent: false, capacity: 0, cacheCapacity: 4, crypted: false)
        for (i, key) in ["msg_1", "MSG_2", "msg-3", "other"].enumerated() { objects?.setObject(i, forKey: key) }
        XCTAssertEqual(objects?.objectCount(), 4)
        objects?.waitForPendingWrites()
        objects = nil
        let fresh = try storage.objectArrayService(name: "o", userDependent: false, capacity: 0, cacheCapacity: 4, crypted: false, of: Int.self)
        XCTAssertEqual(fresh.object(forKey: "msg_1"), 0, "read from the database synchronously")
        let viaCompletion = expectation(description: "objectForKey:completion:")
        fresh.object(forKey: "MSG_2") { value in
            XCTAssertEqual(value, 1)
            viaCompletion.fulfill()
        }
        await fulfillment(of: [viaCompletion], timeout: 10)
        let like = await fresh.objects(forKeyLike: "msg_%")
        XCTAssertEqual(like, ["msg_1": 0, "MSG_2": 1, "msg-3": 2])
        XCTAssertTrue(fresh.objectExists(forKey: "other"))
        XCTAssertEqual(fresh.allKeys().sorted(), ["MSG_2", "msg-3", "msg_1", "other"])
        fresh.removeObject(forKey: "other")
        XCTAssertFalse(fresh.objectExists(forKey: "other"))
        fresh.removeObjects(forKeyLike: "msg-%")
        XCTAssertEqual(fresh.objectCount(), 2)
        fresh.removeAllObjects()
        XCTAssertEqual(fresh.objectCount(), 0)
        XCTAssertNil(fresh.object(forKey: "msg_1"))
    }

    /// OBJECTS objectsForKeyLike: "It does not check the cache": it reads the database, which
    /// holds every write made (nothing cached only).
    func testObjectsLikeReadTheDatabase() async throws {
        let objects = try storage.objectArrayService(name: "nocache", userDependent: false, capacity: 0, cacheCapacity: 1, crypted: false, of: String.self)
        objects.setObject("a", forKey: "k1")
        objects.setObject("b", forKey: "k2")
        let found = await objects.objects(forKeyLike: "k%")
        XCTAssertEqual(found, ["k1": "a", "k2": "b"])
    }
}

/// Whether any file under `folder` contains `needle`.
private func filesContain(_ needle: [UInt8], under folder: URL) throws -> Bool {
    guard let walker = FileManager.default.enumerator(at: folder, includingPropertiesForKeys: nil) else { return false }
    for case let url as URL in walker {
        guard let data = try? Data(contentsOf: url), data.count >= needle.count else { continue }
        if data.range(of: Data(needle)) != nil { return true }
    }
    return false
}
