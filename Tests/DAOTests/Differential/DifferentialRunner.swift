import DAO
import Foundation

/// One generated case: a schema, initial rows and statements, all from one seed.
struct DifferentialCase {
    var seed: UInt64
    /// The tables whose contents are compared after every write.
    var tableNames: [String]
    /// CREATE TABLE and CREATE INDEX statements.
    var schema: [String]
    /// Statements after the schema: the initial rows, then the random statements.
    var steps: [GeneratedStatement]

    /// Builds the case of `seed` with `statements` random statements (`collations`: columns
    /// and indexes with COLLATE clauses too).
    init(seed: UInt64, statements: Int, collations: Bool = false) {
        self.seed = seed
        var random = SeededRandom(seed: seed)
        let tables = SchemaGenerator.tables(2, random: &random, collations: collations)
        tableNames = tables.map(\.name)
        schema = tables.flatMap { [$0.createStatement] + $0.indexStatements }
        let generator = StatementGenerator(tables: tables)
        var steps: [GeneratedStatement] = []
        for table in tables {
            for _ in 0..<random.int(0...10) {
                let row = table.columns.map { ValueGenerator.literal(for: $0, random: &random) }.joined(separator: ", ")
                steps.append(GeneratedStatement(sql: "INSERT OR IGNORE INTO \(table.name) VALUES (\(row))", comparison: .write))
            }
        }
        for _ in 0..<statements { steps.append(generator.next(random: &random)) }
        self.steps = steps
    }

    /// A hand-written case (regression tests): queries are compared as multisets, other
    /// statements as writes.
    init(tables: [String], schema: [String], statements: [String]) {
        seed = 0
        tableNames = tables
        self.schema = schema
        steps = statements.map {
            GeneratedStatement(sql: $0, comparison: $0.uppercased().hasPrefix("SELECT") ? .multiset : .write)
        }
    }
}

/// Where two engines first disagreed in a case.
struct Disagreement {
    var seed: UInt64
    var schema: [String]
    /// The steps before the disagreeing one (after minimizing: only those it needs).
    var history: [String]
    var statement: String
    var reference: String
    var candidate: String
    var reason: String

    var report: String {
        """
        DIFFERENTIAL DISAGREEMENT (seed \(seed); rerun with DAO_DIFF_SEED=\(seed))
        -- schema
        \(schema.map { $0 + ";" }.joined(separator: "\n"))
        -- data and earlier statements
        \(history.map { $0 + ";" }.joined(separator: "\n"))
        -- statement
        \(statement);
        -- \(reason)
        -- SQLite: \(reference)
        -- ours:   \(candidate)
        """
    }
}

/// Runs cases on a reference (SQLite) and a candidate engine, statement by statement, comparing
/// each outcome and every table's contents after each write.
struct DifferentialRunner {
    var makeReference: () throws -> any DifferentialEngine
    var makeCandidate: () throws -> (any DifferentialEngine)?
    /// Whether a failed statement must leave the candidate's tables unchanged (the product's
    /// rule, API.md; SQLite itself breaks it, see below).
    var candidateStatementsAreAtomic = true

    /// Runs `steps` of `testCase` (all by default); returns the first disagreement.
    func run(_ testCase: DifferentialCase, steps: [GeneratedStatement]? = nil) throws -> Disagreement? {
        let reference = try makeReference()
        guard let candidate = try makeCandidate() else { return nil }
        defer { reference.close(); candidate.close() }
        let tables = testCase.tableNames
        var history: [String] = []
        func disagreement(_ sql: String, _ r: Outcome, _ c: Outcome, _ reason: String) -> Disagreement {
            Disagreement(seed: testCase.seed, schema: testCase.schema, history: history, statement: sql,
                         reference: r.text, candidate: c.text, reason: reason)
        }
        for sql in testCase.schema {
            let r = reference.run(sql, isQuery: false), c = candidate.run(sql, isQuery: false)
            if let reason = ResultComparator.difference(r, c, .write, sql: sql) { return disagreement(sql, r, c, reason) }
            if case .failed = r { return disagreement(sql, r, c, "the generated schema does not load in SQLite") }
        }
        func contents(_ engine: any DifferentialEngine) -> [String: Outcome] {
            Dictionary(uniqueKeysWithValues: tables.map { ($0, engine.run("SELECT * FROM \($0)", isQuery: true)) })
        }
        var referenceBefore = contents(reference), candidateBefore = contents(candidate)
        for step in steps ?? testCase.steps {
            let isQuery = step.comparison != .write
            let r = reference.run(step.sql, arguments: step.arguments, isQuery: isQuery)
            let c = candidate.run(step.sql, arguments: step.arguments, isQuery: isQuery)
            let shown = step.displayed
            if let reason = ResultComparator.difference(r, c, step.comparison, sql: step.sql, looseColumns: step.looseColumns,
                                                        evaluatesNoRow: step.evaluatesNoRow) {
                return disagreement(shown, r, c, reason)
            }
            if !isQuery {
                let referenceAfter = contents(reference), candidateAfter = contents(candidate)
                if case .failed = c {
                    // A failed statement leaves every table as it was (API.md: statements are atomic).
                    for table in tables where candidateStatementsAreAtomic {
                        if let reason = ResultComparator.difference(candidateBefore[table] ?? .rows([]), candidateAfter[table] ?? .rows([]), .multiset, sql: "SELECT") {
                            return disagreement(shown, candidateBefore[table] ?? .rows([]), candidateAfter[table] ?? .rows([]),
                                                "the failed statement changed table \(table) (left: before, right: after): \(reason)")
                        }
                    }
                    // SQLite keeps the rows a multi-row INSERT OR REPLACE wrote before a row failed
                    // with a datatype mismatch inside BEGIN ... COMMIT; the product's statements are
                    // atomic, so the engines part ways here: end the case.
                    if tables.contains(where: { ResultComparator.difference(referenceBefore[$0] ?? .rows([]), referenceAfter[$0] ?? .rows([]), .multiset, sql: "SELECT") != nil }) {
                        return nil
                    }
                }
                for table in tables {
                    if let reason = ResultComparator.difference(referenceAfter[table] ?? .rows([]), candidateAfter[table] ?? .rows([]), .multiset, sql: "SELECT") {
                        return disagreement(shown, referenceAfter[table] ?? .rows([]), candidateAfter[table] ?? .rows([]),
                                            "table \(table) differs afterwards: \(reason)")
                    }
                }
                referenceBefore = referenceAfter
                candidateBefore = candidateAfter
            }
            history.append(shown)
        }
        // What was committed survives a reopen of the candidate's store.
        if steps == nil {
            let commit = "COMMIT"
            _ = reference.run(commit, isQuery: false)
            _ = candidate.run(commit, isQuery: false)
            if try candidate.reopen() {
                for table in tables {
                    let sql = "SELECT * FROM \(table)"
                    let r = reference.run(sql, isQuery: true), c = candidate.run(sql, isQuery: true)
                    if let reason = ResultComparator.difference(r, c, .multiset, sql: sql) {
                        return disagreement("-- (COMMIT, then the store closed and opened again) \(sql)", r, c, "table \(table) after reopening: \(reason)")
                    }
                }
            }
        }
        return nil
    }

    /// Shrinks a disagreement of `testCase` by dropping earlier steps one at a time while the
    /// replay still disagrees (at most `budget` replays).
    func minimize(_ testCase: DifferentialCase, budget: Int = 300) throws -> Disagreement? {
        guard var found = try run(testCase) else { return nil }
        // Keep the steps up to and including the first disagreeing one (a schema statement
        // disagreeing leaves none).
        var steps: [GeneratedStatement] = []
        if let index = testCase.steps.firstIndex(where: { $0.displayed == found.statement }) {
            steps = Array(testCase.steps[...index])
        }
        var replays = 0
        var index = steps.count - 2
        while index >= 0, replays < budget {
            var candidate = steps
            candidate.remove(at: index)
            replays += 1
            if let smaller = try run(testCase, steps: candidate) {
                found = smaller
                steps = candidate
                if let end = steps.firstIndex(where: { $0.displayed == smaller.statement }) { steps = Array(steps[...end]) }
                index = min(index, steps.count - 2)
            } else {
                index -= 1
            }
        }
        return found
    }
}

extension GeneratedStatement {
    /// The statement as a report shows it: with its parameters' values after it.
    var displayed: String {
        guard !arguments.isEmpty else { return sql }
        return sql + " -- " + arguments.enumerated().map { ":p\($0.offset + 1) = \(Canonical.describe($0.element))" }.joined(separator: ", ")
    }
}
