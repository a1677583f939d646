@testable import DAO
import Foundation
import XCTest

/// SQLite's sqllogictest corpus (../shared/sqllogictest beside the repository, never copied in)
/// run through `SQLDatabase`, one fresh store a file. A record passes, fails (its result or its
/// statement outcome differs) or is refused (`DAOError.unsupported`, counted by construct).
/// CI runs a fixed sample; `SQLLOGICTEST_ALL=1 swift test --filter SQLLogicTests` runs the whole
/// folder and prints the counts (CONFORMANCE.md); `SQLLOGICTEST_DIR` points elsewhere.
final class SQLLogicTests: XCTestCase {
    /// The sample CI runs: whole files, or their first records (index files are long).
    static let sample: [(path: String, limit: Int?)] = [
        ("select1.test", nil),
        ("select2.test", nil),
        ("select3.test", nil),
        ("evidence/in1.test", nil),
        ("evidence/in2.test", nil),
        ("evidence/slt_lang_aggfunc.test", nil),
        ("evidence/slt_lang_createtrigger.test", nil),
        ("evidence/slt_lang_createview.test", nil),
        ("evidence/slt_lang_dropindex.test", nil),
        ("evidence/slt_lang_droptable.test", nil),
        ("evidence/slt_lang_droptrigger.test", nil),
        ("evidence/slt_lang_dropview.test", nil),
        ("evidence/slt_lang_reindex.test", nil),
        ("evidence/slt_lang_replace.test", nil),
        ("evidence/slt_lang_update.test", nil),
        ("index/between/10/slt_good_1.test", 400),
        ("index/in/10/slt_good_3.test", 400),
        ("index/delete/10/slt_good_0.test", 400),
        ("random/expr/slt_good_0.test", 400),
        ("random/aggregates/slt_good_0.test", 400),
        ("random/select/slt_good_0.test", 200),
        ("random/groupby/slt_good_0.test", 200),
    ]

    /// Corpus quirks: records ("file:line") whose expectation SQLite itself does not meet, each
    /// with its cause and a statement that shows it (SQLite must fail it).
    static let knownFailures: [String: (cause: String, sqliteCheck: String)] = [
        "evidence/slt_lang_aggfunc.test:480": (
            cause: "sum() of integers that overflow: SQLite throws \"integer overflow\" (so does the engine), the corpus expects no rows",
            sqliteCheck: "SELECT sum(x) FROM (SELECT 1<<63 AS x UNION ALL SELECT 1<<63 UNION ALL SELECT -1)"),
    ]

    static var corpus: URL {
        if let dir = ProcessInfo.processInfo.environment["SQLLOGICTEST_DIR"] { return URL(fileURLWithPath: dir) }
        // Tests/DAOTests/<this file> -> repository root -> ../shared/sqllogictest
        return URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("shared/sqllogictest")
    }

    func testCorpusSample() throws {
        let root = Self.corpus
        guard FileManager.default.fileExists(atPath: root.appendingPathComponent("README.md").path) else {
            return XCTFail("the sqllogictest corpus is not at \(root.path) (it sits beside the repository)")
        }
        var total = SQLLogicOutcome()
        for (path, limit) in Self.sample {
            total.add(try SQLLogicRunner.run(file: root.appendingPathComponent(path), name: path, limit: limit))
        }
        print("sqllogictest sample:\n\(total.summary)known corpus quirks among the failed: \(Self.knownFailures.count)")
        check(total)
        XCTAssertGreaterThan(total.passed, 4_000, "the sample ran too few records")
    }

    func testWholeCorpus() throws {
        guard ProcessInfo.processInfo.environment["SQLLOGICTEST_ALL"] == "1" else {
            throw XCTSkip("SQLLOGICTEST_ALL=1 runs the whole corpus")
        }
        let root = Self.corpus
        let files = (FileManager.default.enumerator(at: root, includingPropertiesForKeys: nil)?
            .compactMap { $0 as? URL } ?? [])
            .filter { $0.pathExtension == "test" }
            .map { String($0.standardizedFileURL.path.dropFirst(root.standardizedFileURL.path.count + 1)) }
            .sorted()
        XCTAssertFalse(files.isEmpty, "no .test files under \(root.path)")
        var total = SQLLogicOutcome()
        for path in files {
            let start = Date()
            let outcome = try SQLLogicRunner.run(file: root.appendingPathComponent(path), name: path)
            // Standard error is unbuffered: the progress shows while the long run goes on.
            FileHandle.standardError.write(Data(("\(path): passed \(outcome.passed), failed \(outcome.failed), "
                + "refused \(outcome.refusedTotal) (\(String(format: "%.0f", Date().timeIntervalSince(start))) s)\n").utf8))
            for failure in outcome.failures { FileHandle.standardError.write(Data("  FAILED \(failure)\n".utf8)) }
            total.add(outcome)
        }
        FileHandle.standardError.write(Data("sqllogictest, \(files.count) files:\n\(total.summary)".utf8))
        check(total)
    }

    /// Fails on every failed record that is not a named known failure; prints the first ones.
    private func check(_ outcome: SQLLogicOutcome, file: StaticString = #filePath, line: UInt = #line) {
        let unexpected = outcome.failures.filter { Self.knownFailures["\($0.file):\($0.line)"] == nil }
        for failure in unexpected.prefix(50) { XCTFail("\(failure)", file: file, line: line) }
        if unexpected.count > 50 { XCTFail("... and \(unexpected.count - 50) more failed records", file: file, line: line) }
    }

    // MARK: The runner itself

    func testValuesPrintAsTheFormatSays() {
        XCTAssertEqual(SQLLogicRunner.format(.integer(-7), as: "I"), "-7")
        XCTAssertEqual(SQLLogicRunner.format(.real(2.9), as: "I"), "2")
        XCTAssertEqual(SQLLogicRunner.format(.real(2.0 / 3.0), as: "R"), "0.667")
        XCTAssertEqual(SQLLogicRunner.format(.integer(3), as: "R"), "3.000")
        XCTAssertEqual(SQLLogicRunner.format(.null, as: "T"), "NULL")
        XCTAssertEqual(SQLLogicRunner.format(.text(""), as: "T"), "(empty)")
        XCTAssertEqual(SQLLogicRunner.format(.text("a\tb\u{e9}"), as: "T"), "a@b@@")
        XCTAssertEqual(SQLLogicRunner.format(.real(1.5), as: "T"), "1.5")
        XCTAssertEqual(SQLLogicRunner.statements(of: "INSERT INTO t VALUES(1);\nDROP INDEX i;"),
                       ["INSERT INTO t VALUES(1);", "DROP INDEX i;"])
        XCTAssertEqual(SQLLogicRunner.statements(of: "SELECT 1\n  FROM t"), ["SELECT 1\n  FROM t"])
        XCTAssertEqual(SQLLogicRunner.md5Hex(""), "d41d8cd98f00b204e9800998ecf8427e")
        XCTAssertEqual(SQLLogicRunner.md5Hex("1\n2\n"), "6ddb4095eb719e2a9f0a3f95677d24e0")
    }

    /// Reals print as SQLite's printf("%.3f") prints them: up to 16 significant digits as the
    /// system's SQLite does; beyond 16 digits SQLite 3.40 truncates ("-9223372036854775000.000")
    /// where the corpus (generated by a printf that rounds, as SQLite 3.43+ does) has
    /// "-9223372036854776000.000": the runner rounds, as the corpus expects.
    func testRealsPrintAsSQLitePrintf() throws {
        let oracle = try SQLiteOracle()
        for r in [0.0, -0.0, 1.0 / 3.0, -2.5, 0.0005, 123456789.0125, 1e13 + 0.5, 99999999999999.99, 1e15 + 0.25] {
            let expected = try oracle.execute("SELECT printf('%.3f', ?)", arguments: [.real(r)])
            XCTAssertEqual([[.text(SQLLogicRunner.format(.real(r), as: "R"))]], expected, "\(r)")
        }
        XCTAssertEqual(SQLLogicRunner.format(.real(-9223372036854775808.0), as: "R"), "-9223372036854776000.000")
        XCTAssertEqual(SQLLogicRunner.format(.real(-18446744073709551616.0), as: "R"), "-18446744073709550000.000")
        XCTAssertEqual(SQLLogicRunner.format(.real(1234567890123456.7), as: "R"), "1234567890123457.000")
    }

    /// Each known failure is a record SQLite itself does not meet: its check fails in SQLite.
    func testKnownFailuresAreSQLiteQuirks() throws {
        let oracle = try SQLiteOracle()
        for (record, quirk) in Self.knownFailures {
            XCTAssertThrowsError(try oracle.execute(quirk.sqliteCheck), "\(record): \(quirk.cause)")
        }
    }

    func testParserAppliesConditionsForSQLite() throws {
        let script = """
        # comment
        skipif sqlite
        statement ok
        DROP TABLE nothing

        onlyif mysql # not us
        query I nosort
        SELECT 1
        ----
        1

        onlyif sqlite
        query IT rowsort label-1
        SELECT 1,
          'a'
        ----
        1
        a

        hash-threshold 8

        onlyif mssql
        halt

        statement error
        SELECT FROM
        """
        let (records, skipped) = try SQLLogicParser.parse(script)
        XCTAssertEqual(skipped, 2)
        XCTAssertEqual(records, [
            .query(types: "IT", sort: "rowsort", label: "label-1", sql: "SELECT 1,\n  'a'", expected: ["1", "a"], line: 13),
            .hashThreshold(8),
            .statement(expectOK: false, sql: "SELECT FROM", line: 25),
        ])
    }

    /// A wrong expectation, a wrong hash, a differing label and a statement outcome that differs
    /// are failures; the right ones pass; an unsupported construct is refused.
    func testRunnerReportsFailuresAndRefusals() throws {
        let script = """
        statement ok
        CREATE TABLE t (a INTEGER, b TEXT)

        statement ok
        INSERT INTO t VALUES (2, 'x'), (1, NULL), (3, '')

        query IT rowsort
        SELECT a, b FROM t
        ----
        1
        NULL
        2
        x
        3
        (empty)

        query I valuesort label-a
        SELECT a FROM t
        ----
        3 values hashing to \(SQLLogicRunner.md5Hex("1\n2\n3\n"))

        query I nosort label-a
        SELECT a + 1 FROM t ORDER BY a
        ----
        2
        3
        4

        query I nosort
        SELECT a FROM t ORDER BY a
        ----
        1
        2
        4

        statement error
        INSERT INTO t VALUES (1)

        statement ok
        CREATE VIRTUAL TABLE v USING fts5(x)
        """
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("slt-\(UUID()).test")
        try script.write(to: url, atomically: true, encoding: .utf8)
        defer { try? FileManager.default.removeItem(at: url) }
        let outcome = try SQLLogicRunner.run(file: url, name: "inline")
        XCTAssertEqual(outcome.passed, 5)
        XCTAssertEqual(outcome.failures.map(\.line), [22, 29])
        XCTAssertEqual(outcome.refused, ["VIRTUAL TABLE": 1])
    }
}
