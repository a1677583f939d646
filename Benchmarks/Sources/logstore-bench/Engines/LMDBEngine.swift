import Foundation

/// LMDB through liblmdb.so.0 (loaded at run time): one environment in the store directory, the
/// unnamed database, one write transaction per put or delete, a reused read-only transaction
/// (`mdb_txn_renew` / `mdb_txn_reset`) per get; the value is copied out of the map.
final class LMDBEngine: KVEngine {
    static let name = "LMDB"
    static let mapSize = 64 << 30

    struct Val {
        var size: Int
        var data: UnsafeMutableRawPointer?
    }

    struct API {
        let envCreate: @convention(c) (UnsafeMutablePointer<OpaquePointer?>?) -> Int32
        let envSetMapsize: @convention(c) (OpaquePointer?, Int) -> Int32
        let envSetMaxreaders: @convention(c) (OpaquePointer?, UInt32) -> Int32
        let envOpen: @convention(c) (OpaquePointer?, UnsafePointer<CChar>?, UInt32, UInt32) -> Int32
        let envClose: @convention(c) (OpaquePointer?) -> Void
        let envSync: @convention(c) (OpaquePointer?, Int32) -> Int32
        let txnBegin: @convention(c) (OpaquePointer?, OpaquePointer?, UInt32, UnsafeMutablePointer<OpaquePointer?>?) -> Int32
        let txnCommit: @convention(c) (OpaquePointer?) -> Int32
        let txnAbort: @convention(c) (OpaquePointer?) -> Void
        let txnReset: @convention(c) (OpaquePointer?) -> Void
        let txnRenew: @convention(c) (OpaquePointer?) -> Int32
        let dbiOpen: @convention(c) (OpaquePointer?, UnsafePointer<CChar>?, UInt32, UnsafeMutablePointer<UInt32>?) -> Int32
        /// The MDB_val arguments are `Val`s passed as raw pointers.
        let put: @convention(c) (OpaquePointer?, UInt32, UnsafeMutableRawPointer?, UnsafeMutableRawPointer?, UInt32) -> Int32
        let get: @convention(c) (OpaquePointer?, UInt32, UnsafeMutableRawPointer?, UnsafeMutableRawPointer?) -> Int32
        let del: @convention(c) (OpaquePointer?, UInt32, UnsafeMutableRawPointer?, UnsafeMutableRawPointer?) -> Int32
        let strerror: @convention(c) (Int32) -> UnsafePointer<CChar>?
        let version: @convention(c) (UnsafeMutablePointer<Int32>?, UnsafeMutablePointer<Int32>?, UnsafeMutablePointer<Int32>?) -> UnsafePointer<CChar>?
        let path: String

        init(_ lib: DynamicLibrary) throws {
            envCreate = try lib.function("mdb_env_create")
            envSetMapsize = try lib.function("mdb_env_set_mapsize")
            envSetMaxreaders = try lib.function("mdb_env_set_maxreaders")
            envOpen = try lib.function("mdb_env_open")
            envClose = try lib.function("mdb_env_close")
            envSync = try lib.function("mdb_env_sync")
            txnBegin = try lib.function("mdb_txn_begin")
            txnCommit = try lib.function("mdb_txn_commit")
            txnAbort = try lib.function("mdb_txn_abort")
            txnReset = try lib.function("mdb_txn_reset")
            txnRenew = try lib.function("mdb_txn_renew")
            dbiOpen = try lib.function("mdb_dbi_open")
            put = try lib.function("mdb_put")
            get = try lib.function("mdb_get")
            del = try lib.function("mdb_del")
            strerror = try lib.function("mdb_strerror")
            version = try lib.function("mdb_version")
            path = lib.path
        }

        func message(_ rc: Int32) -> String { strerror(rc).map { String(cString: $0) } ?? "\(rc)" }
    }

    static let library = LazyLibrary<API> {
        DynamicLibrary.open(sonames: ["liblmdb.so.0", "liblmdb.so"]).flatMap { lib in
            Result { try API(lib) }.mapError { $0 as? BenchError ?? .unavailable("\($0)") }
        }
    }

    static func probe() -> Result<String, BenchError> {
        library.result.map { "\($0.path), \(String(cString: $0.version(nil, nil, nil)!))" }
    }

    static let notFound: Int32 = -30798
    static let noSync: UInt32 = 0x10000
    static let noMetaSync: UInt32 = 0x40000
    static let noTLS: UInt32 = 0x200000
    static let readOnly: UInt32 = 0x20000

    static func flags(for durability: Durability) -> UInt32 {
        noTLS | (durability == .fsync ? 0 : noSync | noMetaSync)
    }

    static func settings(durability: Durability) -> String {
        let sync = durability == .fsync ? "default flags (fdatasync at every commit)"
                                        : "MDB_NOSYNC | MDB_NOMETASYNC (commits are written to the file, not synced)"
        return "\(sync), MDB_NOTLS, map size \(mapSize >> 30) GiB, one write transaction per put or delete, " +
            "a reused read-only transaction (renew/reset) per get, value copied out"
    }

    /// The environment, shared by the handles of all threads; closed by the first handle.
    private final class Environment {
        let env: OpaquePointer
        let dbi: UInt32
        init(env: OpaquePointer, dbi: UInt32) {
            self.env = env
            self.dbi = dbi
        }
    }

    private let api: API
    private let environment: Environment
    private let owner: Bool
    private var readTransaction: OpaquePointer?
    private var closed = false

    init(directory: URL, config: EngineConfig) throws {
        api = try Self.library.get()
        var env: OpaquePointer?
        var rc = api.envCreate(&env)
        guard rc == 0, let env else { throw BenchError.engine("mdb_env_create: \(api.message(rc))") }
        _ = api.envSetMapsize(env, Self.mapSize)
        _ = api.envSetMaxreaders(env, 126)
        rc = api.envOpen(env, directory.path, Self.flags(for: config.durability), 0o644)
        guard rc == 0 else {
            api.envClose(env)
            throw BenchError.engine("mdb_env_open \(directory.path): \(api.message(rc))")
        }
        var txn: OpaquePointer?
        rc = api.txnBegin(env, nil, 0, &txn)
        guard rc == 0 else {
            api.envClose(env)
            throw BenchError.engine("mdb_txn_begin: \(api.message(rc))")
        }
        var dbi: UInt32 = 0
        rc = api.dbiOpen(txn, nil, 0, &dbi)
        if rc == 0 { rc = api.txnCommit(txn) } else { api.txnAbort(txn) }
        guard rc == 0 else {
            api.envClose(env)
            throw BenchError.engine("mdb_dbi_open: \(api.message(rc))")
        }
        environment = Environment(env: env, dbi: dbi)
        owner = true
    }

    /// The same environment, with a read transaction of its own.
    init(sharing other: LMDBEngine) throws {
        api = other.api
        environment = other.environment
        owner = false
    }

    /// Runs `body` in a write transaction and commits it.
    @inline(__always)
    private func write(_ operation: String, _ body: (OpaquePointer?) -> Int32) throws {
        var txn: OpaquePointer?
        var rc = api.txnBegin(environment.env, nil, 0, &txn)
        guard rc == 0 else { throw BenchError.engine("mdb_txn_begin: \(api.message(rc))") }
        rc = body(txn)
        guard rc == 0 || rc == Self.notFound else {
            api.txnAbort(txn)
            throw BenchError.engine("\(operation): \(api.message(rc))")
        }
        rc = api.txnCommit(txn)
        guard rc == 0 else { throw BenchError.engine("mdb_txn_commit: \(api.message(rc))") }
    }

    func put(_ key: [UInt8], _ value: [UInt8]) throws {
        try write("mdb_put") { txn in
            key.withUnsafeBytes { k in
                value.withUnsafeBytes { v in
                    var kv = Val(size: k.count, data: UnsafeMutableRawPointer(mutating: k.baseAddress))
                    var vv = Val(size: v.count, data: UnsafeMutableRawPointer(mutating: v.baseAddress))
                    return api.put(txn, environment.dbi, &kv, &vv, 0)
                }
            }
        }
    }

    func get(_ key: [UInt8]) throws -> [UInt8]? {
        var rc: Int32
        if let readTransaction {
            rc = api.txnRenew(readTransaction)
        } else {
            rc = api.txnBegin(environment.env, nil, Self.readOnly, &readTransaction)
        }
        guard rc == 0 else { throw BenchError.engine("read transaction: \(api.message(rc))") }
        defer { api.txnReset(readTransaction) }
        var found = Val(size: 0, data: nil)
        rc = key.withUnsafeBytes { k in
            var kv = Val(size: k.count, data: UnsafeMutableRawPointer(mutating: k.baseAddress))
            return api.get(readTransaction, environment.dbi, &kv, &found)
        }
        if rc == Self.notFound { return nil }
        guard rc == 0 else { throw BenchError.engine("mdb_get: \(api.message(rc))") }
        return [UInt8](UnsafeRawBufferPointer(start: found.data, count: found.size))
    }

    func delete(_ key: [UInt8]) throws {
        try write("mdb_del") { txn in
            key.withUnsafeBytes { k in
                var kv = Val(size: k.count, data: UnsafeMutableRawPointer(mutating: k.baseAddress))
                return api.del(txn, environment.dbi, &kv, nil)
            }
        }
    }

    func putBatch(_ keys: [[UInt8]], _ values: [[UInt8]]) throws {
        try write("mdb_put (batch)") { txn in
            for i in keys.indices {
                let rc = keys[i].withUnsafeBytes { k in
                    values[i].withUnsafeBytes { v in
                        var kv = Val(size: k.count, data: UnsafeMutableRawPointer(mutating: k.baseAddress))
                        var vv = Val(size: v.count, data: UnsafeMutableRawPointer(mutating: v.baseAddress))
                        return api.put(txn, environment.dbi, &kv, &vv, 0)
                    }
                }
                if rc != 0 { return rc }
            }
            return 0
        }
    }

    func close() throws {
        guard !closed else { return }
        closed = true
        if let readTransaction { api.txnAbort(readTransaction) }
        readTransaction = nil
        if owner { api.envClose(environment.env) }
    }

    deinit { try? close() }
}
