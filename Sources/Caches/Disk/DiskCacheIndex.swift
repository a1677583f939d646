import Foundation
import LogStore
import DAO

/// The in-memory index of one disk cache in one store: every key with its recency tick and
/// expiry. Shared by every `LRUDiskCache` of that name on that store (a registry hands out one
/// per pair), and guarded by its own lock.
///
/// **Keeping LRU order without a write per read.** A read only bumps the key's tick in memory
/// and marks it dirty. Ticks are persisted, as order records in a second key space, in one
/// batch at every trim, at `flush()`, when the user's store is about to close and when the last
/// cache of the index goes away. After a reopen a key's order is its last persisted tick; keys
/// with no order record were written after the last persist, so they rank newest (in key
/// order). Accesses after the last persist are lost on a crash: the order is approximate
/// then, never wrong about which keys exist. (FORMAT.md, "Caches: LRUDiskCache".)
final class DiskCacheIndex: @unchecked Sendable {
    struct Entry {
        var tick: UInt64
        /// Milliseconds since 1970 after which the entry is gone; 0 = never.
        var expireMillis: UInt64
    }

    let store: LogStore
    let valueSpace: LogStore.KeySpace
    let orderSpace: LogStore.KeySpace
    let lock = CacheLock()
    /// Under `lock`.
    @exclusivity(unchecked) var entries: [String: Entry] = [:]
    /// Keys whose tick or expiry changed since the last persist (under `lock`).
    @exclusivity(unchecked) var dirty: Set<String> = []
    /// The next tick to hand out (under `lock`).
    @exclusivity(unchecked) var nextTick: UInt64 = 1

    static func valueSpaceName(_ name: String) -> String { "lrucache:" + name }
    static func orderSpaceName(_ name: String) -> String { "lrucache-order:" + name }

    private init(store: LogStore, name: String) throws {
        self.store = store
        valueSpace = try store.space(named: Self.valueSpaceName(name))
        orderSpace = try store.space(named: Self.orderSpaceName(name))
        try load()
    }

    // MARK: Registry

    private static let registry = StoreIndexRegistry<DiskCacheIndex>()

    /// The index of cache `name` in `store`, loaded on first use.
    static func index(for store: LogStore, name: String) throws -> DiskCacheIndex {
        try registry.index(for: store, name: name) { try DiskCacheIndex(store: store, name: name) }
    }

    deinit { persistDirty() }

    // MARK: Loading and persisting

    /// Order record value: tick (8 bytes LE), expiry in ms since 1970 (8 bytes LE, 0 = never).
    static func encodeOrder(_ entry: Entry) -> [UInt8] {
        var bytes = [UInt8](repeating: 0, count: 16)
        for i in 0..<8 {
            bytes[i] = UInt8(truncatingIfNeeded: entry.tick >> (8 * UInt64(i)))
            bytes[8 + i] = UInt8(truncatingIfNeeded: entry.expireMillis >> (8 * UInt64(i)))
        }
        return bytes
    }

    static func decodeOrder(_ bytes: [UInt8]) -> Entry? {
        guard bytes.count == 16 else { return nil }
        var tick: UInt64 = 0
        var expire: UInt64 = 0
        for i in 0..<8 {
            tick |= UInt64(bytes[i]) << (8 * UInt64(i))
            expire |= UInt64(bytes[8 + i]) << (8 * UInt64(i))
        }
        return Entry(tick: tick, expireMillis: expire)
    }

    private func load() throws {
        var live: [String: Entry] = [:]
        var unordered: [String] = []
        let orders = try store.entries(space: orderSpace, crypt: nil)
        var orderOf: [[UInt8]: Entry] = [:]
        for (key, value) in orders { if let entry = Self.decodeOrder(value) { orderOf[key] = entry } }
        var maxTick: UInt64 = 0
        for key in try store.keys(space: valueSpace) {
            guard let name = String(validating: key, as: UTF8.self) else { continue }
            if let entry = orderOf.removeValue(forKey: key) {
                live[name] = entry
                maxTick = max(maxTick, entry.tick)
            } else {
                unordered.append(name)
            }
        }
        // Written after the last persist: newer than everything persisted.
        for name in unordered {
            maxTick += 1
            live[name] = Entry(tick: maxTick, expireMillis: 0)
        }
        entries = live
        nextTick = maxTick + 1
        dirty = Set(unordered)
        // Order records of keys that are gone (deleted or expired since): drop them.
        if !orderOf.isEmpty {
            var batch = LogStore.WriteBatch()
            for key in orderOf.keys { batch.delete(forKey: key, space: orderSpace) }
            try store.write(batch)
        }
    }

    /// Writes the dirty ticks in one batch. Caller holds `lock` (or is deinit).
    func persistDirtyLocked() throws {
        guard !dirty.isEmpty else { return }
        var batch = LogStore.WriteBatch()
        for name in dirty {
            guard let entry = entries[name] else { continue }
            batch.put(Self.encodeOrder(entry), forKey: Array(name.utf8), space: orderSpace, crypt: .plain)
        }
        if batch.count > 0 { try store.write(batch) }
        dirty.removeAll(keepingCapacity: true)
    }

    func persistDirty() {
        lock.withLock {
            do { try persistDirtyLocked() } catch { CacheLog.warning("persisting LRU order: \(error)") }
        }
    }

    // MARK: Operations (caller holds `lock`)

    /// Records a write or read of `name` as the most recent use.
    @inline(__always)
    func touch(_ name: String, expireMillis: UInt64?) {
        let tick = nextTick
        nextTick += 1
        if let expireMillis {
            entries[name] = Entry(tick: tick, expireMillis: expireMillis)
        } else {
            entries[name]?.tick = tick
        }
        dirty.insert(name)
    }

    /// Deletes `names` (values and order records) in one batch and forgets them.
    func removeLocked(_ names: some Collection<String>) throws {
        guard !names.isEmpty else { return }
        var batch = LogStore.WriteBatch()
        for name in names {
            let key = Array(name.utf8)
            batch.delete(forKey: key, space: valueSpace)
            batch.delete(forKey: key, space: orderSpace)
        }
        try store.write(batch)
        for name in names {
            entries.removeValue(forKey: name)
            dirty.remove(name)
        }
    }

    /// The keys whose expiry has passed.
    func expiredLocked(nowMillis: UInt64) -> [String] {
        entries.compactMap { $0.value.expireMillis != 0 && $0.value.expireMillis <= nowMillis ? $0.key : nil }
    }

    /// Trims to `capacity` when the count exceeds capacity + max(capacity / 10, 1): expired
    /// entries first, then the least recently used; then persists the order.
    func trimIfNeededLocked(capacity: Int) throws {
        guard capacity > 0, entries.count > capacity + max(capacity / 10, 1) else { return }
        try removeLocked(expiredLocked(nowMillis: Self.nowMillis()))
        let excess = entries.count - capacity
        if excess > 0 {
            let oldest = entries.sorted { $0.value.tick < $1.value.tick }.prefix(excess).map(\.key)
            try removeLocked(oldest)
        }
        try persistDirtyLocked()
    }

    /// The expiry in milliseconds since 1970 of an `expire` in seconds since 1970 (0 or less:
    /// never, 0): `expire` x 1000 rounded up to a whole millisecond, so an entry never expires
    /// before its time. The one rule for both records of an entry (FORMAT.md, "Caches",
    /// LRUDiskCache): the entry record's expiry field and its order record's expiry.
    static func expiryMillis(ofExpire expire: TimeInterval) -> UInt64 {
        guard expire > 0, expire.isFinite else { return expire == .infinity ? UInt64.max : 0 }
        let millis = (expire * 1000).rounded(.up)
        return millis >= Double(UInt64.max) ? UInt64.max : UInt64(millis)
    }

    /// The date handed to the store for an expiry of `millis` (nil for 0, never). The store
    /// rounds a date up to a whole millisecond; `millis` - 0.5 ms keeps that rounding from
    /// landing on `millis` + 1 when the division is inexact.
    static func expiryDate(ofMillis millis: UInt64) -> Date? {
        guard millis != 0 else { return nil }
        return Date(timeIntervalSince1970: (Double(millis) - 0.5) / 1000)
    }

    static func nowMillis() -> UInt64 {
        UInt64(max(0, Date().timeIntervalSince1970 * 1000))
    }
}
