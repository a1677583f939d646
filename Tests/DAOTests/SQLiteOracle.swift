import CSQLite
@testable import DAO
import Foundation

/// SQLite 3 in memory (or on a file), the oracle the SQL subset's results are compared with.
/// Tests only: no product target links SQLite.
final class SQLiteOracle {
    private var db: OpaquePointer?

    /// Opens `path` (":memory:" by default).
    init(path: String = ":memory:") throws {
        guard sqlite3_open(path, &db) == SQLITE_OK else {
            throw OracleError.sqlite(String(cString: sqlite3_errmsg(db)))
        }
    }

    deinit { sqlite3_close(db) }

    enum OracleError: Error, Equatable { case sqlite(String) }

    /// Whether a transaction is open (SQLite is not in autocommit mode).
    var inTransaction: Bool { sqlite3_get_autocommit(db) == 0 }

    /// Runs one statement with positional arguments; returns its rows with SQLite's storage
    /// classes.
    func execute(_ sql: String, arguments: [DAOValue] = []) throws -> [[DAOValue]] {
        try run(sql, arguments: arguments).rows
    }

    /// Runs one statement with positional arguments; returns everything `SQLDatabase.execute`
    /// returns: column names, rows, changes and the last insert rowid.
    func run(_ sql: String, arguments: [DAOValue] = []) throws -> SQLResult {
        var statement: OpaquePointer?
        guard sqlite3_prepare_v2(db, sql, -1, &statement, nil) == SQLITE_OK else {
            throw OracleError.sqlite(String(cString: sqlite3_errmsg(db)))
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
        var invalidTexts: [SQLResult.CellPosition: [UInt8]] = [:]
        while true {
            let step = sqlite3_step(statement)
            if step == SQLITE_DONE { break }
            guard step == SQLITE_ROW else { throw OracleError.sqlite(String(cString: sqlite3_errmsg(db))) }
            var row: [DAOValue] = []
            for column in 0..<columnCount {
                switch sqlite3_column_type(statement, column) {
                case SQLITE_INTEGER: row.append(.integer(sqlite3_column_int64(statement, column)))
                case SQLITE_FLOAT: row.append(.real(sqlite3_column_double(statement, column)))
                case SQLITE_TEXT:
                    // By length, not up to the first NUL: text may hold NULs (CAST(x'00' AS TEXT)).
                    let count = Int(sqlite3_column_bytes(statement, column))
                    let bytes = sqlite3_column_text(statement, column).map { Array(UnsafeRawBufferPointer(start: $0, count: count)) } ?? []
                    // As SQLResult keeps it: repaired in `rows`, the exact bytes beside.
                    if String(validating: bytes, as: UTF8.self) == nil {
                        invalidTexts[SQLResult.CellPosition(row: rows.count, column: Int(column))] = bytes
                    }
                    row.append(.text(String(decoding: bytes, as: UTF8.self)))
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
        var result = SQLResult(columns: columns, rows: rows, changes: isQuery ? 0 : Int(sqlite3_total_changes(db) - before),
                               lastInsertRowId: sqlite3_last_insert_rowid(db), isQuery: isQuery)
        result.invalidTexts = invalidTexts
        return result
    }
}
