import Foundation
import LogStore
import DAO
import Preferences

/// APLRUDiskCache: a persistent LRU cache in a LogStore key space of its own
/// ("lrucache:<name>") in the common store of a DataCenter or CustomStorage, or with
/// `userDependent` in the current user's store (following user switches by itself).
///
/// - Capacity is a count. The cache may run a little above it: when the count exceeds
///   capacity + max(capacity / 10, 1) it trims back to capacity in one batch, expired entries
///   first, then the least recently used. `capacity <= 0` means no limit.
/// - Writes go to the store synchronously (LogStore appends are cheap), so every read, from
///   any thread, sees every write whose call has returned: there are no pending writes to wait
///   for.
/// - An expired entry reads as nil and is removed.
/// - Crypted caches store values AES-256-GCM under the storage's default key.
/// - Recency is kept in memory and persisted in batches (see `DiskCacheIndex`), so a read never
///   writes.
///
/// While no user is set, a userDependent cache reads as empty and drops writes. Errors of these
/// non-throwing calls are logged (label "UnifiedStorage.Caches").
///
/// ```swift
/// let cache = try LRUDiskCache<Data>(name: "thumbnails", capacity: 1_000, userDependent: true, crypted: false)
/// cache.setObject(png, forKey: "photo:1")
/// ```
public final class LRUDiskCache<Value>: @unchecked Sendable {
    /// The cache's name (its key spaces are named from it).
    public let name: String
    /// The count limit (`<= 0`: none).
    public let capacity: Int
    /// Whether values are encrypted with the storage's default key.
    public let crypted: Bool
    /// Whether the cache lives in the current user's store.
    public let userDependent: Bool

    private let source: StoreSource
    private let codec: CacheValueCodec<Value>
    private let current = CacheLockedBox<DiskCacheIndex?>(nil)
    private var resignObserver: (any NSObjectProtocol)?

    /// A cache of Codable values (Data, [UInt8] and String are stored as their bytes; other
    /// types as binary property lists).
    /// - Throws: `CacheError.invalidName` for an empty name; store errors for a common cache
    ///   whose store cannot be opened.
    public convenience init(name: String, capacity: Int, userDependent: Bool, crypted: Bool, in storage: CustomStorage? = nil) throws where Value: Codable {
        try self.init(name: name, capacity: capacity, userDependent: userDependent, crypted: crypted, storage: storage, codec: .codable())
    }

    /// A cache of NSCoding objects (stored as NSKeyedArchiver archives).
    /// - Throws: as the Codable initializer.
    public convenience init(name: String, capacity: Int, userDependent: Bool, crypted: Bool, in storage: CustomStorage? = nil) throws where Value: NSObject & NSCoding {
        try self.init(name: name, capacity: capacity, userDependent: userDependent, crypted: crypted, storage: storage, codec: .archiving())
    }

    private init(name: String, capacity: Int, userDependent: Bool, crypted: Bool, storage: CustomStorage?, codec: CacheValueCodec<Value>) throws {
        guard !name.isEmpty else { throw CacheError.invalidName(name) }
        self.name = name
        self.capacity = capacity
        self.crypted = crypted
        self.userDependent = userDependent
        source = StoreSource(storage: storage, userDependent: userDependent)
        self.codec = codec
        try start()
    }

    private func start() throws {
        if userDependent {
            // Persist the order before the user's store closes.
            resignObserver = NotificationCenter.default.addObserver(forName: .dataCenterWillLastUserResign, object: nil, queue: nil) { [weak self] _ in
                self?.flush()
            }
            _ = try? index()
        } else {
            _ = try index()
        }
    }

    deinit {
        if let resignObserver { NotificationCenter.default.removeObserver(resignObserver) }
    }

    /// The index of the store to use now (another one after a user switch).
    private func index() throws -> DiskCacheIndex {
        let store = try source.store()
        if let index = current.value, index.store === store { return index }
        let index = try DiskCacheIndex.index(for: store, name: name)
        current.value = index
        return index
    }

    private var crypt: DataCrypt { crypted ? .default : .plain }

    /// What a read found under the lock.
    private enum Found { case absent, value(Value), bytes([UInt8]) }

    // MARK: Writing

    /// Stores `value` under `key`, never expiring; nil removes the key.
    public func setObject(_ value: Value?, forKey key: String) {
        setObject(value, forKey: key, expire: 0)
    }

    /// Stores `value` until `expire` (seconds since 1970; 0 = never); nil removes the key.
    /// - Complexity: O(1) plus encoding; a trim (every max(capacity / 10, 1) new keys past
    ///   capacity) sorts the keys by recency, O(n log n), so amortized O(log n) per new key.
    public func setObject(_ value: Value?, forKey key: String, expire: TimeInterval) {
        guard let value else { return removeObject(forKey: key) }
        do {
            let bytes = try codec.encode(value)
            let index = try index()
            let expireMillis = DiskCacheIndex.expiryMillis(ofExpire: expire)
            try index.lock.withLock {
                try index.store.put(bytes, forKey: Array(key.utf8), space: index.valueSpace,
                                    expiresAt: DiskCacheIndex.expiryDate(ofMillis: expireMillis), crypt: crypt)
                index.touch(key, expireMillis: expireMillis)
                try index.trimIfNeededLocked(capacity: capacity)
            }
        } catch {
            log("setObject \(key)", error)
        }
    }

    /// Stores every pair (none expiring) in one atomic batch.
    public func addObjects(_ objects: [String: Value]) {
        do {
            let encoded = try objects.map { ($0.key, try codec.encode($0.value)) }
            let index = try index()
            try index.lock.withLock {
                var batch = LogStore.WriteBatch()
                for (key, bytes) in encoded { batch.put(bytes, forKey: Array(key.utf8), space: index.valueSpace, crypt: crypt) }
                try index.store.write(batch)
                for (key, _) in encoded { index.touch(key, expireMillis: 0) }
                try index.trimIfNeededLocked(capacity: capacity)
            }
        } catch {
            log("addObjects", error)
        }
    }

    // MARK: Reading

    /// The value of `key` (now the most recently used); nil when absent, expired (it is removed
    /// then) or undecodable. O(1) plus decoding.
    public func object(forKey key: String) -> Value? {
        do {
            let index = try index()
            let found: Found = try index.lock.withLock {
                guard let entry = index.entries[key] else { return .absent }
                if entry.expireMillis != 0, entry.expireMillis <= DiskCacheIndex.nowMillis() {
                    try index.removeLocked([key])
                    return .absent
                }
                // Byte blobs are decoded straight from the stored record (one copy); other
                // values are copied out and decoded outside the lock.
                let read = try index.store.withValue(forKey: Array(key.utf8), space: index.valueSpace, crypt: nil) { buffer -> Found in
                    if let value = codec.decodeInPlace(buffer) { return .value(value) }
                    return .bytes([UInt8](buffer))
                }
                guard let read else {
                    try index.removeLocked([key])  // expired in the store (or removed behind our back)
                    return .absent
                }
                index.touch(key, expireMillis: nil)
                return read
            }
            switch found {
            case .absent: return nil
            case .value(let value): return value
            case .bytes(let bytes): return try codec.decode(bytes)
            }
        } catch StoreError.noCurrentUser {
            return nil
        } catch {
            log("object \(key)", error)
            return nil
        }
    }

    /// Whether `key` holds an unexpired value, without changing the recency order.
    public func objectExists(forKey key: String) -> Bool {
        guard let index = try? index() else { return false }
        return index.lock.withLock {
            guard let entry = index.entries[key] else { return false }
            return entry.expireMillis == 0 || entry.expireMillis > DiskCacheIndex.nowMillis()
        }
    }

    /// The number of unexpired entries. O(n).
    public var count: Int {
        guard let index = try? index() else { return 0 }
        let now = DiskCacheIndex.nowMillis()
        return index.lock.withLock { index.entries.values.reduce(0) { $0 + ($1.expireMillis == 0 || $1.expireMillis > now ? 1 : 0) } }
    }

    /// The unexpired keys from the most recently used to the least. O(n log n).
    public func allKeys() -> [String] {
        guard let index = try? index() else { return [] }
        let now = DiskCacheIndex.nowMillis()
        return index.lock.withLock {
            index.entries.filter { $0.value.expireMillis == 0 || $0.value.expireMillis > now }
                .sorted { $0.value.tick > $1.value.tick }.map(\.key)
        }
    }

    // MARK: Removing

    /// Removes `key`.
    public func removeObject(forKey key: String) {
        removeObjects(forKeys: [key])
    }

    /// Removes every key of `keys` in one batch.
    public func removeObjects(forKeys keys: some Sequence<String>) {
        let names = Array(keys)
        guard !names.isEmpty else { return }
        do {
            let index = try index()
            try index.lock.withLock { try index.removeLocked(names) }
        } catch {
            log("removeObjects(forKeys:)", error)
        }
    }

    /// Removes every key matching `pattern` with SQLite's LIKE (`%`, `_`, ASCII
    /// case-insensitive), in one batch. O(n).
    public func removeObjects(like pattern: String) {
        let like = LikePattern(pattern)
        do {
            let index = try index()
            try index.lock.withLock { try index.removeLocked(index.entries.keys.filter { like.matches($0) }) }
        } catch {
            log("removeObjects(like:)", error)
        }
    }

    /// Removes every entry.
    public func removeAllObjects() {
        do {
            let index = try index()
            try index.lock.withLock {
                try index.store.removeAll(space: index.valueSpace)
                try index.store.removeAll(space: index.orderSpace)
                index.entries.removeAll()
                index.dirty.removeAll()
            }
        } catch {
            log("removeAllObjects", error)
        }
    }

    /// Persists the recency order now (it is also persisted at every trim and when the cache
    /// goes away), so a reopen after a crash ranks entries as they are ranked now.
    public func flush() {
        current.value?.persistDirty()
    }

    private func log(_ call: String, _ error: any Error) {
        if case StoreError.noCurrentUser = error { return }
        CacheLog.warning("LRUDiskCache \(name): \(call): \(error)")
    }
}

/// A value behind a lock (the caches' small pieces of mutable state).
final class CacheLockedBox<Value>: @unchecked Sendable {
    private let lock = CacheLock()
    private var stored: Value

    init(_ value: Value) { stored = value }

    var value: Value {
        get { lock.withLock { stored } }
        set { lock.withLock { stored = newValue } }
    }

    func withLock<Result>(_ body: (inout Value) throws -> Result) rethrows -> Result {
        try lock.withLock { try body(&stored) }
    }
}
