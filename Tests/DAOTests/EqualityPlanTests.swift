@testable import DAO
import XCTest

/// A statement whose only usable term is an equality on an indexed column keeps the index the
/// Planner chose on its first run (`EqualityChoice`); later runs with other values, NULL, an
/// empty or duplicated value set must still answer as SQLite does, in SQLite's order.
final class EqualityPlanTests: XCTestCase {
    private func loaded() throws -> Differential {
        let d = try Differential()
        d.run(["CREATE TABLE t(id INTEGER PRIMARY KEY, k INTEGER, d INTEGER, s TEXT, u)",
               "CREATE INDEX t_k ON t(k)", "CREATE INDEX t_d ON t(d DESC)", "CREATE INDEX t_s ON t(s)", "CREATE INDEX t_u ON t(u)",
               "CREATE TABLE p(id INTEGER PRIMARY KEY, g INTEGER, v)", "CREATE INDEX p_g ON p(g)"])
        var rows: [String] = []
        for i in 1...80 {
            let k = i % 9 == 0 ? "NULL" : String(i % 11)
            let u = ["NULL", "'5'", "5", "5.0", "x'35'", "'abc'", String(i % 4)][i % 7]
            rows.append("(\(i), \(k), \(i % 6), '\(["a", "b", "10", "9"][i % 4])', \(u))")
        }
        d.run(["INSERT INTO t VALUES " + rows.joined(separator: ", ")])
        var groups: [String] = []
        for i in 1...30 {
            let v = ["NULL", "3", "'3'", "3.0", "7", "'x'", "2.5", "1"][i % 8]
            groups.append("(\(i), \(i % 5), \(v))")
        }
        d.run(["INSERT INTO p VALUES " + groups.joined(separator: ", ")])
        return d
    }

    func testOneStatementRunWithChangingValues() throws {
        let d = try loaded()
        let values: [DAOValue] = [.null, .integer(3), .null, .integer(4), .real(4.0), .text("4"), .text("x"), .integer(99), .blob([0x35])]
        for sql in ["SELECT id, k FROM t WHERE k = ?", "SELECT id FROM t WHERE k IS ?", "SELECT id, d FROM t WHERE d = ?",
                    "SELECT id, s FROM t WHERE s = ?", "SELECT id FROM t WHERE u = ?", "SELECT count(*), sum(k) FROM t WHERE k = ?",
                    "SELECT id FROM t WHERE k = ? AND id > 20", "SELECT id FROM t WHERE k = ? AND abs(d) < 3"] {
            for value in values { d.check(sql, [value]) }
        }
    }

    func testInListsAndSubqueriesRunAgain() throws {
        let d = try loaded()
        for sql in ["SELECT id, k FROM t WHERE k IN (?, ?, ?)", "SELECT id, d FROM t WHERE d IN (?, ?, ?)",
                    "SELECT id, u FROM t WHERE u IN (?, ?, ?)", "SELECT id, s FROM t WHERE s IN (?, ?, ?)"] {
            for arguments: [DAOValue] in [[.null, .null, .null], [.integer(3), .integer(1), .integer(3)], [.integer(2), .real(2.0), .text("2")],
                                          [.integer(5), .text("5"), .blob([0x35])], [.integer(4), .integer(0), .integer(1)], [.text("9"), .text("a"), .integer(10)]] {
                d.check(sql, arguments)
            }
        }
        for sql in ["SELECT id, k FROM t WHERE k IN (SELECT v FROM p WHERE g = ?)", "SELECT id, d FROM t WHERE d IN (SELECT v FROM p WHERE g = ?)",
                    "SELECT id, u FROM t WHERE u IN (SELECT v FROM p WHERE g = ?)", "SELECT id, s FROM t WHERE s IN (SELECT v FROM p WHERE g = ?)",
                    "SELECT id FROM t WHERE k IN (SELECT g FROM p WHERE id > ?)", "SELECT count(*) FROM t WHERE k IN (SELECT v FROM p WHERE g = ?)",
                    "SELECT id, k FROM t WHERE k NOT IN (SELECT v FROM p WHERE g = ?)"] {
            for value: DAOValue in [.integer(99), .integer(0), .integer(1), .null, .integer(2), .integer(3), .integer(4), .integer(99), .integer(28)] {
                // NOT IN is no index term: its full scan's order is not SQLite's covering one.
                d.check(sql, [value], ordered: !sql.contains("NOT IN"))
            }
        }
    }

    func testThePlanTextStaysTheChosenOne() throws {
        let d = try loaded()
        let sql = "SELECT id FROM t WHERE k IN (SELECT v FROM p WHERE g = ?)"
        // The same index whatever the values; the count of ranges is the values'.
        func shape(_ plan: String) -> String { plan.replacingOccurrences(of: #" \(\d+ ranges?\)"#, with: "", options: .regularExpression) }
        let first = try d.database.queryPlan(sql, arguments: [.integer(1)])
        _ = try d.database.execute(sql, arguments: [.integer(2)])
        XCTAssertEqual(shape(try d.database.queryPlan(sql, arguments: [.integer(3)])), shape(first))
        XCTAssertTrue(first.contains("USING COVERING INDEX t_k"), first)
    }
}
