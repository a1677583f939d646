/// Whether a `;` ends a statement or sits inside a trigger's body: in `CREATE [TEMP] TRIGGER
/// ... BEGIN stmt; stmt; END;` only the `;` after END ends it (the rule of SQLite's
/// `sqlite3_complete`, which the sqlite3 shell splits its input by).
enum TriggerText {
    /// True when `text` (a statement up to, not including, a `;` outside strings and comments)
    /// is a CREATE TRIGGER whose body has not reached its END yet.
    static func needsMore(_ text: String) -> Bool {
        let words = leadingWords(of: text, count: 3)
        guard words.first == "CREATE" else { return false }
        let trigger = words.dropFirst().first == "TRIGGER" || (["TEMP", "TEMPORARY"].contains(words.dropFirst().first ?? "") && words.last == "TRIGGER")
        guard trigger else { return false }
        return lastWord(of: text) != "END"
    }

    /// The first `count` words (letters, digits, `_`), upper-cased, skipping leading white space
    /// and comments.
    private static func leadingWords(of text: String, count: Int) -> [String] {
        var words: [String] = []
        var rest = Substring(text)
        while words.count < count {
            rest = rest.drop(while: \.isWhitespace)
            if rest.hasPrefix("--") { rest = rest.drop(while: { $0 != "\n" }); continue }
            if rest.hasPrefix("/*") {
                guard let end = rest.range(of: "*/") else { break }
                rest = rest[end.upperBound...]
                continue
            }
            let word = rest.prefix(while: isWordCharacter)
            guard !word.isEmpty else { break }
            words.append(word.uppercased())
            rest = rest.dropFirst(word.count)
        }
        return words
    }

    /// The last word of `text`, upper-cased (nil when it ends in something else).
    private static func lastWord(of text: String) -> String? {
        let trimmed = text.trimmingTrailingWhitespace()
        let word = trimmed.reversed().prefix(while: isWordCharacter)
        return word.isEmpty ? nil : String(word.reversed()).uppercased()
    }

    private static func isWordCharacter(_ character: Character) -> Bool {
        character.isLetter || character.isNumber || character == "_"
    }
}
