@testable import DAO
import Foundation

/// SQLite 3 as a DAO proxy's engine (tests only): the oracle the proxy's results are checked
/// against, and the same calls are then run on `SQLDatabase` and compared.
final class XMLSQLiteRunner: SQLStatementRunner {
    private let oracle: SQLiteOracle
    /// Every statement run, in order (for tests that check what the proxy sent).
    var log: [RenderedSQL] = []

    init(path: String = ":memory:") throws {
        oracle = try SQLiteOracle(path: path)
    }

    /// One connection used from one thread in these tests: an open transaction is the caller's.
    var ownsTransaction: Bool { oracle.inTransaction }

    func execute(_ sql: String, arguments: [DAOValue]) throws -> SQLResult {
        log.append(RenderedSQL(text: sql, bindings: arguments))
        return try oracle.run(sql, arguments: arguments)
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
