@testable import DAO
import XCTest

/// SQL results that differed from SQLite's (issue 25 items 2 and 3, issue 17 item 4), each
/// compared with SQLite through the oracle.
final class SQLFidelityTests: XCTestCase {
    /// Both engines fail with "integer overflow".
    private func checkOverflow(_ d: Differential, _ sql: String, file: StaticString = #filePath, line: UInt = #line) {
        XCTAssertThrowsError(try d.oracle.execute(sql), "SQLite: \(sql)", file: file, line: line) {
            XCTAssertTrue("\($0)".contains("integer overflow"), "SQLite: \($0)", file: file, line: line)
        }
        XCTAssertThrowsError(try d.database.execute(sql), "ours: \(sql)", file: file, line: line) {
            XCTAssertTrue("\($0)".contains("integer overflow"), "ours: \($0)", file: file, line: line)
        }
    }

    /// Rows equal value for value, reals bit for bit (so -0.0 differs from 0.0).
    private func checkBits(_ d: Differential, _ sql: String, file: StaticString = #filePath, line: UInt = #line) throws {
        let expected = try d.oracle.execute(sql), actual = try d.database.execute(sql).rows
        XCTAssertEqual(actual, expected, sql, file: file, line: line)
        for (e, a) in zip(expected.joined(), actual.joined()) {
            if case .real(let x) = e, case .real(let y) = a {
                XCTAssertEqual(y.bitPattern, x.bitPattern, "\(sql): SQLite \(x), ours \(y)", file: file, line: line)
            }
        }
    }

    /// `x IS [NOT] TRUE | FALSE` are SQLite's truth tests (`2 IS TRUE` is 1), not `x IS 1`;
    /// TRUE and FALSE elsewhere stay 1 and 0 (an app-style SQL audit found `2 IS TRUE` gave 0).
    func testIsTrueAndIsFalseTestTruth() throws {
        let d = try Differential()
        d.check("CREATE TABLE v (x)")
        d.check("INSERT INTO v VALUES (NULL), (0), (1), (2), (0.5), (-1), (0.0), ('1'), ('abc'), ('0.0'), ('2x'), (''), (x'01')")
        d.check("SELECT x, x IS TRUE, x IS NOT TRUE, x IS FALSE, x IS NOT FALSE, x IS 1, x = TRUE FROM v ORDER BY rowid")
        d.check("SELECT count(*) FROM v WHERE x IS TRUE")
        d.check("SELECT count(*) FROM v WHERE NOT x IS FALSE AND x IS NOT NULL")
        d.check("SELECT TRUE IS TRUE, FALSE IS FALSE, NULL IS TRUE, NULL IS NOT FALSE, 1 + 1 IS TRUE, (1 IS TRUE) + 1")
    }

    /// `FROM (VALUES ...)`: a VALUES list as a FROM item, its columns `column1`, `column2`, ...
    /// Row values compared with row values (keyset paging: `(sent_at, id) < (?, ?)`), with
    /// SQLite's NULL rules and each pair's own affinity, and `UPDATE ... SET (a, b) = (x, y)`.
    func testRowValueComparisons() throws {
        let d = try Differential()
        d.check("CREATE TABLE m (id INTEGER PRIMARY KEY, conv INTEGER, sent_at INTEGER, body TEXT, n)")
        d.check("CREATE INDEX m_conv_sent ON m (conv, sent_at, id)")
        for i in 1 ... 60 {
            let sent = i % 7 == 0 ? "NULL" : "\(1_700_000_000 + (i * 37) % 23)"
            d.check("INSERT INTO m (conv, sent_at, body, n) VALUES (\(i % 3), \(sent), 'b\(i)', \(i % 5 == 0 ? "'12'" : "\(i % 4)"))")
        }
        for op in ["=", "==", "<>", "!=", "<", "<=", ">", ">=", "IS", "IS NOT", "IS DISTINCT FROM", "IS NOT DISTINCT FROM"] {
            d.check("SELECT id FROM m WHERE (sent_at, id) \(op) (1700000010, 30) ORDER BY id")
            d.check("SELECT id, (conv, sent_at, n) \(op) (1, 1700000010, 2) FROM m ORDER BY id")
            d.check("SELECT (1, NULL) \(op) (1, NULL), (1, NULL) \(op) (2, NULL), (NULL, 1) \(op) (1, 2), (1, 'a') \(op) (1, 'b')")
        }
        // Keyset paging, the shape a chat inbox sends, with bound parameters.
        let page = d.check("SELECT id FROM m WHERE conv = ? AND (sent_at, id) < (?, ?) ORDER BY sent_at DESC, id DESC LIMIT 5",
                           [.integer(1), .integer(1_700_000_015), .integer(40)])
        XCTAssertEqual(page?.count, 5, "both engines answered")
        // Each pair with its own affinity: n (no affinity) against '12' and 12.
        d.check("SELECT id FROM m WHERE (conv, n) = (0, '12') ORDER BY id")
        d.check("SELECT id FROM m WHERE (conv, n) = (0, 12) ORDER BY id")
        d.check("SELECT id FROM m WHERE (body, conv) >= ('b5', 2) ORDER BY id")
        d.check("UPDATE m SET (body, n) = ('moved', n + 1) WHERE (conv, id) <= (1, 10)")
        d.check("UPDATE m SET (n) = (7), body = body || '!' WHERE id = 3")
        XCTAssertEqual(d.check("SELECT id, body, n FROM m ORDER BY id")?.count, 60, "both engines answered")
        // conv 0's 20 rows and conv 1's ids 1, 4, 7, 10 moved; id 3 (conv 0) renamed after.
        XCTAssertEqual(d.check("SELECT count(*) FROM m WHERE body = 'moved'"), [[.integer(23)]])
        // Different sizes: both refuse ("row value misused").
        d.check("SELECT (1, 2) = (1, 2, 3)")
        XCTAssertThrowsError(try d.database.execute("UPDATE m SET (body, n) = ('x')"))
        // A row value anywhere else is refused, not misread.
        XCTAssertThrowsError(try d.database.execute("SELECT (1, 2)")) { error in
            guard case DAOError.unsupported = error else { return XCTFail("\(error)") }
        }
        XCTAssertThrowsError(try d.database.execute("SELECT (id, conv) IN (SELECT id, conv FROM m) FROM m"))
    }

    func testValuesListInFrom() throws {
        let d = try Differential()
        d.check("SELECT * FROM (VALUES (1, 'one'), (2, 'two')) ORDER BY 1 DESC")
        d.check("SELECT column1, column2 FROM (VALUES (1, 'a'), (3, NULL)) AS v WHERE column1 > 1")
        d.check("SELECT v.column2 FROM (VALUES (1, 'x')) v JOIN (SELECT 1 AS k) ON k = v.column1")
        d.check("SELECT count(*), sum(column1) FROM (VALUES (1), (2), (3) UNION ALL SELECT 4)")
        XCTAssertEqual(try d.database.execute("SELECT * FROM (VALUES (1, 2))").columns, try d.oracle.run("SELECT * FROM (VALUES (1, 2))").columns)
    }

    /// `main.` before a table, index, view or trigger name, and before a column's table: the one
    /// schema a store has. Other schemas are refused.
    func testMainSchemaQualifiedNames() throws {
        let d = try Differential()
        for sql in ["CREATE TABLE main.t (a INTEGER PRIMARY KEY, b)", "CREATE INDEX IF NOT EXISTS main.tb ON t (b)",
                    "INSERT INTO main.t (b) VALUES ('x'), ('y')", "SELECT main.t.b, t.a FROM main.t WHERE main.t.a > 1",
                    "UPDATE main.t SET b = 'z' WHERE a = 1", "DELETE FROM main.t WHERE a = 2", "SELECT * FROM main.t",
                    "ALTER TABLE main.t ADD COLUMN c", "CREATE VIEW main.v AS SELECT b FROM t", "SELECT * FROM main.v",
                    "SELECT name FROM main.sqlite_master WHERE type = 'table'", "DROP VIEW main.v", "DROP INDEX main.tb",
                    "DROP TABLE main.t", "SELECT count(*) FROM sqlite_master"] {
            d.check(sql)
        }
        XCTAssertThrowsError(try d.database.execute("SELECT * FROM aux.t")) { error in
            guard case DAOError.unsupported = error else { return XCTFail("\(error)") }
        }
    }

    /// `ORDER BY ... NULLS FIRST | NULLS LAST` (SQLite 3.30+), with and without an index on the
    /// term, on aliases and grouped columns.
    func testNullsFirstAndLast() throws {
        let d = try Differential()
        for sql in ["CREATE TABLE t (a, b)", "CREATE INDEX ta ON t (a)",
                    "INSERT INTO t VALUES (1, 'x'), (NULL, 'y'), (3, NULL), (2, 'z'), (NULL, 'w')",
                    "SELECT a, b FROM t ORDER BY a NULLS LAST, b",
                    "SELECT a, b FROM t ORDER BY a ASC NULLS FIRST, b",
                    "SELECT a, b FROM t ORDER BY a DESC NULLS FIRST, b DESC NULLS LAST",
                    "SELECT a, b FROM t ORDER BY a DESC NULLS LAST, b NULLS LAST",
                    "SELECT a AS x FROM t ORDER BY x NULLS LAST LIMIT 3",
                    "SELECT a FROM t WHERE a > 0 ORDER BY a NULLS LAST",
                    "SELECT b, count(*) FROM t GROUP BY b ORDER BY b NULLS LAST"] {
            d.check(sql)
        }
        XCTAssertThrowsError(try d.database.execute("SELECT a FROM t ORDER BY 1 NULLS LAST")) { error in
            guard case DAOError.unsupported = error else { return XCTFail("\(error)") }
        }
    }

    /// Aggregate `FILTER (WHERE ...)` on every aggregate, grouped and not; refused on a
    /// scalar function with SQLite's message.
    func testAggregateFilter() throws {
        let d = try Differential()
        for sql in ["CREATE TABLE t (g, a, b)",
                    "INSERT INTO t VALUES (1, 1, 'x'), (1, NULL, 'y'), (1, 3, NULL), (2, 2, 'z'), (2, 5, 'w'), (3, NULL, NULL)",
                    "SELECT g, count(*) FILTER (WHERE a > 1), count(a) FILTER (WHERE b IS NOT NULL), sum(a) FILTER (WHERE a < 3), "
                        + "total(a) FILTER (WHERE 0), avg(a) FILTER (WHERE b > 'x'), max(a) FILTER (WHERE b IS NULL), "
                        + "group_concat(b, '-') FILTER (WHERE a IS NOT NULL), count(DISTINCT g) FILTER (WHERE a > 0) FROM t GROUP BY g ORDER BY g",
                    "SELECT count(*) FILTER (WHERE a IS NULL), min(b) FILTER (WHERE g = 2) FROM t",
                    "SELECT g FROM t GROUP BY g HAVING count(*) FILTER (WHERE a IS NOT NULL) > 1",
                    "SELECT abs(a) FILTER (WHERE a > 0) FROM t"] {
            d.check(sql)
        }
    }

    /// COLLATE BINARY anywhere; `ORDER BY x COLLATE NOCASE | RTRIM` (Room's usual DAO shape),
    /// on a BINARY column with a BINARY index. (CollationTests covers the other collations.)
    func testCollationsInOrderBy() throws {
        let d = try Differential()
        for sql in ["CREATE TABLE t (id INTEGER PRIMARY KEY, name TEXT COLLATE BINARY, v)",
                    "CREATE INDEX tn ON t (name COLLATE BINARY DESC)",
                    "INSERT INTO t (name, v) VALUES ('bob', 1), ('Ann', 2), ('carl', 3), ('ALF', 4), (NULL, 5), (10, 6), ('ann  ', 7), ('Bob', 8), (x'41', 9)",
                    "SELECT name FROM t ORDER BY name COLLATE NOCASE, id",
                    "SELECT name FROM t ORDER BY name COLLATE nocase DESC, id",
                    "SELECT name AS n FROM t ORDER BY n COLLATE RTRIM, id",
                    "SELECT name FROM t WHERE v > 2 ORDER BY name COLLATE NOCASE ASC, id LIMIT 3",
                    "SELECT name FROM t ORDER BY name COLLATE BINARY, id",
                    "SELECT name FROM t WHERE name = 'Ann' COLLATE BINARY",
                    "SELECT name, count(*) FROM t GROUP BY name ORDER BY name COLLATE NOCASE, name",
                    "SELECT name FROM t ORDER BY name COLLATE xyz"] {
            d.check(sql)
        }
    }

    /// `UPDATE ... FROM` (SQLite 3.33+) over a table, an aliased table, a join and a subquery;
    /// the same rows and change counts as SQLite. Several matching rows with different values
    /// (SQLite takes any one) are refused, not answered with another one.
    func testUpdateFrom() throws {
        let d = try Differential()
        for sql in ["CREATE TABLE inventory (id INTEGER PRIMARY KEY, item TEXT, qty INTEGER, note TEXT)",
                    "CREATE TABLE sales (item TEXT, sold INTEGER)", "CREATE TABLE daily (item TEXT, total INTEGER)",
                    "INSERT INTO inventory (item, qty) VALUES ('a', 10), ('b', 20), ('c', 30), ('d', 40)",
                    "INSERT INTO sales VALUES ('a', 3), ('b', 5), ('x', 9)", "INSERT INTO daily VALUES ('a', 1), ('c', 2)"] {
            d.check(sql)
        }
        for sql in ["UPDATE inventory SET qty = qty - sales.sold, note = 'sold ' || sales.sold FROM sales WHERE sales.item = inventory.item",
                    "UPDATE inventory SET qty = qty + d.total FROM daily AS d WHERE d.item = inventory.item AND inventory.qty > 10",
                    "UPDATE inventory SET note = s.item || '/' || d.item FROM sales s JOIN daily d ON d.item = s.item WHERE s.item = inventory.item",
                    "UPDATE inventory SET qty = 0 FROM (SELECT item FROM sales WHERE sold > 4) AS big WHERE big.item = inventory.item"] {
            XCTAssertEqual(try d.database.execute(sql).changes, try d.oracle.run(sql).changes, sql)
            d.check("SELECT * FROM inventory ORDER BY id")
        }
        d.check("INSERT INTO sales VALUES ('a', 100)")
        XCTAssertThrowsError(try d.database.execute("UPDATE inventory SET qty = sales.sold FROM sales WHERE sales.item = inventory.item"))
        d.check("SELECT * FROM inventory ORDER BY id")
    }

    // MARK: Issue 25, item 2: LIMIT 0 and rows outside LIMIT/OFFSET are not evaluated

    func testLimitZeroEvaluatesNothing() throws {
        let d = try Differential()
        d.run(["CREATE TABLE t(e)", "INSERT INTO t VALUES (-9223372036854775808)"])
        for sql in ["SELECT abs(e) FROM t LIMIT 0", "SELECT abs(e) FROM t ORDER BY e LIMIT 0",
                    "SELECT e FROM t ORDER BY abs(e) LIMIT 0", "SELECT abs(e) FROM t WHERE abs(e) > 0 LIMIT 0",
                    "SELECT sum(abs(e)) FROM t LIMIT 0", "SELECT e, abs(e) FROM t GROUP BY e LIMIT 0",
                    "SELECT DISTINCT abs(e) FROM t LIMIT 0", "SELECT abs(e) FROM t LIMIT 0 OFFSET abs(-9223372036854775808)",
                    "SELECT abs(-9223372036854775808) LIMIT 0"] {
            XCTAssertEqual(d.check(sql), [], sql)
        }
    }

    func testRowsSkippedByOffsetOrCutByLimitAreNotEvaluated() throws {
        let d = try Differential()
        d.run(["CREATE TABLE t(e)", "INSERT INTO t VALUES (1), (-9223372036854775808), (2)"])
        XCTAssertEqual(d.check("SELECT abs(e) FROM t LIMIT 1"), [[1]])
        XCTAssertEqual(d.check("SELECT abs(e) FROM t LIMIT 1 OFFSET 2"), [[2]])
        XCTAssertEqual(d.check("SELECT abs(e) FROM t LIMIT 5 OFFSET 3"), [])
        XCTAssertEqual(d.check("SELECT abs(e) FROM t ORDER BY e DESC LIMIT 1"), [[2]])
        XCTAssertEqual(d.check("SELECT abs(e) FROM t ORDER BY e + 0 DESC LIMIT 1"), [[2]])
        XCTAssertEqual(d.check("SELECT abs(-9223372036854775808) LIMIT 1 OFFSET 1"), [])
        XCTAssertEqual(d.check("SELECT e, abs(e) FROM t GROUP BY e ORDER BY e DESC LIMIT 2"), [[2, 2], [1, 1]])
        // Rows returned, an ORDER BY key of every row, DISTINCT and aggregates are evaluated.
        checkOverflow(d, "SELECT abs(e) FROM t LIMIT 1 OFFSET 1")
        checkOverflow(d, "SELECT e FROM t ORDER BY abs(e) LIMIT 1")
        checkOverflow(d, "SELECT DISTINCT abs(e) FROM t LIMIT 1 OFFSET 2")
        checkOverflow(d, "SELECT sum(abs(e)) FROM t LIMIT 1 OFFSET 1")
        checkOverflow(d, "SELECT abs(e) FROM t ORDER BY e LIMIT -1 OFFSET 1")
    }

    // MARK: Issue 25, item 3: sum()'s type follows its inputs

    func testSumOfAnIntegerABlobAndANumericText() throws {
        let d = try Differential()
        d.run(["CREATE TABLE t(a)", "INSERT INTO t VALUES (1), (x'37'), ('5')"])
        XCTAssertEqual(d.check("SELECT sum(a), typeof(sum(a)) FROM t"), [[13.0, "real"]])
        // A text spelling a real is a real even when its value is integral; one too large for
        // 64 bits too; an integer spelled with spaces is an integer.
        d.run(["DELETE FROM t", "INSERT INTO t VALUES ('1e3'), (1), (' 12 '), ('-0')"])
        XCTAssertEqual(d.check("SELECT sum(a), typeof(sum(a)) FROM t WHERE a <> '1e3'"), [[13, "integer"]])
        XCTAssertEqual(d.check("SELECT sum(a), typeof(sum(a)) FROM t"), [[1013.0, "real"]])
        d.run(["DELETE FROM t", "INSERT INTO t VALUES ('9223372036854775808'), (1)"])
        XCTAssertEqual(d.check("SELECT sum(a), typeof(sum(a)) FROM t"), [[9.223372036854775808e18, "real"]])
    }

    /// sum, total, avg, min and max over every non-empty mix of integer, real, text (numeric
    /// and not), blob and NULL.
    func testAggregatesOverEveryMixOfStorageClasses() throws {
        let d = try Differential()
        let literals = ["3", "-2", "2.5", "'5'", "' 7 '", "'1.5'", "'1e3'", "'12abc'", "'abc'", "x'37'", "x'3132'", "x''", "NULL"]
        d.run(["CREATE TABLE t(g, a)"])
        var inserts: [String] = []
        for mask in 1..<(1 << literals.count) where mask.nonzeroBitCount <= 4 {
            for (bit, literal) in literals.enumerated() where mask & (1 << bit) != 0 { inserts.append("(\(mask), \(literal))") }
        }
        d.run(["INSERT INTO t VALUES " + inserts.joined(separator: ", ")])
        d.check("SELECT g, sum(a), typeof(sum(a)), total(a), avg(a), min(a), max(a), count(a) FROM t GROUP BY g ORDER BY g")
        d.check("SELECT sum(a), typeof(sum(a)), total(a), avg(a), min(a), max(a) FROM t")
    }

    // MARK: Issue 17, item 4

    func testRealColumnStoresNegativeZeroAsZeroAndAnUntypedColumnKeepsIt() throws {
        let d = try Differential()
        d.run(["CREATE TABLE t(c REAL, n, i INTEGER, x NUMERIC, s TEXT)",
               "INSERT INTO t VALUES (-0.0, -0.0, -0.0, -0.0, -0.0)",
               "INSERT INTO t VALUES ('-0.0', '-0.0', '-0.0', '-0.0', '-0.0')",
               "INSERT INTO t VALUES (-0.5 * 0, 0.0 * -1, 1, 1, 1)",
               "UPDATE t SET c = -0.0 WHERE i = 1"])
        try checkBits(d, "SELECT c, n, i, x, s, typeof(c), typeof(n) FROM t ORDER BY rowid")
        try checkBits(d, "SELECT c, -c, c * 1, n FROM t WHERE c = 0 ORDER BY rowid")
    }

    /// sum, total and avg in every order of two integers that overflow together, a real and a
    /// NULL: sum() fails when the integers overflow before the real arrives, as in SQLite.
    func testSumTotalAvgInEveryOrderOfIntegersRealsAndOverflow() throws {
        guard KnownVersionDifference.oracleVersion < KnownVersionDifference.kahanSummationVersion else {
            throw XCTSkip("the linked SQLite (\(KnownVersionDifference.oracleVersion)) sums as 3.43+; this project follows 3.40 (README, SQL)")
        }
        let sets: [[String]] = [["9223372036854775807", "1", "-1.5", "NULL"],
                                ["-9223372036854775808", "-1", "0.5", "NULL"],
                                ["9223372036854775807", "9223372036854775807", "'2.5'", "-9223372036854775807"],
                                ["9223372036854775807", "1", "x'31'", "-5"],
                                ["4611686018427387904", "4611686018427387904", "-1", "1.0"]]
        for values in sets {
            for order in permutations(values) {
                let d = try Differential()
                d.run(["CREATE TABLE s(a)"] + order.map { "INSERT INTO s VALUES (\($0))" })
                let sql = "SELECT sum(a) FROM s"
                let expected = Result { try d.oracle.execute(sql) }
                if case .failure = expected { checkOverflow(d, sql) } else { d.check(sql) }
                d.check("SELECT total(a), avg(a), count(a) FROM s")
            }
        }
    }

    /// Issue 25, item 4: against SQLite 3.43+, sums that differ only in reals (or in 3.40's
    /// overflow rule) are the documented version difference; against 3.40 nothing is excused.
    func testSummationIsTheOnlyKnownVersionDifference() {
        let newer = 3_045_001, older = 3_040_001
        let avg = "SELECT avg(a) FROM t"
        XCTAssertTrue(KnownVersionDifference.summation(.rows([[0.0]]), .rows([[-6.666666666666667]]), sql: avg, oracleVersion: newer))
        XCTAssertFalse(KnownVersionDifference.summation(.rows([[0.0]]), .rows([[-6.666666666666667]]), sql: avg, oracleVersion: older))
        XCTAssertTrue(KnownVersionDifference.summation(.rows([[9.223372036854776e18]]), .failed("integer overflow"),
                                                       sql: "SELECT sum(a) FROM s", oracleVersion: newer))
        XCTAssertFalse(KnownVersionDifference.summation(.rows([[1]]), .rows([[2]]), sql: "SELECT sum(a) FROM t", oracleVersion: newer),
                       "integers are no summation difference")
        XCTAssertFalse(KnownVersionDifference.summation(.rows([[0.5]]), .rows([[1.5]]), sql: "SELECT a FROM t", oracleVersion: newer),
                       "no sum, no excuse")
    }

    /// Issue 25, item 4's example: plain double addition, as SQLite 3.40 (the oracle) does.
    func testAverageOfLargeIntegersFollowsSQLite340() throws {
        guard KnownVersionDifference.oracleVersion < KnownVersionDifference.kahanSummationVersion else {
            throw XCTSkip("the linked SQLite sums as 3.43+ (README, SQL)")
        }
        let d = try Differential()
        d.run(["CREATE TABLE t(a)", "INSERT INTO t VALUES (-9200000000000000000), (-20), (9200000000000000000)"])
        XCTAssertEqual(d.check("SELECT avg(a), total(a), sum(a) FROM t"), [[0.0, 0.0, -20]])
        d.check("SELECT avg(a * 1.0), total(a * 1.0), sum(a * 1.0) FROM t")
    }

    private func permutations(_ items: [String]) -> [[String]] {
        guard items.count > 1 else { return [items] }
        return items.indices.flatMap { i -> [[String]] in
            var rest = items
            let first = rest.remove(at: i)
            return permutations(rest).map { [first] + $0 }
        }
    }
}

/// `ON CONFLICT` clauses on PRIMARY KEY, UNIQUE and NOT NULL constraints (Android's
/// `UNIQUE (...) ON CONFLICT REPLACE`): used by INSERT and UPDATE without an OR clause, in
/// SQLite's order when several constraints clash; kept in the catalog across a reopen.
final class ConstraintConflictClauseTests: XCTestCase {
    private let tables = [
        "CREATE TABLE q (id INTEGER PRIMARY KEY, entity TEXT NOT NULL, entity_id INTEGER NOT NULL, op TEXT, UNIQUE (entity, entity_id) ON CONFLICT REPLACE)",
        "CREATE TABLE c (id INTEGER PRIMARY KEY ON CONFLICT REPLACE, u TEXT UNIQUE, v TEXT UNIQUE ON CONFLICT IGNORE, w TEXT NOT NULL ON CONFLICT IGNORE)",
        "CREATE TABLE d (a TEXT PRIMARY KEY ON CONFLICT IGNORE, b INTEGER NOT NULL ON CONFLICT REPLACE DEFAULT 7, c TEXT UNIQUE ON CONFLICT FAIL)",
        "CREATE TABLE r (k INTEGER, s TEXT, t TEXT UNIQUE ON CONFLICT REPLACE, PRIMARY KEY (k, s) ON CONFLICT REPLACE)",
    ]

    private let statements = [
        "INSERT INTO q (entity, entity_id, op) VALUES ('note', 1, 'insert')",
        "INSERT INTO q (entity, entity_id, op) VALUES ('note', 1, 'update')",
        "INSERT INTO q (entity, entity_id, op) VALUES ('note', 2, 'insert'), ('note', 1, 'delete')",
        "INSERT OR ABORT INTO q (entity, entity_id, op) VALUES ('note', 2, 'abort')",
        "INSERT OR IGNORE INTO q (entity, entity_id, op) VALUES ('note', 2, 'ignored')",
        "UPDATE q SET entity_id = 2 WHERE op = 'delete'",
        "INSERT INTO q (entity, entity_id, op) VALUES (NULL, 3, 'null entity')",
        "INSERT INTO c VALUES (1, 'a', 'x', 'w1')",
        "INSERT INTO c VALUES (1, 'b', 'y', 'w2')",
        "INSERT INTO c VALUES (2, 'b', 'z', 'w3')",
        "INSERT INTO c VALUES (3, 'c', 'y', 'w4')",
        "INSERT INTO c VALUES (4, 'd', 'q', NULL)",
        "INSERT INTO c VALUES (2, 'e', 'r', 'w5')",
        "INSERT INTO c VALUES (5, 'e', 'r', 'w6')",
        "INSERT INTO c VALUES (5, 'e', 'r', 'w7')",
        "INSERT INTO c VALUES (6, 'b', 'y', 'w8')",
        "UPDATE c SET v = 'y' WHERE id = 5",
        "UPDATE c SET id = 1 WHERE id = 5",
        "INSERT INTO d VALUES ('k', 1, 'c1')",
        "INSERT INTO d VALUES ('k', 2, 'c2')",
        "INSERT INTO d VALUES ('m', NULL, 'c3')",
        "INSERT INTO d VALUES ('n', 3, 'c1')",
        "INSERT OR REPLACE INTO d VALUES ('n', 3, 'c1')",
        "UPDATE d SET b = NULL WHERE a = 'k'",
        "INSERT INTO r VALUES (1, 'a', 't1')",
        "INSERT INTO r VALUES (1, 'a', 't2')",
        "INSERT INTO r VALUES (2, 'b', 't2')",
        "INSERT INTO r VALUES (3, 'c', 't2'), (4, 'd', 't3')",
        "UPDATE r SET k = 4, s = 'd' WHERE t = 't2'",
        // An upsert's target takes its own path; the other constraints keep their clauses.
        "INSERT INTO q (entity, entity_id, op) VALUES ('note', 2, 'upsert') ON CONFLICT (entity, entity_id) DO UPDATE SET op = 'upserted'",
        "INSERT INTO c VALUES (9, 'a', 'zz', 'w9') ON CONFLICT DO NOTHING",
        "INSERT INTO c VALUES (10, 'new', 'y', 'w10') ON CONFLICT (u) DO NOTHING",
        "UPDATE OR ABORT c SET v = 'y' WHERE id = 10",
        "UPDATE OR REPLACE d SET c = 'c1' WHERE a = 'm'",
        "ALTER TABLE c ADD COLUMN extra TEXT NOT NULL ON CONFLICT REPLACE DEFAULT 'dflt'",
        "INSERT INTO c VALUES (11, 'f', 's', 'w11', NULL)",
    ]

    private func checkAll(_ d: Differential) {
        for sql in tables { d.check(sql) }
        for sql in statements {
            d.check(sql)
            for table in ["q", "c", "d", "r"] { d.check("SELECT rowid, * FROM \(table) ORDER BY rowid") }
        }
    }

    func testConflictClausesResolveAsSQLite() throws {
        let d = try Differential()
        checkAll(d)
        XCTAssertEqual(d.check("SELECT count(*) FROM q"), [[.integer(1)]], "both engines answered (the UPDATE replaced a row)")
        // The catalog keeps the clauses: PRAGMA-visible through sqlite_master's canonical text.
        let sql = try d.database.execute("SELECT sql FROM sqlite_master WHERE name = 'c'").rows
        XCTAssertEqual(sql, [[.text("CREATE TABLE \"c\" (\"id\" INTEGER PRIMARY KEY ON CONFLICT REPLACE, \"u\" TEXT UNIQUE, \"v\" TEXT UNIQUE ON CONFLICT IGNORE, \"w\" TEXT NOT NULL ON CONFLICT IGNORE, \"extra\" TEXT NOT NULL ON CONFLICT REPLACE DEFAULT 'dflt')")]])
    }

    func testClausesSurviveAReopen() throws {
        let temporary = try TemporaryStore()
        var db = try temporary.database
        for sql in tables { try db.execute(sql) }
        try db.execute("INSERT INTO q (entity, entity_id, op) VALUES ('note', 1, 'insert')")
        try temporary.reopen()
        db = try temporary.database
        try db.execute("INSERT INTO q (entity, entity_id, op) VALUES ('note', 1, 'update')")
        XCTAssertEqual(try db.execute("SELECT entity, entity_id, op FROM q").rows, [[.text("note"), .integer(1), .text("update")]])
        try db.execute("INSERT INTO c VALUES (1, 'a', 'x', 'w1')")
        try db.execute("INSERT INTO c VALUES (1, 'b', 'y', NULL)")   // NOT NULL ON CONFLICT IGNORE: skipped
        XCTAssertEqual(try db.execute("SELECT * FROM c").rows, [[.integer(1), .text("a"), .text("x"), .text("w1")]])
    }
}
