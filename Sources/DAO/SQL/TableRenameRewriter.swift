/// Rewrites the references to a renamed table in the SQL text of a view or a trigger, as
/// SQLite's `ALTER TABLE ... RENAME TO` does (its default, `legacy_alter_table=OFF`): each token
/// that names the table becomes the new name in double quotes. A token names the table where a
/// table goes (after FROM, JOIN, INTO, UPDATE [OR ...], `IN`, a comma of a FROM list, and the
/// trigger's own `ON`) and as the qualifier of a column (`old.column`), unless the statement
/// uses the old name as an alias somewhere (then the qualifier may be that alias, and SQLite
/// leaves a qualifier that is an alias as it is).
///
/// Works on the tokens, so strings, comments and the rest of the text stay as written.
enum TableRenameRewriter {
    /// The text with the references to `old` replaced by `"new"`; nil when it has none.
    /// - Throws: `DAOError.syntax` when the text does not tokenize (a catalog text always does).
    static func rewrite(_ sql: String, renaming old: String, to new: String) throws -> String? {
        let tokens = try Lexer.tokenize(sql)
        let target = old.lowercased()
        let scan = scanTablePositions(tokens)
        let aliasClash = scan.aliases.contains(target)
        var ranges: [Range<Int>] = []
        for (i, token) in tokens.enumerated() where isName(token) && token.text.lowercased() == target {
            if scan.tablePositions.contains(i) {
                ranges.append(token.start ..< token.end)
            } else if !aliasClash, symbol(tokens, i + 1) == ".", i + 2 < tokens.count,
                      isName(tokens[i + 2]) || symbol(tokens, i + 2) == "*" {
                ranges.append(token.start ..< token.end)
            }
        }
        guard !ranges.isEmpty else { return nil }
        let bytes = Array(sql.utf8)
        var out: [UInt8] = []
        out.reserveCapacity(bytes.count + ranges.count * (new.utf8.count + 2))
        var at = 0
        for range in ranges {
            out.append(contentsOf: bytes[at ..< range.lowerBound])
            out.append(contentsOf: SQLText.quote(new).utf8)
            at = range.upperBound
        }
        out.append(contentsOf: bytes[at...])
        return String(decoding: out, as: UTF8.self)
    }

    private static func isName(_ token: Token) -> Bool {
        token.kind == .identifier || token.kind == .quotedIdentifier
    }

    private static func symbol(_ tokens: [Token], _ i: Int) -> String? {
        guard i >= 0, i < tokens.count, tokens[i].kind == .symbol else { return nil }
        return tokens[i].text
    }

    private static func keyword(_ tokens: [Token], _ i: Int) -> String? {
        guard i >= 0, i < tokens.count, tokens[i].kind == .identifier else { return nil }
        return tokens[i].upper
    }

    /// Keywords after which a FROM list has ended.
    private static let fromListEnds: Set<String> = [
        "WHERE", "GROUP", "HAVING", "ORDER", "LIMIT", "WINDOW", "UNION", "INTERSECT", "EXCEPT",
        "SELECT", "VALUES", "SET", "RETURNING", "END", "BEGIN",
    ]

    /// The indexes of the tokens in table positions, and every alias the statement defines
    /// (lower-cased).
    private static func scanTablePositions(_ tokens: [Token]) -> (tablePositions: Set<Int>, aliases: Set<String>) {
        var positions = Set<Int>()
        var aliases = Set<String>()
        // Per parenthesis depth: whether a FROM list is under way there.
        var inFromList = [false]
        /// The alias after a table or subquery ending at token `i`, if any.
        func noteAlias(after i: Int) {
            if keyword(tokens, i + 1) == "AS", i + 2 < tokens.count, isName(tokens[i + 2]) {
                aliases.insert(tokens[i + 2].text.lowercased())
            } else if i + 1 < tokens.count, isName(tokens[i + 1]),
                      tokens[i + 1].kind == .quotedIdentifier || !Parser.reserved.contains(tokens[i + 1].upper),
                      !["INDEXED", "NOT", "BEGIN", "FOR", "WHEN", "DO"].contains(tokens[i + 1].upper) {
                aliases.insert(tokens[i + 1].text.lowercased())
            }
        }
        for (i, token) in tokens.enumerated() {
            switch token.kind {
            case .symbol where token.text == "(":
                inFromList.append(false)
                continue
            case .symbol where token.text == ")":
                if inFromList.count > 1 { inFromList.removeLast() }
                // A subquery in a FROM list may have an alias.
                if inFromList.last == true { noteAlias(after: i) }
                continue
            case .symbol where token.text == ";":
                inFromList[inFromList.count - 1] = false
                continue
            case .identifier where fromListEnds.contains(token.upper):
                inFromList[inFromList.count - 1] = false
                continue
            case .identifier where token.upper == "FROM" || token.upper == "JOIN":
                inFromList[inFromList.count - 1] = true
                continue
            default:
                break
            }
            guard isName(token), !(token.kind == .identifier && Parser.reserved.contains(token.upper)) else { continue }
            // A schema qualifier (`main.t`) is skipped: the table is the name after the dot.
            if symbol(tokens, i + 1) == "." { continue }
            var before = i - 1
            if symbol(tokens, before) == ".", before - 1 >= 0, isName(tokens[before - 1]) { before -= 2 }
            let previous = keyword(tokens, before)
            let isTable: Bool
            switch previous {
            case "FROM", "JOIN", "INTO", "UPDATE":
                isTable = true
            case "ROLLBACK", "ABORT", "REPLACE", "FAIL", "IGNORE":
                // UPDATE OR IGNORE t
                isTable = keyword(tokens, before - 1) == "OR" && keyword(tokens, before - 2) == "UPDATE"
            case "IN":
                isTable = symbol(tokens, i + 1) != "("
            case "ON":
                // The trigger's own table: `ON t BEGIN`, `ON t FOR EACH ROW`, `ON t WHEN ...`.
                isTable = ["BEGIN", "FOR", "WHEN"].contains(keyword(tokens, i + 1) ?? "")
            default:
                isTable = symbol(tokens, before) == "," && inFromList.last == true
            }
            if isTable {
                positions.insert(i)
                if inFromList.last == true || previous == "UPDATE" || previous == "INTO" { noteAlias(after: i) }
            }
        }
        return (positions, aliases)
    }
}
