import Foundation

/// SQLite through the system library (libsqlite3.so.0, loaded at run time), one table
/// `kv(k BLOB PRIMARY KEY, v BLOB NOT NULL) WITHOUT ROWID`, prepared statements, WAL.
///
/// Two variants: `SQLite` runs every operation in a transaction of its own (autocommit), the
/// way an application that calls it per put does; `SQLite-batch` wraps every 1,000 operations
/// (reads too) in one `BEGIN ... COMMIT`, so an acknowledged write is durable only once its
/// batch commits: not the same durability class, shown as what batching buys.
final class SQLiteEngine: KVEngine {
    static let autocommitName = "SQLite"
    static let batchName = "SQLite-batch"
    static let batchSize = 1000
    static let fileName = "kv.sqlite"

    /// The SQLite calls, shared with the other benchmark executables (BenchSupport).
    typealias API = SQLiteLibrary
    static var library: LazyLibrary<SQLiteLibrary> { SQLiteLibrary.shared }

    static func probe() -> Result<String, BenchError> {
        library.result.map { "\($0.path), SQLite \(String(cString: $0.libversion()!))" }
    }

    static func settings(name: String, durability: Durability) -> String {
        let transactions = name == batchName
            ? "BEGIN ... COMMIT around every \(batchSize) operations (reads included)"
            : "one transaction per operation (autocommit)"
        let sync = durability == .fsync ? "synchronous=FULL (fsync of the WAL at every commit)"
                                        : "synchronous=NORMAL (WAL written at commit, fsync only at checkpoints)"
        return "journal_mode=WAL, \(sync), \(transactions), table kv(k BLOB PRIMARY KEY, v BLOB) WITHOUT ROWID, " +
            "prepared INSERT OR REPLACE / SELECT / DELETE, page size and cache at their defaults (4 KiB, 2000 KiB), " +
            "busy_timeout 10 s, one connection per thread"
    }

    private let api: API
    private let db: OpaquePointer
    private let directory: URL
    private let config: EngineConfig
    private let batched: Bool
    private var putStatement: OpaquePointer?
    private var getStatement: OpaquePointer?
    private var deleteStatement: OpaquePointer?
    private var beginStatement: OpaquePointer?
    private var commitStatement: OpaquePointer?
    private var inTransaction = false
    private var operationsInTransaction = 0
    private var closed = false

    init(directory: URL, config: EngineConfig) throws {
        api = try Self.library.get()
        self.directory = directory
        self.config = config
        batched = config.name == Self.batchName
        var handle: OpaquePointer?
        let path = directory.appendingPathComponent(Self.fileName).path
        let rc = api.open(path, &handle, 0x2 | 0x4 | 0x8000, nil)  // READWRITE | CREATE | NOMUTEX
        guard rc == 0, let handle else {
            if let handle { _ = api.close(handle) }
            throw BenchError.engine("sqlite3_open_v2 \(path): \(rc)")
        }
        db = handle
        _ = api.busyTimeout(db, 10_000)
        try exec("PRAGMA journal_mode=WAL")
        try exec(config.durability == .fsync ? "PRAGMA synchronous=FULL" : "PRAGMA synchronous=NORMAL")
        try exec("CREATE TABLE IF NOT EXISTS kv(k BLOB PRIMARY KEY, v BLOB NOT NULL) WITHOUT ROWID")
        putStatement = try prepare("INSERT OR REPLACE INTO kv(k, v) VALUES(?1, ?2)")
        getStatement = try prepare("SELECT v FROM kv WHERE k = ?1")
        deleteStatement = try prepare("DELETE FROM kv WHERE k = ?1")
        beginStatement = try prepare("BEGIN")
        commitStatement = try prepare("COMMIT")
    }

    /// A connection of its own on the same database file.
    convenience init(sharing other: SQLiteEngine) throws {
        try self.init(directory: other.directory, config: other.config)
    }

    private var lastError: String {
        api.errmsg(db).map { String(cString: $0) } ?? "unknown error"
    }

    private func exec(_ sql: String) throws {
        let rc = api.exec(db, sql, nil, nil, nil)
        guard rc == 0 else { throw BenchError.engine("sqlite3_exec \(sql): \(rc) \(lastError)") }
    }

    private func prepare(_ sql: String) throws -> OpaquePointer {
        var statement: OpaquePointer?
        let rc = api.prepare(db, sql, -1, &statement, nil)
        guard rc == 0, let statement else { throw BenchError.engine("sqlite3_prepare_v2 \(sql): \(rc) \(lastError)") }
        return statement
    }

    /// Steps a statement that returns no row, then resets it.
    @inline(__always)
    private func run(_ statement: OpaquePointer?) throws {
        let rc = api.step(statement)
        _ = api.reset(statement)
        guard rc == 101 else { throw BenchError.engine("sqlite3_step: \(rc) \(lastError)") }  // SQLITE_DONE
    }

    /// In the batched variant: opens a transaction when none is open, and counts the operation.
    @inline(__always)
    private func beforeOperation() throws {
        guard batched else { return }
        if !inTransaction {
            try run(beginStatement)
            inTransaction = true
            operationsInTransaction = 0
        }
    }

    @inline(__always)
    private func afterOperation() throws {
        guard batched else { return }
        operationsInTransaction += 1
        if operationsInTransaction >= Self.batchSize { try commit() }
    }

    private func commit() throws {
        guard inTransaction else { return }
        try run(commitStatement)
        inTransaction = false
    }

    func put(_ key: [UInt8], _ value: [UInt8]) throws {
        try beforeOperation()
        let rc = key.withUnsafeBytes { k in
            value.withUnsafeBytes { v in
                _ = api.bindBlob(putStatement, 1, k.baseAddress, Int32(k.count), 0)
                _ = api.bindBlob(putStatement, 2, v.baseAddress, Int32(v.count), 0)
                let rc = api.step(putStatement)
                _ = api.reset(putStatement)
                return rc
            }
        }
        guard rc == 101 else { throw BenchError.engine("sqlite3_step (put): \(rc) \(lastError)") }
        try afterOperation()
    }

    func get(_ key: [UInt8]) throws -> [UInt8]? {
        try beforeOperation()
        let (rc, value) = key.withUnsafeBytes { k -> (Int32, [UInt8]?) in
            _ = api.bindBlob(getStatement, 1, k.baseAddress, Int32(k.count), 0)
            let rc = api.step(getStatement)
            var value: [UInt8]?
            if rc == 100 {  // SQLITE_ROW
                let count = Int(api.columnBytes(getStatement, 0))
                if let blob = api.columnBlob(getStatement, 0) {
                    value = [UInt8](UnsafeRawBufferPointer(start: blob, count: count))
                } else {
                    value = []
                }
            }
            _ = api.reset(getStatement)
            return (rc, value)
        }
        guard rc == 100 || rc == 101 else { throw BenchError.engine("sqlite3_step (get): \(rc) \(lastError)") }
        try afterOperation()
        return value
    }

    func delete(_ key: [UInt8]) throws {
        try beforeOperation()
        let rc = key.withUnsafeBytes { k in
            _ = api.bindBlob(deleteStatement, 1, k.baseAddress, Int32(k.count), 0)
            let rc = api.step(deleteStatement)
            _ = api.reset(deleteStatement)
            return rc
        }
        guard rc == 101 else { throw BenchError.engine("sqlite3_step (delete): \(rc) \(lastError)") }
        try afterOperation()
    }

    func putBatch(_ keys: [[UInt8]], _ values: [[UInt8]]) throws {
        try commit()
        try run(beginStatement)
        inTransaction = true
        for i in keys.indices {
            let rc = keys[i].withUnsafeBytes { k in
                values[i].withUnsafeBytes { v in
                    _ = api.bindBlob(putStatement, 1, k.baseAddress, Int32(k.count), 0)
                    _ = api.bindBlob(putStatement, 2, v.baseAddress, Int32(v.count), 0)
                    let rc = api.step(putStatement)
                    _ = api.reset(putStatement)
                    return rc
                }
            }
            guard rc == 101 else { throw BenchError.engine("sqlite3_step (batch put): \(rc) \(lastError)") }
        }
        try commit()
    }

    func compact() throws {
        try commit()
        try exec("PRAGMA wal_checkpoint(TRUNCATE)")
        try exec("VACUUM")
        try exec("PRAGMA wal_checkpoint(TRUNCATE)")
    }

    func close() throws {
        guard !closed else { return }
        closed = true
        try commit()
        for statement in [putStatement, getStatement, deleteStatement, beginStatement, commitStatement] {
            _ = api.finalize(statement)
        }
        let rc = api.close(db)
        guard rc == 0 else { throw BenchError.engine("sqlite3_close: \(rc)") }
    }

    deinit { try? close() }
}
