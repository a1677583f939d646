@testable import DAO
import Foundation
import LogStore

/// What one statement produced, in the terms both engines can report (rows with text as its
/// exact bytes: `SQLResult.exactRows`).
enum Outcome {
    case rows([[SQLValue]])
    case wrote(changes: Int, lastInsertRowId: Int64)
    case failed(String)

    var text: String {
        switch self {
        case .rows(let rows): return "rows " + rows.map { "(" + $0.map(Canonical.describe).joined(separator: ", ") + ")" }.joined(separator: " ")
        case .wrote(let changes, let rowid): return "ok changes=\(changes) lastInsertRowId=\(rowid)"
        case .failed(let message): return "error: \(message)"
        }
    }
}

/// A SQL engine under differential test.
protocol DifferentialEngine: AnyObject {
    var name: String { get }
    /// Runs `sql` with `:p1`, `:p2`, ... bound to `arguments`; `isQuery` says whether rows
    /// (rather than changes) are the answer.
    func run(_ sql: String, arguments: [DAOValue], isQuery: Bool) -> Outcome
    /// Releases the engine's files.
    func close()
    /// Closes and opens the database again, keeping its files; false when the engine cannot
    /// (SQLite in memory).
    func reopen() throws -> Bool
}

/// SQLite in memory. With `reverseUnordered`, SQLite returns unordered results in reverse
/// order (PRAGMA reverse_unordered_selects), which checks that a comparison never depends on
/// an order the statement does not fix.
final class SQLiteDifferentialEngine: DifferentialEngine {
    private let oracle: SQLiteOracle
    let name: String

    init(reverseUnordered: Bool = false) throws {
        oracle = try SQLiteOracle()
        name = reverseUnordered ? "SQLite (reverse unordered)" : "SQLite"
        if reverseUnordered { _ = try oracle.execute("PRAGMA reverse_unordered_selects = ON") }
    }

    func run(_ sql: String, arguments: [DAOValue], isQuery: Bool) -> Outcome {
        do {
            // The oracle binds by position: `:pN` becomes SQLite's numbered `?N` (no generated
            // literal contains ":p"), so a parameter generated but not used shifts nothing.
            let rows = try oracle.run(sql.replacingOccurrences(of: ":p", with: "?"), arguments: arguments).exactRows
            if isQuery { return .rows(rows) }
            let meta = try oracle.execute("SELECT changes(), last_insert_rowid()")
            guard case .integer(let changes) = meta[0][0], case .integer(let rowid) = meta[0][1] else { return .failed("changes() not integer") }
            return .wrote(changes: Int(changes), lastInsertRowId: rowid)
        } catch SQLiteOracle.OracleError.sqlite(let message) {
            return .failed(message)
        } catch {
            return .failed("\(error)")
        }
    }

    func close() {}

    func reopen() throws -> Bool { false }
}

/// The product's SQLDatabase on a fresh LogStore in a temporary directory.
final class ProductDifferentialEngine: DifferentialEngine {
    let name: String
    private var store: LogStore
    private var database: SQLDatabase
    private let directory: URL
    private let options: LogStore.Options

    /// Nil while the SQL engine is the interface stub. `protected`: the store encrypts (AES-256-GCM)
    /// and compresses (zstd, every value) its records, so rows and indexes go through both.
    init?(protected: Bool = false) throws {
        var options = LogStore.Options()
        if protected {
            options.encryption = .init(key: Array(repeating: 0x5A, count: 32), keyID: 7)
            var compression = LogStore.Options.Compression()
            compression.threshold = 0
            options.compression = compression
        }
        self.options = options
        name = protected ? "SQLDatabase (encrypted, compressed store)" : "SQLDatabase"
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("dao-diff-\(UUID().uuidString)", isDirectory: true)
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        store = try LogStore(directory: directory, options: options)
        do {
            database = try SQLDatabase.attached(to: store)
        } catch DAOError.unsupported(let what) where what == "SQL engine not built yet" {
            try? store.close()
            try? FileManager.default.removeItem(at: directory)
            return nil
        }
    }

    func run(_ sql: String, arguments: [DAOValue], isQuery: Bool) -> Outcome {
        do {
            let named = Dictionary(uniqueKeysWithValues: arguments.enumerated().map { ("p\($0.offset + 1)", $0.element) })
            let result = arguments.isEmpty ? try database.execute(sql) : try database.execute(sql, named: named)
            return isQuery ? .rows(result.exactRows) : .wrote(changes: result.changes, lastInsertRowId: result.lastInsertRowId)
        } catch {
            return .failed("\(error)")
        }
    }

    func close() {
        try? store.close()
        try? FileManager.default.removeItem(at: directory)
    }

    func reopen() throws -> Bool {
        try store.close()
        store = try LogStore(directory: directory, options: options)
        database = try SQLDatabase.attached(to: store)
        return true
    }
}

/// Exact, total spellings of values and rows, for multiset comparison and reports.
enum Canonical {
    /// A spelling that differs whenever the storage class or the value differs.
    static func key(_ value: SQLValue) -> String {
        switch value {
        case .null: return "n"
        case .integer(let i): return "i\(i)"
        // Exact equality: every bit, except that -0.0 equals 0.0 (min/max/DISTINCT keep either
        // of two equal values by scan order; a visible sign still shows through CAST to TEXT).
        case .real(let d): return "r\((d == 0 ? 0 : d).bitPattern)"
        case .text(let s): return "t\(s.utf8.count):\(s)"
        case .invalidText(let b): return "x" + b.map { String(format: "%02x", $0) }.joined()
        case .blob(let b): return "b" + b.map { String(format: "%02x", $0) }.joined()
        }
    }

    static func key(_ row: [SQLValue]) -> String { row.map(key).joined(separator: "|") }

    /// SQL-like spelling for reports.
    static func describe(_ value: DAOValue) -> String { describe(SQLValue(value)) }

    /// SQL-like spelling for reports.
    static func describe(_ value: SQLValue) -> String {
        switch value {
        case .null: return "NULL"
        case .integer(let i): return "\(i)"
        case .real(let d): return "\(d) (real)"
        case .text(let s): return "'" + s.replacingOccurrences(of: "'", with: "''") + "'"
        case .blob(let b): return "x'" + b.map { String(format: "%02x", $0) }.joined() + "'"
        case .invalidText(let b): return "CAST(x'" + b.map { String(format: "%02x", $0) }.joined() + "' AS TEXT)"
        }
    }
}

extension DifferentialEngine {
    /// Runs a statement without parameters.
    func run(_ sql: String, isQuery: Bool) -> Outcome { run(sql, arguments: [], isQuery: isQuery) }
}
