/// A small XML reader for DAO configs: elements, attributes in single or double quotes (spaces
/// around `=` allowed), text, CDATA, comments, processing instructions, a DOCTYPE line, and the
/// entity references `&lt; &gt; &amp; &quot; &apos;` and `&#N;` / `&#xH;`.
///
/// It works on Unicode scalars, tracks line and column, and never traps or loops on arbitrary
/// input: every malformed construct is a `DAOError.config` naming what and where. O(n) in the
/// length of the text; nesting depth is limited to `maxDepth` so hostile input cannot exhaust the
/// stack.
struct XMLReader {
    static let maxDepth = 200

    private let scalars: [Unicode.Scalar]
    private var index = 0
    private var line = 1
    private var column = 1

    /// Parses `text` and returns its root element.
    /// - Throws: `DAOError.config` with the line and column of the first problem.
    static func parse(_ text: String) throws -> ConfigElement {
        var reader = XMLReader(scalars: Array(text.unicodeScalars))
        return try reader.document()
    }

    private init(scalars: [Unicode.Scalar]) {
        self.scalars = scalars
    }

    // MARK: Document

    private mutating func document() throws -> ConfigElement {
        if peek() == "\u{FEFF}" { advance() }
        try skipMisc()
        guard !atEnd else { throw error("the config has no root element") }
        guard peek() == "<" else { throw error("text before the root element") }
        let root = try element(depth: 0)
        try skipMisc()
        guard atEnd else { throw error("content after the root element") }
        return root
    }

    /// Skips whitespace, comments, processing instructions and a DOCTYPE outside the root.
    private mutating func skipMisc() throws {
        while true {
            skipWhitespace()
            if starts(with: "<!--") {
                try comment()
            } else if starts(with: "<?") {
                try skip(past: "?>", what: "processing instruction")
            } else if starts(with: "<!DOCTYPE") || starts(with: "<!doctype") {
                try skip(past: ">", what: "DOCTYPE")
            } else {
                return
            }
        }
    }

    // MARK: Elements

    private mutating func element(depth: Int) throws -> ConfigElement {
        let start = position
        guard depth < Self.maxDepth else { throw error("elements nested deeper than \(Self.maxDepth)") }
        advance()  // "<"
        let name = try self.name(what: "element name")
        var attributes: [ConfigAttribute] = []
        while true {
            let hadSpace = skipWhitespace()
            guard let c = peek() else { throw error("unterminated start tag <\(name)>", at: start) }
            if c == "/" {
                advance()
                guard peek() == ">" else { throw error("expected '>' after '/' in <\(name)>") }
                advance()
                return ConfigElement(name: name, attributes: attributes, children: [], position: start)
            }
            if c == ">" {
                advance()
                break
            }
            guard hadSpace else { throw error("expected a space before an attribute of <\(name)>") }
            let attributePosition = position
            let attributeName = try self.name(what: "attribute name")
            skipWhitespace()
            guard peek() == "=" else { throw error("expected '=' after attribute \(attributeName)") }
            advance()
            skipWhitespace()
            let value = try quotedValue(attribute: attributeName)
            if attributes.contains(where: { $0.name == attributeName }) {
                throw error("attribute \(attributeName) repeated in <\(name)>", at: attributePosition)
            }
            attributes.append(ConfigAttribute(name: attributeName, value: value, position: attributePosition))
        }
        let children = try content(of: name, start: start, depth: depth)
        return ConfigElement(name: name, attributes: attributes, children: children, position: start)
    }

    /// The children of an element up to and including its end tag.
    private mutating func content(of name: String, start: SourcePosition, depth: Int) throws -> [ConfigNode] {
        var children: [ConfigNode] = []
        var text = ""
        var textStart = position
        func flush() {
            if !text.isEmpty { children.append(.text(text, textStart)) }
            text = ""
        }
        while true {
            guard let c = peek() else { throw error("element <\(name)> is not closed", at: start) }
            if c == "<" {
                if starts(with: "</") {
                    flush()
                    advance(2)
                    let endPosition = position
                    let endName = try self.name(what: "end tag name")
                    skipWhitespace()
                    guard peek() == ">" else { throw error("expected '>' in </\(endName)>") }
                    advance()
                    guard endName == name else {
                        throw error("</\(endName)> does not close <\(name)> (opened at line \(start.line), column \(start.column))", at: endPosition)
                    }
                    return children
                } else if starts(with: "<!--") {
                    try comment()
                } else if starts(with: "<![CDATA[") {
                    if text.isEmpty { textStart = position }
                    advance(9)
                    text += try until("]]>", what: "CDATA section")
                } else if starts(with: "<?") {
                    try skip(past: "?>", what: "processing instruction")
                } else {
                    flush()
                    children.append(.element(try element(depth: depth + 1)))
                    textStart = position
                }
            } else {
                if text.isEmpty { textStart = position }
                if c == "&" {
                    text.unicodeScalars.append(try entity())
                } else {
                    text.unicodeScalars.append(c)
                    advance()
                }
            }
        }
    }

    private mutating func quotedValue(attribute: String) throws -> String {
        guard let quote = peek(), quote == "\"" || quote == "'" else {
            throw error("the value of attribute \(attribute) must be quoted")
        }
        let start = position
        advance()
        var value = ""
        while true {
            guard let c = peek() else { throw error("unterminated value of attribute \(attribute)", at: start) }
            if c == quote {
                advance()
                return value
            }
            // A raw '<' is not XML, but configs write `true="a < 5"`; it is taken as is.
            if c == "&" {
                value.unicodeScalars.append(try entity())
            } else {
                value.unicodeScalars.append(c)
                advance()
            }
        }
    }

    /// Reads `&...;` and returns the character it stands for.
    private mutating func entity() throws -> Unicode.Scalar {
        let start = position
        advance()  // "&"
        // A bare '&' (as in `a && b`) is taken literally: configs write it, libxml2 would not.
        if let next = peek(), next != "#", !next.properties.isAlphabetic { return "&" }
        if atEnd { return "&" }
        var body = ""
        while let c = peek(), c != ";" {
            guard body.unicodeScalars.count < 12, c != "<", c != "&", !isWhitespace(c) else {
                throw error("unterminated entity reference", at: start)
            }
            body.unicodeScalars.append(c)
            advance()
        }
        guard peek() == ";" else { throw error("unterminated entity reference", at: start) }
        advance()
        switch body {
        case "lt": return "<"
        case "gt": return ">"
        case "amp": return "&"
        case "quot": return "\""
        case "apos": return "'"
        default:
            var code: UInt32?
            if body.hasPrefix("#x") || body.hasPrefix("#X") {
                code = UInt32(body.dropFirst(2), radix: 16)
            } else if body.hasPrefix("#") {
                code = UInt32(body.dropFirst(1), radix: 10)
            }
            guard let code, let scalar = Unicode.Scalar(code), code != 0 else {
                throw error("unknown entity &\(body);", at: start)
            }
            return scalar
        }
    }

    private mutating func name(what: String) throws -> String {
        var name = ""
        while let c = peek(), isNameScalar(c, first: name.isEmpty) {
            name.unicodeScalars.append(c)
            advance()
        }
        guard !name.isEmpty else { throw error("expected \(what)") }
        return name
    }

    private func isNameScalar(_ c: Unicode.Scalar, first: Bool) -> Bool {
        if c == "_" || c == ":" || c.properties.isAlphabetic { return true }
        if first { return false }
        return c == "-" || c == "." || c.properties.numericType != nil
    }

    // MARK: Skipping

    private mutating func comment() throws {
        advance(4)
        _ = try until("-->", what: "comment")
    }

    private mutating func skip(past terminator: String, what: String) throws {
        _ = try until(terminator, what: what)
    }

    /// Consumes text up to and including `terminator` and returns the text before it.
    private mutating func until(_ terminator: String, what: String) throws -> String {
        let start = position
        var text = ""
        while !atEnd {
            if starts(with: terminator) {
                advance(terminator.unicodeScalars.count)
                return text
            }
            if let c = peek() { text.unicodeScalars.append(c) }
            advance()
        }
        throw error("unterminated \(what)", at: start)
    }

    @discardableResult
    private mutating func skipWhitespace() -> Bool {
        var skipped = false
        while let c = peek(), isWhitespace(c) {
            advance()
            skipped = true
        }
        return skipped
    }

    private func isWhitespace(_ c: Unicode.Scalar) -> Bool {
        c == " " || c == "\t" || c == "\n" || c == "\r"
    }

    // MARK: Cursor

    private var atEnd: Bool { index >= scalars.count }
    private var position: SourcePosition { SourcePosition(line: line, column: column) }

    private func peek() -> Unicode.Scalar? {
        index < scalars.count ? scalars[index] : nil
    }

    private func starts(with prefix: String) -> Bool {
        var i = index
        for p in prefix.unicodeScalars {
            guard i < scalars.count, scalars[i] == p else { return false }
            i += 1
        }
        return true
    }

    private mutating func advance(_ count: Int = 1) {
        for _ in 0..<count {
            guard index < scalars.count else { return }
            if scalars[index] == "\n" {
                line += 1
                column = 1
            } else {
                column += 1
            }
            index += 1
        }
    }

    private func error(_ message: String, at where: SourcePosition? = nil) -> DAOError {
        let p = `where` ?? position
        return .config(message: message, line: p.line, column: p.column)
    }
}
