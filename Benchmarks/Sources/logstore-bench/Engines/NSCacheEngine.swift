import Foundation

/// Foundation's `NSCache` as a memory cache: `NSCache<NSData, NSData>` without count or cost
/// limits (so nothing is evicted during a run), keys and values copied into `NSData`.
/// Not durable: nothing is written, a reopen starts empty. It is in the tables to show what an
/// in-memory cache costs per operation, not as a store. Run with at most `keyCap` keys: a
/// cache holds a working set, and swift-corelibs-foundation's NSCache slows down as it grows
/// (~58k puts/s over the first 290k keys of a million, ~43k/s over the rest, 540 MiB RSS).
final class NSCacheEngine: KVEngine {
    static let name = "NSCache"
    static let keyCap = 200_000
    static let quickKeyCap = 20_000
    static let settings = "memory only, NOT durable; NSCache<NSData, NSData>, no count or cost limit, thread-safe instance shared by all threads; " +
        "at most \(keyCap) keys (\(quickKeyCap) with --quick): a cache's working set (and corelibs' NSCache slows down as it grows)"

    private let cache: NSCache<NSData, NSData>

    init(directory: URL, config: EngineConfig) throws {
        cache = NSCache()
    }

    init(sharing other: NSCacheEngine) throws {
        cache = other.cache
    }

    @inline(__always)
    private func object(_ bytes: [UInt8]) -> NSData {
        bytes.withUnsafeBytes { NSData(bytes: $0.baseAddress, length: $0.count) }
    }

    func put(_ key: [UInt8], _ value: [UInt8]) throws {
        cache.setObject(object(value), forKey: object(key))
    }

    func get(_ key: [UInt8]) throws -> [UInt8]? {
        guard let data = cache.object(forKey: object(key)) else { return nil }
        return [UInt8](UnsafeRawBufferPointer(start: data.bytes, count: data.length))
    }

    func delete(_ key: [UInt8]) throws {
        cache.removeObject(forKey: object(key))
    }

    func close() throws {}
}
