@testable import DAO
import XCTest

/// Column affinity from declared types and storage classes of stored values, against SQLite.
final class AffinityTests: XCTestCase {
    /// `SQLValues.mayConvert` lets an insert skip writing a value back when its column's
    /// affinity leaves it as it is: wherever it says false, `apply` must give the very same
    /// value back (same case, same bits), for every affinity and the edge values of each class.
    func testMayConvertIsFalseOnlyWhereApplyChangesNothing() {
        let values: [SQLValue] = [
            .null, .integer(0), .integer(-7), .integer(Int64.max), .integer(Int64.min),
            .real(0), .real(-0.0), .real(3), .real(3.5), .real(-2.0), .real(1e300), .real(.nan), .real(.infinity),
            .real(9_223_372_036_854_775_808.0), .real(-9_223_372_036_854_775_808.0),
            .text(""), .text("12"), .text(" 12 "), .text("1.5"), .text("1e3"), .text("abc"), .text("-0.0"), .text("0x10"),
            .invalidText([0x61, 0xFF]), .blob([]), .blob([0x31, 0x32]),
        ]
        func identical(_ a: SQLValue, _ b: SQLValue) -> Bool {
            switch (a, b) {
            case (.null, .null): return true
            case (.integer(let x), .integer(let y)): return x == y
            case (.real(let x), .real(let y)): return x.bitPattern == y.bitPattern
            case (.text(let x), .text(let y)): return Array(x.utf8) == Array(y.utf8)
            case (.invalidText(let x), .invalidText(let y)), (.blob(let x), .blob(let y)): return x == y
            default: return false
            }
        }
        var conversionsSeen = 0
        for affinity in [Affinity.integer, .text, .blob, .real, .numeric] as [Affinity?] + [nil] {
            for value in values {
                let applied = SQLValues.apply(affinity, to: value)
                if !SQLValues.mayConvert(affinity, value) {
                    XCTAssertTrue(identical(applied, value), "\(String(describing: affinity)) \(value) -> \(applied)")
                } else if !identical(applied, value) {
                    conversionsSeen += 1
                }
            }
        }
        XCTAssertGreaterThan(conversionsSeen, 10, "the values exercise real conversions")
    }

    func testAffinityOfDeclaredTypes() {
        XCTAssertEqual(Affinity(declaredType: "BIGINT"), .integer)
        XCTAssertEqual(Affinity(declaredType: "char(64)"), .text)
        XCTAssertEqual(Affinity(declaredType: "CLOB"), .text)
        XCTAssertEqual(Affinity(declaredType: ""), .blob)
        XCTAssertEqual(Affinity(declaredType: "double"), .real)
        XCTAssertEqual(Affinity(declaredType: "FLOATING POINT"), .integer) // "INT" wins, as in SQLite
        XCTAssertEqual(Affinity(declaredType: "boolean"), .numeric)
        XCTAssertEqual(Affinity(declaredType: "long"), .numeric)
        XCTAssertEqual(Affinity(declaredType: "DECIMAL(10,2)"), .numeric)
    }

    func testStoredStorageClasses() throws {
        let d = try Differential()
        d.run(["CREATE TABLE t (a INT, b TEXT, c REAL, d BLOB, e NUMERIC, f, g boolean, h char(8), i double, j long)"])
        let values = ["1", "1.0", "'1'", "'1.0'", "' 2 '", "'1e3'", "'0x10'", "'abc'", "x'3132'", "NULL", "3.5", "'3.5'",
                      "9223372036854775807", "'9223372036854775808'", "1e20", "'-0'", "-0.0", "'12abc'", "'  '"]
        for value in values {
            let row = Array(repeating: value, count: 10).joined(separator: ", ")
            d.run(["INSERT INTO t VALUES (\(row))"])
        }
        let columns = ["a", "b", "c", "d", "e", "f", "g", "h", "i", "j"]
        d.check("SELECT " + columns.map { "typeof(\($0)), \($0)" }.joined(separator: ", ") + " FROM t")
        d.check("SELECT " + columns.map { "\($0) || ''" }.joined(separator: ", ") + " FROM t")
        d.check("SELECT rowid FROM t WHERE a = '1'")
        d.check("SELECT rowid FROM t WHERE b = 1")
        d.check("SELECT rowid FROM t WHERE e < '2'")
        d.check("SELECT rowid FROM t WHERE f = 1")
        d.check("SELECT count(*) FROM t WHERE c > 1")
    }

    func testIntegerPrimaryKeyIsTheRowid() throws {
        let d = try Differential()
        d.run(["CREATE TABLE t (id INTEGER PRIMARY KEY, v)",
               "INSERT INTO t VALUES ('5', 'a')", "INSERT INTO t VALUES (5.0 + 1, 'b')", "INSERT INTO t (v) VALUES ('c')",
               "INSERT INTO t (rowid, v) VALUES (100, 'd')", "INSERT INTO t (v) VALUES ('e')"])
        d.check("SELECT id, rowid, oid, _rowid_, typeof(id), v FROM t")
        d.check("INSERT INTO t VALUES ('x', 'bad')")
        d.check("INSERT INTO t VALUES (1.5, 'bad')")
        d.check("SELECT * FROM t WHERE id = '6'")
        d.check("SELECT * FROM t WHERE rowid > 5.5 AND rowid <= 100.0")
        d.check("SELECT * FROM t WHERE id IN (5, '7', 100.0, 3)")
        d.check("SELECT * FROM t ORDER BY id DESC LIMIT 2")
    }
}
