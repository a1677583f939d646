import CSQLite
import Foundation
import LogStore
import XCTest
@testable import DAO

/// Runs the typed Dao's statements on SQLite (the reference), reporting changes and the last
/// insert rowid as SQLite's `changes()` and `last_insert_rowid()`.
final class SQLiteStatementRunner: StatementRunner {
    let oracle: SQLiteOracle
    /// Every statement run, in order.
    private(set) var statements: [String] = []
    private(set) var inTransaction = false

    init() throws {
        oracle = try SQLiteOracle()
    }

    func execute(_ sql: String, arguments: [DAOValue]) throws -> SQLResult {
        statements.append(sql)
        let rows = try oracle.execute(sql, arguments: arguments)
        let keyword = sql.prefix { $0.isLetter }.uppercased()
        switch keyword {
        case "BEGIN": inTransaction = true
        case "COMMIT", "ROLLBACK": inTransaction = false
        default: break
        }
        if keyword == "SELECT" { return SQLResult(rows: rows, isQuery: true) }
        let meta = try oracle.execute("SELECT changes(), last_insert_rowid()")
        guard case .integer(let changes) = meta[0][0], case .integer(let rowid) = meta[0][1] else {
            throw SQLiteOracle.OracleError.sqlite("changes() did not return integers")
        }
        return SQLResult(changes: Int(changes), lastInsertRowId: rowid)
    }
}

/// The engines a typed Dao test runs on: SQLite always, and the product's SQLDatabase on a
/// fresh temporary LogStore once the engine is built.
enum DaoBackend: CustomStringConvertible {
    case sqlite(SQLiteStatementRunner)
    case engine(SQLDatabase, LogStore, URL)

    var runner: any StatementRunner {
        switch self {
        case .sqlite(let runner): return runner
        case .engine(let database, _, _): return database
        }
    }

    var description: String {
        switch self {
        case .sqlite: return "SQLite"
        case .engine: return "SQLDatabase"
        }
    }
}

extension XCTestCase {
    /// A temporary directory removed after the test.
    func temporaryDirectory() throws -> URL {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("dao-tests-\(UUID().uuidString)", isDirectory: true)
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
        addTeardownBlock { try? FileManager.default.removeItem(at: url) }
        return url
    }

    /// The backends to run a typed Dao test on.
    func daoBackends() throws -> [DaoBackend] {
        var backends: [DaoBackend] = [.sqlite(try SQLiteStatementRunner())]
        let directory = try temporaryDirectory()
        let store = try LogStore(directory: directory)
        addTeardownBlock { try? store.close() }
        do {
            backends.append(.engine(try SQLDatabase.attached(to: store), store, directory))
        } catch DAOError.unsupported(let what) where what == "SQL engine not built yet" {
            // Only while the branch carries the SQLDatabase interface stub.
        }
        return backends
    }

    /// Runs `body` once per backend with a fresh Dao of `T`, labelling thrown errors with the backend.
    func forEachBackend<T: DAORecord>(_ type: T.Type, _ body: (Dao<T>, DaoBackend) throws -> Void) throws {
        for backend in try daoBackends() {
            do {
                try body(try Dao<T>(runner: backend.runner), backend)
            } catch {
                XCTFail("on \(backend): \(error)")
            }
        }
    }
}
