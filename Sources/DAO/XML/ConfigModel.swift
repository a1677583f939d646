/// The loaded form of an XML DAO config (API.md "DAO" 1): the `<module>` attributes, constants,
/// fragments, maps, crypt declarations, methods and upgrade blocks, every SQL body already parsed
/// into template nodes and every expression into a tree, so a malformed config fails at load.
struct DAOConfig: Sendable {
    var name: String
    /// The id of the `<update>` run once before the first call, or nil.
    var initializer: String?
    /// The table name; empty when the caller sets it with `forTable(_:)`.
    var tableName: String
    /// The config's version ("x.x"), or nil when it keeps none.
    var version: String?
    /// Drop and re-create the table (running the initializer) instead of running upgrade blocks.
    var resetOnUpgrade: Bool
    /// Stored versions below this are reset instead of upgraded.
    var upgradeMinVersion: String?
    /// `<const>` values and `<sql>` fragments by name, spliced by `${name}`.
    var fragments: [String: [TemplateNode]]
    var maps: [String: ResultMap]
    /// `<crypt class property>`: per class name, the encrypted property names.
    var crypts: [String: Set<String>]
    /// Methods by id; several when overloaded by argument count.
    var methods: [String: [MethodSpec]]
    /// `<upgrade>` blocks in ascending `toVersion` order.
    var upgrades: [UpgradeSpec]
}

/// One `<select>`, `<insert>`, `<update>` or `<delete>`.
struct MethodSpec: Sendable {
    enum Kind: String, Sendable { case select, insert, update, delete }
    var kind: Kind
    var id: String
    var arguments: [ArgumentSpec]
    var result: ResultSpec?
    /// `foreach="list.item"`: the collection's path and the item's name.
    var foreach: (collection: [String], item: String)?
    /// `resumable="true"`: a failing foreach element or step is recorded and the rest commit.
    var resumable: Bool
    var statements: [StatementNode]
    var position: SourcePosition
}

/// One name of a method's `arguments` list; `$name` refuses nil.
struct ArgumentSpec: Sendable, Equatable {
    var name: String
    var refusesNil: Bool
}

/// What a method's `result` asks for.
indirect enum ResultSpec: Sendable, Equatable {
    case int, longLong, bool, double, string, binary, dictionary
    case type(String)
    case map(String)
    case array(ResultSpec)
}

/// `<map id result>`: columns renamed to properties, then the row as `result` (a type or `{}`).
struct ResultMap: Sendable {
    var result: ResultSpec
    /// column -> property
    var columns: [String: String]
}

/// `<upgrade toVersion>`.
struct UpgradeSpec: Sendable {
    var toVersion: String
    var statements: [StatementNode]
    var position: SourcePosition
}

/// A unit of execution inside a method or upgrade.
enum StatementNode: Sendable {
    /// SQL text (possibly several statements separated by ';'); `resumable` lets it fail.
    case sql([TemplateNode], resumable: Bool)
    /// `<try>` then, when it fails, `<except>`.
    case tryExcept(try: [TemplateNode], except: [TemplateNode]?)
}

/// The dynamic SQL of a body.
indirect enum TemplateNode: Sendable {
    case text(String)
    /// `#{path}`: a bound parameter.
    case bind(Reference)
    /// `@{path}`: the value as SQL literal text.
    case splice(Reference)
    /// `${T}` / `${t}`.
    case tableName
    /// `${name}`: a `<const>` or `<sql>` fragment.
    case include(String, SourcePosition)
    /// A bare `{path}`: the value's text, unquoted, when `path` names an argument, a foreach item
    /// or a global; otherwise `literal` (the braces as written).
    case bareSplice(Reference, literal: String)
    /// `<if true=...>` (expected true) or `<if false=...>`.
    case conditional(Expression, expected: Bool, body: [TemplateNode])
    case choose(whens: [(Expression, Bool, [TemplateNode])], otherwise: [TemplateNode]?)
    case foreach(ForeachSpec, body: [TemplateNode])
    /// `<trim>`, and `<where>` / `<set>` as the trims keyword.md says they equal.
    case trim(TrimSpec, body: [TemplateNode])
    /// `<format prefix pairs join/>` (quick_style.md, "Conditional formatting"): per entry of the
    /// dictionary argument at `pairs`, `key = ?` binding its value, joined with `join`, after
    /// `prefix`; nothing at all when the dictionary is nil or empty.
    case format(prefix: String, pairs: Reference, join: String)
}

/// A reference's dotted path and its modifiers.
struct Reference: Sendable, Equatable {
    var path: [String]
    /// `or ""`: nil becomes the empty string.
    var orEmpty: Bool
    /// `no ""`: spliced without quotes.
    var noQuotes: Bool
    var position: SourcePosition
}

struct ForeachSpec: Sendable {
    var item: String
    var index: String?
    var collection: [String]
    var open: String
    var separator: String
    var close: String
    var reverse: Bool
}

struct TrimSpec: Sendable {
    var prefix: String
    var suffix: String
    var prefixOverrides: [String]
    var suffixOverrides: [String]
    var onVoid: OnVoid?
}

/// keyword.md, "where, set, trim": what a `<where>`, `<set>` or `<trim>` whose clauses are all
/// void does to its statement (without onVoid it just adds nothing).
enum OnVoid: String, Sendable {
    /// "ignore the following formatting statements and return the current SQL statement for
    /// execution": the statement is the text rendered before the element.
    case ignoreAfter
    /// "not to execute this SQL statement but to return success".
    case quit
}
