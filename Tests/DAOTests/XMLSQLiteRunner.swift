import CSQLite
@testable import DAO
import Foundation

/// SQLite 3 as a DAO proxy's engine (tests only): the oracle the proxy's results are checked
/// against, and the same calls are then run on `SQLDatabase` and compared.
final class XMLSQLiteRunner: SQLStatementRunner {
    private var db: OpaquePointer?
    /// Every statement run, in order (for tests that check what the proxy sent).
    var log: [RenderedSQL] = []

    init(path: String = ":memory:") throws {
        guard sqlite3_open(path, &db) == SQLITE_OK else { throw OracleError(message: String(cString: sqlite3_errmsg(db))) }
    }

    deinit { sqlite3_close(db) }

    struct OracleError: Error, Equatable { var message: String }

    /// One connection used from one thread in these tests: an open transaction is the caller's.
    var ownsTransaction: Bool { sqlite3_get_autocommit(db) == 0 }

    func execute(_ sql: String, arguments: [DAOValue]) throws -> SQLResult {
        log.append(RenderedSQL(text: sql, bindings: arguments))
        var statement: OpaquePointer?
        guard sqlite3_prepare_v2(db, sql, -1, &statement, nil) == SQLITE_OK else {
            throw OracleError(message: String(cString: sqlite3_errmsg(db)))
        }
        defer { sqlite3_finalize(statement) }
        let transient = unsafeBitCast(-1, to: sqlite3_destructor_type.self)
        for (index, value) in arguments.enumerated() {
            let slot = Int32(index + 1)
            switch value {
            case .null: sqlite3_bind_null(statement, slot)
            case .integer(let v): sqlite3_bind_int64(statement, slot, v)
            case .real(let v): sqlite3_bind_double(statement, slot, v)
            case .text(let v): sqlite3_bind_text(statement, slot, v, -1, transient)
            case .blob(let v): _ = v.withUnsafeBytes { sqlite3_bind_blob(statement, slot, $0.baseAddress, Int32($0.count), transient) }
            }
        }
        let before = sqlite3_total_changes(db)
        let columnCount = sqlite3_column_count(statement)
        let columns = (0..<columnCount).map { String(cString: sqlite3_column_name(statement, $0)) }
        var rows: [[DAOValue]] = []
        while true {
            let step = sqlite3_step(statement)
            if step == SQLITE_DONE { break }
            guard step == SQLITE_ROW else { throw OracleError(message: String(cString: sqlite3_errmsg(db))) }
            var row: [DAOValue] = []
            for column in 0..<columnCount {
                switch sqlite3_column_type(statement, column) {
                case SQLITE_INTEGER: row.append(.integer(sqlite3_column_int64(statement, column)))
                case SQLITE_FLOAT: row.append(.real(sqlite3_column_double(statement, column)))
                case SQLITE_TEXT: row.append(.text(String(cString: sqlite3_column_text(statement, column))))
                case SQLITE_BLOB:
                    let count = Int(sqlite3_column_bytes(statement, column))
                    if let base = sqlite3_column_blob(statement, column) {
                        row.append(.blob(Array(UnsafeRawBufferPointer(start: base, count: count))))
                    } else {
                        row.append(.blob([]))
                    }
                default: row.append(.null)
                }
            }
            rows.append(row)
        }
        let isQuery = columnCount > 0
        return SQLResult(columns: columns, rows: rows, changes: isQuery ? 0 : Int(sqlite3_total_changes(db) - before),
                         lastInsertRowId: sqlite3_last_insert_rowid(db), isQuery: isQuery)
    }
}

extension DAOProxy {
    /// A proxy of config text on `runner` (tests).
    static func testing(_ text: String, runner: any SQLStatementRunner) throws -> DAOProxy {
        let box = RunnerBox(runner)
        return DAOProxy(config: try ConfigLoader.load(text), runner: { box.runner })
    }
}

/// Lets a test runner cross into the proxy's @Sendable provider.
final class RunnerBox: @unchecked Sendable {
    let runner: any SQLStatementRunner
    init(_ runner: any SQLStatementRunner) { self.runner = runner }
}
