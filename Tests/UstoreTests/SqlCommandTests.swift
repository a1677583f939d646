import Foundation
import XCTest

/// `ustore sql`: one JSON line per statement, exact value spellings, errors that do not stop a
/// script.
final class SqlCommandTests: UstoreTestCase {
    /// Writes `text` to a script file in a scratch directory.
    private func script(_ text: String) throws -> URL {
        let url = try makeStorePath("script.sql")
        try Data(text.utf8).write(to: url)
        return url
    }

    /// Skips while the SQL engine is the interface stub (every statement then fails alike).
    private func skipWithoutEngine(_ run: Run) throws {
        if (run.stdoutText + run.stderr).contains("SQL engine not built yet") { throw XCTSkip("SQLDatabase is still the interface stub") }
    }

    func testScriptPrintsOneExactLinePerStatementAndGoesOnAfterErrors() throws {
        let store = try makeStorePath()
        let file = try script("""
            CREATE TABLE t (id INTEGER PRIMARY KEY, name TEXT UNIQUE, score REAL, data BLOB);
            INSERT INTO t (name, score, data) VALUES ('ann; not a split', 2, x'00ff'),
              ('bob', 0.5, NULL);
            INSERT INTO t (name) VALUES ('ann; not a split');
            SELECT id, name, score, data, 7 / 2, 1e308 * 10 FROM t ORDER BY id;
            UPDATE t SET score = score + 1 WHERE name = 'bob';
            SELECT * FROM nowhere;
            DELETE FROM t WHERE id = 1
            """)
        let run = try ustore(["sql", store.path, "--file", file.path])
        try skipWithoutEngine(run)
        XCTAssertEqual(run.status, 2, "a statement failed")
        XCTAssertEqual(run.lines.count, 7, run.stdoutText)
        guard run.lines.count == 7 else { return }
        XCTAssertEqual(run.lines[0], #"{"ok":true,"changes":0,"lastInsertRowId":0}"#)
        XCTAssertEqual(run.lines[1], #"{"ok":true,"changes":2,"lastInsertRowId":2}"#)
        XCTAssertTrue(run.lines[2].hasPrefix(#"{"ok":false,"error":""#), run.lines[2])
        XCTAssertEqual(run.lines[3], #"{"ok":true,"rows":[[1,"ann; not a split",2.0,{"blob":"AP8="},3,1e999],[2,"bob",0.5,null,3,1e999]]}"#)
        XCTAssertEqual(run.lines[4], #"{"ok":true,"changes":1,"lastInsertRowId":2}"#)
        XCTAssertEqual(try parseObject(run.lines[5])["ok"] as? Bool, false)
        XCTAssertEqual(run.lines[6], #"{"ok":true,"changes":1,"lastInsertRowId":2}"#)
        // The writes are in the store.
        let after = try ustoreOK(["sql", store.path, "SELECT name, score FROM t"])
        XCTAssertEqual(after.lines, [#"{"ok":true,"rows":[["bob",1.5]]}"#])
    }

    func testSingleStatementPrintsItsResult() throws {
        let store = try makeStorePath()
        let run = try ustore(["sql", store.path, "SELECT 1, 1.0, 'a\"b', NULL, x'', 1e300 * 1e10 * -1, 100000000000000000000.0"])
        try skipWithoutEngine(run)
        XCTAssertEqual(run.status, 0, run.stderr)
        XCTAssertEqual(run.lines, [#"{"ok":true,"rows":[[1,1.0,"a\"b",null,{"blob":""},-1e999,1e+20]]}"#])
    }

    func testTextThatIsNotValidUTF8PrintsItsBytes() throws {
        let store = try makeStorePath()
        let run = try ustore(["sql", store.path, "SELECT CAST(x'8e30' AS TEXT), 'é' || char(65533), CAST(x'c3a9' AS TEXT)"])
        try skipWithoutEngine(run)
        XCTAssertEqual(run.status, 0, run.stderr)
        // U+FFFD spelled in the text itself stays a string; ill-formed bytes become base64.
        XCTAssertEqual(run.lines, ["{\"ok\":true,\"rows\":[[{\"text\":\"jjA=\"},\"é\u{FFFD}\",\"é\"]]}"])
    }

    func testFailingSingleStatementPrintsErrorAndExitsTwo() throws {
        let store = try makeStorePath()
        let run = try ustore(["sql", store.path, "SELEC 1"])
        try skipWithoutEngine(run)
        XCTAssertEqual(run.status, 2)
        XCTAssertEqual(run.lines.count, 1)
        let object = try parseObject(run.lines.first ?? "")
        XCTAssertEqual(object["ok"] as? Bool, false)
        XCTAssertNotNil(object["error"] as? String)
    }

    func testScriptSplitsOnlyAtSemicolonsEndingALine() throws {
        let store = try makeStorePath()
        // Three statements (blank ones skipped); each fails or succeeds, but each gives one line.
        let file = try script("SELECT 1;\n\n  ;\nSELECT ';',\n 2 ;  \r\nSELECT 3")
        let run = try ustore(["sql", store.path, "--file", file.path])
        try skipWithoutEngine(run)
        XCTAssertEqual(run.lines.count, 3, run.stdoutText)
    }

    /// A trigger's body may have its statements on lines of their own: only its `END;` ends
    /// the CREATE TRIGGER, as in the sqlite3 shell.
    func testScriptKeepsATriggersBodyTogether() throws {
        let store = try makeStorePath()
        let file = try script("""
            CREATE TABLE t (a);
            CREATE TABLE log (x);
            CREATE TRIGGER tr AFTER INSERT ON t
            BEGIN
              INSERT INTO log VALUES (new.a);
              INSERT INTO log VALUES (new.a * 10);
            END;
            INSERT INTO t VALUES (2);
            SELECT x FROM log ORDER BY x;
            """)
        let run = try ustore(["sql", store.path, "--file", file.path])
        try skipWithoutEngine(run)
        XCTAssertEqual(run.lines.count, 5, run.stdoutText)
        XCTAssertEqual(run.lines.last, #"{"ok":true,"rows":[[2],[20]]}"#)
    }

    func testStatementAndFileAreExclusive() throws {
        let store = try makeStorePath()
        XCTAssertEqual(try ustore(["sql", store.path]).status, 64)
        XCTAssertEqual(try ustore(["sql", store.path, "SELECT 1", "--file", "x.sql"]).status, 64)
    }
}
