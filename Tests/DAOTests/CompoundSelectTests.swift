@testable import DAO
import XCTest

/// Compound selects and WITH (issue 15 item 3), compared with SQLite through the oracle:
/// rows in order (which of equal rows such as 1 and 1.0 is kept), column names, errors.
final class CompoundSelectTests: XCTestCase {
    private func makeDifferential() throws -> Differential {
        let d = try Differential()
        d.run(["CREATE TABLE t(a INTEGER, b TEXT)", "CREATE TABLE u(x, y REAL)",
               "INSERT INTO t VALUES (1, 'one'), (2, 'two'), (2, 'two'), (NULL, 'none'), (3, NULL), (1, 'uno')",
               "INSERT INTO u VALUES (1.0, 1), (2, 2.5), ('2', NULL), (NULL, NULL), (x'01', 3), (5, 5)"])
        return d
    }

    /// Both fail, or both give the same rows in the same order and the same column names.
    private func same(_ d: Differential, _ sql: String, file: StaticString = #filePath, line: UInt = #line) {
        d.check(sql, file: file, line: line)
        if let expected = try? d.oracle.run(sql), let actual = try? d.database.execute(sql) {
            XCTAssertEqual(actual.columns, expected.columns, sql, file: file, line: line)
        }
    }

    /// Both fail with the same message.
    private func sameError(_ d: Differential, _ sql: String, file: StaticString = #filePath, line: UInt = #line) {
        var expected = "", actual = ""
        XCTAssertThrowsError(try d.oracle.execute(sql), sql, file: file, line: line) { expected = "\($0)" }
        XCTAssertThrowsError(try d.database.execute(sql), sql, file: file, line: line) { actual = "\($0)" }
        var message = expected.replacingOccurrences(of: "sqlite(\"", with: "").replacingOccurrences(of: "\")", with: "")
        // "no such table: x" is DAOError.noSuchTable("x"): compare the name.
        if message.hasPrefix("no such"), let name = message.split(separator: ":").last { message = name.trimmingCharacters(in: .whitespaces) }
        XCTAssertTrue(actual.contains(message), "\(sql): SQLite \(expected), ours \(actual)", file: file, line: line)
    }

    func testOperatorsWithoutOrderBy() throws {
        let d = try makeDifferential()
        for sql in ["SELECT a FROM t UNION SELECT x FROM u", "SELECT a FROM t UNION ALL SELECT x FROM u",
                    "SELECT a FROM t INTERSECT SELECT x FROM u", "SELECT a FROM t EXCEPT SELECT x FROM u",
                    "SELECT x FROM u EXCEPT SELECT a FROM t", "SELECT x FROM u INTERSECT SELECT a FROM t",
                    "SELECT 1 UNION SELECT 1.0", "SELECT 1.0 UNION SELECT 1", "SELECT 2 UNION SELECT 1 UNION ALL SELECT 0",
                    "SELECT a, b FROM t UNION SELECT y, x FROM u", "SELECT a FROM t UNION ALL SELECT a FROM t UNION SELECT 9",
                    "SELECT a FROM t EXCEPT SELECT 2 UNION SELECT x FROM u", "SELECT b FROM t INTERSECT SELECT b FROM t WHERE a > 1",
                    "SELECT count(*) FROM t UNION SELECT sum(x) FROM u", "SELECT DISTINCT a FROM t UNION ALL SELECT a FROM t WHERE a = 2",
                    "SELECT a, count(*) FROM t GROUP BY a UNION SELECT 7, 7", "SELECT * FROM t UNION SELECT * FROM u"] {
            same(d, sql)
        }
    }

    func testOrderByLimitOffsetOnTheWhole() throws {
        let d = try makeDifferential()
        for sql in ["SELECT a FROM t UNION SELECT x FROM u ORDER BY 1", "SELECT a FROM t UNION SELECT x FROM u ORDER BY 1 DESC",
                    "SELECT a FROM t UNION ALL SELECT x FROM u ORDER BY 1", "SELECT a FROM t INTERSECT SELECT x FROM u ORDER BY 1",
                    "SELECT x FROM u INTERSECT SELECT a FROM t ORDER BY 1", "SELECT a FROM t EXCEPT SELECT 5 ORDER BY 1",
                    "SELECT 1.0 UNION SELECT 1 ORDER BY 1", "SELECT 1 UNION SELECT 1.0 ORDER BY 1",
                    "SELECT a, b FROM t UNION SELECT y, x FROM u ORDER BY a", "SELECT a AS k, b FROM t UNION ALL SELECT x, y FROM u ORDER BY k DESC, 2",
                    "SELECT a, b FROM t UNION SELECT x, y FROM u ORDER BY y", "SELECT a, b FROM t UNION SELECT x, y FROM u ORDER BY b DESC LIMIT 3",
                    "SELECT a FROM t UNION ALL SELECT x FROM u LIMIT 4 OFFSET 3", "SELECT a FROM t UNION SELECT x FROM u LIMIT 2",
                    "SELECT a FROM t UNION SELECT x FROM u ORDER BY 1 LIMIT -1 OFFSET 2", "SELECT a FROM t UNION SELECT x FROM u LIMIT 0",
                    "SELECT a, b FROM t UNION ALL SELECT x, y FROM u UNION SELECT 2, 'two' ORDER BY 1",
                    "SELECT a, b FROM t UNION SELECT x, y FROM u UNION ALL SELECT 2, 'two' ORDER BY 1",
                    "SELECT a + 1 FROM t UNION SELECT x FROM u ORDER BY a + 1", "SELECT a FROM t UNION SELECT x FROM u ORDER BY x"] {
            same(d, sql)
        }
    }

    func testValuesLists() throws {
        let d = try makeDifferential()
        for sql in ["VALUES (1, 'a'), (2.5, NULL), (1, 'a')", "SELECT 1 UNION VALUES (2), (1.0), (3)",
                    "VALUES (3), (1), (2) UNION SELECT a FROM t", "VALUES (3), (1), (2) UNION SELECT 0 ORDER BY 1 DESC LIMIT 2",
                    "SELECT a, b FROM t UNION ALL VALUES (7, 'seven')",
                    "WITH v(n, s) AS (VALUES (1, 'x'), (2, 'y')) SELECT s, n * 10 FROM v WHERE n > 1",
                    "VALUES (?, ?)", "SELECT * FROM t INTERSECT VALUES (1, 'one'), (5, 'five')"] {
            same(d, sql)
        }
        sameError(d, "VALUES (1), (2, 3)")
        // SQLite's grammar has no ORDER BY or LIMIT after a VALUES list: both refuse it.
        for sql in ["VALUES (3), (1) ORDER BY 1", "SELECT 1 UNION ALL VALUES (2) LIMIT 1"] {
            XCTAssertThrowsError(try d.oracle.execute(sql), sql)
            XCTAssertThrowsError(try d.database.execute(sql), sql)
        }
    }

    /// An observed compound or WITH query reruns for commits to any table it reads.
    func testObservedTablesIncludeEveryCoreAndWithTable() throws {
        let d = try makeDifferential()
        d.run(["CREATE TABLE w(v)"])
        XCTAssertEqual(try d.database.tablesRead(by: "WITH c AS (SELECT v FROM w) SELECT a FROM t UNION SELECT v FROM c"),
                       ["t", "w", "c"])
        XCTAssertEqual(try d.database.tablesRead(by: "SELECT a FROM t EXCEPT SELECT x FROM u"), ["t", "u"])
    }

    func testCompoundErrors() throws {
        let d = try makeDifferential()
        sameError(d, "SELECT 1 UNION SELECT 1, 2")
        sameError(d, "SELECT a FROM t UNION SELECT x FROM u ORDER BY 2")
        sameError(d, "SELECT a FROM t UNION SELECT x FROM u ORDER BY b")
        sameError(d, "SELECT 1 LIMIT 1 UNION SELECT 2")
        sameError(d, "SELECT a FROM t UNION SELECT x FROM nosuch")
    }

    func testInsertFromCompoundAndWith() throws {
        let d = try makeDifferential()
        d.run(["CREATE TABLE w(v)", "INSERT INTO w SELECT a FROM t UNION SELECT x FROM u",
               "INSERT INTO w WITH c(k) AS (SELECT 40 UNION ALL SELECT k + 1 FROM c WHERE k < 43) SELECT k FROM c"])
        same(d, "SELECT v, typeof(v) FROM w")
    }

    func testCommonTableExpressions() throws {
        let d = try makeDifferential()
        for sql in ["WITH c AS (SELECT a, b FROM t WHERE a > 1) SELECT * FROM c", "WITH c(p, q) AS (SELECT a, b FROM t) SELECT q FROM c WHERE p = 1",
                    "WITH c AS (SELECT a FROM t) SELECT a FROM c WHERE a = '1'", "WITH c AS (SELECT a + 0 AS a FROM t) SELECT a FROM c WHERE a = '1'",
                    "WITH c(z) AS (SELECT a FROM t UNION ALL SELECT 'x') SELECT typeof(z) FROM c WHERE z = '2'",
                    "WITH a AS (SELECT * FROM b), b AS (SELECT 1 AS one) SELECT * FROM a", "WITH t AS (SELECT 5 AS a) SELECT a FROM t",
                    "WITH c AS (SELECT * FROM nosuch) SELECT 1", "WITH c AS (SELECT a, a FROM t) SELECT * FROM c",
                    "WITH c AS (SELECT a, count(*) AS n FROM t GROUP BY a) SELECT n, a FROM c ORDER BY n DESC, a",
                    "WITH c AS (SELECT a FROM t) SELECT a FROM c UNION SELECT x FROM u ORDER BY 1",
"WITH c AS (SELECT ? AS v) SELECT v FROM c",
                    "WITH c AS (WITH d AS (SELECT 3 AS v) SELECT v FROM d) SELECT v FROM c",
                    "WITH c AS (SELECT x FROM u ORDER BY x LIMIT 2) SELECT * FROM c", "WITH c AS (SELECT 1 AS v) SELECT max(v), count(*) FROM c"] {
            same(d, sql)
        }
        sameError(d, "WITH c AS (SELECT 1 AS x) SELECT rowid FROM c")
        sameError(d, "WITH c(a, b) AS (SELECT 1) SELECT * FROM c")
        sameError(d, "WITH a AS (SELECT * FROM b), b AS (SELECT * FROM a) SELECT * FROM a")
        // The WITH table is gone after the statement; the stored table is seen again.
        same(d, "SELECT a FROM t")
    }

    /// `WITH ... INSERT | REPLACE | UPDATE | DELETE`, as SQLite runs them: the WITH tables are
    /// visible to the statement's SELECT, WHERE and subqueries, computed again on each run
    /// (the same statement run twice sees the rows of its second run), and gone after it.
    func testWithBeforeInsertUpdateAndDelete() throws {
        let d = try makeDifferential()
        d.run([
            "CREATE TABLE w(v, n INTEGER)",
            "WITH RECURSIVE c(k) AS (SELECT 1 UNION ALL SELECT k + 1 FROM c WHERE k < 5) INSERT INTO w SELECT k, k * k FROM c",
            "WITH big AS (SELECT v FROM w WHERE n > 10) DELETE FROM w WHERE v IN (SELECT v FROM big)",
            "WITH m(top) AS (SELECT max(a) FROM t) UPDATE w SET n = n + (SELECT top FROM m) WHERE v < 3",
            "WITH src(v, n) AS (VALUES (7, 70), (8, 80)) REPLACE INTO w (v, n) SELECT v, n FROM src",
            "WITH src AS (SELECT 9 AS v) INSERT INTO w (v, n) VALUES ((SELECT v FROM src), 0)",
        ])
        same(d, "SELECT v, n FROM w ORDER BY v")
        // Run twice: the second run computes the WITH table from the rows the first left.
        let again = "WITH last(v) AS (SELECT max(v) FROM w) INSERT INTO w SELECT v + 1, 1 FROM last"
        d.run([again, again])
        same(d, "SELECT v, n FROM w ORDER BY v")
        // RETURNING, and the rows a WITH table's subquery reads.
        same(d, "WITH c AS (SELECT 100 AS v) INSERT INTO w SELECT v, 2 FROM c RETURNING v, n")
        same(d, "WITH gone AS (SELECT v FROM w WHERE n = 2) DELETE FROM w WHERE v IN gone RETURNING v")
        // The WITH table is gone after the statement; a stored table of the same name is seen.
        same(d, "SELECT v FROM w ORDER BY v")
        sameError(d, "WITH y AS (SELECT 5) INSERT INTO y VALUES (2)")
        // Not inside a trigger's body (SQLite: a syntax error at the INSERT).
        sameError(d, "CREATE TRIGGER tr AFTER INSERT ON t BEGIN WITH x AS (SELECT 1) INSERT INTO w SELECT *, 0 FROM x; END")
        // A WITH table named as the written table: SQLite writes the table; refused here.
        XCTAssertThrowsError(try d.database.execute("WITH w AS (SELECT 1) DELETE FROM w")) { error in
            guard case DAOError.unsupported = error else { return XCTFail("\(error)") }
        }
    }

    /// WITH where a subquery goes (in FROM, a scalar subquery, IN, EXISTS, a view's query, a
    /// WITH table's query), each read of a WITH table inlined as its query: the same rows as
    /// SQLite's, shadowing included (an inner WITH table hides an outer table or WITH table of
    /// its name).
    func testWithInsideSubqueriesAndViews() throws {
        let d = try makeDifferential()
        for sql in [
            "SELECT * FROM (WITH c AS (SELECT a, b FROM t WHERE a > 1) SELECT b, a FROM c) ORDER BY 1, 2",
            "SELECT * FROM (WITH c(p, q) AS (SELECT a, b FROM t) SELECT q FROM c WHERE p = 1) ORDER BY 1",
            "SELECT a, (WITH m AS (SELECT max(x) AS top FROM u WHERE x < t.a) SELECT top FROM m) FROM t ORDER BY a, b",
            "SELECT a FROM t WHERE a IN (WITH s AS (SELECT x FROM u) SELECT x FROM s) ORDER BY a",
            "SELECT b FROM t WHERE EXISTS (WITH s AS (SELECT x FROM u WHERE x = t.a) SELECT 1 FROM s) ORDER BY b",
            "SELECT * FROM (WITH c AS (SELECT 1 AS v), d AS (SELECT v + 1 AS w FROM c) SELECT * FROM c, d)",
            "SELECT * FROM (WITH a AS (SELECT * FROM b), b AS (SELECT 1 AS one) SELECT * FROM a)",
            "SELECT * FROM (WITH t AS (SELECT 5 AS a) SELECT a FROM t)",
            "WITH c AS (SELECT 1 AS v) SELECT * FROM (WITH c AS (SELECT 2 AS v) SELECT v FROM c), c",
            "SELECT * FROM (WITH c AS (SELECT a FROM t UNION SELECT x FROM u) SELECT count(*) FROM c AS k JOIN c AS l ON k.a = l.a)",
            "SELECT * FROM (WITH c AS (SELECT a, row_number() OVER (ORDER BY a) AS r FROM t) SELECT a, r FROM c WHERE r > 2)",
            "SELECT * FROM (WITH c AS (WITH d AS (SELECT 3 AS v) SELECT v FROM d) SELECT v FROM c)",
        ] {
            same(d, sql)
        }
        sameError(d, "SELECT * FROM (WITH a AS (SELECT * FROM b), b AS (SELECT * FROM a) SELECT * FROM a)")
        sameError(d, "SELECT * FROM (WITH c(p, q) AS (SELECT 1) SELECT * FROM c)")
        d.run(["CREATE VIEW top AS WITH ranked AS (SELECT a, b, rank() OVER (ORDER BY a DESC) AS r FROM t WHERE a IS NOT NULL) SELECT a, b FROM ranked WHERE r <= 2"])
        same(d, "SELECT * FROM top ORDER BY b")
        // Tables that read each other three times a level: refused past 1,000 reads, not grown
        // to 3^12 copies.
        var tables = ["w0 AS (SELECT 1 AS v)"]
        for level in 1...12 { tables.append("w\(level) AS (SELECT a.v FROM w\(level - 1) AS a, w\(level - 1) AS b, w\(level - 1) AS c)") }
        XCTAssertThrowsError(try d.database.execute("SELECT * FROM (WITH \(tables.joined(separator: ", ")) SELECT * FROM w12)")) { error in
            guard case DAOError.unsupported = error else { return XCTFail("\(error)") }
        }
        // A recursive WITH table inside a subquery stays refused (a statement's own one runs).
        XCTAssertThrowsError(try d.database.execute("SELECT * FROM (WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 3) SELECT i FROM n)")) { error in
            guard case DAOError.unsupported = error else { return XCTFail("\(error)") }
        }
    }

    func testRecursiveCommonTableExpressions() throws {
        let d = try makeDifferential()
        for sql in ["WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c WHERE x < 10) SELECT x FROM c",
                    "WITH c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c WHERE x < 3) SELECT * FROM c",
                    "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c LIMIT 5) SELECT * FROM c",
                    "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c LIMIT 3 OFFSET 2) SELECT * FROM c",
                    "WITH RECURSIVE c(x) AS (SELECT 1 UNION SELECT x % 4 + 1 FROM c) SELECT x FROM c",
                    "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x % 4 + 1 FROM c LIMIT 9) SELECT x FROM c",
                    "WITH RECURSIVE c(x, d) AS (SELECT 1, 0 UNION ALL SELECT x * 2, d + 1 FROM c WHERE d < 4 UNION ALL SELECT x * 3, d + 1 FROM c WHERE d < 2) SELECT * FROM c",
                    "WITH RECURSIVE c(x, d) AS (SELECT 1, 0 UNION ALL SELECT x * 2, d + 1 FROM c WHERE d < 4 UNION ALL SELECT x * 3, d + 1 FROM c WHERE d < 2 ORDER BY 1) SELECT * FROM c",
                    "WITH RECURSIVE c(x, d) AS (SELECT 1, 0 UNION ALL SELECT x * 2, d + 1 FROM c WHERE d < 4 UNION ALL SELECT x * 3, d + 1 FROM c WHERE d < 2 ORDER BY 2 DESC, 1) SELECT * FROM c",
                    "WITH RECURSIVE c(n, f) AS (SELECT 1, 1 UNION ALL SELECT n + 1, f * (n + 1) FROM c WHERE n < 12) SELECT n, f FROM c WHERE n % 3 = 0",
                    "WITH RECURSIVE c(x) AS (SELECT a FROM t WHERE a IS NOT NULL UNION SELECT x + 1 FROM c WHERE x < 5) SELECT x FROM c ORDER BY x",
                    "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c) SELECT 1",
                    "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c WHERE x < 100) SELECT count(*), sum(x) FROM c"] {
            same(d, sql)
        }
    }

    /// Random compounds of three small tables holding equal values of different types, every
    /// operator and ORDER BY direction, compared row for row with SQLite.
    func testRandomCompoundsAgreeWithSQLite() throws {
        let d = try Differential()
        let values = ["1", "1.0", "2", "'2'", "NULL", "'a'", "x'61'", "-1", "2.5"]
        var random = SeededRandom(seed: 15)
        for name in ["p", "q", "r"] {
            d.run(["CREATE TABLE \(name)(k, v)"])
            for _ in 0..<6 { d.run(["INSERT INTO \(name) VALUES (\(random.pick(values)), \(random.pick(values)))"]) }
        }
        let operators = ["UNION", "UNION ALL", "INTERSECT", "EXCEPT"]
        for _ in 0..<300 {
            var sql = ""
            for index in 0..<random.int(2...4) {
                if index > 0 { sql += " \(random.pick(operators)) " }
                let columns = random.pick(["k, v", "v, k", "k, k", "k + 0, v"])
                sql += "SELECT \(columns) FROM \(random.pick(["p", "q", "r"]))"
                if random.chance(0.3) { sql += " WHERE k IS NOT \(random.pick(values))" }
            }
            if random.chance(0.6) {
                sql += " ORDER BY " + random.pick(["1", "2", "1 DESC", "2 DESC", "2, 1 DESC", "1 DESC, 2"])
            }
            if random.chance(0.3) { sql += " LIMIT \(random.int(0...5)) OFFSET \(random.int(0...3))" }
            same(d, sql)
        }
    }
}
