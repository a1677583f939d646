import Foundation

/// Reads an XML DAO config into a `DAOConfig`. Every problem (XML syntax, unknown element,
/// missing attribute, bad expression or reference, duplicate id, a `${name}` that names
/// nothing, fragments that include each other in a cycle) is a `DAOError.config` with the
/// line and column in the file, thrown here rather than at the first call.
///
/// The format (API.md "DAO" 1, and the source's manual, mpaas-docs functions/DAO/), with the
/// choices made where both are silent:
/// - `<module name initializer tableName version resetOnUpgrade upgradeMinVersion>` is the root.
/// - `<const name="n" value="v"/>`, `<const name="n">v</const>` and `<const n="v" m="w"/>` define
///   text spliced by `${n}`; `<sql id="n">` defines a fragment that may hold dynamic elements and
///   other `${...}`. Values may hold references and `%{...}` macros.
/// - `<select|insert|update|delete id arguments result foreach resumable parallel>`: `arguments`
///   is a comma list (`$a` or `$ a` refuses nil); `foreach="coll.item"` runs the body once per
///   element of argument `coll` with the element as `item` (not an argument name), all in one
///   transaction (a select returns one result per element, in an array); `resumable="true"`
///   skips failing elements (listed in `foreachFailedObjects`), or, without foreach, makes every
///   step resumable. Overloads share an id and differ in argument count. `parallel` (a select on
///   a connection of its own in the source) changes nothing here: reads never wait for writes.
/// - Bodies: text, or `<step [resumable]>`s and nothing else (the method's steps form one
///   transaction), or, in a method, one `<try>` with its `<except>` inside it at its end or right
///   after it (run when the try fails; the element's `DAOFlag` says which ran). Text may hold
///   several statements separated by `;`.
/// - `<if true="e">` / `<if false="e">` (also `test="e"`); `<choose>` of `<when true|false|test>`
///   and `<otherwise>`; `<foreach item collection [index] open separator close reverse>` (nothing
///   at all, not even open/close, for an empty collection); `<trim prefix suffix prefixOverrides
///   suffixOverrides onVoid>` (overrides are `|`-separated, matched case-insensitively as whole
///   words); `<where onVoid>` is `<trim prefix="WHERE" prefixOverrides="AND|OR"
///   onVoid="ignoreAfter">` and `<set>` is `<trim prefix="SET" suffixOverrides=",">`, as
///   keyword.md says. A void trim adds nothing; with onVoid="ignoreAfter" its statement ends
///   there, with onVoid="quit" its statement does not run (the call succeeds).
///   `<format prefix pairs join/>`: `prefix`, then `key = ?` per entry of the dictionary
///   argument `pairs` (keys sorted) joined with `join` (default ","); nothing when it is empty.
/// - `%{'fmt', a, b}`: `fmt` once per name, `*` replaced by the name, joined with ", ", expanded
///   at load (see `MacroExpansion`). A bare `{path}` splices an argument's text unquoted.
/// - `<map id result>` + `<result property column/>`; `<crypt class property/>` (`property` may
///   list several, comma-separated; `class` is the Swift type name of the value whose property
///   is bound); `<upgrade toVersion>` with a body like a method's.
/// - XML tolerances: spaces around `=`, single or double quotes, a raw `<` in attribute values,
///   a bare `&` not starting an entity, comments, CDATA, a prolog and DOCTYPE.
enum ConfigLoader {
    /// Loads the config at `url`.
    /// - Throws: `DAOError.config`, or the file system's error when it cannot be read.
    static func load(contentsOf url: URL) throws -> DAOConfig {
        let data = try Data(contentsOf: url)
        guard let text = String(data: data, encoding: .utf8) else {
            throw DAOError.config(message: "\(url.lastPathComponent) is not UTF-8", line: 1, column: 1)
        }
        return try load(text)
    }

    /// Loads config text.
    static func load(_ text: String) throws -> DAOConfig {
        let root = try XMLReader.parse(text)
        guard root.name == "module" else { throw error("the root element must be <module>, not <\(root.name)>", at: root.position) }
        var config = DAOConfig(
            name: root.attribute("name") ?? "",
            initializer: nonEmpty(root.attribute("initializer")),
            tableName: root.attribute("tableName") ?? "",
            version: nonEmpty(root.attribute("version")),
            resetOnUpgrade: flag(root.attribute("resetOnUpgrade")),
            upgradeMinVersion: nonEmpty(root.attribute("upgradeMinVersion")),
            fragments: [:], maps: [:], crypts: [:], methods: [:], upgrades: [])
        for attribute in ["version", "upgradeMinVersion"] {
            if let value = nonEmpty(root.attribute(attribute)), VersionNumber(value) == nil {
                throw error("\(attribute) \"\(value)\" is not a version like 1.2", at: position(of: attribute, in: root))
            }
        }
        var fragmentPositions: [String: SourcePosition] = [:]
        func addFragment(_ name: String, _ nodes: [TemplateNode], at position: SourcePosition) throws {
            guard config.fragments[name] == nil else { throw error("\(name) is defined twice", at: position) }
            guard name != "T", name != "t" else { throw error("${\(name)} is the table name and cannot be redefined", at: position) }
            config.fragments[name] = nodes
            fragmentPositions[name] = position
        }
        for node in root.children {
            switch node {
            case .text(let text, let position):
                guard text.allSatisfy(\.isWhitespace) else { throw error("text directly inside <module>", at: position) }
            case .element(let element):
                switch element.name {
                case "const":
                    for (name, nodes, position) in try constants(element) { try addFragment(name, nodes, at: position) }
                case "sql":
                    let id = try required("id", of: element)
                    try addFragment(id, try template(element.children), at: element.position)
                case "map":
                    let id = try required("id", of: element)
                    guard config.maps[id] == nil else { throw error("map \(id) is defined twice", at: element.position) }
                    config.maps[id] = try map(element)
                case "crypt":
                    let className = try required("class", of: element)
                    let properties = try required("property", of: element)
                        .split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty }
                    config.crypts[className, default: []].formUnion(properties)
                case "select", "insert", "update", "delete":
                    let method = try self.method(element)
                    if config.methods[method.id, default: []].contains(where: { $0.arguments.count == method.arguments.count }) {
                        throw error("method \(method.id) with \(method.arguments.count) arguments is defined twice", at: element.position)
                    }
                    config.methods[method.id, default: []].append(method)
                case "upgrade":
                    let to = try required("toVersion", of: element)
                    guard VersionNumber(to) != nil else { throw error("toVersion \"\(to)\" is not a version like 1.2", at: element.position) }
                    config.upgrades.append(UpgradeSpec(toVersion: to, statements: try statements(element.children, resumable: false, inMethod: false), position: element.position))
                default:
                    throw error("unknown element <\(element.name)> in <module>", at: element.position)
                }
            }
        }
        config.upgrades.sort { (VersionNumber($0.toVersion) ?? VersionNumber.zero) < (VersionNumber($1.toVersion) ?? VersionNumber.zero) }
        try checkIncludes(config, positions: fragmentPositions)
        if let initializer = config.initializer, config.methods[initializer] == nil {
            throw error("initializer \(initializer) names no method", at: position(of: "initializer", in: root))
        }
        return config
    }

    // MARK: Elements

    /// `<const name="n" value="v"/>`, `<const name="n">v</const>`, or `<const a="v" b="w"/>`.
    private static func constants(_ element: ConfigElement) throws -> [(String, [TemplateNode], SourcePosition)] {
        if let name = element.attribute("name") {
            if let value = element.attributes.first(where: { $0.name == "value" }) {
                return [(name, try TemplateTextParser.parse(value.value, at: value.position), element.position)]
            }
            return [(name, try template(element.children), element.position)]
        }
        guard !element.attributes.isEmpty else { throw error("<const> defines nothing", at: element.position) }
        return try element.attributes.map { attribute in
            (attribute.name, try TemplateTextParser.parse(attribute.value, at: attribute.position), attribute.position)
        }
    }

    private static func map(_ element: ConfigElement) throws -> ResultMap {
        let result = try resultSpec(element.attribute("result") ?? "{}", at: element.position)
        var columns: [String: String] = [:]
        for child in element.elements {
            guard child.name == "result" else { throw error("unknown element <\(child.name)> in <map>", at: child.position) }
            columns[try required("column", of: child)] = try required("property", of: child)
        }
        return ResultMap(result: result, columns: columns)
    }

    private static func method(_ element: ConfigElement) throws -> MethodSpec {
        let id = try required("id", of: element)
        let arguments = (element.attribute("arguments") ?? "")
            .split(separator: ",").map { $0.trimmingCharacters(in: .whitespacesAndNewlines) }.filter { !$0.isEmpty }
            // "$ model" (quick_style.md, "Non-nil argument") and "$model" both refuse nil.
            .map { ArgumentSpec(name: $0.hasPrefix("$") ? $0.dropFirst().trimmingCharacters(in: .whitespaces) : $0,
                                refusesNil: $0.hasPrefix("$")) }
        var seen = Set<String>()
        for argument in arguments {
            guard TemplateTextParser.isNameScalarString(argument.name) else {
                throw error("bad argument name '\(argument.name)' in method \(id)", at: position(of: "arguments", in: element))
            }
            guard seen.insert(argument.name).inserted else {
                throw error("argument \(argument.name) repeated in method \(id)", at: position(of: "arguments", in: element))
            }
        }
        var foreach: ([String], String)?
        if let text = nonEmpty(element.attribute("foreach")) {
            let parts = text.trimmingCharacters(in: .whitespaces).split(separator: ".").map(String.init)
            guard parts.count >= 2, parts.allSatisfy(TemplateTextParser.isNameScalarString) else {
                throw error("foreach \"\(text)\" must be collection.item", at: position(of: "foreach", in: element))
            }
            foreach = (Array(parts.dropLast()), parts[parts.count - 1])
            // keyword.md, "@foreach": the collection "must correspond to an argument in
            // arguments", and the item "cannot be duplicated with that of any argument".
            let names = Set(arguments.map(\.name))
            let collection = parts[0].hasPrefix("$") ? String(parts[0].dropFirst()) : parts[0]
            guard names.contains(collection) else {
                throw error("foreach \"\(text)\": \(collection) is not an argument of method \(id)", at: position(of: "foreach", in: element))
            }
            guard !names.contains(parts[parts.count - 1]) else {
                throw error("foreach \"\(text)\": the item \(parts[parts.count - 1]) is also an argument of method \(id)",
                            at: position(of: "foreach", in: element))
            }
        }
        let kind = MethodSpec.Kind(rawValue: element.name) ?? .select
        var result: ResultSpec?
        if let text = nonEmpty(element.attribute("result")) {
            result = try resultSpec(text, at: position(of: "result", in: element))
        }
        let resumable = flag(element.attribute("resumable"))
        return MethodSpec(kind: kind, id: id, arguments: arguments, result: result, foreach: foreach,
                          resumable: resumable,
                          // With foreach, `resumable` is per element; without, it makes every step resumable.
                          statements: try statements(element.children, resumable: resumable && foreach == nil, inMethod: true),
                          position: element.position)
    }

    /// `int`, `long long`, `bool`, `double`, `string`, `binary`, `{}`, a type name, `:mapId`,
    /// and any of them in `[...]`.
    static func resultSpec(_ text: String, at position: SourcePosition) throws -> ResultSpec {
        let t = text.trimmingCharacters(in: .whitespaces)
        if t.hasPrefix("["), t.hasSuffix("]"), t.count >= 2 {
            let inner = try resultSpec(String(t.dropFirst().dropLast()), at: position)
            if case .array = inner { throw error("nested [] in result \"\(text)\"", at: position) }
            return .array(inner)
        }
        switch t.lowercased().split(separator: " ").joined(separator: " ") {
        case "int", "integer", "long", "short", "nsinteger": return .int
        case "long long", "int64", "longlong": return .longLong
        case "bool", "boolean": return .bool
        case "double", "float", "real": return .double
        case "string", "text", "nsstring": return .string
        case "binary", "data", "blob", "nsdata": return .binary
        case "{}", "dictionary", "nsdictionary": return .dictionary
        default: break
        }
        if t.hasPrefix(":"), t.count > 1 { return .map(String(t.dropFirst())) }
        guard !t.isEmpty, TemplateTextParser.isNameScalarString(t.replacingOccurrences(of: ".", with: "_")) else {
            throw error("bad result \"\(text)\"", at: position)
        }
        return .type(t)
    }

    // MARK: Bodies

    /// The statements of a method or upgrade body: its text, or its `<step>`s, or one
    /// `<try>`/`<except>` pair (methods only). keyword.md: "If the step clause exists in a
    /// function, no texts are allowed outside the step"; "TRY EXCEPT statements can only be
    /// used in definitions of DAO methods and should have no preceding or following statements".
    private static func statements(_ children: [ConfigNode], resumable: Bool, inMethod: Bool) throws -> [StatementNode] {
        func isBlankText(_ node: ConfigNode) -> Bool {
            if case .text(let t, _) = node { return t.allSatisfy(\.isWhitespace) }
            return false
        }
        let elements = children.compactMap { node -> ConfigElement? in
            if case .element(let e) = node { return e }
            return nil
        }
        if elements.contains(where: { $0.name == "step" }) {
            var result: [StatementNode] = []
            for child in children where !isBlankText(child) {
                guard case .element(let element) = child, element.name == "step" else {
                    throw error("no text or element is allowed outside the <step>s of a body", at: position(of: child))
                }
                let stepResumable = element.attribute("resumable").map(flag) ?? resumable
                let nodes = try template(element.children)
                if !isBlank(nodes) { result.append(.sql(nodes, resumable: stepResumable)) }
            }
            return result
        }
        if let attempt = elements.first(where: { $0.name == "try" }) {
            guard inMethod else { throw error("<try> belongs in a method, not an <upgrade>", at: attempt.position) }
            for child in children where !isBlankText(child) {
                guard case .element(let element) = child, element.name == "try" || element.name == "except" else {
                    throw error("a <try> has no statements before or after it", at: position(of: child))
                }
            }
            guard elements.count == 1 || (elements.count == 2 && elements[1].name == "except" && elements[0].name == "try") else {
                throw error("one <try>, optionally followed by its <except>", at: elements[1].position)
            }
            // The <except> may also be written inside the <try>, after its statements (keyword.md's example).
            var tryChildren = attempt.children
            var except: [TemplateNode]?
            if elements.count == 2 {
                except = try template(elements[1].children)
            } else if let index = tryChildren.lastIndex(where: { if case .element(let e) = $0 { return e.name == "except" } else { return false } }) {
                guard tryChildren[(index + 1)...].allSatisfy(isBlankText), case .element(let exceptElement) = tryChildren[index] else {
                    throw error("<except> ends its <try>", at: attempt.position)
                }
                except = try template(exceptElement.children)
                tryChildren.removeSubrange(index...)
            }
            return [.tryExcept(try: try template(tryChildren), except: except)]
        }
        if let except = elements.first(where: { $0.name == "except" }) {
            throw error("<except> without a <try> before it", at: except.position)
        }
        let nodes = try template(children)
        return isBlank(nodes) ? [] : [.sql(nodes, resumable: resumable)]
    }

    private static func position(of node: ConfigNode) -> SourcePosition {
        switch node {
        case .text(_, let position): return position
        case .element(let element): return element.position
        }
    }

    /// Dynamic SQL nodes of `children`.
    private static func template(_ children: [ConfigNode]) throws -> [TemplateNode] {
        var nodes: [TemplateNode] = []
        for child in children {
            switch child {
            case .text(let text, let position):
                nodes += try TemplateTextParser.parse(text, at: position)
            case .element(let element):
                nodes.append(try dynamic(element))
            }
        }
        return nodes
    }

    private static func dynamic(_ element: ConfigElement) throws -> TemplateNode {
        switch element.name {
        case "if":
            let (expression, expected) = try condition(of: element)
            return .conditional(expression, expected: expected, body: try template(element.children))
        case "choose":
            var whens: [(Expression, Bool, [TemplateNode])] = []
            var otherwise: [TemplateNode]?
            for child in element.children {
                switch child {
                case .text(let text, let position):
                    guard text.allSatisfy(\.isWhitespace) else { throw error("text directly inside <choose>", at: position) }
                case .element(let e) where e.name == "when":
                    guard otherwise == nil else { throw error("<when> after <otherwise>", at: e.position) }
                    let (expression, expected) = try condition(of: e)
                    whens.append((expression, expected, try template(e.children)))
                case .element(let e) where e.name == "otherwise":
                    guard otherwise == nil else { throw error("second <otherwise>", at: e.position) }
                    otherwise = try template(e.children)
                case .element(let e):
                    throw error("unknown element <\(e.name)> in <choose>", at: e.position)
                }
            }
            return .choose(whens: whens, otherwise: otherwise)
        case "foreach":
            let item = try required("item", of: element)
            let collection = try required("collection", of: element).split(separator: ".").map(String.init)
            guard !collection.isEmpty, collection.allSatisfy(TemplateTextParser.isNameScalarString),
                  TemplateTextParser.isNameScalarString(item) else {
                throw error("bad item or collection in <foreach>", at: element.position)
            }
            let spec = ForeachSpec(item: item, index: nonEmpty(element.attribute("index")), collection: collection,
                                   open: element.attribute("open") ?? "", separator: element.attribute("separator") ?? "",
                                   close: element.attribute("close") ?? "", reverse: flag(element.attribute("reverse")))
            return .foreach(spec, body: try template(element.children))
        case "where":
            // keyword.md: `<trim prefix="WHERE" prefixOverrides="AND | OR | and | or "
            // onVoid="ignoreAfter">` is "Equivalent to <where>".
            let spec = TrimSpec(prefix: "WHERE", suffix: "", prefixOverrides: ["AND", "OR"], suffixOverrides: [],
                                onVoid: try onVoid(of: element) ?? .ignoreAfter)
            return .trim(spec, body: try template(element.children))
        case "set":
            // `<trim prefix="SET" suffixOverrides=",">` is "Equivalent to <set>".
            let spec = TrimSpec(prefix: "SET", suffix: "", prefixOverrides: [","], suffixOverrides: [","],
                                onVoid: try onVoid(of: element))
            return .trim(spec, body: try template(element.children))
        case "trim":
            func overrides(_ name: String) -> [String] {
                (element.attribute(name) ?? "").split(separator: "|").map(String.init).filter { !$0.isEmpty }
            }
            let spec = TrimSpec(prefix: element.attribute("prefix") ?? "", suffix: element.attribute("suffix") ?? "",
                                prefixOverrides: overrides("prefixOverrides"), suffixOverrides: overrides("suffixOverrides"),
                                onVoid: try onVoid(of: element))
            return .trim(spec, body: try template(element.children))
        case "format":
            return try format(element)
        case "step", "try", "except":
            throw error("<\(element.name)> belongs directly in a method or <upgrade>", at: element.position)
        default:
            throw error("unknown element <\(element.name)> in SQL", at: element.position)
        }
    }

    /// `<format prefix pairs join/>` (quick_style.md, "Conditional formatting"): `pairs` names
    /// a dictionary argument, `prefix` is the text before the pairs (`set`, `where`), `join`
    /// goes between them (default ",").
    private static func format(_ element: ConfigElement) throws -> TemplateNode {
        let pairs = try required("pairs", of: element)
        let path = pairs.split(separator: ".", omittingEmptySubsequences: false).map(String.init)
        guard path.allSatisfy(TemplateTextParser.isNameScalarString) else {
            throw error("<format pairs=\"\(pairs)\"> names no argument", at: position(of: "pairs", in: element))
        }
        guard element.children.allSatisfy({ if case .text(let t, _) = $0 { return t.allSatisfy(\.isWhitespace) } else { return false } }) else {
            throw error("<format> has no content", at: element.position)
        }
        let reference = Reference(path: path, orEmpty: false, noQuotes: false, position: position(of: "pairs", in: element))
        return .format(prefix: element.attribute("prefix") ?? "", pairs: reference, join: element.attribute("join") ?? ",")
    }

    /// The `onVoid` of a `<where>`, `<set>` or `<trim>`: "ignoreAfter" or "quit" (keyword.md:
    /// "It has two values").
    private static func onVoid(of element: ConfigElement) throws -> OnVoid? {
        guard let text = element.attribute("onVoid") else { return nil }
        guard let value = OnVoid(rawValue: text.trimmingCharacters(in: .whitespaces)) else {
            throw error("onVoid \"\(text)\" is neither ignoreAfter nor quit", at: position(of: "onVoid", in: element))
        }
        return value
    }

    private static func condition(of element: ConfigElement) throws -> (Expression, Bool) {
        for (name, expected) in [("true", true), ("test", true), ("false", false)] {
            if let attribute = element.attributes.first(where: { $0.name == name }) {
                // The expression starts after `name="`.
                let start = SourcePosition(line: attribute.position.line, column: attribute.position.column + name.count + 2)
                return (try ExpressionParser.parse(attribute.value, at: start), expected)
            }
        }
        throw error("<\(element.name)> needs true=\"...\" or false=\"...\"", at: element.position)
    }

    /// Every `${name}` names a const or fragment, and no fragment includes itself.
    private static func checkIncludes(_ config: DAOConfig, positions: [String: SourcePosition]) throws {
        var done = Set<String>()
        func visit(_ nodes: [TemplateNode], path: [String]) throws {
            for node in nodes {
                switch node {
                case .include(let name, let position):
                    guard let fragment = config.fragments[name] else { throw error("${\(name)} names no <const> or <sql>", at: position) }
                    if path.contains(name) { throw error("${\(name)} includes itself", at: position) }
                    if done.contains(name) { continue }
                    try visit(fragment, path: path + [name])
                    done.insert(name)
                case .conditional(_, _, let body), .foreach(_, let body), .trim(_, let body):
                    try visit(body, path: path)
                case .choose(let whens, let otherwise):
                    for when in whens { try visit(when.2, path: path) }
                    try visit(otherwise ?? [], path: path)
                default:
                    break
                }
            }
        }
        for (name, nodes) in config.fragments.sorted(by: { $0.key < $1.key }) { try visit(nodes, path: [name]) }
        func statementsNodes(_ statements: [StatementNode]) -> [[TemplateNode]] {
            statements.flatMap { statement -> [[TemplateNode]] in
                switch statement {
                case .sql(let nodes, _): return [nodes]
                case .tryExcept(let t, let e): return [t, e ?? []]
                }
            }
        }
        for overloads in config.methods.values {
            for method in overloads { for nodes in statementsNodes(method.statements) { try visit(nodes, path: []) } }
        }
        for upgrade in config.upgrades { for nodes in statementsNodes(upgrade.statements) { try visit(nodes, path: []) } }
    }

    // MARK: Helpers

    private static func isBlank(_ nodes: [TemplateNode]) -> Bool {
        nodes.allSatisfy { if case .text(let t) = $0 { return t.allSatisfy(\.isWhitespace) } else { return false } }
    }

    private static func required(_ name: String, of element: ConfigElement) throws -> String {
        guard let value = nonEmpty(element.attribute(name)) else {
            throw error("<\(element.name)> needs a \(name) attribute", at: element.position)
        }
        return value
    }

    private static func position(of attribute: String, in element: ConfigElement) -> SourcePosition {
        element.attributes.first { $0.name == attribute }?.position ?? element.position
    }

    private static func nonEmpty(_ text: String?) -> String? {
        guard let t = text?.trimmingCharacters(in: .whitespacesAndNewlines), !t.isEmpty else { return nil }
        return t
    }

    static func flag(_ text: String?) -> Bool {
        switch text?.trimmingCharacters(in: .whitespaces).lowercased() {
        case "true", "yes", "1": return true
        default: return false
        }
    }

    private static func error(_ message: String, at position: SourcePosition) -> DAOError {
        .config(message: message, line: position.line, column: position.column)
    }
}

extension TemplateTextParser {
    static func isNameScalarString(_ text: String) -> Bool {
        !text.isEmpty && text.unicodeScalars.allSatisfy(isNameScalar)
    }
}

/// A version "x.y.z": components compared numerically, missing ones as 0.
struct VersionNumber: Comparable, Sendable {
    var components: [Int]
    static let zero = VersionNumber(components: [0])

    init(components: [Int]) { self.components = components }

    init?(_ text: String) {
        let parts = text.trimmingCharacters(in: .whitespaces).split(separator: ".", omittingEmptySubsequences: false)
        var components: [Int] = []
        for part in parts {
            guard let n = Int(part), n >= 0 else { return nil }
            components.append(n)
        }
        guard !components.isEmpty else { return nil }
        self.components = components
    }

    static func < (a: VersionNumber, b: VersionNumber) -> Bool {
        for i in 0..<max(a.components.count, b.components.count) {
            let x = i < a.components.count ? a.components[i] : 0
            let y = i < b.components.count ? b.components[i] : 0
            if x != y { return x < y }
        }
        return false
    }

    static func == (a: VersionNumber, b: VersionNumber) -> Bool { !(a < b) && !(b < a) }
}
