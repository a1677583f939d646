import BenchSupport
import DAO
import Foundation
import LogStore

/// One SQL engine under benchmark: statements with `?` arguments, each in its own transaction
/// unless inside `BEGIN ... COMMIT`.
protocol SQLBenchEngine: AnyObject {
    var name: String { get }
    /// Runs `sql`; returns how many rows it produced (every value of each row is read).
    @discardableResult func run(_ sql: String, _ arguments: [DAOValue]) throws -> Int
    /// Runs `sql` and returns its rows' values (the answer the workloads compare across engines).
    func rows(_ sql: String, _ arguments: [DAOValue]) throws -> [[DAOValue]]
    /// The engine's plan for the query `sql` (`SQLDatabase.queryPlan`, SQLite's EXPLAIN QUERY
    /// PLAN details), one line per step.
    func plan(_ sql: String, _ arguments: [DAOValue]) throws -> String
    /// Closes the database and opens it again (the reopen workload).
    func reopen() throws
    /// Makes the next open cheap, as the engine offers: UnifiedStorage's index checkpoint
    /// (`SQLDatabase.checkpoint()`), SQLite's WAL checkpoint.
    func checkpoint() throws
    /// Copies the database's files while it is open, as a kill -9 leaves them, closes it and
    /// makes the copy the database, not yet open (`openAfterCrash`). Untimed. Returns the copy's
    /// folder, which the caller removes.
    func crash() throws -> URL
    /// Opens the copy `crash` made (the open after a crash, timed).
    func openAfterCrash() throws
    func close() throws
}

/// A copy of `files` of `directory` (those that exist) into a new scratch folder, 1 MiB at a
/// time (FileManager.copyItem may read a whole file into memory, which would show in the
/// process's peak RSS).
func copyAsCrashed(_ files: [String], of directory: URL) throws -> URL {
    let copy = try scratch("crashed")
    for file in files where FileManager.default.fileExists(atPath: directory.appendingPathComponent(file).path) {
        let source = try FileHandle(forReadingFrom: directory.appendingPathComponent(file))
        defer { try? source.close() }
        let target = copy.appendingPathComponent(file)
        guard FileManager.default.createFile(atPath: target.path, contents: nil) else { throw BenchError.engine("cannot create \(target.path)") }
        let output = try FileHandle(forWritingTo: target)
        defer { try? output.close() }
        while let chunk = try source.read(upToCount: 1 << 20), !chunk.isEmpty { try output.write(contentsOf: chunk) }
    }
    return copy
}

/// The product: SQLDatabase on a LogStore with default options (process-crash-safe writes).
final class UnifiedEngine: SQLBenchEngine {
    let name = "UnifiedStorage"
    private var directory: URL
    // Implicitly unwrapped: `crash` lets go of both before the copy is opened, so that the
    // old database's memory is not counted in the open after the crash.
    private var store: LogStore!
    private var database: SQLDatabase!

    /// How `run` reads a result: streamed by `forEachRow` (the default: as SQLite's side
    /// steps through its rows) or as `execute`'s `SQLResult.rows` (`--materialize`).
    private let materialize: Bool

    init(directory: URL, materialize: Bool = false) throws {
        self.directory = directory
        self.materialize = materialize
        store = try LogStore(directory: directory)
        database = try SQLDatabase.attached(to: store)
    }

    func run(_ sql: String, _ arguments: [DAOValue]) throws -> Int {
        if materialize { return try database.execute(sql, arguments: arguments).rows.count }
        // Every value read in its storage class, as SQLiteBenchEngine.run does.
        var sink = 0.0
        let count = try database.forEachRow(sql, arguments: arguments) { row in
            for column in 0..<row.count {
                switch row[column] {
                case .integer(let value): sink += Double(value)
                case .real(let value): sink += value
                case .text(let text): sink += Double(text.utf8.count)
                default: break
                }
            }
        }
        if sink == -1 { print("") }
        return count
    }

    func rows(_ sql: String, _ arguments: [DAOValue]) throws -> [[DAOValue]] {
        try database.execute(sql, arguments: arguments).rows
    }

    func plan(_ sql: String, _ arguments: [DAOValue]) throws -> String {
        try database.queryPlan(sql, arguments: arguments)
    }

    /// How long the last reopen's steps took: close (with its index checkpoint), LogStore open,
    /// SQLDatabase attach.
    private(set) var lastReopenPhases = ""
    /// Deletes the index checkpoint file between close and open: the open reads every row, as
    /// after a crash.
    var dropCheckpointOnReopen = false

    func reopen() throws {
        let start = Date()
        try store.close()
        if dropCheckpointOnReopen { try? FileManager.default.removeItem(at: directory.appendingPathComponent("dao-indexes")) }
        let closed = Date()
        store = try LogStore(directory: directory)
        let opened = Date()
        database = try SQLDatabase.attached(to: store)
        let attached = Date()
        lastReopenPhases = String(format: "close %.3f s, LogStore open %.3f s, attach %.3f s%@", closed.timeIntervalSince(start),
                                  opened.timeIntervalSince(closed), attached.timeIntervalSince(opened),
                                  database.indexReport.isEmpty ? " (indexes from the checkpoint)" : " (\(database.indexReport.joined(separator: "; ")))")
    }

    func checkpoint() throws { try database.checkpoint() }

    func crash() throws -> URL {
        let files = try FileManager.default.contentsOfDirectory(atPath: directory.path).filter { $0 != "LOCK" }
        let copy = try copyAsCrashed(files, of: directory)
        try store.close()
        database = nil
        store = nil
        directory = copy
        return copy
    }

    func openAfterCrash() throws {
        let start = Date()
        store = try LogStore(directory: directory)
        let opened = Date()
        database = try SQLDatabase.attached(to: store)
        lastReopenPhases = String(format: "LogStore open %.3f s, attach %.3f s%@", opened.timeIntervalSince(start), Date().timeIntervalSince(opened),
                                  database.indexReport.isEmpty ? " (indexes from the checkpoint and its journal)" : " (\(database.indexReport.joined(separator: "; ")))")
    }

    func close() throws { try store.close() }
}

/// SQLite 3 through the system library: WAL, synchronous=NORMAL, one transaction per statement
/// (autocommit), statements prepared once and cached by text.
final class SQLiteBenchEngine: SQLBenchEngine {
    let name = "SQLite"
    private let api: SQLiteLibrary
    private var path: String
    private var db: OpaquePointer?
    private var statements: [String: OpaquePointer] = [:]

    init(directory: URL) throws {
        api = try SQLiteLibrary.shared.get()
        path = directory.appendingPathComponent("bench.sqlite").path
        try open()
    }

    var version: String { api.libversion().map { String(cString: $0) } ?? "?" }

    private func open() throws {
        var handle: OpaquePointer?
        guard api.open(path, &handle, 0x2 | 0x4 | 0x8000, nil) == 0, let handle else {  // READWRITE | CREATE | NOMUTEX
            throw BenchError.engine("sqlite3_open_v2 \(path) failed")
        }
        db = handle
        for pragma in ["PRAGMA journal_mode=WAL", "PRAGMA synchronous=NORMAL"] {
            guard api.exec(db, pragma, nil, nil, nil) == 0 else { throw BenchError.engine("\(pragma): \(lastError)") }
        }
    }

    private var lastError: String { api.errmsg(db).map { String(cString: $0) } ?? "unknown error" }

    func run(_ sql: String, _ arguments: [DAOValue]) throws -> Int {
        try step(sql, arguments) { statement, columns in
            // Read every value in its storage class, as the product's result rows hold them all.
            var sink = 0.0
            for column in 0..<columns {
                switch api.columnType(statement, column) {
                case 1: sink += Double(api.columnInt64(statement, column))
                case 2: sink += api.columnDouble(statement, column)
                case 3:
                    let count = Int(api.columnBytes(statement, column))
                    if let text = api.columnText(statement, column) {
                        sink += Double(String(decoding: UnsafeBufferPointer(start: text, count: count), as: UTF8.self).utf8.count)
                    }
                default: break
                }
            }
            if sink == -1 { print("") }
        }
    }

    func rows(_ sql: String, _ arguments: [DAOValue]) throws -> [[DAOValue]] {
        var rows: [[DAOValue]] = []
        try step(sql, arguments) { statement, columns in
            rows.append((0..<columns).map { column in
                switch api.columnType(statement, column) {
                case 1: return .integer(api.columnInt64(statement, column))
                case 2: return .real(api.columnDouble(statement, column))
                case 3:
                    let count = Int(api.columnBytes(statement, column))
                    guard let text = api.columnText(statement, column) else { return .null }
                    return .text(String(decoding: UnsafeBufferPointer(start: text, count: count), as: UTF8.self))
                default: return .null  // no blobs in these tables
                }
            })
        }
        return rows
    }

    func plan(_ sql: String, _ arguments: [DAOValue]) throws -> String {
        // EXPLAIN QUERY PLAN's rows are (id, parent, notused, detail).
        try rows("EXPLAIN QUERY PLAN " + sql, arguments).map { row in
            if row.count > 3, case .text(let detail) = row[3] { return detail }
            return "?"
        }.joined(separator: "\n")
    }

    /// Binds `arguments` to the cached statement for `sql`, steps it to the end and calls
    /// `visit` on each row (the statement and its column count); returns the row count.
    @discardableResult private func step(_ sql: String, _ arguments: [DAOValue], _ visit: (OpaquePointer, Int32) -> Void) throws -> Int {
        let statement: OpaquePointer
        if let cached = statements[sql] {
            statement = cached
        } else {
            var prepared: OpaquePointer?
            guard api.prepare(db, sql, -1, &prepared, nil) == 0, let prepared else { throw BenchError.engine("prepare \(sql): \(lastError)") }
            statements[sql] = prepared
            statement = prepared
        }
        defer { _ = api.reset(statement) }
        for (index, value) in arguments.enumerated() {
            let slot = Int32(index + 1)
            switch value {
            case .integer(let v): _ = api.bindInt64(statement, slot, v)
            case .real(let v): _ = api.bindDouble(statement, slot, v)
            case .text(let v): _ = api.bindText(statement, slot, v, -1, -1)
            default: _ = api.bindNull(statement, slot)
            }
        }
        var rows = 0
        let columns = api.columnCount(statement)
        while true {
            let rc = api.step(statement)
            if rc == 101 { return rows }  // SQLITE_DONE
            guard rc == 100 else { throw BenchError.engine("step \(sql): \(rc) \(lastError)") }
            rows += 1
            visit(statement, columns)
        }
    }

    func reopen() throws {
        try close()
        try open()
    }

    func checkpoint() throws { try run("PRAGMA wal_checkpoint(TRUNCATE)", []) }

    func crash() throws -> URL {
        let directory = URL(fileURLWithPath: path).deletingLastPathComponent()
        let name = URL(fileURLWithPath: path).lastPathComponent
        let copy = try copyAsCrashed([name, name + "-wal"], of: directory)
        try close()
        path = copy.appendingPathComponent(name).path
        return copy
    }

    func openAfterCrash() throws { try open() }

    func close() throws {
        for statement in statements.values { _ = api.finalize(statement) }
        statements.removeAll()
        guard api.close(db) == 0 else { throw BenchError.engine("sqlite3_close: \(lastError)") }
        db = nil
    }
}
