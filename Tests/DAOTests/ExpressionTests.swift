@testable import DAO
import XCTest

/// Expressions and NULL, compared with SQLite: arithmetic, overflow, division, comparisons
/// across storage classes, LIKE, GLOB, IN, BETWEEN, CASE, CAST, IS.
final class ExpressionTests: XCTestCase {
    func testArithmeticAndOverflow() throws {
        let d = try Differential()
        for sql in [
            "SELECT 7 / 2, -7 / 2, 7 % 3, -7 % 3, 7 % -3, 7.5 % 2, 7 / 0, 7 % 0, 7.0 / 0, 0 / 0.0",
            "SELECT 9223372036854775807 + 1, -9223372036854775808 - 1, 9223372036854775807 * 2, -9223372036854775808 / -1",
            "SELECT -9223372036854775808, - -9223372036854775808, 9223372036854775808, -(-9223372036854775807 - 1)",
            "SELECT '12abc' + 1, '1.5x' * 2, 'abc' + 0, x'3132' + 1, ' 7 ' + 0, '1e3' + 0, '.5' + 0, '5.' + 0",
            "SELECT 1 + NULL, NULL * 0, NULL / 0, -NULL, NOT NULL, ~5, 6 & 3, 6 | 3, 1 << 62, 1 << 64, -8 >> 1, 1 << -1",
            "SELECT 0.1 + 0.2, 1e308 * 10, -1e308 * 10, 1 / 3.0, 2.0 * 3, 100000000000000000000",
            "SELECT 1 || 2, 1.5 || 'x', NULL || 'x', x'41' || 'b', 1e20 || '', 1.0 || '', 123456789.123456789 || ''",
            "SELECT 0x10, 0xFFFFFFFFFFFFFFFF, -0x10, 1e-5 || '', 1.5e-7 || '', 3.0e15 || '', 1e16 || ''",
        ] { d.check(sql) }
    }

    func testComparisonsAcrossStorageClasses() throws {
        let d = try Differential()
        d.run(["CREATE TABLE t (i INTEGER, r REAL, tx TEXT, b BLOB, n NUMERIC, none)",
               "INSERT INTO t VALUES (1, 1.0, '1', x'31', '1', '1')",
               "INSERT INTO t VALUES (2, 2.5, 'abc', x'41', 2.5, 2)",
               "INSERT INTO t VALUES (NULL, NULL, NULL, NULL, NULL, NULL)"])
        for sql in [
            "SELECT 1 = 1.0, 1 = '1', '1' = 1, 'a' < 'b', 'a' < x'00', 1 < 'a', NULL = NULL, NULL IS NULL, 1 IS 1.0, 1 IS NOT NULL",
            "SELECT i = '1', r = '1', tx = 1, b = '1', n = '1', none = 1, none = '1' FROM t",
            "SELECT i < '10', tx < 5, tx > 5, n > '2', none < 'z' FROM t",
            "SELECT rowid FROM t WHERE tx = 1",
            "SELECT rowid FROM t WHERE i IN ('1', 2)",
            "SELECT rowid FROM t WHERE none IN (1, '2')",
            "SELECT 1 IN (1, NULL), 3 IN (1, NULL), 3 NOT IN (1, NULL), NULL IN (), 1 IN (), NULL NOT IN ()",
            "SELECT 2 BETWEEN 1 AND 3, 2 NOT BETWEEN 1 AND 3, NULL BETWEEN 1 AND 2, 2 BETWEEN NULL AND 1, 'b' BETWEEN 'a' AND 'c'",
            "SELECT 1 AND NULL, 0 AND NULL, 1 OR NULL, 0 OR NULL, NULL AND NULL, 'x' AND 1, '1' OR 0, 0.5 AND 1",
            "SELECT CAST(i AS TEXT), CAST(tx AS INTEGER), CAST(r AS INTEGER), CAST(tx AS REAL), CAST(b AS TEXT), CAST(n AS BLOB) FROM t",
            "SELECT CAST('1e5' AS INTEGER), CAST(3.0 AS NUMERIC), CAST('3.0' AS NUMERIC), CAST(' 12 ' AS INTEGER), CAST(1e30 AS INTEGER), CAST(-1e30 AS INTEGER)",
            "SELECT CAST('abc' AS NUMERIC), CAST('12abc' AS NUMERIC), CAST('1.5e3' AS NUMERIC), CAST(NULL AS TEXT), CAST(x'41' AS TEXT), CAST(5 AS BLOB)",
            "SELECT CASE WHEN 1 THEN 'a' ELSE 'b' END, CASE 1 WHEN 1.0 THEN 'x' END, CASE NULL WHEN NULL THEN 1 ELSE 2 END, CASE 'a' WHEN 'A' THEN 1 END",
            "SELECT CASE i WHEN '1' THEN 'one' WHEN 2 THEN 'two' ELSE 'other' END FROM t",
        ] { d.check(sql) }
    }

    func testLikeAndGlob() throws {
        let d = try Differential()
        for sql in [
            "SELECT 'abc' LIKE 'ABC', 'abc' LIKE 'a%', 'abc' LIKE '_b_', 'é' LIKE 'É', 'a%c' LIKE 'a\\%c' ESCAPE '\\', 'abc' LIKE 'a\\%c' ESCAPE '\\'",
            "SELECT 123 LIKE '12%', NULL LIKE 'a', 'a' LIKE NULL, 'a' NOT LIKE 'A', 'ab' LIKE 'a', '' LIKE '%', 'a_c' LIKE 'a!_c' ESCAPE '!'",
            "SELECT 'abc' GLOB 'a*', 'abc' GLOB 'A*', 'abc' GLOB '?b?', 'abc' GLOB '[a-c]bc', 'abc' GLOB '[^a]*', 'a*c' GLOB 'a[*]c', NULL GLOB 'a'",
            "SELECT 'abc' NOT GLOB 'a*', 'x]' GLOB '[]x]]', 'b' GLOB '[a-]', '-' GLOB '[a-]', 'abc' GLOB '*c', 'abc' GLOB '*b'",
        ] { d.check(sql) }
        XCTAssertThrowsError(try d.database.execute("SELECT 'a' LIKE 'a' ESCAPE 'xy'"))
    }

    func testFunctions() throws {
        let d = try Differential()
        for sql in [
            "SELECT length('héllo'), length(x'0001'), length(12.0), length(NULL), length(123), lower('ÀBC'), upper('àbc'), upper(1.5)",
            "SELECT substr('hello', 0, 2), substr('hello', -2), substr('hello', -10, 8), substr('hello', 2, -1), substr(x'0102', 1, 1), substr('héllo', 2, 2)",
            "SELECT substr('hello', 3), substr('hello', 10), substr('hello', 0), substr('hello', -3, -2), substr(NULL, 1), substr('abc', NULL), substr(12345, 2, 3)",
            "SELECT abs(-5), abs(-5.5), abs('-3'), abs(NULL), abs('x'), typeof(abs(-'5')), coalesce(NULL, 2, 3), coalesce(NULL, NULL), ifnull(NULL, 'x'), ifnull(1, 2)",
            "SELECT typeof(1), typeof(1.0), typeof('1'), typeof(x'01'), typeof(NULL), trim('  a  '), trim('xxaxx', 'x'), trim(NULL), trim('abc', NULL), trim(12.50)",
            "SELECT instr('hello', 'l'), instr('hello', 'z'), instr('héllo', 'l'), instr(x'010203', x'03'), instr(NULL, 'a'), instr('abc', ''), instr(12345, 34)",
            "SELECT replace('hello', 'l', 'L'), replace('hello', '', 'x'), replace(NULL, 'a', 'b'), replace('aaa', 'aa', 'b'), replace(123, 2, 9)",
            "SELECT round(2.5), round(-2.5), round(1.005, 2), round(1.2345, 3), round(123.456, -1), round(5), typeof(round(5)), round(NULL), round(2.5, NULL), round('3.7')",
            "SELECT round(0.5), round(1e20), round(-0.4), round(2.675, 2), round(1.0/3, 10), max(1, 2.5, '3'), min(1, NULL), max('a', x'00'), min(3, 1.0, 2)",
        ] { d.check(sql) }
        XCTAssertThrowsError(try d.database.execute("SELECT abs(-9223372036854775808)"))
        XCTAssertThrowsError(try d.database.execute("SELECT length(1, 2)"))
    }
}
