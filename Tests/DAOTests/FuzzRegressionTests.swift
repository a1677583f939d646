import DAO
import Foundation
import XCTest

/// Inputs from the libFuzzer targets (scripts/fuzz.sh) that once crashed or hung, kept as tests.
final class FuzzRegressionTests: XCTestCase {
    private func syntaxMessage(_ sql: String) -> String? {
        do {
            let temporary = try TemporaryStore()
            _ = try temporary.database.execute(sql)
            return nil
        } catch DAOError.syntax(let message, _, _) {
            return message
        } catch {
            return "\(error)"
        }
    }

    /// fuzz-sql, 2026-11-22: about 2,000 nested parentheses overflowed the stack of the
    /// recursive-descent parser (`SELECT a,CREATE((((...`). Nesting is bounded now, at SQLite's
    /// depth: it takes 50 nested parentheses and refuses 100 with "parser stack overflow".
    func testDeeplyNestedParenthesesAreAnErrorNotACrash() throws {
        let open = String(repeating: "(", count: 2_000)
        // CREATE is a keyword SQLite never takes as a name: the input stops there, as in SQLite.
        XCTAssertEqual(syntaxMessage("SELECT a,CREATE" + open + "~" + open + "1"), "near \"CREATE\": syntax error")
        XCTAssertEqual(syntaxMessage("SELECT a,f" + open + "~" + open + "1"), "parser stack overflow")
        let oracle = try SQLiteOracle()
        for depth in [50, 100, 5_000] {
            let sql = "SELECT " + String(repeating: "(", count: depth) + "1" + String(repeating: ")", count: depth)
            let theirs: String?
            do { _ = try oracle.execute(sql); theirs = nil } catch { theirs = "\(error)" }
            let ours = syntaxMessage(sql)
            XCTAssertEqual(ours == nil, theirs == nil, "depth \(depth): ours \(ours ?? "ok"), SQLite \(theirs ?? "ok")")
            if depth >= 100 { XCTAssertEqual(ours, "parser stack overflow", "depth \(depth)") }
        }
        // Prefix operators nest the same way.
        XCTAssertEqual(syntaxMessage("SELECT " + String(repeating: "- ", count: 5_000) + "1"), "parser stack overflow")
        XCTAssertEqual(syntaxMessage("SELECT " + String(repeating: "NOT ", count: 5_000) + "1"), "parser stack overflow")
    }

    /// A chain of binary operators nests the tree, not the parser: SQLite refuses a tree deeper
    /// than 1,000 (999 ORs pass, 1,000 do not), and so does the engine, so that evaluating
    /// or resolving a statement never recurses deeper than that.
    func testExpressionTreesDeeperThanSQLitesLimitAreRefused() throws {
        let oracle = try SQLiteOracle()
        for count in [998, 999, 1_000, 50_000] {
            let sql = "SELECT 1" + String(repeating: " OR 1", count: count)
            let theirs: String?
            do { _ = try oracle.execute(sql); theirs = nil } catch { theirs = "\(error)" }
            let ours = syntaxMessage(sql)
            XCTAssertEqual(ours == nil, theirs == nil, "\(count) ORs: ours \(ours ?? "ok"), SQLite \(theirs ?? "ok")")
            if count >= 1_000 { XCTAssertEqual(ours, "Expression tree is too large (maximum depth 1000)", "\(count) ORs") }
        }
        let temporary = try TemporaryStore()
        let db = try temporary.database
        XCTAssertEqual(try db.execute("SELECT 1" + String(repeating: " + 1", count: 998)).rows, [[.integer(999)]])
        // Comparisons nested as deep, with and without COLLATE: each takes its collation
        // without walking the whole tree below it again.
        XCTAssertEqual(try db.execute("SELECT 1" + String(repeating: " = 1", count: 997)).rows, [[.integer(1)]])
        XCTAssertEqual(try db.execute("SELECT 'a'" + String(repeating: " = 'A' COLLATE NOCASE", count: 400)).rows, [[.integer(0)]])
        // A chain of COLLATEs is parsed by a loop: too deep a tree is an error, not a crash.
        XCTAssertEqual(syntaxMessage("SELECT 1" + String(repeating: " COLLATE NOCASE", count: 5_000)),
                       "Expression tree is too large (maximum depth 1000)")
    }
}
