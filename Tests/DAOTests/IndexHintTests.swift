@testable import DAO
import XCTest

/// INDEXED BY, NOT INDEXED and REINDEX (issue 15 item 6), compared with SQLite.
final class IndexHintTests: XCTestCase {
    private func makeDifferential() throws -> Differential {
        let d = try Differential()
        d.run(["CREATE TABLE t(a INTEGER, b TEXT)", "CREATE INDEX ta ON t(a DESC)", "CREATE UNIQUE INDEX tb ON t(b)",
               "INSERT INTO t VALUES (3, 'c'), (1, 'a'), (2, 'b'), (NULL, 'n'), (2, 'bb')"])
        return d
    }

    func testNotIndexedScansInRowidOrder() throws {
        let d = try makeDifferential()
        for sql in ["SELECT a, b FROM t NOT INDEXED", "SELECT b FROM t NOT INDEXED WHERE a = 2", "SELECT b FROM t AS x NOT INDEXED WHERE x.a > 1",
                    "SELECT group_concat(b) FROM t NOT INDEXED WHERE a >= 1", "SELECT b FROM t NOT INDEXED WHERE a > 1 ORDER BY a DESC, b",
                    "SELECT b FROM t NOT INDEXED WHERE b > 'a' LIMIT 2"] {
            d.check(sql)
        }
        // The planner would use the index; NOT INDEXED reads in rowid order, as SQLite does.
        _ = try d.database.execute("SELECT b FROM t NOT INDEXED WHERE a = 2")
        XCTAssertEqual(d.database.lastPlan, "SCAN")
    }

    func testIndexedByTheChosenIndexOrRefused() throws {
        let d = try makeDifferential()
        XCTAssertEqual(d.check("SELECT b FROM t INDEXED BY ta WHERE a = 2"), [["b"], ["bb"]])
        d.check("SELECT a FROM t INDEXED BY tb WHERE b = 'c'")
        // A missing index is SQLite's error.
        XCTAssertThrowsError(try d.oracle.execute("SELECT b FROM t INDEXED BY nosuch WHERE a = 2"))
        XCTAssertThrowsError(try d.database.execute("SELECT b FROM t INDEXED BY nosuch WHERE a = 2")) {
            XCTAssertEqual("\($0)", "no such index: nosuch")
        }
        // An index the planner does not take is refused, never answered in another order.
        XCTAssertThrowsError(try d.database.execute("SELECT b FROM t INDEXED BY ta")) { error in
            guard case DAOError.unsupported(let name) = error else { return XCTFail("\(error)") }
            XCTAssertTrue(name.hasPrefix("INDEXED BY"))
        }
    }

    func testReindexChecksTheName() throws {
        let d = try makeDifferential()
        for sql in ["REINDEX", "REINDEX ta", "REINDEX t", "REINDEX nocase", "REINDEX tb"] {
            XCTAssertNoThrow(try d.oracle.execute(sql), sql)
            XCTAssertNoThrow(try d.database.execute(sql), sql)
        }
        XCTAssertThrowsError(try d.oracle.execute("REINDEX nosuch"))
        XCTAssertThrowsError(try d.database.execute("REINDEX nosuch")) {
            XCTAssertEqual("\($0)", "unable to identify the object to be reindexed")
        }
        d.check("SELECT b FROM t WHERE a = 2")
    }
}
