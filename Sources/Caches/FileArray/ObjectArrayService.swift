import Foundation
import LogStore
import DAO
import Preferences

/// AObjectArrayService: Codable objects kept as a file array (key space "objectarray:<name>",
/// each object one file holding its encoded value, FORMAT.md "Caches: values"), with an LRU
/// memory cache of `cacheCapacity` entries in front (`<= 0`: none).
///
/// `setObject` and `removeObject` return at once and write in the background, in call order;
/// every call made after them sees their effect (reads, existence, keys and counts consult the
/// pending writes first). `removeObjects(forKeyLike:)` and `removeAllObjects()` act at once and
/// cancel the pending writes they cover.
///
/// A userDependent service writes into the store of the user current at the call; its pending
/// writes are finished before that user's store closes, the memory cache is emptied when the
/// user changes, and while no user is set reads are empty and writes are dropped.
public final class ObjectArrayService<Value: Codable & Sendable>: @unchecked Sendable {
    private struct Pending {
        var generation: UInt64
        /// nil: a pending removal.
        var value: Value?
        /// The array (of the store current when the call was made) the write goes to.
        var index: FileArrayIndex
    }

    private let files: FileArrayService
    private let memory: LRUMemoryCache<Value>?
    private let codec = CacheValueCodec<Value>.codable()
    private let queue: DispatchQueue
    private let callbackQueue: DispatchQueue?
    private let state = CacheLockedBox<(pending: [String: Pending], generation: UInt64, store: ObjectIdentifier?)>(([:], 0, nil))
    /// Held while a background write checks it is still wanted and performs it, and by the bulk
    /// removals, so a cancelled write never lands after the removal that cancelled it.
    private let writeLock = NSLock()
    private let onQueue = DispatchSpecificKey<Bool>()
    private var resignObserver: (any NSObjectProtocol)?

    init(name: String, source: StoreSource, capacity: Int, cacheCapacity: Int, crypted: Bool, callbackQueue: DispatchQueue?) throws {
        files = try FileArrayService(name: name, spaceName: "objectarray:" + name, source: source,
                                     capacity: capacity, crypted: crypted, callbackQueue: callbackQueue)
        memory = cacheCapacity > 0 ? LRUMemoryCache(capacity: cacheCapacity) : nil
        self.callbackQueue = callbackQueue
        queue = DispatchQueue(label: "UnifiedStorage.ObjectArrayService.\(name)")
        queue.setSpecific(key: onQueue, value: true)
        if source.userDependent {
            // The writes of a user land in that user's store: let them finish before it closes.
            resignObserver = NotificationCenter.default.addObserver(forName: .dataCenterWillLastUserResign, object: nil, queue: nil) { [weak self] _ in
                self?.waitForPendingWrites()
            }
        }
    }

    deinit {
        if let resignObserver { NotificationCenter.default.removeObserver(resignObserver) }
    }

    /// Returns when every write queued so far is done (at once when called on the service's queue).
    public func waitForPendingWrites() {
        guard DispatchQueue.getSpecific(key: onQueue) != true else { return }
        queue.sync {}
    }

    /// The pending writes to the current store; the memory cache is emptied when the store
    /// changed (a user switch).
    private func pendingSnapshot() -> [String: Pending] {
        let index = try? files.index()
        let identity = index.map { ObjectIdentifier($0) }
        return state.withLock { state in
            if state.store != identity {
                if state.store != nil { memory?.removeAllObjects() }
                state.store = identity
            }
            guard let index else { return [:] }
            return state.pending.filter { $0.value.index === index }
        }
    }

    // MARK: Writing

    /// Stores `value` under `key` (nil removes it); the write happens in the background, into
    /// the store current now (a userDependent service with no user set drops it). Past
    /// capacity the earliest objects go at once, as the write will do when it lands
    /// (custom_storage/summary.md: "When the defined value is exceeded, the earliest data will
    /// be cleared automatically").
    public func setObject(_ value: Value?, forKey key: String) {
        _ = pendingSnapshot()
        guard let index = try? files.index() else { return }
        let writes = state.withLock { state -> [(key: String, generation: UInt64)] in
            state.generation += 1
            state.pending[key] = Pending(generation: state.generation, value: value, index: index)
            var writes = [(key, state.generation)]
            guard value != nil else { return writes }
            for victim in evictionVictims(of: state.pending, writing: key, in: index) {
                state.generation += 1
                state.pending[victim] = Pending(generation: state.generation, value: nil, index: index)
                writes.append((victim, state.generation))
            }
            return writes
        }
        if let value { memory?.setObject(value, forKey: key) } else { memory?.removeObject(forKey: key) }
        for write in writes.dropFirst() { memory?.removeObject(forKey: write.key) }
        for write in writes { queue.async { self.flushPending(write.key, generation: write.generation) } }
    }

    /// The keys that the writes in `pending` push past capacity once `key` was written: in
    /// `allKeys()` order (stored files by write time, then pending writes by call order), the
    /// earliest first, as the file array evicts when the writes land. Under the state lock.
    /// - Complexity: O(pending writes + victims) without eviction; plus a sort of the pending
    ///   writes when some of them are victims.
    private func evictionVictims(of pending: [String: Pending], writing key: String, in index: FileArrayIndex) -> [String] {
        let capacity = files.capacity
        guard capacity > 0 else { return [] }
        let ours = pending.filter { $0.value.index === index }
        return files.withIndex("setObject \(key)", fallback: [], in: index) { stored in
            let overlap = ours.keys.reduce(0) { $0 + (stored.manifests[$1] != nil ? 1 : 0) }
            let pendingValues = ours.reduce(0) { $0 + ($1.value.value != nil ? 1 : 0) }
            let excess = stored.manifests.count - overlap + pendingValues - capacity
            guard excess > 0 else { return [] }
            var victims = stored.oldestNames(limit: excess) { ours[$0] != nil }
            if victims.count < excess {
                let earliestPending = ours.filter { $0.value.value != nil && $0.key != key }
                    .sorted { $0.value.generation < $1.value.generation }.map(\.key)
                victims += earliestPending.prefix(excess - victims.count)
            }
            return victims
        }
    }

    private func flushPending(_ key: String, generation: UInt64) {
        writeLock.lock()
        defer { writeLock.unlock() }
        guard let pending = state.withLock({ $0.pending[key] }), pending.generation == generation else { return }
        if let value = pending.value {
            do {
                if !files.writeNow(Data(try codec.encode(value)), name: key, in: pending.index) { memory?.removeObject(forKey: key) }
            } catch {
                CacheLog.warning("ObjectArrayService \(files.name): encoding \(key): \(error)")
                memory?.removeObject(forKey: key)
            }
        } else {
            files.removeNow(key, in: pending.index)
        }
        state.withLock { state in
            if state.pending[key]?.generation == generation { state.pending.removeValue(forKey: key) }
        }
    }

    /// Removes `key` (in the background, visible at once).
    public func removeObject(forKey key: String) {
        setObject(nil, forKey: key)
    }

    /// Removes every key matching `pattern` with SQLite's LIKE, now.
    public func removeObjects(forKeyLike pattern: String) {
        let like = LikePattern(pattern)
        writeLock.lock()
        defer { writeLock.unlock() }
        let current = try? files.index()
        state.withLock { state in state.pending = state.pending.filter { $0.value.index !== current || !like.matches($0.key) } }
        if let memory { memory.removeObjects(forKeys: memory.allKeys().filter { like.matches($0) }) }
        files.removeFiles(like: pattern)
    }

    /// Removes every object, now.
    public func removeAllObjects() {
        writeLock.lock()
        defer { writeLock.unlock() }
        let current = try? files.index()
        state.withLock { state in state.pending = state.pending.filter { $0.value.index !== current } }
        memory?.removeAllObjects()
        files.removeAllFiles()
    }

    // MARK: Reading

    /// The object under `key`: from the pending writes, the memory cache, else the store
    /// (synchronously; then it is cached). Nil when absent or undecodable.
    public func object(forKey key: String) -> Value? {
        if let pending = pendingSnapshot()[key] { return pending.value }
        if let cached = memory?.object(forKey: key) {
            // The file array may have evicted it past capacity since it was cached.
            if files.fileExists(key) { return cached }
            memory?.removeObject(forKey: key)
        }
        guard let data = files.readFileSync(key) else { return nil }
        do {
            let value = try codec.decode(Array(data))
            // Cache only if no write came in meanwhile.
            if pendingSnapshot()[key] == nil { memory?.setObject(value, forKey: key) }
            return value
        } catch {
            CacheLog.warning("ObjectArrayService \(files.name): decoding \(key): \(error)")
            return nil
        }
    }

    /// `object(forKey:)` on the service's queue; `completion` runs on the callback queue.
    public func object(forKey key: String, completion: @escaping @Sendable (Value?) -> Void) {
        queue.async {
            let value = self.object(forKey: key)
            if let callbackQueue = self.callbackQueue { callbackQueue.async { completion(value) } } else { completion(value) }
        }
    }

    /// Every object whose key matches `pattern` with SQLite's LIKE, read from the store (the
    /// memory cache is bypassed; pending writes are applied).
    public func objects(forKeyLike pattern: String) async -> [String: Value] {
        await withCheckedContinuation { continuation in
            queue.async { continuation.resume(returning: self.objectsNow(forKeyLike: pattern)) }
        }
    }

    /// `objects(forKeyLike:)` with a completion on the callback queue.
    public func objects(forKeyLike pattern: String, completion: @escaping @Sendable ([String: Value]) -> Void) {
        queue.async {
            let result = self.objectsNow(forKeyLike: pattern)
            if let callbackQueue = self.callbackQueue { callbackQueue.async { completion(result) } } else { completion(result) }
        }
    }

    private func objectsNow(forKeyLike pattern: String) -> [String: Value] {
        let like = LikePattern(pattern)
        let pending = pendingSnapshot()
        var result: [String: Value] = [:]
        for (key, data) in files.readFilesNow(like: pattern) {
            do { result[key] = try codec.decode(Array(data)) } catch {
                CacheLog.warning("ObjectArrayService \(files.name): decoding \(key): \(error)")
            }
        }
        for (key, write) in pending where like.matches(key) { result[key] = write.value }
        return result
    }

    // MARK: Queries

    /// Whether `key` holds an object (pending writes included).
    public func objectExists(forKey key: String) -> Bool {
        if let pending = pendingSnapshot()[key] { return pending.value != nil }
        return files.fileExists(key)
    }

    /// Every key (pending writes included), oldest write first for the stored ones.
    public func allKeys() -> [String] {
        let pending = pendingSnapshot()
        var keys = files.allFileNames().filter { pending[$0] == nil }
        keys += pending.sorted { $0.value.generation < $1.value.generation }.compactMap { $0.value.value == nil ? nil : $0.key }
        return keys
    }

    /// The number of objects (pending writes included).
    public func objectCount() -> Int {
        allKeys().count
    }
}

extension CustomStorage {
    /// A file array of this storage (common, or the current user's with `userDependent`).
    /// Completions run on `callbackQueue`, or on a serial queue of the service when nil.
    /// - Throws: `CacheError.invalidName` for an empty name; store errors for a common service
    ///   whose store cannot be opened.
    public func fileArrayService(name: String, userDependent: Bool, capacity: Int, crypted: Bool, callbackQueue: DispatchQueue? = nil) throws -> FileArrayService {
        try FileArrayService(name: name, spaceName: "filearray:" + name, source: StoreSource(storage: self, userDependent: userDependent),
                             capacity: capacity, crypted: crypted, callbackQueue: callbackQueue)
    }

    /// `fileArrayService(name:userDependent:capacity:crypted:callbackQueue:)` whose files are
    /// zstd-compressed when `compressed` (chunk by chunk, before any encryption; every file is
    /// kept in chunk records then). Open an array with the same `compressed` it was written
    /// with: files are read by how they were written either way.
    /// - Throws: as the other factory.
    public func fileArrayService(name: String, userDependent: Bool, capacity: Int, crypted: Bool, compressed: Bool, callbackQueue: DispatchQueue? = nil) throws -> FileArrayService {
        try FileArrayService(name: name, spaceName: "filearray:" + name, source: StoreSource(storage: self, userDependent: userDependent),
                             capacity: capacity, crypted: crypted, compressed: compressed, callbackQueue: callbackQueue)
    }

    /// An object array of this storage with a memory cache of `cacheCapacity` entries.
    /// - Throws: as `fileArrayService`.
    public func objectArrayService<V: Codable & Sendable>(name: String, userDependent: Bool, capacity: Int, cacheCapacity: Int, crypted: Bool, of type: V.Type = V.self, callbackQueue: DispatchQueue? = nil) throws -> ObjectArrayService<V> {
        try ObjectArrayService<V>(name: name, source: StoreSource(storage: self, userDependent: userDependent), capacity: capacity,
                                  cacheCapacity: cacheCapacity, crypted: crypted, callbackQueue: callbackQueue)
    }
}
