@testable import DAO
import XCTest

/// Terms an access path enforces are not evaluated again for the rows it yields (the Planner's
/// `consumed` terms). Each query here has a term the path enforces only in part, or not at all,
/// next to one it does; SQLite answers the same.
final class ConsumedTermsTests: XCTestCase {
    private func loaded() throws -> Differential {
        let d = try Differential()
        d.run(["CREATE TABLE t(id INTEGER PRIMARY KEY, k INTEGER, r REAL, s TEXT, u)",
               "CREATE INDEX t_k ON t(k)", "CREATE INDEX t_r ON t(r DESC)", "CREATE INDEX t_s ON t(s)", "CREATE INDEX t_u ON t(u, k)"])
        var rows: [String] = []
        for i in 1...60 {
            let k = i % 7 == 0 ? "NULL" : String(i % 13)
            let u = ["NULL", "'5'", "5", "5.0", "x'35'", "'abc'", String(i % 4)][i % 7]
            rows.append("(\(i), \(k), \(Double(i) / 4), '\(["a", "b", "ab", "B", "10", "9"][i % 6])\(i % 3)', \(u))")
        }
        d.run(["INSERT INTO t VALUES " + rows.joined(separator: ", ")])
        return d
    }

    func testPartlyEnforcedTermsAreStillChecked() throws {
        let d = try loaded()
        for sql in [
            "SELECT id FROM t WHERE k BETWEEN 3 AND 2",
            "SELECT id FROM t WHERE k BETWEEN NULL AND 5",
            "SELECT id FROM t WHERE k BETWEEN 2 AND NULL",
            "SELECT id FROM t WHERE k > 5 AND k > 10",
            "SELECT id FROM t WHERE k < 10 AND k < 4 AND k >= 1",
            "SELECT id FROM t WHERE k = 1 AND k = 2",
            "SELECT id FROM t WHERE k = 3 AND k = 3.0",
            "SELECT id FROM t WHERE k IN (1, NULL, 3)",
            "SELECT id FROM t WHERE k IN (NULL)",
            "SELECT id FROM t WHERE k = NULL",
            "SELECT id FROM t WHERE k IS NULL",
            "SELECT id FROM t WHERE k = '4'",
            "SELECT id FROM t WHERE k = replace('4', 'x', 'y')",
            "SELECT id FROM t WHERE k IN (replace('4', 'x', 'y'), 5)",
            "SELECT id FROM t WHERE k IN (SELECT k FROM t WHERE id < 10) AND id > 20",
            "SELECT id FROM t WHERE r > 3.5 AND r <= 9",
            "SELECT id FROM t WHERE r BETWEEN 2 AND 5 ORDER BY r DESC",
            "SELECT id FROM t WHERE s LIKE 'a%' AND s > 'ab'",
            "SELECT id FROM t WHERE s >= 'b' AND s < 'B'",
            "SELECT id FROM t WHERE u = 5 AND k > 1",
            "SELECT id FROM t WHERE u = '5'",
            "SELECT id FROM t WHERE u IN (5, 'abc') AND k IS NOT NULL",
            "SELECT id FROM t WHERE id > 10.5 AND id < 20",
            "SELECT id FROM t WHERE id >= 9.3e18 OR id = 2",
            "SELECT id FROM t WHERE id > -1e30 AND id < 3",
            "SELECT id FROM t WHERE id = 4.0",
            "SELECT id FROM t WHERE id = '5'",
            "SELECT id FROM t WHERE id IN (1, 2.5, '3', NULL)",
            "SELECT count(*), sum(k) FROM t WHERE k BETWEEN 2 AND 6",
            "SELECT k, count(*) FROM t WHERE k >= 3 GROUP BY k",
        ] {
            d.check(sql, ordered: sql.contains("ORDER BY"))
        }
    }

    func testRowidBoundsBeyondTheRowidRangeAreChecked() throws {
        let d = try Differential()
        d.run(["CREATE TABLE e(id INTEGER PRIMARY KEY, v)",
               "INSERT INTO e VALUES (9223372036854775807, 'max'), (-9223372036854775808, 'min'), (0, 'zero'), (5, 'five')"])
        for sql in [
            "SELECT id FROM e WHERE id >= 9.3e18", "SELECT id FROM e WHERE id > 9223372036854775807",
            "SELECT id FROM e WHERE id <= -1e19", "SELECT id FROM e WHERE id < -9223372036854775808",
            "SELECT id FROM e WHERE id BETWEEN -1e30 AND 1e30", "SELECT id FROM e WHERE id >= 9223372036854775807.0",
            "SELECT id FROM e WHERE id <= -9223372036854775808.0", "SELECT id FROM e WHERE id > 4.5 AND id < 5.5",
            "SELECT id FROM e WHERE id >= '5' AND id < 'x'",
        ] {
            d.check(sql, ordered: false)
        }
    }

    func testJoinLookupsSkipOnlyWhatTheyEnforce() throws {
        let d = try loaded()
        d.run(["CREATE TABLE p(pid INTEGER PRIMARY KEY, ref, n INTEGER)", "CREATE INDEX p_n ON p(n)",
               "INSERT INTO p VALUES (1, 3, 1), (2, '4', 2), (3, NULL, 3), (4, 4.0, NULL), (5, 'x', 5), (6, 60, 12)"])
        for sql in [
            "SELECT p.pid, t.id FROM p JOIN t ON t.id = p.ref",
            "SELECT p.pid, t.id FROM p LEFT JOIN t ON t.id = p.ref",
            "SELECT p.pid, t.id FROM p JOIN t ON t.k = p.n",
            "SELECT p.pid, t.id FROM p LEFT JOIN t ON t.k = p.n AND t.id > 30",
            "SELECT p.pid, t.id FROM p LEFT JOIN t ON t.k = p.n WHERE t.id IS NULL",
            "SELECT p.pid, t.id FROM p JOIN t ON t.k = p.n AND t.k = p.n + 1",
            "SELECT p.pid, t.id FROM p JOIN t ON t.k = p.ref",
            "SELECT p.pid, count(t.id) FROM p LEFT JOIN t ON t.k = p.n GROUP BY p.pid",
            "SELECT t.id, p.pid FROM t JOIN p ON p.n = t.k WHERE t.id < 20",
            "SELECT t.id, p.pid FROM t JOIN p ON p.pid = t.k",
        ] {
            d.check(sql, ordered: false)
        }
    }

    func testAnEmptyIndexRangeVisitsNoEntry() throws {
        let temporary = try TemporaryStore()
        let database = try temporary.database
        try database.execute("CREATE TABLE t(k INTEGER)")
        try database.execute("CREATE INDEX t_k ON t(k)")
        try database.execute("BEGIN")
        for i in 0..<500 { try database.execute("INSERT INTO t VALUES (?)", arguments: [.integer(Int64(i))]) }
        try database.execute("COMMIT")
        database.rowsVisited = 0
        XCTAssertEqual(try database.execute("SELECT k FROM t WHERE k BETWEEN 300 AND 200").rows, [])
        XCTAssertEqual(database.rowsVisited, 0, "a reversed range reads no row")
        XCTAssertEqual(try database.execute("SELECT count(*) FROM t WHERE k BETWEEN 200 AND 209").rows, [[.integer(10)]])
    }
}
