@testable import DAO
import XCTest

/// Disagreements with SQLite found by dao-typed's differential generator (/work/dao-findings.md),
/// one test each, compared with SQLite.
final class FindingsRegressionTests: XCTestCase {
    private func lastRowId(_ d: Differential) throws -> Int64 {
        let ours = try d.database.execute("SELECT 1").lastInsertRowId
        let theirs = try d.oracle.execute("SELECT last_insert_rowid()")
        XCTAssertEqual([[DAOValue.integer(ours)]], theirs)
        return ours
    }

    func testF1DefaultOfSmallestInteger() throws {
        let d = try Differential()
        d.run(["CREATE TABLE t (id INTEGER PRIMARY KEY, c NUMERIC NOT NULL DEFAULT -9223372036854775808, d INT)",
               "INSERT INTO t (d) VALUES (1)", "INSERT OR REPLACE INTO t (c, d) VALUES (NULL, 2)"])
        d.check("SELECT *, typeof(c) FROM t")
    }

    func testF2NewRowidAfterNegativeMaximum() throws {
        let d = try Differential()
        d.run(["CREATE TABLE t (id INTEGER PRIMARY KEY, c TEXT)", "INSERT INTO t VALUES (-1, 'a')", "INSERT INTO t (c) VALUES ('b')"])
        XCTAssertEqual(try lastRowId(d), 0)
        d.run(["DELETE FROM t", "INSERT INTO t VALUES (-9223372036854775808, 'a')", "INSERT INTO t (c) VALUES ('b')"])
        d.check("SELECT * FROM t")
    }

    func testF3AutoincrementNumberUsedByIgnoredRow() throws {
        let d = try Differential()
        d.run(["CREATE TABLE t (id INTEGER PRIMARY KEY AUTOINCREMENT, c TEXT UNIQUE)", "INSERT INTO t VALUES ('1e3', 'a')",
               "INSERT INTO t (c) VALUES ('b')", "INSERT OR IGNORE INTO t (c) VALUES ('a'), ('c')"])
        d.check("SELECT * FROM t")
        XCTAssertEqual(try lastRowId(d), 1003)
        d.run(["INSERT OR IGNORE INTO t VALUES (2000, 'a')", "INSERT OR REPLACE INTO t (c) SELECT 'z'"])
        d.check("SELECT * FROM t")
    }

    func testF4LikeAndGlobNeverMatchBlobs() throws {
        let d = try Differential()
        d.run(["CREATE TABLE t (c)", "INSERT INTO t VALUES (x'61'), ('a'), (x'')"])
        d.check("SELECT c, c GLOB '?', c GLOB '*', c LIKE 'a', c LIKE '%', 'a' LIKE c, c NOT LIKE 'a' FROM t")
        d.check("SELECT count(*) FROM t WHERE c LIKE '%'")
    }

    func testF5SubstrOfEmptyBlob() throws {
        let d = try Differential()
        d.check("SELECT typeof(substr(x'', 9)), typeof(substr(x'', 5, 0)), typeof(substr(x'', 1)), typeof(substr('', 1))")
    }

    func testF6ReplaceWithEmptyPattern() throws {
        let d = try Differential()
        d.check("SELECT replace(1e-300, x'00', '12'), typeof(replace(0.5, x'00', NULL)), replace(7, '', 'x'), typeof(replace(7, '', NULL))")
    }

    func testF7InUsesTheLeftAffinity() throws {
        let d = try Differential()
        d.run(["CREATE TABLE t (r REAL, i INTEGER, x TEXT)", "INSERT INTO t VALUES (0.5, 5, '5')"])
        d.check("SELECT '0.5' IN (r), '0.5' = r, '5' IN (i, 0), 5 IN (x), r IN ('0.5'), i IN ('5'), x IN (5), +i IN ('5') FROM t")
        d.run(["CREATE INDEX ti ON t (i)"])
        d.check("SELECT rowid FROM t WHERE i IN ('5')")
    }

    func testF8RemainderOfTextOperands() throws {
        let d = try Differential()
        d.check("SELECT 20.0 % '1.0e-300', 1 % ' 1e3', 7 % '3abc', 7 % '2.9', 1 % 0.5, 5 % 2.5")
    }

    func testF9TypelessColumnAgainstTextAffinity() throws {
        let d = try Differential()
        d.run(["CREATE TABLE t (c0 DOUBLE, c1, x TEXT, i INTEGER)", "INSERT INTO t VALUES ('abc', 'abc', '5', 5), (-0.125, 123.456, '6', 6)"])
        d.check("SELECT c1, c1 >= CAST(0 AS TEXT), c1 >= '0', +x = 5, x = 5, +i = '5', c1 = x FROM t")
    }

    func testF10UnaryPlusStripsAffinity() throws {
        let d = try Differential()
        d.run(["CREATE TABLE t (v VARCHAR(10), w TEXT)", "INSERT INTO t VALUES ('-0', 'abc'), ('19', '0')"])
        d.check("SELECT v, (+ v) BETWEEN -2.5 AND w, (+ v) >= 6, v >= 6, (- w) <> (+ w) FROM t")
    }

    func testF11TextStopsAtNul() throws {
        let d = try Differential()
        d.run(["CREATE TABLE t (c)", "INSERT INTO t VALUES (x'00'), (x'ff00'), (x'610062')"])
        d.check("SELECT CAST(c AS TEXT) GLOB '?', CAST(c AS TEXT) LIKE '', CAST(c AS TEXT) LIKE '_', length(CAST(c AS TEXT)), substr(CAST(c AS TEXT), 1) FROM t")
    }

    func testF12CastNumericKeepsLargeIntegralRealsReal() throws {
        let d = try Differential()
        d.check("SELECT CAST('2.5e+15' AS NUMERIC), typeof(CAST('12.5e+15' AS NUMERIC)), typeof(CAST('4503599627370496.0' AS NUMERIC)), typeof(CAST('1e3' AS NUMERIC))")
    }

    func testF13IntegerRealComparisonIsExactNearTwoToThe63() throws {
        let d = try Differential()
        d.run(["CREATE TABLE t (c DOUBLE, i INTEGER)", "INSERT INTO t VALUES ('9223372036854775808', 9223372036854775807)"])
        d.check("SELECT c = 9223372036854775807, c > 9223372036854775807, c BETWEEN 0 AND 9223372036854775807, c IN (9223372036854775807), i = c, i < 9223372036854775808.0 FROM t")
        d.run(["CREATE INDEX tc ON t (c)"])
        d.check("SELECT count(*) FROM t WHERE c = 9223372036854775807")
    }

    func testF14ReplaceWithEmptyPatternTurnsABlobIntoText() throws {
        let d = try Differential()
        d.run(["CREATE TABLE t (c FLOAT, d)", "INSERT INTO t VALUES (x'', NULL), (x'61', 'z')"])
        d.check("SELECT typeof(replace(c, c, d)), replace(c, '', d), typeof(replace(c, '', 'x')), typeof(replace(x'61', '', NULL)) FROM t")
    }

    func testF15IndexIsNotUsedWhenTheComparisonConvertsTheColumn() throws {
        let d = try Differential()
        d.run(["CREATE TABLE t1 (c0, c1 TEXT, c2)", "CREATE INDEX t1_i0 ON t1 (c1)", "CREATE INDEX t1_i2 ON t1 (c2)",
               "INSERT INTO t1 VALUES (1, '0', '5'), (2, '0', 5)"])
        d.check("SELECT c0 FROM t1 WHERE CAST(0 AS REAL) = c1")
        d.check("SELECT c0 FROM t1 WHERE c1 BETWEEN CAST(0 AS INTEGER) AND 1")
        d.check("SELECT c0 FROM t1 WHERE c2 = CAST(5 AS INTEGER) ORDER BY c0")
        d.check("SELECT c0 FROM t1 WHERE c2 = 5")
        d.check("SELECT c0 FROM t1 WHERE c1 = 0")
    }

    func testF17OrInAValueEvaluatesItsRightOperand() throws {
        let d = try Differential()
        d.run(["CREATE TABLE t (c INTEGER)", "INSERT INTO t VALUES (-9223372036854775808)"])
        d.check("SELECT 1 OR abs(c) FROM t")
        d.check("SELECT 0 AND abs(c) FROM t")
        d.check("SELECT count(*) FROM t WHERE 1 OR abs(c)")
        d.check("SELECT CASE WHEN 1 OR abs(c) THEN 'y' END FROM t")
        d.check("UPDATE t SET c = ((11 <> '') OR abs(c))")
        d.check("SELECT c FROM t")
    }

    func testF16TextToRealConversionMatchesSQLitesRounding() throws {
        let d = try Differential()
        d.run(["CREATE TABLE t (c DATE, d TEXT)", "INSERT INTO t VALUES ('5.88235294117647e-302', '5.88235294117647e-302')"])
        d.check("SELECT c, CAST(d AS REAL), d + 0, 5.88235294117647e-302, 1e308 * 10, '1e400' + 0, 0.1, 123456789012345678901234567890.5, '.5e-3' + 0, 1.7976931348623157e308")
        d.check("SELECT 4.9406564584124654e-324, 2.2250738585072014e-308, 9007199254740993.0, 0.30000000000000004, 1e22, 1e23, 1e-22")
    }

    func testF19NumberReturnedByReplaceTakesNoTextAffinity() throws {
        let d = try Differential()
        d.run(["CREATE TABLE t (c TEXT, n INT)", "INSERT INTO t VALUES ('1', 1)"])
        d.check("SELECT replace(1, '', 'x') >= c, 1 >= c, replace(1, '', 'x') = c, typeof(replace(1, '', 'x')), replace(1, x'00', 'x') = c FROM t")
        d.check("SELECT c IN (replace(1, '', 'x')), replace(1, '', 'x') BETWEEN c AND c, replace('1', '', 'x') = n, replace('1', '1', '1') = n FROM t")
    }
}
