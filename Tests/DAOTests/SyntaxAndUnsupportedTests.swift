@testable import DAO
import XCTest

/// Syntax errors name line and column; constructs outside the subset are named.
final class SyntaxAndUnsupportedTests: XCTestCase {
    private func syntaxPosition(_ sql: String) -> (String, Int, Int)? {
        do {
            _ = try Parser.parse(sql)
        } catch DAOError.syntax(let message, let line, let column) {
            return (message, line, column)
        } catch {
            XCTFail("\(sql): \(error)")
        }
        return nil
    }

    func testSyntaxErrorsNameLineAndColumn() {
        XCTAssertEqual(syntaxPosition("SELECT * FORM t").map { [$0.1, $0.2] }, [1, 10])
        XCTAssertEqual(syntaxPosition("SELECT * FORM t")?.0, "near \"FORM\": syntax error")
        XCTAssertEqual(syntaxPosition("SELECT a,\n  b\n  FROM t WHERE )").map { [$0.1, $0.2] }, [3, 16])
        XCTAssertEqual(syntaxPosition("SELECT 'unterminated").map { [$0.1, $0.2] }, [1, 8])
        XCTAssertEqual(syntaxPosition("SELECT 1 +")?.0, "incomplete input")
        XCTAssertEqual(syntaxPosition("CREATE TABLE t (a INT,)").map { [$0.1, $0.2] }, [1, 23])
        XCTAssertEqual(syntaxPosition("INSERT INTO t VALUES (1) garbage").map { [$0.1, $0.2] }, [1, 26])
        XCTAssertEqual(syntaxPosition("SELECT 1 -- comment\n /* block */ FROM")?.1, 2)
    }

    /// Columns count characters, not bytes, across many tokens on one line and after newlines
    /// (the lexer counts them incrementally).
    func testColumnsOfLongLinesAndMultibyteText() throws {
        let rows = (0..<2_000).map { "(\($0), 'é\($0)')" }.joined(separator: ", ")
        let insert = "INSERT INTO t VALUES " + rows + " garbage"
        // Every 'é' is two bytes and one character.
        XCTAssertEqual(syntaxPosition(insert).map { [$0.1, $0.2] }, [1, insert.count - 6])
        XCTAssertEqual(syntaxPosition("SELECT 'ééé',\n 'ü' FROM t WHERE )\nx").map { [$0.1, $0.2] }, [2, 19])
        XCTAssertEqual(syntaxPosition("SELECT 'ééé', 1 FROM t WHERE )").map { [$0.1, $0.2] }, [1, 30])
    }

    func testUnsupportedConstructsAreNamed() throws {
        let temporary = try TemporaryStore()
        let db = try temporary.database
        try db.execute("CREATE TABLE t (a, b)")
        let cases: [(String, String)] = [
            ("SELECT * FROM t RIGHT JOIN t AS u ON 1", "RIGHT JOIN"),
            ("SELECT * FROM t FULL JOIN t AS u ON 1", "FULL JOIN"),
            ("SELECT * FROM t JOIN (t AS u JOIN t AS v ON 1) ON 1", "parenthesized join"),
            ("SELECT * FROM t LEFT JOIN t AS u ON u.a = v.a, t AS v", "ON clause of a LEFT JOIN naming a table joined after it"),
            ("SELECT (SELECT max(t.a) FROM t AS u) FROM t", "aggregate of an enclosing query's column in a subquery"),
            ("CREATE TRIGGER tr INSTEAD OF INSERT ON t BEGIN SELECT 1; END", "INSTEAD OF trigger"),
            ("SELECT soundex(a) FROM t", "function soundex"),
            ("PRAGMA cache_size = 100", "PRAGMA cache_size"),
            ("INSERT INTO t SELECT 1, 2 ON CONFLICT DO NOTHING", "UPSERT after INSERT ... SELECT"),
        ]
        for (sql, construct) in cases {
            XCTAssertThrowsError(try db.execute(sql), sql) { error in
                guard case DAOError.unsupported(let name) = error else { return XCTFail("\(sql): \(error)") }
                XCTAssertEqual(name, construct, sql)
            }
        }
    }

    func testParametersAndComments() throws {
        let temporary = try TemporaryStore()
        let db = try temporary.database
        try db.execute("create table T (a, b) -- trailing comment")
        try db.execute("INSERT INTO t VALUES (:x, :y)", named: ["x": 1, "y": "two"])
        try db.execute("insert into t values (?2, ?1)", arguments: [1, "three"])
        XCTAssertEqual(try db.execute("SELECT /* c */ a, b FROM t WHERE a = :x OR b = :x", named: ["x": "three"]).rows,
                       [[.text("three"), .integer(1)]])
        let statement = try db.prepare("SELECT b FROM t WHERE a = ?")
        XCTAssertEqual(try statement.execute(arguments: [1]).rows, [[.text("two")]])
        XCTAssertEqual(try statement.execute(arguments: ["three"]).rows, [[.integer(1)]])
        XCTAssertEqual(statement.parameterCount, 1)
        XCTAssertThrowsError(try db.execute("SELECT * FROM missing")) { error in
            guard case DAOError.noSuchTable("missing") = error else { return XCTFail("\(error)") }
        }
        XCTAssertThrowsError(try db.execute("SELECT missing FROM t")) { error in
            guard case DAOError.noSuchColumn("missing") = error else { return XCTFail("\(error)") }
        }
        XCTAssertThrowsError(try db.execute("CREATE TABLE t (x)"))
        try db.execute("CREATE TABLE IF NOT EXISTS t (x)")
        try db.execute("DROP TABLE IF EXISTS missing")
    }
}
