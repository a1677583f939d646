import DAO
import Foundation
import XCTest

/// Differential tests of the SQL subset: random schemas, rows and statements run on SQLite and
/// on the product's SQLDatabase, compared exactly (Differential/ResultComparator.swift).
///
/// CI size: `ciCases` cases of `ciStatements` statements. Long runs: `DAO_DIFF_STATEMENTS=N`
/// (total statements), `DAO_DIFF_SEED=S` (the first seed; a reported seed replays its case) and
/// `DAO_DIFF_REPORTS=K` (go on until K disagreeing cases are reported) and
/// `DAO_DIFF_CASE_STATEMENTS=M` (statements per case, default 75: longer cases build up state).
final class DifferentialTests: XCTestCase {
    static let ciCases = 40
    static let ciStatements = 75

    /// The seeds and statements per case this run uses.
    private func plan() -> (seeds: [UInt64], statementsPerCase: Int) {
        let environment = ProcessInfo.processInfo.environment
        let first = environment["DAO_DIFF_SEED"].flatMap { UInt64($0) } ?? 20_261_122
        let total = environment["DAO_DIFF_STATEMENTS"].flatMap { Int($0) } ?? Self.ciCases * Self.ciStatements
        let perCase = environment["DAO_DIFF_CASE_STATEMENTS"].flatMap { Int($0) }.map { max(1, $0) } ?? Self.ciStatements
        let cases = max(1, total / perCase)
        return ((0..<UInt64(cases)).map { first &+ $0 }, perCase)
    }

    /// Runs every planned case; reports (minimized) the first `DAO_DIFF_REPORTS` disagreeing
    /// cases (default 1) and stops.
    /// `share`: run every `share`-th planned case only.
    private func check(_ runner: DifferentialRunner, share: Int = 1, collations: Bool = false) throws {
        let (allSeeds, statements) = plan()
        let seeds = allSeeds.enumerated().filter { $0.offset % share == 0 }.map(\.element)
        let maximumReports = ProcessInfo.processInfo.environment["DAO_DIFF_REPORTS"].flatMap { Int($0) } ?? 1
        var reports = 0
        for seed in seeds {
            let testCase = DifferentialCase(seed: seed, statements: statements, collations: collations)
            if try runner.run(testCase) != nil {
                let minimized = try runner.minimize(testCase)
                XCTFail(minimized?.report ?? "seed \(seed): disagreement that did not replay")
                reports += 1
                if reports >= maximumReports { return }
            }
        }
    }

    /// The product's engine agrees with SQLite on every generated statement.
    func testSQLDatabaseAgreesWithSQLite() throws {
        guard try ProductDifferentialEngine().map({ $0.close(); return true }) == true else {
            throw XCTSkip("SQLDatabase is still the interface stub")
        }
        try check(DifferentialRunner(makeReference: { try SQLiteDifferentialEngine() },
                                     makeCandidate: { try ProductDifferentialEngine() }))
    }

    /// The same on a store that encrypts and compresses every record (fewer cases: the
    /// statements are the same; what differs is the storage under them, checked at reopen).
    func testSQLDatabaseOnAnEncryptedCompressedStoreAgreesWithSQLite() throws {
        guard try ProductDifferentialEngine().map({ $0.close(); return true }) == true else {
            throw XCTSkip("SQLDatabase is still the interface stub")
        }
        try check(DifferentialRunner(makeReference: { try SQLiteDifferentialEngine() },
                                     makeCandidate: { try ProductDifferentialEngine(protected: true) }), share: 4)
    }

    /// The same with NOCASE, RTRIM and BINARY columns and index terms in the schemas (half the
    /// cases).
    func testSQLDatabaseWithCollationsAgreesWithSQLite() throws {
        guard try ProductDifferentialEngine().map({ $0.close(); return true }) == true else {
            throw XCTSkip("SQLDatabase is still the interface stub")
        }
        try check(DifferentialRunner(makeReference: { try SQLiteDifferentialEngine() },
                                     makeCandidate: { try ProductDifferentialEngine() }), share: 2, collations: true)
    }

    /// The comparison never depends on an order the statement leaves open: SQLite agrees with
    /// itself returning unordered rows in reverse.
    func testComparisonIgnoresOrderTheStatementLeavesOpen() throws {
        try check(DifferentialRunner(makeReference: { try SQLiteDifferentialEngine() },
                                     makeCandidate: { try SQLiteDifferentialEngine(reverseUnordered: true) },
                                     candidateStatementsAreAtomic: false))
        // With collations, texts equal under NOCASE or RTRIM could make a statement's answer
        // depend on the order (which spelling a group shows): the generator must avoid that.
        try check(DifferentialRunner(makeReference: { try SQLiteDifferentialEngine() },
                                     makeCandidate: { try SQLiteDifferentialEngine(reverseUnordered: true) },
                                     candidateStatementsAreAtomic: false), share: 2, collations: true)
    }
}
