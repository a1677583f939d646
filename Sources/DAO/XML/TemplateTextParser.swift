/// Splits SQL text of a config into literal text and references: `#{path}`, `@{path}` (each
/// with optional `or ""` / `no ""`), `${name}` (`${T}` / `${t}`: the table name), a bare
/// `{path}` (keyword.md, the `<foreach>` example: `{prefix}{iterator}` gives `abc1`), and the
/// macro `%{'fmt', a, b}`, expanded here (see `MacroExpansion`).
enum TemplateTextParser {
    /// Parses `text`, which starts at `position` in the config file.
    /// - Throws: `DAOError.config` at an unterminated or empty reference or a bad macro.
    static func parse(_ text: String, at position: SourcePosition) throws -> [TemplateNode] {
        var budget = maxMacroBytes
        return try parse(text, at: position, macroBudget: &budget)
    }

    /// The most the `%{...}` macros of one text may expand to, nested ones included (64 KiB:
    /// a hundred names of a long format are a few KiB).
    static let maxMacroBytes = 64 << 10

    /// `parse`, with the bytes `%{...}` macros may still expand to (nested macros multiply:
    /// a format holding a macro is repeated per name before that one is expanded).
    private static func parse(_ text: String, at position: SourcePosition, macroBudget: inout Int) throws -> [TemplateNode] {
        let s = Array(text.unicodeScalars)
        var nodes: [TemplateNode] = []
        var literal = String.UnicodeScalarView()
        var i = 0
        var line = position.line
        var column = position.column
        // Line and column of each scalar, computed as we go.
        func step(_ c: Unicode.Scalar) {
            if c == "\n" { line += 1; column = 1 } else { column += 1 }
        }
        while i < s.count {
            let c = s[i]
            if c == "{", let close = bareReferenceEnd(s, from: i) {
                if !literal.isEmpty {
                    nodes.append(.text(String(literal)))
                    literal = String.UnicodeScalarView()
                }
                let pathText = String(String.UnicodeScalarView(s[(i + 1)..<close]))
                let reference = Reference(path: pathText.split(separator: ".").map(String.init), orEmpty: false, noQuotes: true,
                                          position: SourcePosition(line: line, column: column))
                nodes.append(.bareSplice(reference, literal: "{" + pathText + "}"))
                for k in i...close { step(s[k]) }
                i = close + 1
                continue
            }
            if (c == "#" || c == "@" || c == "$" || c == "%"), i + 1 < s.count, s[i + 1] == "{" {
                let start = SourcePosition(line: line, column: column)
                // Find the closing brace, skipping quoted text (a macro's format may hold braces).
                var j = i + 2
                var quote: Unicode.Scalar?
                while j < s.count {
                    if let q = quote {
                        // A macro's format writes a quote as \'.
                        if c == "%", s[j] == "\\", j + 1 < s.count, s[j + 1] == "'" { j += 1 } else if s[j] == q { quote = nil }
                    } else if s[j] == "'" || s[j] == "\"" {
                        quote = s[j]
                    } else if s[j] == "}" {
                        break
                    }
                    j += 1
                }
                guard j < s.count else {
                    throw DAOError.config(message: "unterminated \(c){ reference", line: start.line, column: start.column)
                }
                let inner = String(String.UnicodeScalarView(s[(i + 2)..<j]))
                if !literal.isEmpty {
                    nodes.append(.text(String(literal)))
                    literal = String.UnicodeScalarView()
                }
                if c == "%" {
                    // Expanded once, at load; the result is config text again.
                    let expanded = try MacroExpansion.expand(inner, at: start)
                    macroBudget -= expanded.utf8.count
                    guard macroBudget >= 0 else {
                        throw DAOError.config(message: "the %{...} macros here expand to more than \(maxMacroBytes) bytes",
                                              line: start.line, column: start.column)
                    }
                    nodes += try parse(expanded, at: start, macroBudget: &macroBudget)
                } else {
                    nodes.append(try reference(kind: c, inner, at: start))
                }
                for k in i...j { step(s[k]) }
                i = j + 1
                continue
            }
            literal.append(c)
            step(c)
            i += 1
        }
        if !literal.isEmpty { nodes.append(.text(String(literal))) }
        return nodes
    }

    /// The index of the `}` closing a bare `{path}` at `start`: a dotted path of names, each
    /// starting with a letter or `_`. nil when the braces hold anything else (then they are
    /// literal text, as in `'{"a": 1}'`).
    private static func bareReferenceEnd(_ s: [Unicode.Scalar], from start: Int) -> Int? {
        var j = start + 1
        var componentStart = true
        while j < s.count, s[j] != "}" {
            let c = s[j]
            if c == "." {
                if componentStart { return nil }
                componentStart = true
            } else if isNameScalar(c), c != "$", !(componentStart && ("0"..."9").contains(c)) {
                componentStart = false
            } else {
                return nil
            }
            j += 1
        }
        return j < s.count && !componentStart ? j : nil
    }

    private static func reference(kind: Unicode.Scalar, _ inner: String, at start: SourcePosition) throws -> TemplateNode {
        func fail(_ message: String) -> DAOError {
            .config(message: message, line: start.line, column: start.column)
        }
        let trimmed = inner.trimmingCharacters(in: .whitespacesAndNewlines)
        if kind == "$" {
            guard !trimmed.isEmpty, trimmed.unicodeScalars.allSatisfy({ isNameScalar($0) }) else {
                throw fail("bad ${...} name '\(trimmed)'")
            }
            return trimmed == "T" || trimmed == "t" ? .tableName : .include(trimmed, start)
        }
        // #{path [or ""] [no ""]} and @{...}
        var words = trimmed.split(whereSeparator: { $0 == " " || $0 == "\t" || $0 == "\n" }).map(String.init)
        guard !words.isEmpty else { throw fail("empty \(kind){} reference") }
        let pathText = words.removeFirst()
        var orEmpty = false
        var noQuotes = false
        while !words.isEmpty {
            let word = words.removeFirst().lowercased()
            guard word == "or" || word == "no", let next = words.first, next == "\"\"" || next == "''" else {
                throw fail("expected 'or \"\"' or 'no \"\"' after \(pathText) in \(kind){...}")
            }
            words.removeFirst()
            if word == "or" { orEmpty = true } else { noQuotes = true }
        }
        let path = pathText.split(separator: ".", omittingEmptySubsequences: false).map(String.init)
        guard path.allSatisfy({ !$0.isEmpty && $0.unicodeScalars.allSatisfy(isNameScalar) }) else {
            throw fail("bad path '\(pathText)' in \(kind){...}")
        }
        let reference = Reference(path: path, orEmpty: orEmpty, noQuotes: noQuotes, position: start)
        return kind == "#" ? .bind(reference) : .splice(reference)
    }

    static func isNameScalar(_ c: Unicode.Scalar) -> Bool {
        c == "_" || c == "$" || c.properties.isAlphabetic || ("0"..."9").contains(c)
    }
}

import Foundation
