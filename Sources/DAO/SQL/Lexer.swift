/// One token of a SQL statement, with where it starts (1-based line and column) and its range
/// of UTF-8 offsets in the text (for result column names, which SQLite takes from the text).
struct Token: Sendable {
    enum Kind: Sendable, Equatable {
        /// A keyword or bare identifier, upper-cased in `text` for keywords checks.
        case identifier
        /// A "quoted", `quoted` or [quoted] identifier (never a keyword).
        case quotedIdentifier
        case string
        case integer
        case real
        case blob
        /// `?` (text "") or `?NNN`.
        case positionalParameter
        /// `:name`, `@name`, `$name` (text is the name without the sigil).
        case namedParameter
        /// Operators and punctuation: `( ) , ; . + - * / % || = == != <> < <= > >= ~ & | << >>`.
        case symbol
        case end
    }
    var kind: Kind
    /// Identifier or symbol text as written; string contents unescaped; numbers as written.
    var text: String
    var blob: [UInt8] = []
    var line: Int
    var column: Int
    /// UTF-8 offsets [start, end) in the statement text.
    var start: Int
    var end: Int

    /// The upper-cased text of an unquoted identifier (for keyword checks).
    var upper: String { kind == .identifier ? text.uppercased() : "" }
}

/// Splits SQL text into tokens; comments and white space are skipped.
/// - Throws: `DAOError.syntax` for an unterminated string, identifier, comment or a stray byte.
struct Lexer {
    static func tokenize(_ sql: String) throws -> [Token] {
        let bytes = Array(sql.utf8)
        var tokens: [Token] = []
        var index = 0
        var line = 1
        var lineStart = 0
        // Columns count characters (UTF-8 continuation bytes do not start one). Tokens come in
        // order, so the count resumes from the last token's column: a long one-line statement
        // (a multi-row INSERT) costs O(n), not O(n) per token.
        var columnLineStart = 0
        var columnPosition = 0
        var columnCount = 1
        func column(_ at: Int) -> Int {
            if columnLineStart != lineStart || at < columnPosition {
                columnLineStart = lineStart
                columnPosition = lineStart
                columnCount = 1
            }
            while columnPosition < at {
                if bytes[columnPosition] & 0xC0 != 0x80 { columnCount += 1 }
                columnPosition += 1
            }
            return columnCount
        }
        func text(_ from: Int, _ to: Int) -> String { String(decoding: bytes[from..<to], as: UTF8.self) }
        func isIdentStart(_ b: UInt8) -> Bool { (b >= 0x41 && b <= 0x5A) || (b >= 0x61 && b <= 0x7A) || b == 0x5F || b >= 0x80 }
        func isDigit(_ b: UInt8) -> Bool { b >= 0x30 && b <= 0x39 }
        func isIdentPart(_ b: UInt8) -> Bool { isIdentStart(b) || isDigit(b) || b == 0x24 }
        func syntax(_ message: String, _ at: Int) -> DAOError { .syntax(message: message, line: line, column: column(at)) }

        while index < bytes.count {
            let b = bytes[index]
            let start = index
            if b == 0x0A { line += 1; index += 1; lineStart = index; continue }
            if b == 0x20 || b == 0x09 || b == 0x0D || b == 0x0C || b == 0x0B { index += 1; continue }
            if b == 0x2D, index + 1 < bytes.count, bytes[index + 1] == 0x2D { // -- comment
                while index < bytes.count, bytes[index] != 0x0A { index += 1 }
                continue
            }
            if b == 0x2F, index + 1 < bytes.count, bytes[index + 1] == 0x2A { // /* comment */
                index += 2
                while index < bytes.count, !(bytes[index] == 0x2A && index + 1 < bytes.count && bytes[index + 1] == 0x2F) {
                    if bytes[index] == 0x0A { line += 1; lineStart = index + 1 }
                    index += 1
                }
                index = min(index + 2, bytes.count) // SQLite accepts an unterminated comment at the end
                continue
            }
            let startLine = line
            let startColumn = column(start)
            func make(_ kind: Token.Kind, _ value: String, blob: [UInt8] = []) -> Token {
                Token(kind: kind, text: value, blob: blob, line: startLine, column: startColumn, start: start, end: index)
            }
            // Blob literal x'..'
            if (b == 0x78 || b == 0x58), index + 1 < bytes.count, bytes[index + 1] == 0x27 {
                index += 2
                let from = index
                while index < bytes.count, bytes[index] != 0x27 { index += 1 }
                guard index < bytes.count else { throw syntax("unrecognized token: \"\(text(start, bytes.count))\"", start) }
                let hex = Array(bytes[from..<index])
                index += 1
                guard hex.count % 2 == 0, let decoded = Lexer.hexDecode(hex) else {
                    throw syntax("unrecognized token: \"\(text(start, index))\"", start)
                }
                tokens.append(make(.blob, "", blob: decoded))
                continue
            }
            if isIdentStart(b) {
                while index < bytes.count, isIdentPart(bytes[index]) { index += 1 }
                tokens.append(make(.identifier, text(start, index)))
                continue
            }
            if isDigit(b) || (b == 0x2E && index + 1 < bytes.count && isDigit(bytes[index + 1])) {
                var isReal = false
                if b == 0x30, index + 1 < bytes.count, bytes[index + 1] == 0x78 || bytes[index + 1] == 0x58 {
                    index += 2
                    while index < bytes.count, Lexer.hexValue(bytes[index]) != nil { index += 1 }
                    tokens.append(make(.integer, text(start, index)))
                    continue
                }
                while index < bytes.count, isDigit(bytes[index]) { index += 1 }
                if index < bytes.count, bytes[index] == 0x2E {
                    isReal = true
                    index += 1
                    while index < bytes.count, isDigit(bytes[index]) { index += 1 }
                }
                if index < bytes.count, bytes[index] == 0x65 || bytes[index] == 0x45 {
                    var probe = index + 1
                    if probe < bytes.count, bytes[probe] == 0x2B || bytes[probe] == 0x2D { probe += 1 }
                    if probe < bytes.count, isDigit(bytes[probe]) {
                        isReal = true
                        index = probe
                        while index < bytes.count, isDigit(bytes[index]) { index += 1 }
                    }
                }
                if index < bytes.count, isIdentStart(bytes[index]) {
                    while index < bytes.count, isIdentPart(bytes[index]) { index += 1 }
                    throw syntax("unrecognized token: \"\(text(start, index))\"", start)
                }
                tokens.append(make(isReal ? .real : .integer, text(start, index)))
                continue
            }
            switch b {
            case 0x27, 0x22, 0x60: // 'string', "identifier", `identifier`
                index += 1
                var value: [UInt8] = []
                var closed = false
                while index < bytes.count {
                    if bytes[index] == b {
                        if index + 1 < bytes.count, bytes[index + 1] == b { value.append(b); index += 2; continue }
                        index += 1
                        closed = true
                        break
                    }
                    if bytes[index] == 0x0A { line += 1; lineStart = index + 1 }
                    value.append(bytes[index])
                    index += 1
                }
                guard closed else { throw DAOError.syntax(message: "unrecognized token: \"\(text(start, bytes.count))\"", line: startLine, column: startColumn) }
                tokens.append(make(b == 0x27 ? .string : .quotedIdentifier, String(decoding: value, as: UTF8.self)))
            case 0x5B: // [identifier]
                index += 1
                let from = index
                while index < bytes.count, bytes[index] != 0x5D { index += 1 }
                guard index < bytes.count else { throw syntax("unrecognized token: \"\(text(start, bytes.count))\"", start) }
                let name = text(from, index)
                index += 1
                tokens.append(make(.quotedIdentifier, name))
            case 0x3F: // ?NNN
                index += 1
                while index < bytes.count, isDigit(bytes[index]) { index += 1 }
                tokens.append(make(.positionalParameter, text(start + 1, index)))
            case 0x3A, 0x40, 0x24: // :name @name $name
                index += 1
                while index < bytes.count, isIdentPart(bytes[index]) { index += 1 }
                guard index > start + 1 else { throw syntax("unrecognized token: \"\(text(start, index))\"", start) }
                tokens.append(make(.namedParameter, text(start + 1, index)))
            default:
                let two = index + 1 < bytes.count ? text(index, index + 2) : ""
                if ["||", "==", "!=", "<>", "<=", ">=", "<<", ">>"].contains(two) {
                    index += 2
                    tokens.append(make(.symbol, two))
                } else if "(),;.+-*/%=<>~&|".utf8.contains(b) {
                    index += 1
                    tokens.append(make(.symbol, text(start, index)))
                } else {
                    index += 1
                    while index < bytes.count, bytes[index] & 0xC0 == 0x80 { index += 1 }
                    throw syntax("unrecognized token: \"\(text(start, index))\"", start)
                }
            }
        }
        tokens.append(Token(kind: .end, text: "", line: line, column: column(bytes.count), start: bytes.count, end: bytes.count))
        return tokens
    }

    static func hexValue(_ b: UInt8) -> UInt8? {
        switch b {
        case 0x30...0x39: return b - 0x30
        case 0x41...0x46: return b - 0x41 + 10
        case 0x61...0x66: return b - 0x61 + 10
        default: return nil
        }
    }

    static func hexDecode(_ hex: [UInt8]) -> [UInt8]? {
        var out: [UInt8] = []
        out.reserveCapacity(hex.count / 2)
        var i = 0
        while i + 1 < hex.count {
            guard let high = hexValue(hex[i]), let low = hexValue(hex[i + 1]) else { return nil }
            out.append(high << 4 | low)
            i += 2
        }
        return out
    }
}
