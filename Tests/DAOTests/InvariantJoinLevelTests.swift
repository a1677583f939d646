@testable import DAO
import XCTest

/// An inner join level whose terms read only its own table (a cross join filtered per table,
/// `FROM t1, t2 WHERE a1 = 5 AND b2 IN (...)`) is scanned once per run and its passing rows
/// replayed for the next outer rows (`NestedLoops`): the answers stay SQLite's, with LIMIT
/// stopping the first scan early, nested kept levels, LEFT JOINs (never kept), aggregates,
/// NULLs, a level whose term reads an outer table (never kept) and random() (never kept).
final class InvariantJoinLevelTests: XCTestCase {
    private func loaded() throws -> Differential {
        let d = try Differential()
        d.run(["CREATE TABLE t1 (a, b, c)", "CREATE TABLE t2 (a, b, c)", "CREATE TABLE t3 (a INTEGER PRIMARY KEY, b, c)",
               "CREATE INDEX t2b ON t2 (b)"])
        for i in 0..<40 {
            d.run(["INSERT INTO t1 VALUES (\(i), \(i % 7), \(i % 3 == 0 ? "NULL" : "'x\(i % 5)'"))",
                   "INSERT INTO t2 VALUES (\(i * 2), \(i % 5), 'y\(i % 4)')",
                   "INSERT INTO t3 VALUES (\(i + 1), \(i % 9), \(i % 2))"])
        }
        return d
    }

    func testKeptLevelsAnswerAsSQLite() throws {
        let d = try loaded()
        let queries = [
            "SELECT t1.a, t2.a FROM t1, t2 WHERE t1.b = 3 AND t2.b IN (1, 4)",
            "SELECT t1.a, t2.a, t3.a FROM t1, t2, t3 WHERE t1.b = 2 AND t2.c = 'y1' AND t3.b > 6",
            "SELECT count(*), sum(t2.a), max(t1.c) FROM t1, t2, t3 WHERE t1.c IS NULL AND t2.b < 2 AND t3.c = 1",
            "SELECT t1.a, t2.a FROM t1, t2",
            "SELECT t1.a, t2.a FROM t1, t2 WHERE t2.c IS NULL",
            "SELECT t1.a, t2.a FROM t1, t2 WHERE t1.b = 3 AND t2.b = t1.b - 2",
            "SELECT t1.a, t2.a FROM t1 LEFT JOIN t2 ON t2.b = 4 WHERE t1.b = 6",
            "SELECT t1.a, t3.a FROM t1 JOIN t3 ON t3.b = 8 WHERE t1.b IN (0, 5)",
            "SELECT t1.a, t2.b FROM t1, t2 WHERE t1.b = 1 AND t2.b = 1 ORDER BY t2.a DESC, t1.a LIMIT 4",
            "SELECT DISTINCT t2.c FROM t1, t2 WHERE t1.a < 3 AND t2.b = 2",
            "SELECT t1.a FROM t1 WHERE EXISTS (SELECT 1 FROM t2, t3 WHERE t2.b = t1.b AND t3.b = 3)",
        ]
        for query in queries { d.check(query, ordered: query.contains("ORDER BY")) }
        // LIMIT without ORDER BY stops the first scan of a kept level early (the loop order,
        // and so which rows come first, is the engine's own, as SQLite's is its own): the rows
        // are some of the whole answer's, as many as asked, and a second run agrees.
        for whole in ["SELECT t1.a, t2.a FROM t1, t2 WHERE t1.b = 3 AND (t2.b = 1 OR t2.a > 70)",
                      "SELECT t1.a, t2.a, t3.a FROM t1, t2, t3 WHERE t1.b = 3 AND t2.b IN (1, 4) AND t3.c = 0"] {
            let all = try d.database.execute(whole).rows
            XCTAssertEqual(all.count, try d.oracle.execute(whole).count, whole)
            for (limit, offset) in [(1, 0), (5, 0), (3, 2), (7, 11)] {
                let some = try d.database.execute(whole + " LIMIT \(limit) OFFSET \(offset)").rows
                XCTAssertEqual(some.count, max(0, min(limit, all.count - offset)), whole)
                XCTAssertTrue(some.allSatisfy(all.contains), whole)
                XCTAssertEqual(try d.database.execute(whole + " LIMIT \(limit) OFFSET \(offset)").rows, some, whole)
            }
        }
        // The kept level is read once: t2 (40 rows) is visited once per run, not once per t1
        // row that passed (t1.b = 3: 6 rows, so 240 visits of t2 when scanned per outer row).
        let before = d.database.rowsVisited
        _ = try d.database.execute("SELECT t1.a, t2.a FROM t1, t2 WHERE t1.b = 3 AND t2.c = 'y1'")
        XCTAssertLessThanOrEqual(d.database.rowsVisited - before, 40 + 40, "t1 scanned once, t2 once")
        // random(): a level reading it is scanned per outer row, as SQLite's is (the count of
        // pairs is then not a product of two fixed counts; only that it runs is checked).
        XCTAssertNoThrow(try d.database.execute("SELECT count(*) FROM t1, t2 WHERE t1.b = 3 AND abs(random()) % 2 = 0"))
    }
}
