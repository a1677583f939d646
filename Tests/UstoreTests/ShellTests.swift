import Foundation
import XCTest

/// `ustore shell`: at a terminal (driven through a pseudo-terminal, as a user types) and piped.
final class ShellTests: UstoreTestCase {

    func startShell(_ store: URL) throws -> PseudoTerminal {
        let binary = try XCTUnwrap(UstoreBinary.url, "ustore binary not found; build it first")
        return try PseudoTerminal(binary: binary, arguments: ["shell", store.path])
    }

    func testTerminalSessionWithMultiLineStatementsModesHistoryAndErrors() throws {
        let store = try makeStorePath()
        let terminal = try startShell(store)
        terminal.prompt()
        // A statement over two lines: the second prompt is the continuation prompt.
        terminal.type("CREATE TABLE t(id INTEGER PRIMARY KEY,\r")
        terminal.continuation()
        terminal.type("name TEXT);\r")
        terminal.prompt()
        terminal.type("INSERT INTO t(name) VALUES ('ann'), ('bob;by');\r")
        terminal.prompt()
        terminal.type("SELECT name FROM t ORDER BY name;\r")
        let box = terminal.prompt()
        XCTAssertTrue(box.contains("│ name   │"), box)
        XCTAssertTrue(box.contains("│ ann    │"), box)
        XCTAssertTrue(box.contains("│ bob;by │"), box)
        XCTAssertTrue(box.contains("└────────┘"), box)

        // Up arrow recalls the query; Enter runs it again, in the mode set since.
        terminal.type(".mode csv\r")
        terminal.prompt()
        terminal.type("\u{1B}[A\u{1B}[A\r")
        let csv = terminal.prompt()
        XCTAssertTrue(csv.contains("name\r\nann\r\nbob;by\r\n"), csv)

        // Editing: the cursor moves left and a character is inserted mid-line.
        terminal.type("SELEC count(*) FROM t;\u{1B}[D\u{1B}[D\u{1B}[D\u{1B}[D\u{1B}[D\u{1B}[D\u{1B}[D\u{1B}[D\u{1B}[D\u{1B}[D\u{1B}[D\u{1B}[D\u{1B}[D\u{1B}[D\u{1B}[D\u{1B}[D\u{1B}[DT\r")
        let count = terminal.prompt()
        XCTAssertTrue(count.contains("count(*)\r\n2\r\n"), count)

        // A syntax error on the second line of a statement names that line and column.
        // (It is the session's ninth input line.)
        terminal.type("SELECT name FROM t\r")
        terminal.continuation()
        terminal.type("  WHERE id = = 2;\r")
        let error = terminal.prompt()
        XCTAssertTrue(error.contains("Error: line 9, column 14: syntax error"), error)
        XCTAssertTrue(error.contains("    WHERE id = = 2\r\n" + String(repeating: " ", count: 15) + "^"), error)

        // Ctrl-C drops a half-typed statement; dot-commands work again at once.
        terminal.type("SELECT\r")
        terminal.continuation()
        terminal.type("\u{03}")
        terminal.prompt()
        terminal.type(".tables\r")
        XCTAssertTrue(terminal.prompt().contains("t\r\n"))
        terminal.type("EXPLAIN QUERY PLAN SELECT * FROM t WHERE id = 2;\r")
        XCTAssertTrue(terminal.prompt().contains("`--SEARCH t USING ROWID (1 lookup)"))
        terminal.type(".quit\r")
        XCTAssertEqual(terminal.waitForExit(), 0)

        // Everything typed was written to the store.
        XCTAssertEqual(try ustoreOK(["sql", store.path, "SELECT name FROM t ORDER BY id"]).stdoutText,
                       #"{"ok":true,"rows":[["ann"],["bob;by"]]}"# + "\n")
    }

    func testCtrlDOnAnEmptyLineEndsTheSession() throws {
        let terminal = try startShell(try makeStorePath())
        terminal.prompt()
        terminal.type("\u{04}")
        XCTAssertEqual(terminal.waitForExit(), 0)
    }

    func testPipedScriptPrintsListModeAndReportsErrorsByLine() throws {
        let store = try makeStorePath()
        let script = """
            CREATE TABLE p(id INTEGER PRIMARY KEY, name TEXT, score REAL);
            CREATE INDEX p_score ON p(score);
            INSERT INTO p(name, score) VALUES ('a', 1.5),
              ('b', 2), (NULL, 3);
            SELECT id, name, score FROM p ORDER BY id;
            .headers on
            .mode column
            SELECT name, score FROM p WHERE score > 1.7 ORDER BY score;
            .mode json
            SELECT name FROM p WHERE id = 1;
            .mode line
            SELECT id, name FROM p WHERE id = 2;
            .indexes p
            .schema p
            SELECT missing FROM nowhere;
            SELECT 1 +;
            .mode nonsense
            .mode list
            SELECT 'no semicolon at the end'
            """
        let run = try ustore(["shell", store.path], stdin: Array(script.utf8))
        XCTAssertEqual(run.status, 2, "a failed statement makes a piped session exit 2")
        XCTAssertEqual(run.stdoutText, """
            1|a|1.5
            2|b|2.0
            3||3.0
            name  score
            ----  -----
            b     2.0
                  3.0
            [{"name":"a"}]
              id = 2
            name = b
            p_score
            CREATE TABLE "p" ("id" INTEGER PRIMARY KEY, "name" TEXT, "score" REAL);
            CREATE INDEX "p_score" ON "p" ("score");
            'no semicolon at the end'
            no semicolon at the end

            """)
        let errors = run.stderr.split(separator: "\n").map(String.init)
        XCTAssertEqual(errors.first, "Error: line 15: no such table: nowhere", run.stderr)
        XCTAssertTrue(errors.contains { $0.hasPrefix("Error: line 16, column 11: syntax error") }, run.stderr)
        XCTAssertTrue(errors.contains { $0.hasPrefix("Error: usage: .mode box|column|csv|json|line|list") }, run.stderr)
    }

    func testATriggersBodyOverSeveralLinesIsOneStatement() throws {
        let store = try makeStorePath()
        let run = try ustore(["shell", store.path], stdin: Array("""
            CREATE TABLE t (a); CREATE TABLE log (x);
            CREATE TRIGGER tr AFTER INSERT ON t BEGIN
              INSERT INTO log VALUES (new.a);
              INSERT INTO log VALUES ('it''s; not the end');
            end;
            INSERT INTO t VALUES (7);
            SELECT x FROM log ORDER BY x;

            """.utf8))
        XCTAssertEqual(run.status, 0, run.stderr)
        XCTAssertEqual(run.stdoutText, "7\nit's; not the end\n")
    }

    func testReadRunsAFileAndNamesItInErrors() throws {
        let store = try makeStorePath()
        let file = store.deletingLastPathComponent().appendingPathComponent("setup.sql")
        try "CREATE TABLE k(v);\nINSERT INTO k VALUES (7);\n\nINSERT INTO k VALUES (8) oops;\n".write(to: file, atomically: true, encoding: .utf8)
        let run = try ustore(["shell", store.path], stdin: Array(".read \(file.path)\nSELECT sum(v) FROM k;\n".utf8))
        XCTAssertEqual(run.stdoutText, "7\n")
        XCTAssertTrue(run.stderr.hasPrefix("Error: \(file.path):line 4, column 26: syntax error"), run.stderr)
        XCTAssertEqual(run.status, 2)
    }

    func testSuccessfulPipedSessionExitsZeroAndTimerAndEqpPrint() throws {
        let store = try makeStorePath()
        let run = try ustore(["shell", store.path], stdin: Array("""
            CREATE TABLE t(a INTEGER PRIMARY KEY, b);
            .timer on
            .eqp on
            SELECT b FROM t WHERE a BETWEEN 2 AND 4;
            """.utf8))
        XCTAssertEqual(run.status, 0, run.stderr)
        let lines = run.lines
        XCTAssertTrue(lines.contains("`--SEARCH t USING ROWID RANGE 2...4"), run.stdoutText)
        XCTAssertTrue(lines.contains { $0.hasPrefix("Run Time: real ") }, run.stdoutText)
    }
}
