import Foundation
import LogStore

/// A loaded XML DAO config. Results of `call`: int -> Int, long long -> Int64, bool -> Bool,
/// double -> Double, string -> String, binary -> Data, {} -> [String: Any] (NULL as NSNull),
/// a registered type -> that type, [x] -> [x]; nil when a single-row select finds no row;
/// DAOResult for insert/update/delete.
///
/// As the source's manual says (mpaas-docs functions/DAO/keyword.md): `int` is a 32-bit value
/// (the low 32 bits of the column, as `numberWithInt`), a `<select>` with `foreach` returns an
/// array of one result per element (NSNull where one has none), and a `<where>`/`<set>`/`<trim>`
/// with `onVoid="quit"` whose clauses are all void runs nothing and succeeds.
///
/// A `<select>` without `result` returns `[[String: Any]]` (as `[{}]`); an insert, update or
/// delete declaring `result="int"` / `"long long"` returns its changed row count, `"bool"` true. A single-row result
/// whose column is NULL gives nil; in the array forms NULL gives 0, false, "" or empty Data.
///
/// ```swift
/// DAOTypeRegistry.register(Message.self, as: "Message")
/// let messages = try DataCenter.default.dao(configPath: url, userDependent: true)
/// try messages.addMessages(messages: [m1, m2])            // foreach, one transaction
/// let m = try messages.getMessage(msgId: "a") as? Message  // nil when there is no row
/// let n = try messages.call("countMessages") as? Int
/// ```
///
/// The table is set up on the first call on each store: the store's schema versions record
/// keeps the config's version per table (with the versioned open's version and the migrator's
/// migrations, `storedVersion()`), the initializer runs once, and upgrade blocks run from the
/// stored version (see `eventHandler`), in one transaction with the new version. Thread-safe: the proxy's state is behind a lock; statements run
/// through the store's `SQLDatabase`, which serializes them.
@dynamicMemberLookup public final class DAOProxy: @unchecked Sendable {
    struct State {
        var tableName: String
        var encryptCrypt: DataCrypt?
        var decryptCrypt: DataCrypt?
        var eventHandler: (@Sendable (DAOEvent) -> Bool)?
        var globalArguments: [String: Any?] = [:]
        var lastInsertRowId: Int64 = 0
        var lastChangedRowCount: Int = 0
        /// Tables set up, per store's engine (kept so its identifier is not reused).
        var initialized: [ObjectIdentifier: (runner: AnyObject, tables: Set<String>)] = [:]
        /// Tables whose setup is running (on the thread holding `setupLock`).
        var settingUp: Set<String> = []
    }

    let config: DAOConfig
    /// The engine of the store to use now: fixed, or the current user's.
    let runnerProvider: @Sendable () throws -> any SQLStatementRunner
    let state: LockedValue<State>
    /// Held while a table is set up, so two threads do not both run the initializer.
    let setupLock = NSRecursiveLock()

    init(config: DAOConfig, tableName: String? = nil, runner: @escaping @Sendable () throws -> any SQLStatementRunner) {
        self.config = config
        self.runnerProvider = runner
        self.state = LockedValue(State(tableName: tableName ?? config.tableName))
    }

    /// Loads the config at `url` for the tables of `store`.
    /// - Throws: `DAOError.config` with line and column when the config is malformed; the file
    ///   system's error when it cannot be read.
    public convenience init(contentsOf url: URL, store: LogStore) throws {
        try self.init(contentsOf: url, storeProvider: { store })
    }

    /// Loads the config at `url`; every call runs on the store `storeProvider` returns then
    /// (a user-dependent proxy passes the current user's store, and throws
    /// `StoreError.noCurrentUser` when there is none).
    /// - Throws: as `init(contentsOf:store:)`.
    public convenience init(contentsOf url: URL, storeProvider: @escaping @Sendable () throws -> LogStore) throws {
        self.init(config: try ConfigLoader.load(contentsOf: url), runner: { try SQLDatabase.attached(to: storeProvider()) })
    }

    /// Loads config text (the content of a config file) for the tables of `store`.
    /// - Throws: `DAOError.config` with line and column.
    public convenience init(configText: String, store: LogStore) throws {
        self.init(config: try ConfigLoader.load(configText), runner: { try SQLDatabase.attached(to: store) })
    }

    /// Loads config text without a store, to check it (a build step, a fuzzer): returns the
    /// config's method ids, sorted.
    /// - Throws: `DAOError.config` with the line and column of the first problem.
    /// - Complexity: O(length of the text).
    public static func checkConfig(_ text: String) throws -> [String] {
        try ConfigLoader.load(text).methods.keys.sorted()
    }

    /// Parses an `<if>` expression (the text of a `true="..."` attribute), to check it.
    /// - Throws: `DAOError.config` whose column counts from 1 at the start of `text`.
    public static func checkExpression(_ text: String) throws {
        _ = try ExpressionParser.parse(text, at: SourcePosition(line: 1, column: 1))
    }

    // MARK: Properties

    /// The method of that id, callable: `try proxy.find(id: 7)`.
    public subscript(dynamicMember method: String) -> DAOMethod {
        DAOMethod(proxy: self, name: method)
    }

    /// The table `${T}` names. Setting it switches this proxy to another table (set up on its
    /// next call).
    public var tableName: String {
        get { state.withLock { $0.tableName } }
        set { state.withLock { $0.tableName = newValue } }
    }

    /// A proxy of the same config, store, crypts and handler on table `name`.
    public func forTable(_ name: String) -> DAOProxy {
        let copy = DAOProxy(config: config, tableName: name, runner: runnerProvider)
        let mine = state.withLock { $0 }
        copy.state.withLock {
            $0.encryptCrypt = mine.encryptCrypt
            $0.decryptCrypt = mine.decryptCrypt
            $0.eventHandler = mine.eventHandler
            $0.globalArguments = mine.globalArguments
        }
        return copy
    }

    /// The rowid of the last row inserted through this proxy.
    public var lastInsertRowId: Int64 { state.withLock { $0.lastInsertRowId } }

    /// Rows changed by this proxy's last insert, update or delete call.
    public var lastChangedRowCount: Int { state.withLock { $0.lastChangedRowCount } }

    /// The ids of the config's methods, sorted.
    public var allMethods: [String] { config.methods.keys.sorted() }

    /// The crypt of `<crypt>` properties when writing (nil: the store's default key, which
    /// protects whole rows of a keyed store).
    public var encryptCrypt: DataCrypt? {
        get { state.withLock { $0.encryptCrypt } }
        set { state.withLock { $0.encryptCrypt = newValue } }
    }

    /// The crypt of `<crypt>` properties when reading (nil: `encryptCrypt`).
    public var decryptCrypt: DataCrypt? {
        get { state.withLock { $0.decryptCrypt } }
        set { state.withLock { $0.decryptCrypt = newValue } }
    }

    /// Told of should-upgrade (its answer decides), upgrade-failed, table-created and
    /// table-deleted. Called on the thread of the call that caused the event; during a table's
    /// setup it runs inside the setup's transaction, so it may call this proxy but should not
    /// wait for other threads that use the store.
    public var eventHandler: (@Sendable (DAOEvent) -> Bool)? {
        get { state.withLock { $0.eventHandler } }
        set { state.withLock { $0.eventHandler = newValue } }
    }

    /// Values every method sees under their names, below the call's own arguments.
    public var globalArguments: [String: Any?] {
        get { state.withLock { $0.globalArguments } }
        set { state.withLock { $0.globalArguments = newValue } }
    }

    // MARK: Calls

    /// Calls method `method` with arguments by name (missing ones are nil). When the method is
    /// overloaded, the overload with as many arguments as given is chosen, else one whose
    /// argument names include every given name.
    /// - Throws: `DAOError.noSuchMethod`, `DAOError.nilArgument` for a nil `$` argument, SQL
    ///   errors of the engine (a foreach or multi-statement method is then rolled back).
    public func call(_ method: String, _ arguments: [String: Any?] = [:]) throws -> Any? {
        let spec = try overload(method, count: arguments.count, names: Set(arguments.keys))
        return try invoke(spec, arguments: arguments, decodeAs: nil)
    }

    /// Calls `method` with arguments matched to its `arguments` list in order; the overload
    /// with that many arguments is chosen.
    /// - Throws: as `call(_:_:)`.
    public func call(_ method: String, positional arguments: [Any?]) throws -> Any? {
        let spec = try overload(method, count: arguments.count, names: nil)
        return try invoke(spec, arguments: named(spec, arguments), decodeAs: nil)
    }

    /// Calls `method` and decodes its rows into `T` (the first row, or nil when there is none),
    /// whatever its `result` says.
    /// - Throws: as `call(_:_:)`, and `DecodingError` when a row does not fit `T`.
    public func call<T: Decodable>(_ method: String, _ arguments: [String: Any?] = [:], as type: T.Type) throws -> T? {
        let spec = try overload(method, count: arguments.count, names: Set(arguments.keys))
        let decode: ([String: DAOValue]) throws -> Any = { try RowDecoding.decode(T.self, from: $0) }
        return try invoke(spec, arguments: arguments, decodeAs: decode) as? T
    }

    /// Labelled and unlabelled arguments of a dynamic call.
    func call(_ method: String, labelled: [(String, Any?)]) throws -> Any? {
        let spec = try overload(method, count: labelled.count, names: nil)
        var arguments: [String: Any?] = [:]
        for (index, (label, value)) in labelled.enumerated() {
            if !label.isEmpty {
                arguments[label] = .some(value)
            } else if index < spec.arguments.count {
                arguments[spec.arguments[index].name] = .some(value)
            }
        }
        return try invoke(spec, arguments: arguments, decodeAs: nil)
    }

    private func named(_ spec: MethodSpec, _ values: [Any?]) -> [String: Any?] {
        var arguments: [String: Any?] = [:]
        for (argument, value) in zip(spec.arguments, values) { arguments[argument.name] = .some(value) }
        return arguments
    }

    private func overload(_ method: String, count: Int, names: Set<String>?) throws -> MethodSpec {
        guard let overloads = config.methods[method] else { throw DAOError.noSuchMethod(method) }
        if let exact = overloads.first(where: { $0.arguments.count == count }) { return exact }
        if let names, let match = overloads.first(where: { names.isSubset(of: Set($0.arguments.map(\.name))) }) {
            return match
        }
        throw DAOError.noSuchMethod("\(method) with \(count) arguments")
    }
}
