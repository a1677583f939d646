import Foundation

/// One SQL statement ready to run: text with `?` placeholders and their values in order.
struct RenderedSQL: Sendable, Equatable {
    /// The statement, whitespace collapsed and comments removed.
    var text: String
    /// The values of its `?` placeholders, in order.
    var bindings: [DAOValue]
}

/// What a method body turns into for one set of arguments.
enum RenderedStatement: Sendable, Equatable {
    /// Statements to run in order; `resumable` lets them fail without failing the call.
    case sql([RenderedSQL], resumable: Bool)
    /// Statements to try, and those to run when one of them fails.
    case tryExcept([RenderedSQL], except: [RenderedSQL]?)
}

/// Turns a config's template nodes plus arguments into SQL: `#{}` become `?` with a binding,
/// `@{}` literal text, `${}` the fragment or table name, dynamic elements their chosen text.
/// Needs no engine. O(size of the output).
struct SQLRenderer {
    /// The largest SQL text one call may render (4 MiB).
    static let maxOutputBytes = 4 << 20
    let config: DAOConfig
    let tableName: String
    /// Applied to the value of a `#{obj.prop}` / `@{obj.prop}` whose owner's type and property a
    /// `<crypt>` names.
    var encrypt: ((DAOValue) throws -> DAOValue)?

    /// Renders a method or upgrade body.
    func render(_ statements: [StatementNode], scope: ArgumentScope) throws -> [RenderedStatement] {
        try statements.map { statement in
            switch statement {
            case .sql(let nodes, let resumable):
                return .sql(try split(orNone: render(nodes, scope: scope)), resumable: resumable)
            case .tryExcept(let attempt, let except):
                return .tryExcept(try split(orNone: render(attempt, scope: scope)),
                                  except: try except.map { try split(orNone: render($0, scope: scope)) })
            }
        }
    }

    /// Renders nodes into one piece of SQL text (possibly several statements) and bindings;
    /// nil when a void element with onVoid="quit" says not to run it.
    func render(_ nodes: [TemplateNode], scope: ArgumentScope) throws -> RenderedSQL? {
        var out = RenderedSQL(text: "", bindings: [])
        do {
            try append(nodes, scope: scope, to: &out, depth: 0)
        } catch let halt as Halt {
            // ignoreAfter: the text rendered so far is the statement.
            if halt.onVoid == .quit { return nil }
        }
        return out
    }

    /// The statements of rendered text (none when it is nil).
    private func split(orNone rendered: RenderedSQL?) throws -> [RenderedSQL] {
        try rendered.map(split) ?? []
    }

    // MARK: Nodes

    private func append(_ nodes: [TemplateNode], scope: ArgumentScope, to out: inout RenderedSQL, depth: Int) throws {
        guard depth < 64 else { throw DAOError.config(message: "fragments or macros nested deeper than 64", line: 0, column: 0) }
        // Fragments that include others several times can grow exponentially: cap the output.
        guard out.text.utf8.count <= Self.maxOutputBytes else {
            throw DAOError.config(message: "the SQL of this call exceeds \(Self.maxOutputBytes) bytes", line: 0, column: 0)
        }
        for node in nodes {
            switch node {
            case .text(let text):
                out.text += text
            case .tableName:
                guard !tableName.isEmpty else {
                    throw DAOError.noSuchTable("${T}: the config has no tableName; set one with forTable(_:) or tableName")
                }
                out.text += tableName
            case .bind(let reference):
                out.text.unicodeScalars.append(Self.placeholder)
                out.bindings.append(try value(of: reference, scope: scope))
            case .splice(let reference):
                let value = try value(of: reference, scope: scope)
                if !reference.noQuotes, let quote = Self.openQuote(in: out.text) {
                    // reference.md, "@ reference": quotes the config already has are not added
                    // again (the value's own quotes are doubled so the literal stays whole).
                    let text = SQLLiteral.literal(value, quoted: false)
                    out.text += text.replacingOccurrences(of: String(quote), with: String(quote) + String(quote))
                } else {
                    out.text += SQLLiteral.literal(value, quoted: !reference.noQuotes)
                }
            case .include(let name, let position):
                guard let fragment = config.fragments[name] else {
                    throw DAOError.config(message: "${\(name)} names no <const> or <sql>", line: position.line, column: position.column)
                }
                try append(fragment, scope: scope, to: &out, depth: depth + 1)
            case .bareSplice(let reference, let literal):
                if scope.resolve([reference.path[0]]).found {
                    out.text += SQLLiteral.literal(try value(of: reference, scope: scope), quoted: false)
                } else {
                    out.text += literal
                }
            case .conditional(let expression, let expected, let body):
                if try scope.evaluate(expression).isTrue == expected {
                    try append(body, scope: scope, to: &out, depth: depth)
                }
            case .choose(let whens, let otherwise):
                var chosen = otherwise
                for (expression, expected, body) in whens where try scope.evaluate(expression).isTrue == expected {
                    chosen = body
                    break
                }
                if let chosen { try append(chosen, scope: scope, to: &out, depth: depth) }
            case .foreach(let spec, let body):
                try appendForeach(spec, body: body, scope: scope, to: &out, depth: depth)
            case .trim(let spec, let body):
                var inner = RenderedSQL(text: "", bindings: [])
                try append(body, scope: scope, to: &inner, depth: depth)
                let content = Self.strip(inner.text.trimmingCharacters(in: .whitespacesAndNewlines),
                                         prefixes: spec.prefixOverrides, suffixes: spec.suffixOverrides)
                if content.isEmpty {
                    if let onVoid = spec.onVoid { throw Halt(onVoid: onVoid) }
                } else {
                    out.text += (spec.prefix.isEmpty ? "" : " " + spec.prefix + " ") + content
                    out.text += spec.suffix.isEmpty ? " " : " " + spec.suffix + " "
                    out.bindings += inner.bindings
                }
            case .format(let prefix, let pairs, let join):
                try appendFormat(prefix: prefix, pairs: pairs, join: join, scope: scope, to: &out)
            }
        }
    }

    /// Thrown by a void `<where>`, `<set>` or `<trim>` with onVoid, caught where its statement
    /// is rendered.
    private struct Halt: Error {
        let onVoid: OnVoid
    }

    /// `<format>`: `key = ?` per entry of the dictionary (keys in sorted order, each a column
    /// name), joined with `join` (a word such as `and` gets spaces on both sides, punctuation
    /// such as `,` one after), after `prefix`.
    private func appendFormat(prefix: String, pairs: Reference, join: String, scope: ArgumentScope,
                              to out: inout RenderedSQL) throws {
        let value = scope.resolve(pairs.path).value
        var entries: [(String, Any?)] = []
        if let dictionary = value as? [String: Any?] {
            entries = dictionary.map { ($0.key, $0.value) }
        } else if let dictionary = value as? [String: Any] {
            entries = dictionary.map { ($0.key, $0.value) }
        } else if let dictionary = value as? NSDictionary {
            entries = dictionary.compactMap { entry in (entry.key as? String).map { ($0, entry.value) } }
        } else if value != nil {
            throw DAOError.config(message: "<format pairs=\"\(pairs.path.joined(separator: "."))\"> needs a dictionary, got \(type(of: value!))",
                                  line: pairs.position.line, column: pairs.position.column)
        }
        guard !entries.isEmpty else { return }
        for (key, _) in entries where !TemplateTextParser.isNameScalarString(key) {
            throw DAOError.config(message: "<format> key '\(key)' is not a column name",
                                  line: pairs.position.line, column: pairs.position.column)
        }
        let trimmedJoin = join.trimmingCharacters(in: .whitespaces)
        let separator = trimmedJoin.first.map { $0.isLetter } ?? false ? " \(trimmedJoin) " : "\(trimmedJoin) "
        out.text += prefix.isEmpty ? " " : " " + prefix + " "
        for (index, (key, element)) in entries.sorted(by: { $0.0 < $1.0 }).enumerated() {
            if index > 0 { out.text += separator }
            out.text += key + " = "
            out.text.unicodeScalars.append(Self.placeholder)
            out.bindings.append(ValueConversion.daoValue(element))
        }
        out.text += " "
    }

    private func appendForeach(_ spec: ForeachSpec, body: [TemplateNode], scope: ArgumentScope,
                               to out: inout RenderedSQL, depth: Int) throws {
        var elements = Self.elements(of: scope.resolve(spec.collection).value)
        if spec.reverse { elements.reverse() }
        guard !elements.isEmpty else { return }
        out.text += spec.open
        for (offset, element) in elements.enumerated() {
            if offset > 0 { out.text += spec.separator }
            var values: [String: Any?] = [spec.item: element.value]
            if let index = spec.index { values[index] = element.key }
            try append(body, scope: scope.adding(values), to: &out, depth: depth)
        }
        out.text += spec.close
    }

    /// The elements of a foreach collection: an array's (or set's) in order, a dictionary's
    /// values in key order (the key as index), a single value as itself, nil as none.
    static func elements(of value: Any?) -> [(key: Any, value: Any?)] {
        guard let value = ArgumentScope.unwrap(value) else { return [] }
        if let dictionary = value as? [String: Any?] {
            return dictionary.sorted { $0.key < $1.key }.map { ($0.key, $0.value) }
        }
        if let dictionary = value as? [String: Any] {
            return dictionary.sorted { $0.key < $1.key }.map { ($0.key, $0.value) }
        }
        if value is String || value is Data || ValueConversion.bytes(value) != nil { return [(0, value)] }
        let mirror = Mirror(reflecting: value)
        if mirror.displayStyle == .collection || mirror.displayStyle == .set {
            return mirror.children.enumerated().map { ($0.offset, $0.element.value) }
        }
        return [(0, value)]
    }

    // MARK: Values

    private func value(of reference: Reference, scope: ArgumentScope) throws -> DAOValue {
        let resolved = scope.resolve(reference.path).value
        var value = ValueConversion.daoValue(resolved)
        if value == .null, reference.orEmpty { value = .text("") }
        if let encrypt, reference.path.count >= 2, isEncrypted(reference.path, scope: scope), value != .null {
            value = try encrypt(value)
        }
        return value
    }

    /// Whether a `<crypt>` names the type of the path's owner and the path's last property.
    private func isEncrypted(_ path: [String], scope: ArgumentScope) -> Bool {
        guard let property = path.last, !config.crypts.isEmpty,
              let owner = scope.resolve(Array(path.dropLast())).value else { return false }
        let typeName = String(describing: type(of: owner))
        return config.crypts[typeName]?.contains(property) ?? false
    }

    // MARK: Text

    /// The quote character (' or ") of a literal or quoted name `text` ends inside, or nil.
    static func openQuote(in text: String) -> Character? {
        var open: Character?
        for c in text where c == "'" || c == "\"" {
            if let q = open {
                if c == q { open = nil }
            } else {
                open = c
            }
        }
        return open
    }

    /// Removes one leading word of `prefixes` and one trailing of `suffixes` (case-insensitive;
    /// a word must end at a non-name character).
    static func strip(_ text: String, prefixes: [String], suffixes: [String]) -> String {
        var t = text
        for prefix in prefixes.map({ $0.trimmingCharacters(in: .whitespaces) }) where !prefix.isEmpty {
            if t.lowercased().hasPrefix(prefix.lowercased()) {
                let rest = t.dropFirst(prefix.count)
                let wordLike = prefix.last.map { $0.isLetter || $0.isNumber } ?? false
                if !wordLike || rest.first.map({ !($0.isLetter || $0.isNumber || $0 == "_") }) ?? true {
                    t = String(rest).trimmingCharacters(in: .whitespacesAndNewlines)
                    break
                }
            }
        }
        for suffix in suffixes.map({ $0.trimmingCharacters(in: .whitespaces) }) where !suffix.isEmpty {
            if t.lowercased().hasSuffix(suffix.lowercased()) {
                let rest = t.dropLast(suffix.count)
                let wordLike = suffix.first.map { $0.isLetter || $0.isNumber } ?? false
                if !wordLike || rest.last.map({ !($0.isLetter || $0.isNumber || $0 == "_") }) ?? true {
                    t = String(rest).trimmingCharacters(in: .whitespacesAndNewlines)
                    break
                }
            }
        }
        return t
    }

    /// Stands for a bound parameter in rendered text until `split` turns it into `?` (a
    /// private-use character, so a `?` of the config's own text is never mistaken for one).
    static let placeholder: Unicode.Scalar = "\u{E000}"

    /// Whether a `;` after `statement` (text so far, quotes and comments already dealt with)
    /// stays inside it: true in a CREATE [TEMP] TRIGGER until its body ends with `; END`, as
    /// SQLite's `sqlite3_complete` reads a trigger.
    static func continuesTriggerBody(_ statement: String) -> Bool {
        let words = statement.split { !($0.isLetter || $0.isNumber || $0 == "_") }.prefix(3).map { $0.uppercased() }
        guard words.first == "CREATE", words.dropFirst().prefix(2).contains("TRIGGER") else { return false }
        // The body is complete when the text ends with `;` then END (whitespace between).
        let trimmed = statement.uppercased().reversed().drop { $0 == " " }
        guard trimmed.starts(with: "DNE") else { return true }
        let beforeEnd = trimmed.dropFirst(3)
        guard beforeEnd.first.map({ !($0.isLetter || $0.isNumber || $0 == "_") }) ?? false else { return true }
        return beforeEnd.drop { $0 == " " }.first != ";"
    }

    /// Splits rendered text into statements at `;` outside quotes and comments, collapsing
    /// whitespace and dropping comments, and gives each statement the bindings of its
    /// placeholders (a reference inside a comment, or inside quotes, binds nothing).
    func split(_ rendered: RenderedSQL) throws -> [RenderedSQL] {
        var statements: [RenderedSQL] = []
        var current = ""
        var bindings: [DAOValue] = []
        var bindingIndex = 0
        let s = Array(rendered.text.unicodeScalars)
        var i = 0
        var pendingSpace = false
        func nextBinding() -> DAOValue {
            defer { bindingIndex += 1 }
            return bindingIndex < rendered.bindings.count ? rendered.bindings[bindingIndex] : .null
        }
        func emit(_ c: Unicode.Scalar) {
            if pendingSpace, !current.isEmpty { current += " " }
            pendingSpace = false
            current.unicodeScalars.append(c)
        }
        func finish() {
            let text = current.trimmingCharacters(in: .whitespaces)
            if !text.isEmpty { statements.append(RenderedSQL(text: text, bindings: bindings)) }
            current = ""
            bindings = []
            pendingSpace = false
        }
        while i < s.count {
            let c = s[i]
            if c == "'" || c == "\"" || c == "`" || c == "[" {
                let close: Unicode.Scalar = c == "[" ? "]" : c
                emit(c)
                i += 1
                while i < s.count {
                    if s[i] == Self.placeholder {
                        _ = nextBinding()
                        current += "?"
                    } else {
                        current.unicodeScalars.append(s[i])
                    }
                    i += 1
                    if s[i - 1] == close { break }
                }
                continue
            }
            if c == "-", i + 1 < s.count, s[i + 1] == "-" {
                while i < s.count, s[i] != "\n" {
                    if s[i] == Self.placeholder { _ = nextBinding() }
                    i += 1
                }
                pendingSpace = true
                continue
            }
            if c == "/", i + 1 < s.count, s[i + 1] == "*" {
                i += 2
                while i < s.count, !(s[i] == "*" && i + 1 < s.count && s[i + 1] == "/") {
                    if s[i] == Self.placeholder { _ = nextBinding() }
                    i += 1
                }
                i = min(i + 2, s.count)
                pendingSpace = true
                continue
            }
            if c == " " || c == "\t" || c == "\n" || c == "\r" {
                pendingSpace = true
                i += 1
                continue
            }
            if c == ";" {
                if SQLRenderer.continuesTriggerBody(current) {
                    // A `;` inside CREATE TRIGGER ... BEGIN ... END is part of the statement.
                    emit(c)
                } else {
                    finish()
                }
                i += 1
                continue
            }
            if c == Self.placeholder {
                bindings.append(nextBinding())
                emit("?")
            } else {
                emit(c)
            }
            i += 1
        }
        finish()
        return statements
    }
}
