import Foundation

/// The statements of a SQL script file for `ustore sql --file`.
enum SQLScript {
    /// Splits `text` into statements: a statement ends at a line whose last non-blank character
    /// is `;` (the `;` is dropped), or at the end of the file; inside a CREATE TRIGGER, only at
    /// its `END;` (`TriggerText`). Statements that are blank are skipped. Semicolons inside a
    /// line (in a string literal, say) do not split.
    static func statements(_ text: String) -> [String] {
        var statements: [String] = []
        var current: [Substring] = []
        func finish() {
            let statement = current.joined(separator: "\n").trimmingCharacters(in: .whitespacesAndNewlines)
            if !statement.isEmpty { statements.append(statement) }
            current.removeAll()
        }
        // "\r\n" is one Character in Swift, so it is a separator of its own.
        for line in text.split(omittingEmptySubsequences: false, whereSeparator: { $0 == "\n" || $0 == "\r\n" }) {
            let trimmed = line.trimmingCharacters(in: .whitespaces.union(.init(charactersIn: "\r")))
            if trimmed.hasSuffix(";"),
               !TriggerText.needsMore((current + [Substring(trimmed.dropLast())]).joined(separator: "\n")) {
                current.append(Substring(trimmed.dropLast()))
                finish()
            } else {
                current.append(line)
            }
        }
        finish()
        return statements
    }
}
