@testable import DAO
import Foundation
import LogStore
import XCTest

/// A fresh store in a temporary directory, removed when the object goes.
final class TemporaryStore {
    let directory: URL
    private(set) var store: LogStore

    init(options: LogStore.Options = LogStore.Options()) throws {
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("dao-\(UUID())")
        store = try LogStore(directory: directory, options: options)
    }

    /// Closes and opens the store again (a new SQLDatabase is attached on next use).
    func reopen() throws {
        try store.close()
        store = try LogStore(directory: directory)
    }

    var database: SQLDatabase { get throws { try SQLDatabase.attached(to: store) } }

    deinit {
        try? store.close()
        try? FileManager.default.removeItem(at: directory)
    }
}

extension SQLResult {
    /// The rows with every text as its exact bytes (`textBytes(row:column:)`), so that two
    /// results compare equal only when SQLite's bytes are the same.
    var exactRows: [[SQLValue]] {
        rows.enumerated().map { r, row in
            row.enumerated().map { c, value in
                if case .text = value, let bytes = textBytes(row: r, column: c) { return .text(bytes: bytes) }
                return SQLValue(value)
            }
        }
    }
}

/// Runs statements on the engine and on SQLite side by side and asserts equal outcomes.
/// What a statement gave, as a string to compare between the engines: its rows, or the
/// error's message (SQLite's, or the engine's in SQLite's words).
func statementOutcome(_ body: () throws -> [[DAOValue]]) -> String {
    do {
        return "\(try body())"
    } catch SQLiteOracle.OracleError.sqlite(let message) {
        return message
    } catch let error as SQLExecutionError {
        return error.message
    } catch DAOError.constraint(let message) {
        return message
    } catch DAOError.noSuchColumn(let name) {
        return "no such column: \(name)"
    } catch {
        return "\(error)"
    }
}

final class Differential {
    let temporary: TemporaryStore
    let database: SQLDatabase
    let oracle: SQLiteOracle

    init() throws {
        temporary = try TemporaryStore()
        database = try SQLDatabase.attached(to: temporary.store)
        oracle = try SQLiteOracle()
    }

    /// Runs `sql` on both; both must succeed with the same rows (sorted first unless `ordered`)
    /// or both fail.
    @discardableResult
    func check(_ sql: String, _ arguments: [DAOValue] = [], ordered: Bool = true,
               file: StaticString = #filePath, line: UInt = #line) -> [[DAOValue]]? {
        // Compared by their exact bytes: text that is not valid UTF-8 included.
        let expected: Result<[[SQLValue]], Error> = Result { try oracle.run(sql, arguments: arguments).exactRows }
        let actual: Result<SQLResult, Error> = Result { try database.execute(sql, arguments: arguments) }
        switch (expected, actual.map(\.exactRows)) {
        case (.success(let e), .success(let a)):
            let left = ordered ? e : e.sorted { SQLValues.compare($0, $1) < 0 }
            let right = ordered ? a : a.sorted { SQLValues.compare($0, $1) < 0 }
            XCTAssertEqual(right, left, "\(sql)", file: file, line: line)
            return (try? actual.get())?.rows
        case (.failure, .failure):
            return nil
        case (.success(let e), .failure(let error)):
            XCTFail("\(sql): engine failed with \(error), SQLite gave \(e)", file: file, line: line)
        case (.failure(let error), .success(let a)):
            XCTFail("\(sql): SQLite failed with \(error), engine gave \(a)", file: file, line: line)
        }
        return nil
    }

    /// Runs each statement on both (setup); fails the test if either side fails.
    func run(_ statements: [String], file: StaticString = #filePath, line: UInt = #line) {
        for sql in statements {
            do { _ = try oracle.execute(sql) } catch { XCTFail("SQLite: \(sql): \(error)", file: file, line: line) }
            do { _ = try database.execute(sql) } catch { XCTFail("engine: \(sql): \(error)", file: file, line: line) }
        }
    }
}
