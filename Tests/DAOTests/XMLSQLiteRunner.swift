@testable import DAO
import Foundation
import LogStore
import XCTest

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

/// A test case whose proxies run on every engine: SQLite (the oracle) and, when it is built,
/// `SQLDatabase` over a fresh LogStore, whose answers must equal SQLite's.
class XMLEngineTestCase: XCTestCase {
    /// Folders to remove after the test.
    var directories: [URL] = []

    override func tearDown() {
        for directory in directories { try? FileManager.default.removeItem(at: directory) }
        super.tearDown()
    }

    /// Fresh engines: SQLite always, the product's engine when it is built.
    func engines() throws -> [(name: String, runner: any SQLStatementRunner)] {
        var engines: [(String, any SQLStatementRunner)] = [("sqlite", try XMLSQLiteRunner())]
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("dao-xml-\(UUID().uuidString)")
        directories.append(directory)
        let store = try LogStore(directory: directory)
        if let db = try? SQLDatabase.attached(to: store), (try? db.execute("SELECT 1")) != nil {
            engines.append(("logstore", db))
        }
        return engines
    }

    /// Runs `body` on every engine and checks they all give what SQLite gives.
    func onEveryEngine(_ body: (any SQLStatementRunner) throws -> String, file: StaticString = #filePath, line: UInt = #line) throws {
        var answers: [(String, String)] = []
        for (name, runner) in try engines() {
            do {
                answers.append((name, try body(runner)))
            } catch {
                answers.append((name, "threw \(error)"))
            }
        }
        XCTAssertFalse(answers[0].1.hasPrefix("threw"), "sqlite: \(answers[0].1)", file: file, line: line)
        for (name, answer) in answers.dropFirst() {
            XCTAssertEqual(answer, answers[0].1, "\(name) differs from sqlite", file: file, line: line)
        }
    }
}
