/// Collects SQL typed over several lines and hands out each statement once its `;` arrives.
///
/// A `;` ends a statement only outside string literals ('...'), quoted identifiers ("...",
/// `...`, [...]) and comments (-- to the end of the line, /* ... */), so a literal may span
/// lines, and inside a CREATE TRIGGER only after its END (`TriggerText`). Every statement remembers the input line and column where it starts, so an error's
/// position inside it can be reported as a position in the input.
struct StatementAccumulator {
    /// One complete statement (without its `;`) and where it starts in the input (1-based).
    struct Statement: Equatable {
        var text: String
        var line: Int
        var column: Int
    }

    private enum State { case code, string(Character), lineComment, blockComment }

    private var pending = ""
    private var pendingStart: (line: Int, column: Int)?
    private var state = State.code
    private var previous: Character?
    /// The number of input lines taken so far.
    private(set) var linesRead = 0

    /// Whether a statement has begun and not yet ended (the shell then shows its continuation
    /// prompt, and a dot-command is not recognized).
    var isPending: Bool { pendingStart != nil }

    /// Adds one input line (without its newline); returns the statements it completes.
    mutating func add(line: String) -> [Statement] {
        linesRead += 1
        var completed: [Statement] = []
        var column = 0
        for character in line {
            column += 1
            if pendingStart == nil {
                if character.isWhitespace || character == ";" { previous = character; continue }
                pendingStart = (linesRead, column)
            }
            // Inside a trigger's body a `;` ends one of its statements, not the CREATE TRIGGER.
            if finishes(character), !TriggerText.needsMore(pending) {
                let text = pending.trimmingTrailingWhitespace()
                if let start = pendingStart, !text.isEmpty {
                    completed.append(Statement(text: text, line: start.line, column: start.column))
                }
                pending = ""
                pendingStart = nil
                previous = nil
                continue
            }
            pending.append(character)
            previous = character
        }
        if case .lineComment = state { state = .code }
        if case .code = state, pendingStart != nil, isOnlyComment(pending) {
            pending = ""
            pendingStart = nil
        }
        if pendingStart != nil { pending.append("\n") }
        previous = "\n"
        return completed
    }

    /// The unfinished statement, if any (text without a final `;`), and forgets it: the shell
    /// runs it at the end of input, as sqlite3 does, or drops it on Ctrl-C.
    mutating func takeRemainder() -> Statement? {
        defer { reset() }
        let text = pending.trimmingTrailingWhitespace()
        guard let start = pendingStart, !text.isEmpty, isOnlyComment(text) == false else { return nil }
        return Statement(text: text, line: start.line, column: start.column)
    }

    /// Forgets the unfinished statement.
    mutating func reset() {
        pending = ""
        pendingStart = nil
        state = .code
        previous = nil
    }

    /// Advances the scanner over `character`; true when it is a statement-ending `;`.
    private mutating func finishes(_ character: Character) -> Bool {
        switch state {
        case .code:
            switch character {
            case "'", "\"", "`": state = .string(character)
            case "[": state = .string("]")
            case "-" where previous == "-": state = .lineComment
            case "*" where previous == "/": state = .blockComment
            case ";": return true
            default: break
            }
        case .string(let closing):
            // A doubled quote ('it''s') closes and reopens: the net effect is the same.
            if character == closing { state = .code }
        case .lineComment:
            break
        case .blockComment:
            if character == "/" && previous == "*" { state = .code }
        }
        return false
    }

    /// Whether `text` holds nothing but comments and whitespace.
    private func isOnlyComment(_ text: String) -> Bool {
        var rest = Substring(text)
        while true {
            rest = rest.drop(while: \.isWhitespace)
            if rest.isEmpty { return true }
            if rest.hasPrefix("--") {
                rest = rest.drop(while: { $0 != "\n" })
            } else if rest.hasPrefix("/*"), let end = rest.range(of: "*/") {
                rest = rest[end.upperBound...]
            } else {
                return false
            }
        }
    }
}

extension String {
    /// The string without whitespace (and newlines) at its end.
    func trimmingTrailingWhitespace() -> String {
        var text = self
        while let last = text.last, last.isWhitespace { text.removeLast() }
        return text
    }
}
