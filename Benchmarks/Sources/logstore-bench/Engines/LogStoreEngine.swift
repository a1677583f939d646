import Foundation
import LogStore

/// UnifiedStorage's `LogStore` with its default options (64 MiB segments, background
/// compaction at 50% dead bytes), in three variants: plain, AES-256-GCM on every value (a
/// fixed benchmark key), zstd on every value (default level and threshold).
final class LogStoreEngine: KVEngine {
    static let plainName = "LogStore"
    static let encryptedName = "LogStore+AES"
    static let compressedName = "LogStore+zstd"
    /// The default mode without its background syncer (`maxUnsyncedInterval` and
    /// `maxUnsyncedBytes` nil: no bound on a power cut's loss), beside the default to show
    /// what the syncer costs puts (issue 21 item 4).
    static let noSyncerName = "LogStore-nosyncer"
    /// The index snapshot written at close; without it an open scans every segment.
    static let snapshotFileName = "index.snapshot"
    /// The benchmark's encryption key (32 bytes, fixed so reopens read the same store).
    static let benchmarkKey: [UInt8] = (0..<32).map { UInt8(truncatingIfNeeded: $0 &* 73 &+ 11) }

    private let store: LogStore
    private let owner: Bool

    static func options(name: String, durability: Durability) -> LogStore.Options {
        var options = LogStore.Options()
        options.durability = durability == .fsync ? .fsyncEachWrite : .processCrashSafe
        if name == encryptedName { options.encryption = .init(key: benchmarkKey, keyID: 1) }
        if name == compressedName { options.compression = .init() }
        if name == noSyncerName {
            options.maxUnsyncedInterval = nil
            options.maxUnsyncedBytes = nil
        }
        return options
    }

    static func settings(name: String, durability: Durability) -> String {
        let defaults = LogStore.Options()
        var parts = [durability == .fsync ? ".fsyncEachWrite (concurrent writers share an fsync)" : ".processCrashSafe (the default)",
                     "segments \(defaults.segmentSize >> 20) MiB", "background compaction at \(Int(defaults.compactionTrigger * 100))% dead"]
        if name == encryptedName { parts.append("encryption: AES-256-GCM, a 32-byte key, key id 1") }
        if name == noSyncerName { parts.append("no background syncer (maxUnsyncedInterval and maxUnsyncedBytes nil)") }
        if name == compressedName {
            let compression = LogStore.Options.Compression()
            parts.append("compression: zstd level \(compression.level), values >= \(compression.threshold) B")
        }
        parts.append("get: get(forKey:) (a copied [UInt8])")
        return parts.joined(separator: ", ")
    }

    init(directory: URL, config: EngineConfig) throws {
        store = try LogStore(directory: directory, options: Self.options(name: config.name, durability: config.durability))
        owner = true
    }

    /// `LogStore` is thread-safe: other threads share the instance.
    init(sharing other: LogStoreEngine) throws {
        store = other.store
        owner = false
    }

    @inline(__always)
    func put(_ key: [UInt8], _ value: [UInt8]) throws {
        try store.put(value, forKey: key)
    }

    @inline(__always)
    func get(_ key: [UInt8]) throws -> [UInt8]? {
        try store.get(forKey: key)
    }

    @inline(__always)
    func delete(_ key: [UInt8]) throws {
        try store.delete(forKey: key)
    }

    func putBatch(_ keys: [[UInt8]], _ values: [[UInt8]]) throws {
        var batch = LogStore.WriteBatch()
        for i in keys.indices { batch.put(values[i], forKey: keys[i]) }
        try store.write(batch)
    }

    func compact() throws {
        try store.compact()
    }

    func close() throws {
        if owner { try store.close() }
    }

    var indexMemoryBytes: Int? { store.statistics.keydirBytes }

    func listSmallSpace(_ keys: [[UInt8]], repetitions: Int) throws -> Double? {
        var batch = LogStore.WriteBatch()
        for key in keys { batch.put(key, forKey: key, space: 1) }
        try store.write(batch)
        let expected = keys.sorted { $0.lexicographicallyPrecedes($1) }
        let start = MonotonicClock.now()
        var listed = 0
        for _ in 0..<repetitions { listed += try store.keys(space: 1).count }
        let seconds = Double(MonotonicClock.now() - start) / 1e9
        guard listed == keys.count * repetitions, try store.keys(space: 1) == expected else {
            throw BenchError.verification("keys(space: 1) listed \(listed / repetitions) keys, expected \(keys.count)")
        }
        return seconds
    }

    var statisticsSummary: String? {
        let s = store.statistics
        return "keys \(s.liveKeys), segments \(s.segmentCount) (\(Format.bytes(s.segmentBytes))), " +
            "live \(Format.bytes(s.liveBytes)), dead \(Format.bytes(s.deadBytes)), " +
            "keydir \(Format.bytes(s.keydirBytes)), compactions \(s.compactions)"
    }

    static func removeReopenAccelerators(in directory: URL) throws -> String? {
        let path = directory.appendingPathComponent(snapshotFileName).path
        if FileManager.default.fileExists(atPath: path) {
            try FileManager.default.removeItem(atPath: path)
        }
        return "\(snapshotFileName) removed: the open scans every segment"
    }
}
