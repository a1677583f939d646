import DAO
import XCTest

/// The statement generator stays inside API.md's subset: SQLite accepts every statement it
/// makes (errors only of the kinds the data can cause: constraints, overflow, transaction state)
/// and a fair share of queries return rows.
final class GeneratorSubsetTests: XCTestCase {
    /// SQLite's messages for errors that depend on data or transaction state, not on syntax.
    static let dataErrors = ["constraint failed", "integer overflow", "within a transaction", "no transaction is active", "datatype mismatch",
                             "no such index"]

    func testSQLiteAcceptsEveryGeneratedStatement() throws {
        var queries = 0, queriesWithRows = 0, writes = 0, writesChanging = 0
        for seed in UInt64(1)...25 {
            let testCase = DifferentialCase(seed: seed, statements: 60)
            let sqlite = try SQLiteDifferentialEngine()
            for sql in testCase.schema {
                if case .failed(let message) = sqlite.run(sql, isQuery: false) { XCTFail("\(sql): \(message)") }
            }
            for step in testCase.steps {
                let outcome = sqlite.run(step.sql, arguments: step.arguments, isQuery: step.comparison != .write)
                switch outcome {
                case .failed(let message):
                    XCTAssertTrue(Self.dataErrors.contains { message.contains($0) }, "seed \(seed): \(step.sql): \(message)")
                case .rows(let rows):
                    queries += 1
                    if !rows.isEmpty { queriesWithRows += 1 }
                case .wrote(let changes, _):
                    writes += 1
                    if changes > 0 { writesChanging += 1 }
                }
            }
        }
        XCTAssertGreaterThan(Double(queriesWithRows), 0.4 * Double(queries), "queries mostly return rows")
        XCTAssertGreaterThan(Double(writesChanging), 0.3 * Double(writes), "writes mostly change rows")
    }

    func testCasesReplayFromTheirSeed() {
        let a = DifferentialCase(seed: 99, statements: 30), b = DifferentialCase(seed: 99, statements: 30)
        XCTAssertEqual(a.schema, b.schema)
        XCTAssertEqual(a.steps.map(\.sql), b.steps.map(\.sql))
        XCTAssertNotEqual(a.steps.map(\.sql), DifferentialCase(seed: 100, statements: 30).steps.map(\.sql))
    }
}
