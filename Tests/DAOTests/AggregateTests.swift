@testable import DAO
import XCTest

/// Aggregates, GROUP BY, HAVING, DISTINCT, against SQLite.
final class AggregateTests: XCTestCase {
    private func sample() throws -> Differential {
        let d = try Differential()
        d.run(["CREATE TABLE t (g TEXT, x, y REAL)",
               "INSERT INTO t VALUES ('a', 1, 1.5), ('a', 2, NULL), ('b', '3', 2), ('b', NULL, NULL), ('c', 'z', 4), (NULL, 5, 5)",
               "INSERT INTO t VALUES ('A', 1.0, 0), ('a', x'01', 1)"])
        return d
    }

    func testAggregates() throws {
        let d = try sample()
        d.check("SELECT count(*), count(x), count(y), sum(x), total(x), avg(x), min(x), max(x), group_concat(x), group_concat(g, '-') FROM t")
        d.check("SELECT sum(y), avg(y), min(y), max(y), typeof(sum(y)), count(DISTINCT g), count(DISTINCT x) FROM t")
        d.check("SELECT count(*), sum(x), avg(x), min(x), max(x), group_concat(x) FROM t WHERE 0")
        d.check("SELECT sum(1), sum(1.5), sum('2'), sum(NULL), total(NULL), avg('x'), typeof(sum('2'))")
        d.check("SELECT sum(DISTINCT x), group_concat(DISTINCT g) FROM t")
        XCTAssertThrowsError(try d.database.execute("SELECT sum(x) FROM (SELECT 1)"))
        d.run(["CREATE TABLE big (v INTEGER)", "INSERT INTO big VALUES (9223372036854775807), (1)"])
        d.check("SELECT sum(v) FROM big")
        d.check("SELECT total(v), avg(v) FROM big")
        XCTAssertThrowsError(try d.database.execute("SELECT sum(v) FROM big")) { error in
            guard let message = (error as? SQLExecutionError)?.message else { return XCTFail("\(error)") }
            XCTAssertEqual(message, "integer overflow")
        }
    }

    func testGroupByHavingAndBareColumns() throws {
        let d = try sample()
        d.check("SELECT g, count(*), sum(y) FROM t GROUP BY g")
        d.check("SELECT g, count(*) AS n FROM t GROUP BY g HAVING n > 1")
        d.check("SELECT g, max(y), x FROM t GROUP BY g")
        d.check("SELECT g, min(y), x FROM t GROUP BY g")
        d.check("SELECT count(*) FROM t GROUP BY x")
        d.check("SELECT x, count(*) FROM t GROUP BY 1 ORDER BY 2 DESC, 1")
        d.check("SELECT g || 'x' AS k, count(*) FROM t GROUP BY k ORDER BY k DESC")
        d.check("SELECT g, count(*) FROM t GROUP BY g HAVING sum(y) > 1 ORDER BY count(*), g")
        d.check("SELECT length(g), group_concat(x, ';') FROM t GROUP BY length(g)")
        d.check("SELECT count(*) HAVING count(*) > 0")
        d.check("SELECT max(y) FROM t WHERE g = 'zzz'")
        XCTAssertThrowsError(try d.database.execute("SELECT g FROM t WHERE count(*) > 1"))
        XCTAssertThrowsError(try d.database.execute("SELECT count(*) FROM t GROUP BY 3"))
    }

    func testDistinct() throws {
        let d = try sample()
        d.check("SELECT DISTINCT g FROM t", ordered: false)
        d.check("SELECT DISTINCT x FROM t ORDER BY x")
        d.check("SELECT DISTINCT g, x IS NULL FROM t ORDER BY 1, 2")
        d.run(["CREATE TABLE n (v)", "INSERT INTO n VALUES (1), (1.0), ('1'), (NULL), (NULL), (x'31')"])
        d.check("SELECT DISTINCT v FROM n ORDER BY v")
        d.check("SELECT v, count(*) FROM n GROUP BY v")
    }

    /// The same min() or max() written in the result and in ORDER BY or HAVING is one aggregate,
    /// so bare columns still read the row it chose (found by the differential run with
    /// collations; before, they read the group's first row).
    func testARepeatedMinOrMaxStillChoosesTheBareColumnsRow() throws {
        let d = try Differential()
        d.run(["CREATE TABLE t (a, b, c)", "INSERT INTO t VALUES (1, 'x', 5), (1, 'y', 3), (2, 'p', 1), (2, 'q', 9)"])
        for sql in ["SELECT b, min(c) FROM t GROUP BY a ORDER BY min(c)",
                    "SELECT b, max(c) FROM t GROUP BY a ORDER BY max(c) DESC",
                    "SELECT b, min(c) FROM t GROUP BY a HAVING min(c) < 4 ORDER BY 2",
                    "SELECT b, min(c), min(c) FROM t GROUP BY a ORDER BY 2"] {
            d.check(sql)
        }
    }
}
