@testable import DAO
import XCTest

/// Window functions (`f(...) OVER (...)`, https://www.sqlite.org/windowfunctions.html) against
/// SQLite 3.40 through the oracle: every built-in window function, aggregates over frames of
/// each unit, boundary and exclusion, named windows, the rewrite's places (GROUP BY, DISTINCT,
/// ORDER BY, LIMIT, `*`, joins, views, WITH, compound selects, subqueries), the order rows come
/// out in without ORDER BY, and SQLite's errors word for word.
final class WindowFunctionTests: XCTestCase {
    /// Ties in every key, NULLs, texts and reals, mixed in one column (`m`).
    private func table(_ d: Differential) {
        d.run([
            "CREATE TABLE t (id INTEGER PRIMARY KEY, g TEXT, k INTEGER, v REAL, s TEXT, m)",
            "INSERT INTO t VALUES (1, 'a', 3, 1.5, 'x', 1)",
            "INSERT INTO t VALUES (2, 'b', 1, 2.0, 'y', 'one')",
            "INSERT INTO t VALUES (3, 'a', 3, NULL, 'X', 2.5)",
            "INSERT INTO t VALUES (4, NULL, 2, -1.0, NULL, NULL)",
            "INSERT INTO t VALUES (5, 'b', NULL, 4.25, 'z', 3)",
            "INSERT INTO t VALUES (6, 'a', 7, 0.0, 'x', 'one')",
            "INSERT INTO t VALUES (7, 'c', 2, 9.0, 'w', x'01')",
            "INSERT INTO t VALUES (8, 'b', 1, 2.0, 'Y', 1)",
            "INSERT INTO t VALUES (9, NULL, NULL, NULL, NULL, NULL)",
            "INSERT INTO t VALUES (10, 'a', 5, 3.5, 'v', 2)",
        ])
    }

    /// The engine's outcome (rows or error message) equals SQLite's, rows in order.
    private func same(_ d: Differential, _ sql: String, _ arguments: [DAOValue] = [], file: StaticString = #filePath, line: UInt = #line) {
        let expected = statementOutcome { try d.oracle.execute(sql, arguments: arguments) }
        let actual = statementOutcome {
            do { return try d.database.execute(sql, arguments: arguments).rows } catch DAOError.syntax(let message, _, _) {
                throw SQLExecutionError(message)
            }
        }
        XCTAssertEqual(actual, expected, sql, file: file, line: line)
    }

    func testRankingFunctions() throws {
        let d = try Differential()
        table(d)
        for window in ["ORDER BY k", "ORDER BY k DESC", "PARTITION BY g ORDER BY k", "PARTITION BY g ORDER BY k DESC, v",
                       "ORDER BY k NULLS LAST", "ORDER BY k DESC NULLS FIRST", "PARTITION BY g", "", "ORDER BY m",
                       "PARTITION BY k % 2 ORDER BY s COLLATE NOCASE"] {
            same(d, "SELECT id, row_number() OVER (\(window)), rank() OVER (\(window)), dense_rank() OVER (\(window)) FROM t ORDER BY id")
            same(d, "SELECT id, percent_rank() OVER (\(window)), cume_dist() OVER (\(window)) FROM t ORDER BY id")
            for n in [1, 2, 3, 4, 11] {
                same(d, "SELECT id, ntile(\(n)) OVER (\(window)) FROM t ORDER BY id")
            }
        }
        same(d, "SELECT id, ntile('3') OVER (ORDER BY id), ntile(2.7) OVER (ORDER BY id) FROM t")
        same(d, "SELECT id, ntile(k) OVER (ORDER BY id) FROM t")   // the partition's first row decides
        same(d, "SELECT ntile(0) OVER () FROM t")
        same(d, "SELECT ntile(NULL) OVER () FROM t")
        same(d, "SELECT ntile(-2) OVER () FROM t")
    }

    func testLagAndLead() throws {
        let d = try Differential()
        table(d)
        for call in ["lag(v)", "lead(v)", "lag(s, 2)", "lead(s, 3, 'none')", "lag(v, 0)", "lag(v, -1)", "lead(v, -2, k)",
                     "lag(v, 1.5)", "lag(v, 2.0)", "lag(v, '1')", "lag(v, 'x')", "lag(v, NULL, 99)", "lead(id, k)",
                     "lag(id, 100, -1)", "lead(m, 1, m)"] {
            same(d, "SELECT id, \(call) OVER (ORDER BY id) FROM t")
            same(d, "SELECT id, \(call) OVER (PARTITION BY g ORDER BY k, id) FROM t ORDER BY id")
        }
        same(d, "SELECT lag() OVER () FROM t")
        same(d, "SELECT lead(v, 1, 2, 3) OVER () FROM t")
    }

    /// first_value, last_value, nth_value and every aggregate over frames of each unit.
    func testFrames() throws {
        let d = try Differential()
        table(d)
        let frames = [
            "", "ROWS UNBOUNDED PRECEDING", "ROWS 2 PRECEDING", "ROWS BETWEEN 1 PRECEDING AND 1 FOLLOWING",
            "ROWS BETWEEN CURRENT ROW AND UNBOUNDED FOLLOWING", "ROWS BETWEEN 2 FOLLOWING AND 3 FOLLOWING",
            "ROWS BETWEEN 3 PRECEDING AND 1 PRECEDING", "ROWS BETWEEN 2 FOLLOWING AND 1 FOLLOWING",
            "ROWS BETWEEN UNBOUNDED PRECEDING AND UNBOUNDED FOLLOWING EXCLUDE CURRENT ROW",
            "RANGE BETWEEN 1 PRECEDING AND 1 FOLLOWING", "RANGE BETWEEN 2 PRECEDING AND CURRENT ROW EXCLUDE TIES",
            "RANGE BETWEEN CURRENT ROW AND 1.5 FOLLOWING", "RANGE BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING",
            "RANGE CURRENT ROW EXCLUDE GROUP", "RANGE BETWEEN 0 PRECEDING AND 0 FOLLOWING",
            "GROUPS BETWEEN 1 PRECEDING AND 1 FOLLOWING", "GROUPS 1 PRECEDING EXCLUDE GROUP",
            "GROUPS BETWEEN CURRENT ROW AND 2 FOLLOWING EXCLUDE TIES", "GROUPS BETWEEN 2 PRECEDING AND 1 PRECEDING",
            "ROWS BETWEEN 9223372036854775807 PRECEDING AND 9223372036854775807 FOLLOWING",
            "GROUPS BETWEEN 9223372036854775807 PRECEDING AND 9223372036854775807 FOLLOWING",
        ]
        let calls = ["first_value(s)", "last_value(s)", "nth_value(s, 2)", "count(*)", "count(v)", "sum(k)", "total(v)",
                     "avg(v)", "min(s)", "max(m)", "group_concat(id)", "group_concat(s, '|')"]
        for order in ["ORDER BY k", "ORDER BY k DESC", "PARTITION BY g ORDER BY k NULLS LAST", "ORDER BY v DESC NULLS FIRST"] {
            for frame in frames {
                let list = calls.map { "\($0) OVER (\(order) \(frame))" }.joined(separator: ", ")
                same(d, "SELECT id, \(list) FROM t ORDER BY id")
            }
        }
        // RANGE offsets on a column of mixed types: a text, blob or NULL key is its own frame.
        for frame in ["RANGE BETWEEN 1 PRECEDING AND 1 FOLLOWING", "RANGE BETWEEN 0.5 PRECEDING AND CURRENT ROW",
                      "RANGE BETWEEN CURRENT ROW AND 2 FOLLOWING"] {
            same(d, "SELECT id, count(*) OVER (ORDER BY m \(frame)), group_concat(id) OVER (ORDER BY m DESC \(frame)) FROM t ORDER BY id")
        }
        // Offsets from parameters and texts.
        same(d, "SELECT id, sum(k) OVER (ORDER BY id ROWS BETWEEN ? PRECEDING AND ? FOLLOWING) FROM t", [.integer(2), .integer(1)])
        same(d, "SELECT id, sum(k) OVER (ORDER BY id ROWS '1' PRECEDING), sum(k) OVER (ORDER BY id RANGE '1.5' PRECEDING) FROM t")
        same(d, "SELECT nth_value(s, 2.0) OVER (ORDER BY id), nth_value(s, '3') OVER (ORDER BY id) FROM t")
        // sum() overflows as it does without OVER.
        d.run(["CREATE TABLE big (x INTEGER)", "INSERT INTO big VALUES (9223372036854775807), (1), (-5)"])
        same(d, "SELECT sum(x) OVER (ORDER BY rowid) FROM big")
        same(d, "SELECT sum(x) OVER (ORDER BY rowid ROWS BETWEEN 1 FOLLOWING AND 2 FOLLOWING) FROM big")
        same(d, "SELECT total(x) OVER (), avg(x) OVER () FROM big")
        // A sliding sum takes rows back as SQLite does: once real it stays real, and its
        // rounding is SQLite's.
        d.run(["CREATE TABLE mixed (x)", "INSERT INTO mixed VALUES (1), (2.5), (3), (4), (0.1), (0.2), (7), (0.3), ('5'), (NULL), (1e16), (1)"])
        for frame in ["ROWS 1 PRECEDING", "ROWS BETWEEN 1 PRECEDING AND 1 FOLLOWING", "ROWS BETWEEN 1 FOLLOWING AND 2 FOLLOWING",
                      "ROWS BETWEEN 3 PRECEDING AND 1 PRECEDING", "RANGE BETWEEN 1 PRECEDING AND 1 FOLLOWING",
                      "GROUPS BETWEEN 1 PRECEDING AND CURRENT ROW", "ROWS BETWEEN CURRENT ROW AND 2 FOLLOWING"] {
            let calls = ["sum(x)", "total(x)", "avg(x)", "count(x)", "count(*)"].map { "\($0) OVER (ORDER BY rowid \(frame))" }
            same(d, "SELECT rowid, \(calls.joined(separator: ", ")) FROM mixed")
        }
    }

    /// min() and max() over sliding and shrinking frames of a few thousand rows (a queue keeps
    /// their candidates: SQLite's answer without recomputing each frame).
    func testSlidingMinAndMaxOverManyRows() throws {
        let d = try Differential()
        d.run([
            "CREATE TABLE series (id INTEGER PRIMARY KEY, g INTEGER, x, s TEXT COLLATE NOCASE)",
            "CREATE TABLE digits (x INTEGER)",
            "INSERT INTO digits VALUES (0), (1), (2), (3), (4), (5), (6), (7), (8), (9)",
            "INSERT INTO series SELECT i, i % 7, CASE WHEN i % 13 = 0 THEN NULL WHEN i % 5 = 0 THEN (i * 7919) % 1000 + 0.5 ELSE (i * 7919) % 1000 END, "
                + "CASE i % 3 WHEN 0 THEN 'a' || (i % 17) ELSE 'A' || (i % 17) END "
                + "FROM (SELECT a.x * 1000 + b.x * 100 + c.x * 10 + d.x + 1 AS i FROM digits AS a, digits AS b, digits AS c, digits AS d "
                + "WHERE a.x < 3 ORDER BY i)",
        ])
        for frame in ["ROWS BETWEEN 50 PRECEDING AND 10 FOLLOWING", "ROWS BETWEEN CURRENT ROW AND UNBOUNDED FOLLOWING",
                      "ROWS BETWEEN 3 FOLLOWING AND 40 FOLLOWING", "RANGE BETWEEN 100 PRECEDING AND 100 FOLLOWING",
                      "GROUPS BETWEEN 2 PRECEDING AND 1 PRECEDING", ""] {
            same(d, "SELECT id, max(x) OVER (PARTITION BY g ORDER BY id \(frame)), min(x) OVER (ORDER BY id \(frame)) FROM series ORDER BY id")
        }
        same(d, "SELECT id, max(s) OVER (ORDER BY id ROWS BETWEEN 20 PRECEDING AND CURRENT ROW), min(s) OVER (PARTITION BY g ORDER BY id ROWS 5 PRECEDING) FROM series ORDER BY id")
    }

    /// FILTER, and aggregates whose argument is itself an aggregate of a GROUP BY.
    func testAggregatesAndGrouping() throws {
        let d = try Differential()
        table(d)
        same(d, "SELECT id, count(*) FILTER (WHERE k > 2) OVER (ORDER BY id), sum(v) FILTER (WHERE g = 'a') OVER () FROM t")
        same(d, "SELECT g, sum(k), rank() OVER (ORDER BY sum(k) DESC), sum(sum(k)) OVER (ORDER BY g) FROM t GROUP BY g")
        same(d, "SELECT g, count(*) AS n, row_number() OVER (ORDER BY count(*), g) FROM t GROUP BY g HAVING count(*) > 1")
        same(d, "SELECT max(k), row_number() OVER (), count(*) OVER () FROM t")
        same(d, "SELECT sum(count(*)) OVER () FROM t")
        same(d, "SELECT DISTINCT g, count(*) OVER (PARTITION BY g) FROM t")
        same(d, "SELECT DISTINCT k % 2, max(v) OVER (PARTITION BY k % 2) FROM t")
    }

    /// Where the rewritten SELECT keeps the original's meaning: ORDER BY (a window call, an
    /// alias, a position, an expression of both), LIMIT/OFFSET, `*`, names of result columns.
    func testOrderLimitStarAndNames() throws {
        let d = try Differential()
        table(d)
        same(d, "SELECT id, row_number() OVER (ORDER BY v) AS rn FROM t ORDER BY rn DESC")
        same(d, "SELECT id, row_number() OVER (ORDER BY v) AS rn FROM t ORDER BY rn + 0 DESC LIMIT 4 OFFSET 2")
        same(d, "SELECT id, rank() OVER (ORDER BY k) FROM t ORDER BY 2, 1 DESC")
        same(d, "SELECT id FROM t ORDER BY lag(id) OVER (ORDER BY s, id) DESC NULLS FIRST")
        same(d, "SELECT id, k FROM t ORDER BY row_number() OVER (PARTITION BY g ORDER BY id), id LIMIT 5")
        same(d, "SELECT id * 10 AS id, row_number() OVER (ORDER BY id DESC) FROM t ORDER BY id")
        same(d, "SELECT *, row_number() OVER (ORDER BY id DESC) AS r FROM t ORDER BY r")
        same(d, "SELECT t.*, sum(k) OVER (PARTITION BY g) FROM t ORDER BY id")
        same(d, "SELECT row_number() OVER () FROM t LIMIT 3")
        same(d, "SELECT id, rank() OVER (ORDER BY k) FROM t ORDER BY -1")
        same(d, "SELECT id, rank() OVER (ORDER BY k) FROM t ORDER BY 3")
        same(d, "SELECT id, rank() OVER (ORDER BY k) FROM t ORDER BY 'x', 1 DESC")
        same(d, "SELECT 1 + row_number() OVER (ORDER BY id), coalesce(lag(s) OVER (ORDER BY id), '-') || s FROM t")
        same(d, "SELECT CASE WHEN rank() OVER (ORDER BY k) > 3 THEN g ELSE 'top' END FROM t ORDER BY id")
        same(d, "SELECT ?, id, ? + count(*) OVER () FROM t ORDER BY id", [.text("p"), .integer(5)])
        // Column names as SQLite gives them.
        let result = try d.database.execute("SELECT id, g AS grp, k + 1, row_number() OVER (ORDER BY id) AS rn, rank() OVER (ORDER BY id) FROM t")
        XCTAssertEqual(result.columns, ["id", "grp", "k + 1", "rn", "rank() OVER (ORDER BY id)"])
        let star = try d.database.execute("SELECT *, count(*) OVER () FROM t")
        XCTAssertEqual(star.columns, ["id", "g", "k", "v", "s", "m", "count(*) OVER ()"])
    }

    /// Without ORDER BY, rows come out in the first call's window order, the later calls'
    /// order kept among its ties, as SQLite hands them out.
    func testRowOrderWithoutOrderBy() throws {
        let d = try Differential()
        table(d)
        same(d, "SELECT id, row_number() OVER (ORDER BY v) FROM t")
        same(d, "SELECT id, rank() OVER (PARTITION BY g), row_number() OVER (ORDER BY k DESC) FROM t")
        same(d, "SELECT id, row_number() OVER (ORDER BY k DESC), rank() OVER (PARTITION BY g) FROM t")
        same(d, "SELECT id, count(*) OVER (), sum(k) OVER (ORDER BY s COLLATE NOCASE, id) FROM t")
        same(d, "SELECT g, sum(v) OVER (PARTITION BY g) FROM t")
    }

    func testNamedWindows() throws {
        let d = try Differential()
        table(d)
        same(d, "SELECT id, sum(k) OVER w, count(*) OVER w FROM t WINDOW w AS (PARTITION BY g ORDER BY id) ORDER BY id")
        same(d, "SELECT id, sum(k) OVER (w ROWS 1 PRECEDING) FROM t WINDOW w AS (PARTITION BY g ORDER BY id) ORDER BY id")
        same(d, "SELECT id, sum(k) OVER (w ORDER BY k, id) FROM t WINDOW w AS (PARTITION BY g) ORDER BY id")
        same(d, "SELECT id, sum(k) OVER w2 FROM t WINDOW w1 AS (PARTITION BY g), w2 AS (w1 ORDER BY id) ORDER BY id")
        same(d, "SELECT id, count(*) OVER w FROM t WINDOW w AS (PARTITION BY g), w AS (ORDER BY id)")
        same(d, "SELECT id FROM t WINDOW w AS (ORDER BY id) ORDER BY id")
        same(d, "SELECT sum(k) OVER (w ORDER BY v) FROM t WINDOW w AS (ORDER BY id)")
        same(d, "SELECT sum(k) OVER (w PARTITION BY v) FROM t WINDOW w AS (ORDER BY id)")
        same(d, "SELECT sum(k) OVER (w) FROM t WINDOW w AS (ORDER BY id ROWS 1 PRECEDING)")
        same(d, "SELECT sum(k) OVER nowhere FROM t WINDOW w AS (ORDER BY id)")
    }

    /// Subqueries, joins, views, WITH tables and compound selects around and inside a SELECT
    /// that calls window functions.
    func testPlacesTheyAppear() throws {
        let d = try Differential()
        table(d)
        d.run(["CREATE TABLE groups (name TEXT, label TEXT)", "INSERT INTO groups VALUES ('a', 'Alpha'), ('b', 'Beta'), ('c', 'Gamma')"])
        same(d, "SELECT t.id, label, row_number() OVER (PARTITION BY label ORDER BY t.id DESC) FROM t JOIN groups ON g = name ORDER BY t.id")
        same(d, "SELECT label, count(*), rank() OVER (ORDER BY count(*) DESC, label) FROM t LEFT JOIN groups ON g = name GROUP BY label")
        same(d, "SELECT * FROM (SELECT id, lag(id) OVER (ORDER BY id) AS previous FROM t) WHERE previous % 2 = 0")
        same(d, "SELECT id, (SELECT count(*) OVER () FROM groups WHERE name = t.g ORDER BY 1 LIMIT 1) FROM t ORDER BY id")
        same(d, "SELECT id FROM t WHERE k IN (SELECT max(k) OVER (PARTITION BY g) FROM t) ORDER BY id")
        same(d, "WITH ranked AS (SELECT id, g, rank() OVER (PARTITION BY g ORDER BY k DESC) AS r FROM t) SELECT g, id FROM ranked WHERE r = 1 ORDER BY g, id")
        same(d, "WITH x AS (SELECT id, k FROM t WHERE k IS NOT NULL) SELECT id, sum(k) OVER (ORDER BY id) FROM x")
        same(d, "SELECT id, row_number() OVER (ORDER BY id) FROM t WHERE g = 'a' UNION ALL SELECT id, -row_number() OVER (ORDER BY id DESC) FROM t WHERE g = 'b' ORDER BY 2")
        same(d, "SELECT g, row_number() OVER (ORDER BY g) FROM t UNION SELECT name, 1 FROM groups ORDER BY 1, 2")
        same(d, "SELECT row_number() OVER (), * FROM (VALUES (3), (1), (2))")
        same(d, "SELECT (SELECT row_number() OVER ()), 1 FROM t WHERE id < 3")
        d.run(["CREATE VIEW latest AS SELECT g, id, row_number() OVER (PARTITION BY g ORDER BY id DESC) AS n FROM t"])
        same(d, "SELECT * FROM latest WHERE n = 1 ORDER BY g")
        same(d, "SELECT g, count(*) FROM latest GROUP BY g ORDER BY g")
        same(d, "SELECT l.g, l.id, t.s FROM latest AS l JOIN t ON t.id = l.id WHERE n <= 2 ORDER BY l.id")
        // After a reopen the view's query is parsed again from the catalog.
        try d.temporary.reopen()
        let reopened = try d.temporary.database
        XCTAssertEqual(try reopened.execute("SELECT id FROM latest WHERE n = 1 ORDER BY g").rows,
                       try d.oracle.execute("SELECT id FROM latest WHERE n = 1 ORDER BY g"))
    }

    /// A partition compared under its collation, and triggers that run window functions.
    func testCollationsAndTriggers() throws {
        let d = try Differential()
        d.run([
            "CREATE TABLE names (id INTEGER PRIMARY KEY, name TEXT COLLATE NOCASE, score INTEGER)",
            "INSERT INTO names VALUES (1, 'ann', 3), (2, 'ANN', 5), (3, 'bob', 1), (4, 'Ann ', 2), (5, 'BOB', 4)",
            "CREATE TABLE log (id INTEGER, position INTEGER)",
            "CREATE TRIGGER logged AFTER INSERT ON names BEGIN INSERT INTO log SELECT id, row_number() OVER (ORDER BY score DESC) FROM names; END",
            "INSERT INTO names VALUES (6, 'cid', 9)",
        ])
        same(d, "SELECT id, count(*) OVER (PARTITION BY name), rank() OVER (ORDER BY name) FROM names ORDER BY id")
        same(d, "SELECT id, count(*) OVER (PARTITION BY name COLLATE BINARY), max(name) OVER (ORDER BY id) FROM names ORDER BY id")
        same(d, "SELECT id, sum(score) OVER (ORDER BY name RANGE BETWEEN CURRENT ROW AND CURRENT ROW) FROM names ORDER BY id")
        same(d, "SELECT * FROM log ORDER BY id")
    }

    /// SQLite's errors, word for word, for window functions where they may not be and for
    /// bad windows; each statement leaves the data as it was.
    func testErrors() throws {
        let d = try Differential()
        table(d)
        for sql in [
            "SELECT id FROM t WHERE row_number() OVER () > 1",
            "SELECT g FROM t GROUP BY row_number() OVER ()",
            "SELECT g FROM t GROUP BY g HAVING rank() OVER () > 1",
            "SELECT sum(row_number() OVER ()) FROM t",
            "SELECT sum(sum(k) OVER ()) OVER () FROM t",
            "SELECT row_number() OVER (ORDER BY rank() OVER ()) FROM t",
            "SELECT abs(k) OVER () FROM t",
            "SELECT max(k, v) OVER () FROM t",
            "SELECT count(DISTINCT k) OVER () FROM t",
            "SELECT row_number(1) OVER () FROM t",
            "SELECT nth_value(k) OVER () FROM t",
            "SELECT nth_value(k, 0) OVER (ORDER BY id) FROM t",
            "SELECT nth_value(k, NULL) OVER (ORDER BY id) FROM t",
            "SELECT nth_value(k, -1) OVER (ORDER BY id) FROM t",
            "SELECT sum(k) OVER (ROWS BETWEEN 1 FOLLOWING AND CURRENT ROW) FROM t",
            "SELECT sum(k) OVER (ROWS BETWEEN CURRENT ROW AND 1 PRECEDING) FROM t",
            "SELECT sum(k) OVER (ROWS UNBOUNDED FOLLOWING) FROM t",
            "SELECT sum(k) OVER (ROWS BETWEEN CURRENT ROW AND UNBOUNDED PRECEDING) FROM t",
            "SELECT sum(k) OVER (RANGE BETWEEN 1 PRECEDING AND CURRENT ROW) FROM t",
            "SELECT sum(k) OVER (ORDER BY k, id RANGE 1 PRECEDING) FROM t",
            "SELECT sum(k) OVER (ORDER BY k ROWS BETWEEN -1 PRECEDING AND CURRENT ROW) FROM t",
            "SELECT sum(k) OVER (ORDER BY k ROWS BETWEEN CURRENT ROW AND 1.5 FOLLOWING) FROM t",
            "SELECT sum(k) OVER (ORDER BY k RANGE BETWEEN -1 PRECEDING AND CURRENT ROW) FROM t",
            "SELECT sum(k) OVER (ORDER BY k RANGE BETWEEN CURRENT ROW AND 'x' FOLLOWING) FROM t",
            "SELECT sum(k) OVER (ORDER BY k ROWS BETWEEN k PRECEDING AND CURRENT ROW) FROM t",
            "SELECT sum(k) OVER (ORDER BY k ROWS BETWEEN (SELECT 1) PRECEDING AND CURRENT ROW) FROM t",
            "SELECT sum(k) OVER (ORDER BY k ROWS BETWEEN NULL PRECEDING AND CURRENT ROW) FROM t",
            "SELECT id FROM t UNION SELECT id FROM t ORDER BY row_number() OVER ()",
            "WITH RECURSIVE r(n, m) AS (SELECT 1, 1 UNION ALL SELECT n + 1, row_number() OVER () FROM r WHERE n < 5) SELECT * FROM r",
            "WITH RECURSIVE r(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM (SELECT n FROM r) WHERE n < 5) SELECT * FROM r",
            "UPDATE t SET k = row_number() OVER ()",
            "DELETE FROM t WHERE rank() OVER () = 1",
            "INSERT INTO t (id) VALUES (row_number() OVER ())",
            "SELECT row_number() FROM t",
            "SELECT id FROM t ORDER BY lag(id)",
            "SELECT row_number() FILTER (WHERE k > 1) OVER () FROM t",
            "SELECT coalesce(k, 0) FILTER (WHERE k > 1) FROM t",
        ] {
            same(d, sql)
        }
        same(d, "SELECT * FROM t ORDER BY id")
    }

    /// Random window queries over a random table, each compared with SQLite row for row: one
    /// to three calls with windows of their own, with or without ORDER BY (without, the rows'
    /// order is compared too). `WINDOW_RANDOM_QUERIES` and `WINDOW_RANDOM_SEED` run more.
    func testRandomWindowQueriesAgreeWithSQLite() throws {
        let environment = ProcessInfo.processInfo.environment
        let queries = environment["WINDOW_RANDOM_QUERIES"].flatMap(Int.init) ?? 400
        let d = try Differential()
        var random = SplitMix(seed: environment["WINDOW_RANDOM_SEED"].flatMap(UInt64.init) ?? 0x5749_4E44)
        func pick<T>(_ choices: [T]) -> T { choices[Int(random.next() % UInt64(choices.count))] }
        d.run(["CREATE TABLE r (id INTEGER PRIMARY KEY, a INTEGER, b TEXT, c REAL, d)"])
        for id in 1...40 {
            let a = pick(["NULL", "0", "1", "2", "3", "5", "8", "-4"])
            let b = pick(["NULL", "'p'", "'q'", "'r'", "'P'", "''"])
            let c = pick(["NULL", "0.5", "0.1", "2.25", "-3.5", "7.0", "0.3", "1e16"])
            let e = pick(["NULL", "1", "2.5", "'t'", "x'00'", "4", "'7'"])
            d.run(["INSERT INTO r VALUES (\(id), \(a), \(b), \(c), \(e))"])
        }
        let columns = ["a", "b", "c", "d", "id", "a % 3", "b COLLATE NOCASE"]
        let functions = ["row_number()", "rank()", "dense_rank()", "percent_rank()", "cume_dist()", "ntile(3)",
                         "lag(b)", "lead(c, 2, -1)", "first_value(d)", "last_value(a)", "nth_value(b, 2)", "count(*)",
                         "count(d)", "sum(a)", "sum(c)", "sum(d)", "total(c)", "avg(a)", "avg(c)", "min(b)", "max(d)",
                         "group_concat(id, '.')"]
        func window() -> String {
            var window: [String] = []
            if random.next() % 2 == 0 { window.append("PARTITION BY " + pick(columns)) }
            var orderTerms = 0
            if random.next() % 4 != 0 {
                orderTerms = 1 + Int(random.next() % 2)
                window.append("ORDER BY " + (0..<orderTerms).map { _ in
                    pick(columns) + pick(["", " DESC", " ASC NULLS LAST", " DESC NULLS FIRST"])
                }.joined(separator: ", "))
            }
            if random.next() % 3 != 0 {
                var units = ["ROWS", "GROUPS"]
                if orderTerms == 1 { units.append("RANGE") }
                let unit = pick(units)
                let offset = unit == "RANGE" ? pick(["0", "1", "2.5"]) : pick(["0", "1", "2"])
                let starts = ["UNBOUNDED PRECEDING", "\(offset) PRECEDING", "CURRENT ROW", "\(offset) FOLLOWING"]
                let ends = ["\(offset) PRECEDING", "CURRENT ROW", "\(offset) FOLLOWING", "UNBOUNDED FOLLOWING"]
                var start = Int(random.next() % 4), end = Int(random.next() % 4)
                if end < start { swap(&start, &end) }
                window.append("\(unit) BETWEEN \(starts[start]) AND \(ends[end])"
                              + pick(["", "", " EXCLUDE CURRENT ROW", " EXCLUDE GROUP", " EXCLUDE TIES", " EXCLUDE NO OTHERS"]))
            }
            return window.joined(separator: " ")
        }
        for _ in 0..<queries {
            let calls = (0..<(1 + Int(random.next() % 3))).map { _ in "\(pick(functions)) OVER (\(window()))" }
            // Without ORDER BY the rows come in the windows' order (every key ends in a tie
            // SQLite and the engine break by rowid, the order both scan the table in).
            same(d, "SELECT id, \(calls.joined(separator: ", ")) FROM r" + pick([" ORDER BY id", ""]))
        }
    }
}
