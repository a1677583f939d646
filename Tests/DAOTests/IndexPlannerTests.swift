@testable import DAO
import XCTest

/// Indexes serve equality, IN, ranges, prefix LIKE and ORDER BY ... LIMIT: the plan names the
/// index and few rows are visited; results still equal SQLite's.
final class IndexPlannerTests: XCTestCase {
    private func populated() throws -> Differential {
        let d = try Differential()
        d.run(["CREATE TABLE t (id INTEGER PRIMARY KEY, name TEXT, score INT, tag, grp INT)",
               "CREATE INDEX t_score ON t (score)",
               "CREATE UNIQUE INDEX t_name ON t (name)",
               "CREATE INDEX t_grp_score ON t (grp, score DESC)"])
        try d.database.execute("BEGIN")
        _ = try d.oracle.execute("BEGIN")
        for i in 0..<1000 {
            let sql = "INSERT INTO t (name, score, tag, grp) VALUES (?, ?, ?, ?)"
            let args: [DAOValue] = [.text(String(format: "n%04d", i)), i % 7 == 0 ? .null : .integer(Int64(i % 100)),
                                    i % 3 == 0 ? .text("t\(i)") : .integer(Int64(i)), .integer(Int64(i % 10))]
            try d.database.execute(sql, arguments: args)
            _ = try d.oracle.execute(sql, arguments: args)
        }
        try d.database.execute("COMMIT")
        _ = try d.oracle.execute("COMMIT")
        return d
    }

    private func visits(_ d: Differential, _ sql: String, ordered: Bool = true, plan: String, atMost: Int,
                        file: StaticString = #filePath, line: UInt = #line) {
        d.database.rowsVisited = 0
        d.check(sql, ordered: ordered, file: file, line: line)
        XCTAssertTrue(d.database.lastPlan.hasPrefix(plan), "\(sql): plan \(d.database.lastPlan)", file: file, line: line)
        XCTAssertLessThanOrEqual(d.database.rowsVisited, atMost, "\(sql)", file: file, line: line)
    }

    func testIndexesServePredicates() throws {
        let d = try populated()
        visits(d, "SELECT * FROM t WHERE id = 500", plan: "ROWID LOOKUP", atMost: 1)
        visits(d, "SELECT * FROM t WHERE id IN (5, 7, 2000)", plan: "ROWID LOOKUP", atMost: 2)
        visits(d, "SELECT * FROM t WHERE id BETWEEN 10 AND 19", plan: "ROWID RANGE", atMost: 10)
        visits(d, "SELECT * FROM t WHERE rowid > 990", plan: "ROWID RANGE", atMost: 10)
        visits(d, "SELECT * FROM t WHERE name = 'n0042'", plan: "INDEX 1", atMost: 1)
        visits(d, "SELECT id FROM t WHERE score = 42", ordered: false, plan: "INDEX 0", atMost: 9)
        visits(d, "SELECT id FROM t WHERE score = '42'", ordered: false, plan: "INDEX 0", atMost: 9)
        visits(d, "SELECT id FROM t WHERE score IN (1, 2) ORDER BY id", plan: "INDEX 0", atMost: 18)
        visits(d, "SELECT id FROM t WHERE score > 97 ORDER BY id", plan: "INDEX 0", atMost: 30)
        visits(d, "SELECT id FROM t WHERE score < 2 ORDER BY id", plan: "INDEX 0", atMost: 30)
        visits(d, "SELECT id FROM t WHERE score BETWEEN 10 AND 11 ORDER BY id", plan: "INDEX 0", atMost: 20)
        visits(d, "SELECT id FROM t WHERE name LIKE 'N001%' ORDER BY id", plan: "INDEX 1", atMost: 10)
        visits(d, "SELECT id FROM t WHERE grp = 3 AND score = 43", ordered: false, plan: "INDEX 2", atMost: 10)
        visits(d, "SELECT id FROM t WHERE grp = 3 ORDER BY score DESC LIMIT 3", plan: "INDEX 2", atMost: 3)
        visits(d, "SELECT id, score FROM t ORDER BY score LIMIT 10", plan: "INDEX 0", atMost: 10)
        visits(d, "SELECT id, score FROM t ORDER BY score DESC LIMIT 5 OFFSET 2", plan: "INDEX 0", atMost: 7)
        visits(d, "SELECT id FROM t ORDER BY id DESC LIMIT 3", plan: "SCAN REVERSE", atMost: 3)
        visits(d, "SELECT id FROM t WHERE tag = 5", plan: "SCAN", atMost: 1000)
        d.check("SELECT count(*) FROM t WHERE score IS NULL")
        d.check("SELECT id FROM t WHERE score > 'a'")
        d.check("SELECT id FROM t WHERE score <= 1.5 ORDER BY id")
        d.check("SELECT id FROM t WHERE name > 'n0995' ORDER BY name DESC")
        d.check("SELECT id FROM t WHERE name LIKE 'n099_' ORDER BY id")
    }

    func testIndexesFollowWritesAndRollback() throws {
        let d = try populated()
        d.run(["UPDATE t SET score = 1000 WHERE id % 100 = 0", "DELETE FROM t WHERE score = 50"])
        d.check("SELECT id FROM t WHERE score = 1000 ORDER BY id")
        d.check("SELECT id FROM t WHERE score = 50")
        try d.database.execute("BEGIN")
        try d.database.execute("UPDATE t SET score = 2000 WHERE score = 1000")
        XCTAssertEqual(try d.database.execute("SELECT count(*) FROM t WHERE score = 2000").rows, [[.integer(10)]])
        try d.database.execute("ROLLBACK")
        d.check("SELECT id FROM t WHERE score = 1000 ORDER BY id")
        d.check("SELECT count(*) FROM t WHERE score = 2000")
        d.run(["DROP INDEX t_score"])
        d.check("SELECT id FROM t WHERE score = 1000 ORDER BY id")
        XCTAssertThrowsError(try d.database.execute("CREATE UNIQUE INDEX u ON t (score)"))
        XCTAssertThrowsError(try d.database.execute("DROP INDEX sqlite_autoindex_t_pk"))
    }
}

/// The flat sorts used to build one-column indexes give the same order as the generic one.
final class IndexBuilderTests: XCTestCase {
    func testFlatSortsMatchGenericOrder() {
        let texts = ["b", "a", "ab", "ab\u{0}", "abcdefghij", "abcdefghi", "é", "", "B", "abcdefgh"]
        for descending in [false, true] {
            for keys in [texts.map { DAOValue.text($0) }, [5, -3, 9, 5, 0, Int64.min, Int64.max].map { DAOValue.integer($0) },
                         [.integer(1), .text("x"), .null, .real(0.5), .blob([1])]] {
                let entries = keys.enumerated().map { IndexEntry(key: [$0.element], rowid: Int64(keys.count - $0.offset)) }
                var flat = entries
                IndexBuilder.sort(&flat, descending: [descending])
                let generic = entries.sorted { IndexState.less($0, $1, [descending]) }
                XCTAssertEqual(flat.map(\.rowid), generic.map(\.rowid), "\(keys) descending \(descending)")
            }
        }
    }
}
