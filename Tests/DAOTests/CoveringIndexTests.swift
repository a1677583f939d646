@testable import DAO
import XCTest

/// Queries whose columns an index holds read the values from the index entries (SQLite's
/// covering index). The values must come back with the storage class SQLite gives, which the
/// entries alone do not always tell (an integer and a real encode alike): every affinity is tried
/// with the values at the edges of the encoding, against SQLite.
final class CoveringIndexTests: XCTestCase {
    /// Values at the edges: integers past 2^53 and at both ends of Int64, integral and
    /// fractional reals, -0.0, numeric and other text, blobs with NUL bytes, NULL (text with a NUL
    /// byte is left out: the SQLite oracle reads text up to its first NUL).
    private let values: [DAOValue] = [
        .null, .integer(0), .integer(-1), .integer(7), .integer(9_007_199_254_740_993), .integer(-9_007_199_254_740_993),
        .integer(Int64.max), .integer(Int64.max - 1), .integer(Int64.min), .integer(Int64.min + 1),
        .real(7.0), .real(7.5), .real(-0.0), .real(1e20), .real(-9_223_372_036_854_775_808.0), .real(9_223_372_036_854_775_808.0),
        .real(4_503_599_627_370_497.0), .text("7"), .text("7.5"), .text("abc"), .text(""),
        .blob([]), .blob([0, 0xFF, 0]), .blob([0x41]),
    ]

    private func loaded(descending: Bool) throws -> Differential {
        let d = try Differential()
        let order = descending ? " DESC" : ""
        d.run(["CREATE TABLE t (id INTEGER PRIMARY KEY, i INTEGER, n NUMERIC, r REAL, s TEXT, b BLOB, x, other TEXT)",
               "CREATE INDEX t_i ON t (i\(order), n)", "CREATE INDEX t_r ON t (r\(order))", "CREATE INDEX t_s ON t (s\(order), b)",
               "CREATE INDEX t_x ON t (x\(order))"])
        for (k, value) in values.enumerated() {
            let sql = "INSERT INTO t (id, i, n, r, s, b, x, other) VALUES (?, ?, ?, ?, ?, ?, ?, 'row')"
            let arguments: [DAOValue] = [.integer(Int64(k + 1)), value, value, value, value, value, value]
            _ = try d.oracle.execute(sql, arguments: arguments)
            try d.database.execute(sql, arguments: arguments)
        }
        return d
    }

    func testCoveredColumnsComeBackAsSQLiteStoresThem() throws {
        for descending in [false, true] {
            let d = try loaded(descending: descending)
            let queries = [
                "SELECT id, i, n, typeof(i), typeof(n) FROM t WHERE i > -1e30 ORDER BY i, id",
                "SELECT i, typeof(i) FROM t WHERE i IS NOT NULL AND i >= 0 ORDER BY i",
                "SELECT r, typeof(r) FROM t WHERE r < 1e300 ORDER BY r",
                "SELECT s, b, typeof(s), typeof(b), hex(s), hex(b) FROM t WHERE s >= '' ORDER BY s, b",
                "SELECT x, typeof(x), hex(x) FROM t WHERE x > -1e30 ORDER BY x",
                "SELECT count(*), sum(i), max(n) FROM t WHERE i BETWEEN -10 AND 1e19",
                "SELECT id FROM t WHERE s = 'abc'",
                "SELECT n, typeof(n) FROM t WHERE i = 7 ORDER BY n",
                "SELECT id, i FROM t WHERE i IN (7, 9007199254740993, -1) ORDER BY id",
            ]
            for sql in queries { d.check(sql) }
            // The plan says when the index serves the query alone, as SQLite's does.
            let plan = try d.database.queryPlan("SELECT id, i FROM t WHERE i = 7")
            XCTAssertTrue(plan.contains("USING COVERING INDEX t_i"), plan)
            let notCovered = try d.database.queryPlan("SELECT other FROM t WHERE i = 7")
            XCTAssertTrue(notCovered.contains("USING INDEX t_i"), notCovered)
        }
    }

    /// A covered scan sees the changes of the running transaction, as a row read does.
    func testCoveredScanInsideATransaction() throws {
        let d = try loaded(descending: false)
        d.run(["BEGIN", "UPDATE t SET i = i + 1 WHERE typeof(i) = 'integer' AND i BETWEEN 0 AND 100",
               "DELETE FROM t WHERE i = 8", "INSERT INTO t (i, s) VALUES (3, 'new')"])
        d.check("SELECT id, i, typeof(i) FROM t WHERE i BETWEEN -5 AND 50 ORDER BY i, id")
        d.run(["ROLLBACK"])
        d.check("SELECT id, i, typeof(i) FROM t WHERE i BETWEEN -5 AND 50 ORDER BY i, id")
    }

    /// Texts and blobs read back from entries, in both key orders, with the bytes the oracle
    /// cannot compare (a NUL inside a text, text that is not UTF-8): what the index gives must be
    /// what the row holds. (An ascending value without a zero byte is taken as it lies in the
    /// entry; the others are unescaped byte by byte.)
    func testCoveredTextsAndBlobsAreTheRowsBytes() throws {
        let temporary = try TemporaryStore()
        let db = try temporary.database
        let values = ["'a'", "''", "CAST(x'610062' AS TEXT)", "CAST(x'00' AS TEXT)", "CAST(x'61ff62' AS TEXT)", "'0123456789abcdefghij'",
                      "CAST(x'0000ff00' AS TEXT)", "'naïve'"]
        for (table, order) in [("ta", ""), ("td", " DESC")] {
            try db.execute("CREATE TABLE \(table) (id INTEGER PRIMARY KEY, s TEXT, b BLOB)")
            try db.execute("CREATE INDEX \(table)_s ON \(table) (s\(order), b\(order))")
            for (i, text) in values.enumerated() {
                try db.execute("INSERT INTO \(table) VALUES (\(i + 1), \(text), \(["x'00'", "x''", "x'41'", "x'00ff00'"][i % 4]))")
            }
            let covered = "SELECT id, hex(s), hex(b), typeof(s), typeof(b) FROM \(table) WHERE s >= '' ORDER BY id"
            let plan = try db.queryPlan("SELECT id, s, b FROM \(table) WHERE s >= ''")
            XCTAssertTrue(plan.contains("COVERING INDEX \(table)_s"), plan)
            let fromRows = "SELECT id, hex(s), hex(b), typeof(s), typeof(b) FROM \(table) NOT INDEXED ORDER BY id"
            XCTAssertEqual(try db.execute(covered).rows, try db.execute(fromRows).rows, table)
            XCTAssertEqual(try db.execute(fromRows).rows.count, values.count)
            var streamed: [[DAOValue]] = []
            try db.forEachRow("SELECT hex(s), hex(b) FROM \(table) WHERE s >= ''") { streamed.append($0.values) }
            XCTAssertEqual(Set(streamed.map { "\($0)" }), Set(try db.execute("SELECT hex(s), hex(b) FROM \(table) NOT INDEXED").rows.map { "\($0)" }), table)
        }
    }
}
