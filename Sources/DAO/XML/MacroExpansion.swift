/// The `%{'format', a, b}` shortcut as the source's manual defines it (mpaas-docs
/// functions/DAO/quick_style.md, "Shortcut syntax"): the format once per following name, every
/// `*` in it replaced by that name, the results joined with ", ".
///
/// - `%{'#{model.*}', msgId, time}` is `#{model.msgId}, #{model.time}`
/// - `%{'* = #{template.*}', data, tag}` is `data = #{template.data}, tag = #{template.tag}`
///
/// The manual: "this pre-processing will be executed only once", so it is expanded when the
/// config loads and its result is read as config text again (it may hold references, `${...}`
/// and further macros). The format is in single quotes, `\'` standing for a quote in it; the
/// names are bare words (letters, digits, `_`, `$`, and `.` for a chain such as `author.name`).
enum MacroExpansion {
    /// Expands the text between `%{` and `}`, which starts at `position` in the config.
    /// - Throws: `DAOError.config` at `position` when the format is not single-quoted, a name is
    ///   empty or not a bare word, or there is no name.
    /// - Complexity: O(length of the result).
    static func expand(_ inner: String, at position: SourcePosition) throws -> String {
        func fail(_ message: String) -> DAOError {
            .config(message: message, line: position.line, column: position.column)
        }
        var rest = Substring(inner).drop { $0.isWhitespace }
        guard rest.first == "'" else { throw fail("a %{...} macro starts with a format in single quotes") }
        rest = rest.dropFirst()
        var format = ""
        var closed = false
        while let c = rest.first {
            rest = rest.dropFirst()
            if c == "\\", rest.first == "'" {
                format.append("'")
                rest = rest.dropFirst()
            } else if c == "'" {
                closed = true
                break
            } else {
                format.append(c)
            }
        }
        guard closed else { throw fail("unterminated format in %{...}") }
        let remainder = rest.trimmingCharacters(in: .whitespacesAndNewlines)
        guard remainder.first == "," else {
            throw fail(remainder.isEmpty ? "a %{...} macro needs at least one name after its format"
                                         : "expected ',' after the format of %{...}")
        }
        let names = remainder.dropFirst().split(separator: ",", omittingEmptySubsequences: false)
            .map { $0.trimmingCharacters(in: .whitespacesAndNewlines) }
        for name in names {
            let parts = name.split(separator: ".", omittingEmptySubsequences: false)
            guard !name.isEmpty, parts.allSatisfy({ TemplateTextParser.isNameScalarString(String($0)) }) else {
                throw fail("bad name '\(name)' in %{...}: names are bare words such as msgId")
            }
        }
        return names.map { format.replacingOccurrences(of: "*", with: $0) }.joined(separator: ", ")
    }
}

import Foundation
