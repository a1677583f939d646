@testable import DAO
import XCTest

/// Column affinity from declared types and storage classes of stored values, against SQLite.
final class AffinityTests: XCTestCase {
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
