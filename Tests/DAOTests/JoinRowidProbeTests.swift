@testable import DAO
import XCTest

/// A join whose inner side is reached by its rowid (`inner.id = outer.x`) reads that one row
/// directly instead of planning a path for each outer row. The value it probes with goes through
/// the comparison's affinity as SQLite's does: numeric text, integral and fractional reals, NULL,
/// text and blobs, values at the ends of Int64, under `=` and `IS`, inner and LEFT joins, the
/// rowid alias and the bare rowid, and expressions that keep their storage class.
final class JoinRowidProbeTests: XCTestCase {
    private func loaded() throws -> Differential {
        let d = try Differential()
        d.run(["CREATE TABLE a (id INTEGER PRIMARY KEY, v TEXT)",
               "CREATE TABLE plain (v TEXT)",
               "CREATE TABLE b (x, xi INTEGER, xt TEXT, xr REAL, tag TEXT)",
               "INSERT INTO a VALUES (1, 'one'), (2, 'two'), (3, 'three'), (-1, 'minus'), (9223372036854775807, 'max'), (-9223372036854775808, 'min')",
               "INSERT INTO plain (rowid, v) VALUES (1, 'p1'), (2, 'p2'), (3, 'p3')"])
        let probes = ["1", "'2'", "3.0", "3.5", "NULL", "'abc'", "x'01'", "'3.0'", "' 2'", "-1", "9223372036854775807",
                      "-9223372036854775808", "9.3e18", "-0.0", "'9223372036854775807'"]
        for (k, probe) in probes.enumerated() {
            d.run(["INSERT INTO b VALUES (\(probe), \(probe), \(probe), \(probe), 'p\(k)')"])
        }
        return d
    }

    func testRowidProbesMatchSQLite() throws {
        let d = try loaded()
        for column in ["x", "xi", "xt", "xr"] {
            for (join, op) in [("JOIN", "="), ("JOIN", "IS"), ("LEFT JOIN", "="), ("LEFT JOIN", "IS")] {
                d.check("SELECT b.tag, a.id, a.v FROM b \(join) a ON a.id \(op) b.\(column)", ordered: false)
                d.check("SELECT b.tag, a.id, a.v FROM b \(join) a ON b.\(column) \(op) a.id", ordered: false)
                d.check("SELECT b.tag, p.rowid, p.v FROM b \(join) plain AS p ON p.rowid \(op) b.\(column)", ordered: false)
            }
            // Expressions as the probe: arithmetic, a CAST that keeps its class. (Not a subquery:
            // the engine then scans and compares, and SQLite's rowid seek and its comparison
            // disagree on the real -2^63, which the seek does not take as Int64.min.)
            d.check("SELECT b.tag, a.v FROM b JOIN a ON a.id = b.\(column) + 0", ordered: false)
            d.check("SELECT b.tag, a.v FROM b JOIN a ON a.id = CAST(b.\(column) AS TEXT)", ordered: false)
            // The comma join with the term in WHERE, and a second term on the inner row.
            d.check("SELECT b.tag, a.v FROM b, a WHERE a.id = b.\(column) AND a.v <> 'two'", ordered: false)
        }
        // The probe is planned once and used for every outer row: the plan names it.
        let plan = try d.database.queryPlan("SELECT b.tag, a.v FROM b JOIN a ON a.id = b.x")
        XCTAssertTrue(plan.contains("SEARCH a USING ROWID"), plan)
    }
}
