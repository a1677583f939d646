import Foundation

/// The durability class an engine is opened in. Every engine of one workload runs in the same
/// class; each engine's `settings` says how it gets there.
enum Durability: String, Codable, Sendable {
    /// An acknowledged write survives the process being killed (it is in the kernel's page
    /// cache), not necessarily a power loss.
    case processCrashSafe = "process-crash-safe"
    /// An acknowledged write is on stable storage (fsync or fdatasync before the call returns).
    case fsync
}

/// How one engine instance is opened: which registry entry (variants share a type) and in
/// which durability class.
struct EngineConfig: Sendable {
    var name: String
    var durability: Durability
}

/// A key-value engine under test. One conforming type per engine, in a file of its own: adding
/// a peer means adding one such type and one entry in `EngineRegistry`; the workloads, tables
/// and JSON are shared.
///
/// An instance is used from one thread at a time. Workloads with several threads give each
/// thread its own instance made with `init(sharing:)` (same store: the same handle where the
/// engine's handle is thread-safe, a connection or read transaction of its own where not).
protocol KVEngine: AnyObject, SendableMetatype {
    /// Opens the store in `directory`, creating it when it does not exist yet.
    init(directory: URL, config: EngineConfig) throws

    /// Another handle on the same open store, for another thread. Closing it releases only
    /// what it holds of its own; the store stays open until the original is closed.
    init(sharing other: Self) throws

    /// Stores `value` under `key`, replacing any earlier value.
    func put(_ key: [UInt8], _ value: [UInt8]) throws

    /// The value of `key`, copied out of the engine; nil when absent.
    func get(_ key: [UInt8]) throws -> [UInt8]?

    /// Removes `key` (absent keys are not an error).
    func delete(_ key: [UInt8]) throws

    /// Stores many pairs at once with the engine's batch API (used to load a store outside
    /// the timed parts). The default puts them one by one.
    func putBatch(_ keys: [[UInt8]], _ values: [[UInt8]]) throws

    /// Reclaims the space of overwritten and deleted values, synchronously. Only called for
    /// engines whose registry entry names a compaction method.
    func compact() throws

    /// Makes earlier writes visible to this handle's reads where the engine needs a call for
    /// that (UserDefaults after `removeObject`); called untimed, before a check. Default: nothing.
    func settle() throws

    /// Flushes what the engine keeps for a clean reopen and releases the store (or, for a
    /// handle made with `init(sharing:)`, what that handle holds).
    func close() throws

    /// Bytes of the engine's in-memory index, when it reports them.
    var indexMemoryBytes: Int? { get }

    /// A one-line description of the engine's own counters, when it has them.
    var statisticsSummary: String? { get }

    /// Removes, in a closed store's `directory`, whatever the engine keeps only to reopen fast
    /// (LogStore's index snapshot), so the next open is a cold one. Returns a label for that
    /// cold open, or nil when the engine keeps nothing of the kind.
    static func removeReopenAccelerators(in directory: URL) throws -> String?

    /// Writes `keys` into a key space of their own beside the store's keys (untimed), then lists
    /// that space `repetitions` times; returns the seconds all listings took, or nil when the
    /// engine has no key spaces. Throws when a listing does not return exactly those keys.
    func listSmallSpace(_ keys: [[UInt8]], repetitions: Int) throws -> Double?
}

extension KVEngine {
    var indexMemoryBytes: Int? { nil }
    var statisticsSummary: String? { nil }
    func compact() throws {}
    func settle() throws {}
    static func removeReopenAccelerators(in directory: URL) throws -> String? { nil }
    func listSmallSpace(_ keys: [[UInt8]], repetitions: Int) throws -> Double? { nil }

    func putBatch(_ keys: [[UInt8]], _ values: [[UInt8]]) throws {
        for i in keys.indices { try put(keys[i], values[i]) }
    }
}

/// One engine the harness can run: its name, what it takes part in, how it is set up, and the
/// runner specialized for its type.
struct EngineSpec: Sendable {
    /// Name in tables and in the JSON `engine` field.
    let name: String
    /// What kind of thing it is, one line.
    let kind: String
    /// Workloads it takes part in: full names (`put/4KiB`) or base names (`put`, meaning every
    /// size); `excluded` takes full names out again.
    let included: Set<String>
    let excluded: Set<String>
    /// Most keys it is run with (the slow UserDefaults); nil: the workload's count.
    let keyCap: (default: Int, quick: Int)?
    /// How `compact()` works, or nil when the engine has no compaction to ask for.
    let compaction: String?
    /// Loads the engine's library and says what was loaded (path, version), or why it cannot
    /// be run here. Called in the parent before any run.
    let probe: @Sendable () -> Result<String, BenchError>
    /// The settings it runs with in a durability class, printed with its figures.
    let settings: @Sendable (Durability) -> String
    /// Runs one group of workloads in this process.
    let runGroup: @Sendable (GroupJob) throws -> ChildReport

    func takesPart(in workload: String) -> Bool {
        guard !excluded.contains(workload) else { return false }
        return included.contains(workload) || included.contains(WorkloadCatalog.base(of: workload))
    }

    func keyCount(_ count: Int, quick: Bool) -> Int {
        guard let keyCap else { return count }
        return min(count, quick ? keyCap.quick : keyCap.default)
    }

    /// The LogStore engine and its variants, compared with each other (repeated, alternating).
    var isLogStoreFamily: Bool { name.hasPrefix("LogStore") }

    static func make<E: KVEngine>(_ type: E.Type, name: String, kind: String, included: Set<String>, excluded: Set<String> = [],
                                  keyCap: (default: Int, quick: Int)? = nil, compaction: String?,
                                  probe: @escaping @Sendable () -> Result<String, BenchError>,
                                  settings: @escaping @Sendable (Durability) -> String) -> EngineSpec {
        EngineSpec(name: name, kind: kind, included: included, excluded: excluded, keyCap: keyCap, compaction: compaction,
                   probe: probe, settings: settings,
                   runGroup: { job in try GroupRunner<E>(job: job).run() })
    }
}

/// The engines the harness knows, in the order of the table rows (LogStore, the reference,
/// first). A peer is one more entry here and one file in Engines/.
enum EngineRegistry {
    static let keyValueWorkloads: Set<String> = ["put", "get", "overwrite", "delete"]
    static let storeWorkloads: Set<String> = keyValueWorkloads.union(["compaction", "reopen", "mixed", "fsync-put"])
    /// Only the LogStore family takes part in the comparisons with LogStore's own variants.
    static let logStoreOnly: Set<String> = [WorkloadCatalog.incompressiblePut]

    static let all: [EngineSpec] = [
        .make(LogStoreEngine.self, name: LogStoreEngine.plainName, kind: "this package's engine",
              included: storeWorkloads.union(["reopen-full-scan", "list-space", "encrypted-put", "encrypted-get", "compressed-put", "compressed-get"]),
              compaction: "LogStore.compact()",
              probe: { .success("built in") }, settings: { LogStoreEngine.settings(name: LogStoreEngine.plainName, durability: $0) }),
        .make(LogStoreEngine.self, name: LogStoreEngine.encryptedName, kind: "this package's engine, AES-256-GCM per value",
              included: ["encrypted-put", "encrypted-get"], compaction: "LogStore.compact()",
              probe: { .success("built in") }, settings: { LogStoreEngine.settings(name: LogStoreEngine.encryptedName, durability: $0) }),
        .make(LogStoreEngine.self, name: LogStoreEngine.compressedName, kind: "this package's engine, zstd per value",
              included: ["compressed-put", "compressed-get"], compaction: "LogStore.compact()",
              probe: { .success("built in") }, settings: { LogStoreEngine.settings(name: LogStoreEngine.compressedName, durability: $0) }),
        .make(LogStoreEngine.self, name: LogStoreEngine.noSyncerName, kind: "this package's engine, default mode without the background syncer",
              included: ["put", "mixed"], compaction: "LogStore.compact()",
              probe: { .success("built in") }, settings: { LogStoreEngine.settings(name: LogStoreEngine.noSyncerName, durability: $0) }),
        .make(SQLiteEngine.self, name: SQLiteEngine.autocommitName, kind: "SQLite through the system library, one transaction per operation",
              included: storeWorkloads.union(["compressed-put", "compressed-get"]), excluded: logStoreOnly,
              compaction: "PRAGMA wal_checkpoint(TRUNCATE); VACUUM",
              probe: { SQLiteEngine.probe() }, settings: { SQLiteEngine.settings(name: SQLiteEngine.autocommitName, durability: $0) }),
        .make(SQLiteEngine.self, name: SQLiteEngine.batchName, kind: "SQLite through the system library, batched transactions",
              included: keyValueWorkloads.union(["compaction", "reopen", "compressed-put", "compressed-get"]), excluded: logStoreOnly,
              compaction: "COMMIT; PRAGMA wal_checkpoint(TRUNCATE); VACUUM",
              probe: { SQLiteEngine.probe() }, settings: { SQLiteEngine.settings(name: SQLiteEngine.batchName, durability: $0) }),
        .make(LMDBEngine.self, name: LMDBEngine.name, kind: "LMDB through liblmdb (B+tree in one mmapped file)",
              included: storeWorkloads.union(["compressed-put", "compressed-get"]), excluded: logStoreOnly,
              compaction: nil,
              probe: { LMDBEngine.probe() }, settings: { LMDBEngine.settings(durability: $0) }),
        .make(LevelDBEngine.self, name: LevelDBEngine.name, kind: "LevelDB through libleveldb (LSM tree)",
              included: storeWorkloads.union(["compressed-put", "compressed-get"]), excluded: logStoreOnly,
              compaction: "leveldb_compact_range(whole key range)",
              probe: { LevelDBEngine.probe() }, settings: { LevelDBEngine.settings(durability: $0) }),
        .make(RocksDBEngine.self, name: RocksDBEngine.name, kind: "RocksDB through librocksdb (LSM tree)",
              included: storeWorkloads.union(["compressed-put", "compressed-get"]), excluded: logStoreOnly,
              compaction: "rocksdb_compact_range(whole key range)",
              probe: { RocksDBEngine.probe() }, settings: { RocksDBEngine.settings(durability: $0) }),
        .make(UserDefaultsEngine.self, name: UserDefaultsEngine.name, kind: "Foundation UserDefaults (a preferences plist)",
              included: ["put", "get", "overwrite", "delete", "reopen"],
              excluded: ["put/4KiB", "get/4KiB", "overwrite/4KiB", "delete/4KiB"],
              keyCap: (default: UserDefaultsEngine.keyCap, quick: UserDefaultsEngine.quickKeyCap), compaction: nil,
              probe: { .success("Foundation") }, settings: { _ in UserDefaultsEngine.settings }),
        .make(NSCacheEngine.self, name: NSCacheEngine.name, kind: "Foundation NSCache: a memory cache, not durable",
              included: keyValueWorkloads.union(["mixed"]),
              keyCap: (default: NSCacheEngine.keyCap, quick: NSCacheEngine.quickKeyCap), compaction: nil,
              probe: { .success("Foundation") }, settings: { _ in NSCacheEngine.settings }),
    ]

    static var names: [String] { all.map(\.name) }

    static func spec(named name: String) -> EngineSpec? {
        all.first { $0.name.lowercased() == name.lowercased() }
    }
}
