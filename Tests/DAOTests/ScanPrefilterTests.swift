@testable import DAO
import Foundation
import LogStore
import XCTest

/// Full scans whose leading comparisons are tried on the stored rows first (ScanPrefilter):
/// the same rows, in the same order, and the same errors as SQLite, whatever the columns hold.
final class ScanPrefilterTests: XCTestCase {
    /// Columns of every affinity holding values of every storage class, compared with
    /// constants of every class by every operator: each result equals SQLite's, row for row in
    /// rowid order, and the prefilter ran for each statement.
    func testEveryComparisonAgreesWithSQLite() throws {
        let d = try Differential()
        d.run(["CREATE TABLE t (id INTEGER PRIMARY KEY, i INTEGER, r REAL, s TEXT, n NUMERIC, b BLOB, x)"])
        let values = ["NULL", "0", "-1", "7", "7.0", "7.5", "-0.0", "9007199254740993", "9007199254740992.0",
                      "-9223372036854775808", "9223372036854775807", "1e300", "'7'", "' 7'", "'7.5'", "'abc'", "''", "x'07'", "x''"]
        var rowid = 0
        for (a, first) in values.enumerated() {
            for second in [values[(a * 7 + 3) % values.count], values[(a * 5 + 1) % values.count]] {
                rowid += 1
                d.run(["INSERT INTO t VALUES (\(rowid), \(first), \(first), \(first), \(first), \(first), \(second))"])
            }
        }
        let constants = ["NULL", "7", "7.0", "7.5", "-1", "9007199254740993", "9007199254740992.0", "'7'", "'7.5'", "'abc'", "x'07'"]
        let operators = ["=", "<>", "<", "<=", ">", ">="]
        var statements = 0
        for column in ["id", "i", "r", "s", "n", "b", "x"] {
            for constant in constants {
                for op in operators {
                    d.database.prefilteredScans = 0
                    d.check("SELECT id, \(column) FROM t WHERE \(column) \(op) \(constant)")
                    d.check("SELECT id FROM t WHERE \(constant) \(op) \(column)")
                    // `id` is the rowid (mostly a rowid range, no full scan); `-1` is an
                    // expression, not a constant.
                    if column != "id" {
                        XCTAssertEqual(d.database.prefilteredScans, constant.hasPrefix("-") ? 0 : 2, "\(column) \(op) \(constant)")
                    }
                    statements += 2
                }
                d.check("SELECT id FROM t WHERE \(column) BETWEEN \(constant) AND 9e99")
                d.check("SELECT count(*) FROM t WHERE \(column) BETWEEN -5 AND \(constant) AND x IS NOT NULL")
                d.check("SELECT id FROM t WHERE \(column) >= \(constant) ORDER BY id DESC")
            }
        }
        XCTAssertEqual(statements, 7 * 11 * 6 * 2)
    }

    /// The same with parameters, and with a second comparison on another column.
    func testParametersAndConjunctionsAgreeWithSQLite() throws {
        let d = try Differential()
        d.run(["CREATE TABLE m (id INTEGER PRIMARY KEY, k INTEGER, v REAL, name TEXT)"])
        for i in 0..<300 {
            let v = i % 11 == 0 ? "NULL" : String(Double(i % 97) / 4)
            let k = i % 13 == 0 ? "'t\(i)'" : String(i % 50 - 10)
            d.run(["INSERT INTO m VALUES (\(i * 3 - 100), \(k), \(v), 'n\(i % 17)')"])
        }
        d.database.prefilteredScans = 0
        let arguments: [[DAOValue]] = [[.real(3.5), .real(9)], [.integer(2), .integer(20)], [.text("4"), .text("12.25")],
                                       [.null, .integer(5)], [.integer(-200), .real(1e10)], [.blob([1]), .integer(3)]]
        for pair in arguments {
            d.check("SELECT id, v FROM m WHERE v BETWEEN ? AND ?", pair)
            d.check("SELECT id FROM m WHERE k > ? AND v < ?", pair)
            d.check("SELECT sum(v), count(*) FROM m WHERE v > ? AND name <> 'n3' AND k < ?", pair)
        }
        XCTAssertEqual(d.database.prefilteredScans, arguments.count * 3)
        for pair in arguments { d.check("SELECT id FROM m WHERE id >= ? AND k <= ?", pair) }
    }

    /// The prefilter decides the stored values themselves: numbers, texts and blobs compared
    /// in place keep only the rows that match (the usual path then reads those alone).
    func testStoredValuesOfEveryClassAreDecidedInPlace() throws {
        let d = try Differential()
        d.run(["CREATE TABLE v (id INTEGER PRIMARY KEY, n INTEGER, r REAL, s TEXT, b BLOB, x)"])
        for i in 0..<200 {
            d.run(["INSERT INTO v VALUES (\(i), \(i % 10), \(Double(i) / 8), 'name-\(i % 20)', x'\(String(format: "%04x", i % 5))', \(i % 3 == 0 ? "'t\(i % 7)'" : String(i % 7)))"])
        }
        for (sql, rows) in [("SELECT id FROM v WHERE n = 3", 20), ("SELECT id FROM v WHERE r BETWEEN 2 AND 3", 9),
                            ("SELECT id FROM v WHERE s = 'name-7'", 10), ("SELECT id FROM v WHERE s >= 'name-5' AND s < 'name-6'", 10),
                            ("SELECT id FROM v WHERE b = x'0003'", 40), ("SELECT id FROM v WHERE b > x'0003'", 40),
                            ("SELECT id FROM v WHERE x = 't2'", 10), ("SELECT id FROM v WHERE x < 3", 58),
                            ("SELECT id FROM v WHERE n > 8 AND s = 'name-19'", 10)] {
            d.database.prefilterKeptRows = 0
            XCTAssertEqual(d.check(sql)?.count, rows, sql)
            XCTAssertEqual(d.database.prefilterKeptRows, rows, "\(sql): rows kept by the prefilter")
        }
    }

    /// A table large enough for the walk to run in two parts at once: the same rows as SQLite.
    func testALargeTableWalkedInTwoPartsAgreesWithSQLite() throws {
        let d = try Differential()
        d.run(["CREATE TABLE big (id INTEGER PRIMARY KEY, k INTEGER, v REAL, s TEXT)", "BEGIN"])
        for i in 0..<40_000 {
            let sql = "INSERT INTO big VALUES (\(i * 7 % 40_009), \(i % 1000), \(Double(i % 997) / 3), 's\(i % 300)')"
            _ = try d.oracle.execute(sql)
            try d.database.execute(sql)
        }
        d.run(["COMMIT"])
        d.database.prefilteredScans = 0
        d.database.prefilterKeptRows = 0
        let found = d.check("SELECT id, v FROM big WHERE v BETWEEN 100 AND 101.5")
        d.check("SELECT count(*), sum(k) FROM big WHERE k >= 990 AND s = 's17'")
        d.check("SELECT id FROM big WHERE s > 's298' ORDER BY id DESC")
        XCTAssertEqual(d.database.prefilteredScans, 3)
        XCTAssertGreaterThan(found?.count ?? 0, 100)
    }

    /// A WHERE conjunct that is NULL rejects the row before the conjuncts after it are
    /// evaluated, as in SQLite (its WHERE terms jump to the next row on false or NULL): an
    /// expression after it that would raise an error for that row is not evaluated, with or
    /// without the prefilter; a row that reaches the expression raises the error.
    func testAConjunctAfterANullOneIsNotEvaluated() throws {
        let d = try Differential()
        d.run(["CREATE TABLE e (id INTEGER PRIMARY KEY, a INTEGER, b INTEGER)",
               "INSERT INTO e VALUES (1, 5, 1), (2, NULL, -9223372036854775808), (3, 0, 2)"])
        d.check("SELECT id FROM e WHERE a > 3 AND abs(b) > 0")
        d.check("SELECT id FROM e WHERE b < 3 AND abs(b) > 0")
        d.check("SELECT id FROM e WHERE a > 4 AND b > 0")
        XCTAssertThrowsError(try d.database.execute("SELECT id FROM e WHERE a IS NULL AND abs(b) > 0"))
        XCTAssertThrowsError(try d.oracle.execute("SELECT id FROM e WHERE a IS NULL AND abs(b) > 0"))
    }

    /// Rows the prefilter cannot read in place (encrypted records) are kept for the usual path.
    func testEncryptedRowsAreDecidedByTheUsualPath() throws {
        var options = LogStore.Options()
        options.encryption = LogStore.Options.Encryption(key: Array(repeating: 9, count: 32), keyID: 1)
        let temporary = try TemporaryStore(options: options)
        let db = try temporary.database
        try db.execute("CREATE TABLE c (id INTEGER PRIMARY KEY, v REAL)")
        for i in 0..<100 { try db.execute("INSERT INTO c VALUES (?, ?)", arguments: [.integer(Int64(i)), .real(Double(i) / 2)]) }
        db.prefilteredScans = 0
        XCTAssertEqual(try db.execute("SELECT id FROM c WHERE v BETWEEN 10 AND 11").rows, [[.integer(20)], [.integer(21)], [.integer(22)]])
        XCTAssertEqual(db.prefilteredScans, 1)
    }

    /// A row whose record fails its checksum is not silently dropped by the prefilter: the
    /// scan reports it, as the usual path does.
    func testACorruptRowIsReportedNotSkipped() throws {
        let temporary = try TemporaryStore()
        let db = try temporary.database
        try db.execute("CREATE TABLE c (id INTEGER PRIMARY KEY, v INTEGER, pad TEXT)")
        for i in 0..<50 { try db.execute("INSERT INTO c VALUES (?, ?, 'some padding text')", arguments: [.integer(Int64(i)), .integer(Int64(i))]) }
        try temporary.store.close()
        // Flip one byte of row 10's value inside its record, where its padding text is.
        let segment = try XCTUnwrap(try FileManager.default.contentsOfDirectory(atPath: temporary.directory.path)
            .filter { $0.hasSuffix(".seg") }.sorted().first)
        let url = temporary.directory.appendingPathComponent(segment)
        var bytes = try Data(contentsOf: url)
        let needle = RowCodec.encode([.null, .integer(10), .text("some padding text")], skipping: 0)
        let range = try XCTUnwrap(bytes.range(of: Data(needle)))
        bytes[range.upperBound - 1] ^= 0x20
        try bytes.write(to: url)
        try temporary.reopen()
        let reopened = try temporary.database
        XCTAssertThrowsError(try reopened.execute("SELECT id FROM c WHERE v > 40")) { error in
            XCTAssertTrue("\(error)".contains("checksum"), "\(error)")
        }
    }

    /// Pending rows of an open transaction, a column added after the rows were written, and a
    /// LIMIT: each still gives SQLite's answer.
    func testTransactionsAddedColumnsAndLimits() throws {
        let d = try Differential()
        d.run(["CREATE TABLE p (id INTEGER PRIMARY KEY, v INTEGER)"])
        for i in 0..<40 { d.run(["INSERT INTO p VALUES (\(i), \(i % 9))"]) }
        d.run(["ALTER TABLE p ADD COLUMN w INTEGER DEFAULT 4"])
        d.run(["INSERT INTO p VALUES (100, 3, 8)"])
        d.database.prefilteredScans = 0
        d.check("SELECT id FROM p WHERE w = 4 AND v > 5")
        d.check("SELECT id FROM p WHERE w > 5")
        XCTAssertEqual(d.database.prefilteredScans, 2)
        d.run(["BEGIN", "UPDATE p SET v = 100 WHERE id = 3", "DELETE FROM p WHERE id = 8"])
        d.check("SELECT id, v FROM p WHERE v > 7")
        d.run(["COMMIT"])
        d.check("SELECT id, v FROM p WHERE v > 7")
        d.check("SELECT id FROM p WHERE v > 2 LIMIT 3")
        d.database.prefilteredScans = 0
        d.check("UPDATE p SET v = v + 1 WHERE v BETWEEN 2 AND 4")
        d.check("SELECT id, v FROM p WHERE v >= 3")
        d.check("DELETE FROM p WHERE v < 2")
        XCTAssertEqual(d.database.prefilteredScans, 3, "UPDATE and DELETE narrow their full scans too")
        d.check("SELECT id, v, w FROM p WHERE id > -1")
        // UPDATE and DELETE stop at a NULL conjunct as SELECT does (and as SQLite does).
        d.run(["CREATE TABLE e (id INTEGER PRIMARY KEY, a INTEGER, b INTEGER)",
               "INSERT INTO e VALUES (1, 5, 1), (2, NULL, -9223372036854775808), (3, 0, 2)"])
        d.check("UPDATE e SET b = 0 WHERE a > 3 AND abs(b) > 0")
        d.check("DELETE FROM e WHERE a < 1 AND abs(b) > 0")
        d.check("SELECT * FROM e")
    }
}

/// Every clause that filters stops at a NULL part of a top-level AND, as SQLite jumps on false
/// or NULL there: the part after it is not evaluated, so its error is not raised. A plain AND
/// expression still evaluates both sides.
final class FilterClauseNullTests: XCTestCase {
    func testClausesStopAtANullPartOfAnAnd() throws {
        let d = try Differential()
        d.run(["CREATE TABLE t (id INTEGER PRIMARY KEY, g INTEGER, a INTEGER, b INTEGER)",
               "INSERT INTO t VALUES (1, 1, NULL, -9223372036854775808), (2, 2, 5, 1)",
               "CREATE TABLE log (id INTEGER PRIMARY KEY, note TEXT)",
               "CREATE TABLE u (k INTEGER PRIMARY KEY, v INTEGER, w INTEGER)",
               "INSERT INTO u VALUES (1, NULL, -9223372036854775808)"])
        for sql in ["SELECT g FROM t GROUP BY g HAVING max(a) > 3 AND abs(min(b)) > 0",
                    "SELECT CASE WHEN a > 3 AND abs(b) > 0 THEN 'yes' ELSE 'no' END FROM t",
                    "SELECT iif(a > 3 AND abs(b) > 0, 'yes', 'no') FROM t",
                    "SELECT 1 WHERE NULL AND abs(-9223372036854775808) > 0",
                    "SELECT (a > 3 AND abs(b) > 0) FROM t",   // an expression: both sides, the error
                    "SELECT id FROM t WHERE (a > 3 AND abs(b) > 0) OR id = 2",
                    "SELECT t.id FROM t JOIN u ON u.k = t.g WHERE (t.a > 3 AND abs(t.b) > 0) OR u.k = 2",
                    "SELECT id FROM t WHERE NOT (a > 3 AND abs(b) > 0)"] {
            d.check(sql)
        }
        d.run(["CREATE TRIGGER note AFTER UPDATE ON t WHEN new.a > 3 AND abs(new.b) > 0 BEGIN INSERT INTO log (note) VALUES ('fired'); END"])
        d.check("UPDATE t SET g = g + 1")
        d.check("SELECT note FROM log")
        d.check("INSERT INTO u VALUES (1, 7, 0) ON CONFLICT (k) DO UPDATE SET v = excluded.v WHERE u.v > 3 AND abs(u.w) > 0")
        d.check("SELECT * FROM u")
    }
}
