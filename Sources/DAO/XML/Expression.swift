import Foundation

/// The expression language of `<if>` and `<when>`: numbers, 'strings' (or
/// "strings"), `nil`, `true`/`false`, dotted argument paths (`a.b`, `list.count`), `()`,
/// `+ - * / \ %` (`\` integer division, `/` exact when both sides are integers and divide evenly,
/// else real), comparisons `== = != <> < <= > >=`, and `and or not xor` in any case (also
/// `&& || !`).
indirect enum Expression: Sendable {
    case literal(ExpressionValue)
    case path([String])
    case unary(String, Expression)
    case binary(String, Expression, Expression)
    /// A whole expression with where it starts in the config, for errors found at a call.
    case located(Expression, line: Int, column: Int)
}

/// A value during evaluation.
enum ExpressionValue: Sendable, Equatable {
    case null
    case integer(Int64)
    case real(Double)
    case string(String)
    case bool(Bool)
    /// A collection or object: true, with a count.
    case object(count: Int)

    /// Truthiness: nil and false are false, numbers when non-zero, strings and collections when
    /// non-empty.
    var isTrue: Bool {
        switch self {
        case .null: return false
        case .integer(let v): return v != 0
        case .real(let v): return v != 0
        case .string(let s): return !s.isEmpty
        case .bool(let b): return b
        case .object(let count): return count > 0
        }
    }

    var number: Double? {
        switch self {
        case .integer(let v): return Double(v)
        case .real(let v): return v
        case .bool(let b): return b ? 1 : 0
        default: return nil
        }
    }

    var integer: Int64? {
        switch self {
        case .integer(let v): return v
        case .bool(let b): return b ? 1 : 0
        default: return nil
        }
    }

    /// The value as text (in error messages).
    var text: String {
        switch self {
        case .null: return ""
        case .integer(let v): return String(v)
        case .real(let v): return SQLLiteral.real(v)
        case .string(let s): return s
        case .bool(let b): return b ? "1" : "0"
        case .object(let count): return String(count)
        }
    }
}

/// Parses expression text; errors carry the line and column in the config file (counted in
/// the attribute's decoded value: an entity such as `&lt;` counts as one character there).
struct ExpressionParser {
    private enum Token: Equatable {
        case number(ExpressionValue)
        case string(String)
        case word(String)
        case symbol(String)
    }

    private var tokens: [(Token, Int)] = []
    private var index = 0
    /// The offset just past the text, where "ends too early" errors point.
    private var end = 0
    private let base: SourcePosition
    private var depth = 0

    /// Parses `text`, which starts at `position` in the config.
    static func parse(_ text: String, at position: SourcePosition) throws -> Expression {
        var parser = ExpressionParser(base: position)
        try parser.tokenize(text)
        guard !parser.tokens.isEmpty else { throw parser.error("empty expression", offset: 0) }
        let expression = try parser.orExpression()
        if parser.index < parser.tokens.count {
            throw parser.error("unexpected \(parser.describe(parser.tokens[parser.index].0))", offset: parser.tokens[parser.index].1)
        }
        return .located(expression, line: position.line, column: position.column)
    }

    private init(base: SourcePosition) { self.base = base }

    private func error(_ message: String, offset: Int) -> DAOError {
        .config(message: message, line: base.line, column: base.column + offset)
    }

    private func describe(_ token: Token) -> String {
        switch token {
        case .number(let v): return "number \(v.text)"
        case .string(let s): return "string '\(s)'"
        case .word(let w): return "'\(w)'"
        case .symbol(let s): return "'\(s)'"
        }
    }

    // MARK: Tokens

    private mutating func tokenize(_ text: String) throws {
        let s = Array(text.unicodeScalars)
        end = s.count
        var i = 0
        while i < s.count {
            let c = s[i]
            if c == " " || c == "\t" || c == "\n" || c == "\r" { i += 1; continue }
            let start = i
            if c == "'" || c == "\"" {
                var value = ""
                i += 1
                while true {
                    guard i < s.count else { throw error("unterminated string", offset: start) }
                    // keyword.md, "if": "Escape characters are not supported, but \' is supported
                    // to represent a single quote."
                    if s[i] == "\\", i + 1 < s.count, s[i + 1] == c { value.unicodeScalars.append(c); i += 2; continue }
                    if s[i] == c {
                        // A doubled quote is one quote, as in SQL.
                        if i + 1 < s.count, s[i + 1] == c { value.unicodeScalars.append(c); i += 2; continue }
                        i += 1
                        break
                    }
                    value.unicodeScalars.append(s[i])
                    i += 1
                }
                tokens.append((.string(value), start))
            } else if c.properties.numericType != nil && ("0"..."9").contains(c) {
                var text = ""
                var isReal = false
                while i < s.count, ("0"..."9").contains(s[i]) || (s[i] == "." && !isReal && i + 1 < s.count && ("0"..."9").contains(s[i + 1])) {
                    if s[i] == "." { isReal = true }
                    text.unicodeScalars.append(s[i])
                    i += 1
                }
                if isReal {
                    guard let v = Double(text) else { throw error("bad number \(text)", offset: start) }
                    tokens.append((.number(.real(v)), start))
                } else if let v = Int64(text) {
                    tokens.append((.number(.integer(v)), start))
                } else {
                    tokens.append((.number(.real(Double(text) ?? .infinity)), start))
                }
            } else if c == "_" || c == "$" || c.properties.isAlphabetic {
                var word = ""
                while i < s.count, s[i] == "_" || s[i] == "$" || s[i].properties.isAlphabetic || ("0"..."9").contains(s[i]) {
                    word.unicodeScalars.append(s[i])
                    i += 1
                }
                tokens.append((.word(word), start))
            } else {
                let two = i + 1 < s.count ? String(String.UnicodeScalarView([c, s[i + 1]])) : ""
                if ["==", "!=", "<>", "<=", ">=", "&&", "||"].contains(two) {
                    tokens.append((.symbol(two), start))
                    i += 2
                } else if "()+-*/\\%<>=!.,".unicodeScalars.contains(c) {
                    tokens.append((.symbol(String(c)), start))
                    i += 1
                } else {
                    throw error("unexpected character '\(c)'", offset: start)
                }
            }
        }
    }

    // MARK: Grammar (lowest precedence first)

    private func peekWord() -> String? {
        guard index < tokens.count, case .word(let w) = tokens[index].0 else { return nil }
        return w.lowercased()
    }

    private func peekSymbol() -> String? {
        guard index < tokens.count, case .symbol(let s) = tokens[index].0 else { return nil }
        return s
    }

    private mutating func orExpression() throws -> Expression {
        var left = try xorExpression()
        while peekWord() == "or" || peekSymbol() == "||" {
            index += 1
            left = .binary("or", left, try xorExpression())
        }
        return left
    }

    private mutating func xorExpression() throws -> Expression {
        var left = try andExpression()
        while peekWord() == "xor" {
            index += 1
            left = .binary("xor", left, try andExpression())
        }
        return left
    }

    private mutating func andExpression() throws -> Expression {
        var left = try notExpression()
        while peekWord() == "and" || peekSymbol() == "&&" {
            index += 1
            left = .binary("and", left, try notExpression())
        }
        return left
    }

    private mutating func notExpression() throws -> Expression {
        if peekWord() == "not" || peekSymbol() == "!" {
            index += 1
            return try nested { .unary("not", try $0.notExpression()) }
        }
        return try comparison()
    }

    private mutating func comparison() throws -> Expression {
        let left = try additive()
        if let op = peekSymbol(), ["==", "=", "!=", "<>", "<", "<=", ">", ">="].contains(op) {
            index += 1
            let normalized = op == "=" ? "==" : (op == "<>" ? "!=" : op)
            return .binary(normalized, left, try additive())
        }
        return left
    }

    private mutating func additive() throws -> Expression {
        var left = try multiplicative()
        while let op = peekSymbol(), op == "+" || op == "-" {
            index += 1
            left = .binary(op, left, try multiplicative())
        }
        return left
    }

    private mutating func multiplicative() throws -> Expression {
        var left = try unary()
        while let op = peekSymbol(), ["*", "/", "\\", "%"].contains(op) {
            index += 1
            left = .binary(op, left, try unary())
        }
        return left
    }

    private mutating func unary() throws -> Expression {
        if peekSymbol() == "-" {
            index += 1
            return try nested { .unary("-", try $0.unary()) }
        }
        return try primary()
    }

    private mutating func nested(_ body: (inout ExpressionParser) throws -> Expression) throws -> Expression {
        depth += 1
        defer { depth -= 1 }
        guard depth < 100 else { throw error("expression nested too deeply", offset: index < tokens.count ? tokens[index].1 : 0) }
        return try body(&self)
    }

    private mutating func primary() throws -> Expression {
        guard index < tokens.count else {
            throw error("expression ends too early", offset: end)
        }
        let (token, offset) = tokens[index]
        index += 1
        switch token {
        case .number(let v): return .literal(v)
        case .string(let s): return .literal(.string(s))
        case .symbol("("):
            let inner = try nested { try $0.orExpression() }
            guard peekSymbol() == ")" else { throw error("expected ')'", offset: index < tokens.count ? tokens[index].1 : end) }
            index += 1
            return inner
        case .word(let w):
            switch w.lowercased() {
            case "nil", "null": return .literal(.null)
            case "true", "yes": return .literal(.bool(true))
            case "false", "no": return .literal(.bool(false))
            case "and", "or", "xor", "not": throw error("unexpected '\(w)'", offset: offset)
            default:
                var path = [w]
                while peekSymbol() == "." {
                    index += 1
                    guard index < tokens.count else { throw error("expected a name after '.'", offset: end) }
                    switch tokens[index].0 {
                    case .word(let next): path.append(next)
                    case .number(.integer(let n)): path.append(String(n))
                    default: throw error("expected a name after '.'", offset: tokens[index].1)
                    }
                    index += 1
                }
                return .path(path)
            }
        default:
            throw error("unexpected \(describe(token))", offset: offset)
        }
    }
}
