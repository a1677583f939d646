import Foundation
#if canImport(UIKit)
import UIKit
#endif

/// APLRUMemoryCache: a thread-safe in-memory cache that evicts the least recently used entry
/// when it holds more than `capacity` entries (and, optionally, more than `totalCostLimit` in
/// total cost, or entries older than `ageLimit`).
///
/// Entries live in one array of nodes linked into a doubly linked recency list (head = most
/// recently used) with a dictionary from key to node, so `object(forKey:)` and `setObject` are
/// O(1) and allocate nothing per call once the array has grown. Freed nodes are reused.
///
/// Expired entries (an `expire` time that has passed, or older than `ageLimit`) are invisible
/// to every call: reads, `objectExists`, `peekObjects` and `count`; they are dropped when met.
///
/// ```swift
/// let cache = LRUMemoryCache<Data>(capacity: 100)
/// cache.setObject(data, forKey: "avatar:42")
/// let hit = cache.object(forKey: "avatar:42")
/// ```
public final class LRUMemoryCache<Value>: @unchecked Sendable {
    @usableFromInline let lock = CacheLock()
    // The entries, as parallel arrays indexed by slot. Only `values` involves the generic type:
    // the recency list and the bookkeeping are concrete arrays, so the list operations stay fast
    // even where the compiler cannot specialize this class for the caller's `Value`.
    // Every one is touched only under `lock`, so the runtime exclusivity checks (a
    // swift_beginAccess per access) are turned off for them.
    @usableFromInline @exclusivity(unchecked) var keys: ContiguousArray<String> = []
    @usableFromInline @exclusivity(unchecked) var values: ContiguousArray<Value?> = []
    @usableFromInline @exclusivity(unchecked) var costs: ContiguousArray<Int> = []
    /// A slot's neighbours in the recency list and its expiry, together so a list update
    /// touches one cache line per slot.
    @usableFromInline struct Link {
        @usableFromInline var previous: Int32
        @usableFromInline var next: Int32
        /// Seconds since 1970 after which the entry is gone; 0 = never.
        @usableFromInline var expire: Double

        @inlinable init(previous: Int32, next: Int32, expire: Double) {
            self.previous = previous
            self.next = next
            self.expire = expire
        }
    }
    @usableFromInline @exclusivity(unchecked) var links: ContiguousArray<Link> = []
    /// Seconds since 1970 of the write (kept only when there is an age limit).
    @usableFromInline @exclusivity(unchecked) var written: ContiguousArray<Double> = []
    @usableFromInline @exclusivity(unchecked) var freeSlots: [Int32] = []
    @usableFromInline @exclusivity(unchecked) var index: [String: Int32] = [:]
    @usableFromInline @exclusivity(unchecked) var head: Int32 = -1
    @usableFromInline @exclusivity(unchecked) var tail: Int32 = -1
    @usableFromInline @exclusivity(unchecked) var capacity: Int
    @usableFromInline @exclusivity(unchecked) var totalCost = 0
    /// Entries carrying an expiry; when 0 no call needs the clock for `expire`.
    @usableFromInline @exclusivity(unchecked) var expiringCount = 0
    private var handlesMemoryWarning = false
    private var memoryObservers: [any NSObjectProtocol] = []

    /// The largest total cost kept; 0 = no limit.
    public let totalCostLimit: Int
    /// The longest an entry is kept after it was written, in seconds; 0 = no limit.
    public let ageLimit: TimeInterval

    /// A cache keeping at most `capacity` entries (`capacity <= 0`: no count limit), at most
    /// `totalCostLimit` in total cost (0: none) and entries at most `ageLimit` seconds old (0: none).
    public init(capacity: Int, totalCostLimit: Int = 0, ageLimit: TimeInterval = 0) {
        self.capacity = capacity
        self.totalCostLimit = max(0, totalCostLimit)
        self.ageLimit = max(0, ageLimit)
        var names: [Notification.Name] = [.lruMemoryCacheMemoryWarning]
        #if canImport(UIKit)
        names.append(UIApplication.didReceiveMemoryWarningNotification)
        #endif
        memoryObservers = names.map { name in
            NotificationCenter.default.addObserver(forName: name, object: nil, queue: nil) { [weak self] _ in
                self?.didReceiveMemoryWarning()
            }
        }
    }

    deinit {
        for observer in memoryObservers { NotificationCenter.default.removeObserver(observer) }
    }

    /// Whether a memory warning empties the cache. Default false. A warning is
    /// `didReceiveMemoryWarning()`, a posted `.lruMemoryCacheMemoryWarning` (post it from the
    /// platform's memory-pressure signal) or, where UIKit exists,
    /// `UIApplication.didReceiveMemoryWarningNotification`.
    public var handleMemoryWarning: Bool {
        get { lock.withLock { handlesMemoryWarning } }
        set { lock.withLock { handlesMemoryWarning = newValue } }
    }

    /// Empties the cache when `handleMemoryWarning` is true; does nothing otherwise.
    public func didReceiveMemoryWarning() {
        guard handleMemoryWarning else { return }
        removeAllObjects()
    }

    /// The current count limit (`capacity <= 0`: none).
    public var currentCapacity: Int { lock.withLock { capacity } }

    /// The number of unexpired entries. O(1) unless some entries carry an expiry or there is
    /// an age limit (then O(n): expired entries are dropped first).
    public var count: Int {
        lock.withLock {
            if expiringCount > 0 || ageLimit > 0 { dropExpired(now: Date().timeIntervalSince1970) }
            return index.count
        }
    }

    /// The total cost of the entries.
    public var currentTotalCost: Int { lock.withLock { totalCost } }

    // MARK: Writing

    /// Stores `value` (the most recently used entry from now on); nil removes the key. O(1).
    @inlinable
    public func setObject(_ value: Value?, forKey key: String) {
        set(value, forKey: key, cost: 0, expire: 0)
    }

    /// Stores `value` with a cost counted against `totalCostLimit`; nil removes the key. O(1)
    /// plus the evictions the cost causes.
    @inlinable
    public func setObject(_ value: Value?, forKey key: String, cost: Int) {
        set(value, forKey: key, cost: max(0, cost), expire: 0)
    }

    /// Stores `value` until `expire` (seconds since 1970; 0 = never); nil removes the key.
    @inlinable
    public func setObject(_ value: Value?, forKey key: String, expire: TimeInterval) {
        set(value, forKey: key, cost: 0, expire: max(0, expire))
    }

    /// Stores every pair, none expiring (the source's `addObjects:`).
    public func addObjects(_ objects: [String: Value]) {
        lock.withLock {
            let now = ageLimit > 0 ? Date().timeIntervalSince1970 : 0
            for (key, value) in objects { insert(value, forKey: key, cost: 0, expire: 0, now: now) }
        }
    }

    @inlinable
    func set(_ value: Value?, forKey key: String, cost: Int, expire: TimeInterval) {
        lock.withLock {
            guard let value else {
                if let slot = index[key] { unlink(slot, release: true) }
                return
            }
            insert(value, forKey: key, cost: cost, expire: expire, now: ageLimit > 0 ? Date().timeIntervalSince1970 : 0)
        }
    }

    /// Inserts or replaces under the lock, then evicts past the limits.
    @inlinable
    func insert(_ value: Value, forKey key: String, cost: Int, expire: TimeInterval, now: TimeInterval) {
        if let slot = index[key] {
            let i = Int(slot)
            totalCost += cost - costs[i]
            if links[i].expire != 0 { expiringCount -= 1 }
            if expire != 0 { expiringCount += 1 }
            values[i] = value
            costs[i] = cost
            links[i].expire = expire
            written[i] = now
            moveToHead(slot)
        } else {
            let slot: Int32
            if let free = freeSlots.popLast() {
                slot = free
                let i = Int(free)
                keys[i] = key
                values[i] = value
                costs[i] = cost
                links[i] = Link(previous: -1, next: head, expire: expire)
                written[i] = now
            } else {
                slot = Int32(keys.count)
                keys.append(key)
                values.append(value)
                costs.append(cost)
                links.append(Link(previous: -1, next: head, expire: expire))
                written.append(now)
            }
            if head >= 0 { links[Int(head)].previous = slot }
            head = slot
            if tail < 0 { tail = slot }
            index[key] = slot
            totalCost += cost
            if expire != 0 { expiringCount += 1 }
        }
        evictPastLimits()
    }

    @inlinable
    func evictPastLimits() {
        if capacity > 0 {
            while index.count > capacity, tail >= 0 { unlink(tail, release: true) }
        }
        if totalCostLimit > 0 {
            while totalCost > totalCostLimit, tail >= 0 { unlink(tail, release: true) }
        }
    }

    // MARK: Reading

    /// The value of `key` (now the most recently used), or nil when absent or expired (an
    /// expired entry is removed). O(1).
    @inlinable
    public func object(forKey key: String) -> Value? {
        lock.withLock {
            guard let slot = index[key] else { return nil }
            if isExpired(Int(slot)) {
                unlink(slot, release: true)
                return nil
            }
            moveToHead(slot)
            return values[Int(slot)]
        }
    }

    /// Whether `key` holds an unexpired value, without changing the recency order. O(1).
    @inlinable
    public func objectExists(forKey key: String) -> Bool {
        lock.withLock {
            guard let slot = index[key] else { return false }
            return !isExpired(Int(slot))
        }
    }

    /// Up to `count` unexpired values without changing the recency order: from the most
    /// recently used when `fromHead`, else from the least recently used. O(count + expired met).
    public func peekObjects(_ count: Int, fromHead: Bool) -> [Value] {
        lock.withLock {
            var result: [Value] = []
            guard count > 0 else { return result }
            result.reserveCapacity(min(count, index.count))
            var slot = fromHead ? head : tail
            let now = Date().timeIntervalSince1970
            while slot >= 0, result.count < count {
                let i = Int(slot)
                if !isExpired(i, now: now), let value = values[i] { result.append(value) }
                slot = fromHead ? links[i].next : links[i].previous
            }
            return result
        }
    }

    /// The unexpired keys from the most recently used to the least, without changing the order.
    public func allKeys() -> [String] {
        lock.withLock {
            var result: [String] = []
            result.reserveCapacity(index.count)
            var slot = head
            let now = Date().timeIntervalSince1970
            while slot >= 0 {
                let i = Int(slot)
                if !isExpired(i, now: now) { result.append(self.keys[i]) }
                slot = links[i].next
            }
            return result
        }
    }

    // MARK: Removing

    /// Removes `key`. O(1).
    @inlinable
    public func removeObject(forKey key: String) {
        lock.withLock {
            if let slot = index[key] { unlink(slot, release: true) }
        }
    }

    /// Removes every entry.
    public func removeAllObjects() {
        lock.withLock {
            keys.removeAll()
            values.removeAll()
            costs.removeAll()
            links.removeAll()
            written.removeAll()
            freeSlots.removeAll()
            index.removeAll()
            head = -1
            tail = -1
            totalCost = 0
            expiringCount = 0
        }
    }

    /// Removes every key in which `pattern` (an NSRegularExpression) finds a match anywhere.
    /// - Throws: the NSRegularExpression error for an invalid pattern (nothing is removed).
    /// - Complexity: O(n) matches.
    public func removeObjects(matchingRegex pattern: String) throws {
        let expression = try NSRegularExpression(pattern: pattern)
        removeKeys { key in
            expression.firstMatch(in: key, range: NSRange(key.startIndex..<key.endIndex, in: key)) != nil
        }
    }

    /// Removes every key starting with `prefix`. O(n).
    public func removeObjects(withPrefix prefix: String) {
        removeKeys { $0.hasPrefix(prefix) }
    }

    /// Removes every key ending with `suffix`. O(n).
    public func removeObjects(withSuffix suffix: String) {
        removeKeys { $0.hasSuffix(suffix) }
    }

    /// Removes every key of `keys`. O(keys).
    public func removeObjects(forKeys keys: some Sequence<String>) {
        lock.withLock {
            for key in keys {
                if let slot = index[key] { unlink(slot, release: true) }
            }
        }
    }

    /// Changes the count limit (`<= 0`: none); a smaller one evicts the least recently used
    /// entries at once.
    public func resetCapacity(_ capacity: Int) {
        lock.withLock {
            self.capacity = capacity
            evictPastLimits()
        }
    }

    // MARK: List internals (under the lock)

    private func removeKeys(where shouldRemove: (String) -> Bool) {
        lock.withLock {
            let doomed = index.filter { shouldRemove($0.key) }
            for (_, slot) in doomed { unlink(slot, release: true) }
        }
    }

    @inlinable
    func isExpired(_ i: Int) -> Bool {
        guard links[i].expire != 0 || ageLimit > 0 else { return false }
        return isExpired(i, now: Date().timeIntervalSince1970)
    }

    @inlinable
    func isExpired(_ i: Int, now: TimeInterval) -> Bool {
        (links[i].expire != 0 && links[i].expire <= now) || (ageLimit > 0 && now - written[i] >= ageLimit)
    }

    private func dropExpired(now: TimeInterval) {
        var slot = head
        while slot >= 0 {
            let following = links[Int(slot)].next
            if isExpired(Int(slot), now: now) { unlink(slot, release: true) }
            slot = following
        }
    }

    @inlinable
    func moveToHead(_ slot: Int32) {
        guard slot != head else { return }
        unlink(slot, release: false)
        let i = Int(slot)
        links[i].previous = -1
        links[i].next = head
        if head >= 0 { links[Int(head)].previous = slot }
        head = slot
        if tail < 0 { tail = slot }
    }

    /// Takes `slot` out of the list; with `release`, also out of the index and onto the free list.
    @inlinable
    func unlink(_ slot: Int32, release: Bool) {
        let i = Int(slot)
        let before = links[i].previous
        let after = links[i].next
        if before >= 0 { links[Int(before)].next = after } else { head = after }
        if after >= 0 { links[Int(after)].previous = before } else { tail = before }
        guard release else { return }
        index.removeValue(forKey: keys[i])
        totalCost -= costs[i]
        if links[i].expire != 0 { expiringCount -= 1 }
        values[i] = nil
        keys[i] = ""
        costs[i] = 0
        links[i].expire = 0
        freeSlots.append(slot)
    }
}

extension Notification.Name {
    /// Posted (by the application, from its platform's memory-pressure signal) to tell every
    /// `LRUMemoryCache` whose `handleMemoryWarning` is true to empty itself.
    public static let lruMemoryCacheMemoryWarning = Notification.Name("UnifiedStorage.LRUMemoryCache.memoryWarning")
}
