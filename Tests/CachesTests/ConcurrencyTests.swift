import Foundation
import XCTest
@testable import Caches
@testable import Preferences

/// Several threads on one cache or array at once, checking what every call returns against
/// what that thread wrote. Short by default; `CACHES_SOAK=<multiplier>` runs it that many times
/// longer (e.g. CACHES_SOAK=50 swift test --filter CachesConcurrencyTests).
final class CachesConcurrencyTests: CachesTestCase {
    private var scale: Int { Int(ProcessInfo.processInfo.environment["CACHES_SOAK"] ?? "") ?? 1 }

    func testDiskCacheUnderConcurrentWritersReadersAndTrims() throws {
        let cache = try LRUDiskCache<String>(name: "soak", capacity: 200, userDependent: false, crypted: true)
        let iterations = 400 * scale
        DispatchQueue.concurrentPerform(iterations: 4) { worker in
            for i in 0..<iterations {
                let key = "w\(worker)-\(i % 300)"
                switch i % 5 {
                case 0, 1:
                    cache.setObject("\(worker):\(i)", forKey: key)
                    XCTAssertEqual(cache.object(forKey: key), "\(worker):\(i)")
                case 2:
                    if let value = cache.object(forKey: key) { XCTAssertTrue(value.hasPrefix("\(worker):"), value) }
                case 3:
                    cache.removeObject(forKey: key)
                    XCTAssertFalse(cache.objectExists(forKey: key))
                default:
                    cache.removeObjects(like: "w\(worker)-\(i % 7)_")
                }
            }
        }
        XCTAssertLessThanOrEqual(cache.count, 200 + 20)
        XCTAssertEqual(Set(cache.allKeys()).count, cache.count)
    }

    func testFileAndObjectArraysUnderConcurrentUse() throws {
        let storage = try CustomStorage.named("Soak")
        defer { try? storage.close() }
        let files = try storage.fileArrayService(name: "soak", userDependent: false, capacity: 50, crypted: false)
        let objects = try storage.objectArrayService(name: "soak", userDependent: false, capacity: 50, cacheCapacity: 10, crypted: false, of: Int.self)
        let iterations = 150 * scale
        DispatchQueue.concurrentPerform(iterations: 4) { worker in
            for i in 0..<iterations {
                let name = "w\(worker)-\(i % 40)"
                let payload = Data("\(worker):\(i)".utf8) + Data(repeating: UInt8(worker), count: i % 3 == 0 ? 70_000 : 10)
                XCTAssertTrue(files.writeFileSync(payload, name: name))
                if let read = files.readFileSync(name) {
                    XCTAssertTrue(read.starts(with: Data("\(worker):".utf8)), "a file is never seen half written or mixed")
                }
                objects.setObject(worker * 1_000_000 + i, forKey: name)
                if let value = objects.object(forKey: name) { XCTAssertEqual(value / 1_000_000, worker) }
                if i % 25 == 0 { objects.removeObjects(forKeyLike: "w\(worker)-%") }
            }
        }
        XCTAssertLessThanOrEqual(files.fileCount(), 50)
        let settled = expectation(description: "settled")
        objects.object(forKey: "none") { _ in settled.fulfill() }   // queued behind every write
        wait(for: [settled], timeout: 30)
        XCTAssertLessThanOrEqual(objects.objectCount(), 50)
    }
}
