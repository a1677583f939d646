import Foundation

/// What an insert, update or delete method of a DAO config (or `executeUpdate`) did.
public struct DAOResult: Sendable {
    /// Whether the call completed (a throwing call returns no result at all).
    public var succeeded: Bool
    /// The rowid of the last row inserted on the store (SQLite's `last_insert_rowid()`).
    public var lastInsertRowId: Int64
    /// Rows inserted, updated or deleted by all statements of the call.
    public var changedRowCount: Int
    /// Per foreach element (one entry for a call without foreach): which of `<try>` / `<except>`
    /// ran, `.none` when the body has neither.
    public var flags: [DAOFlag]
    /// Indexes of the foreach elements that failed and were skipped (`resumable="true"`).
    public var foreachFailedObjects: [Int]

    /// A result.
    public init(succeeded: Bool = true, lastInsertRowId: Int64 = 0, changedRowCount: Int = 0,
                flags: [DAOFlag] = [], foreachFailedObjects: [Int] = []) {
        self.succeeded = succeeded
        self.lastInsertRowId = lastInsertRowId
        self.changedRowCount = changedRowCount
        self.flags = flags
        self.foreachFailedObjects = foreachFailedObjects
    }
}

/// Which block of a `<try>` / `<except>` pair ran for one foreach element (or the call).
public enum DAOFlag: Sendable, Equatable {
    /// The body has no `<try>`, or the element failed (resumable foreach).
    case none
    /// The `<try>` statements ran without error.
    case tryBlockExecuted
    /// The `<try>` failed and the `<except>` statements ran.
    case exceptBlockExecuted
}

/// What a DAO proxy tells its `eventHandler`. The handler's Bool answers `shouldUpgrade`
/// (false: leave the table and its stored version as they are); it is ignored for the others.
public enum DAOEvent: Sendable {
    /// The stored version of `table` is older than the config's; upgrade blocks are about to run.
    case shouldUpgrade(table: String, from: String, to: String)
    /// An upgrade block failed and was rolled back; `message` says why.
    case upgradeFailed(table: String, message: String)
    /// The initializer created `table`.
    case tableCreated(String)
    /// `table` was dropped (deleteTable, deleteTables, or a reset on upgrade).
    case tableDeleted(String)
}

/// Types a config's `result="Name"` (or `[Name]`, or a `<map result="Name">`) decodes rows into.
/// Register each before calling methods that name it. Thread-safe.
public enum DAOTypeRegistry {
    struct Entry {
        let decodeOne: ([String: DAOValue]) throws -> Any
        let decodeAll: ([[String: DAOValue]]) throws -> Any
    }

    private static let entries = LockedValue<[String: Entry]>([:])

    /// Makes `type` the result of `result="name"`; a later registration of the same name wins.
    /// Rows decode column by column into the type's coding keys (`DAORowDecoder`).
    public static func register<T: Decodable>(_ type: T.Type, as name: String) {
        let entry = Entry(
            decodeOne: { row in try RowDecoding.decode(T.self, from: row) },
            decodeAll: { rows in try rows.map { try RowDecoding.decode(T.self, from: $0) } })
        entries.withLock { $0[name] = entry }
    }

    static func entry(_ name: String) -> Entry? {
        entries.withLock { $0[name] }
    }
}

/// A config method reached through the proxy's dynamic member: `try proxy.find(id: 7)`
/// calls `find` with named arguments, `try proxy.find(7)` with positional ones.
@dynamicCallable public struct DAOMethod {
    let proxy: DAOProxy
    let name: String

    /// Calls the method: all arguments labelled -> by name; none labelled -> by position;
    /// mixed -> unlabelled ones take the method's argument names by position.
    /// - Throws: as `DAOProxy.call`.
    public func dynamicallyCall(withKeywordArguments arguments: KeyValuePairs<String, Any?>) throws -> Any? {
        if arguments.allSatisfy({ $0.key.isEmpty }) {
            return try proxy.call(name, positional: arguments.map(\.value))
        }
        return try proxy.call(name, labelled: arguments.map { ($0.key, $0.value) })
    }
}

/// A value behind a lock, for state shared across threads.
final class LockedValue<Value>: @unchecked Sendable {
    private var value: Value
    private let lock = NSLock()

    init(_ value: Value) { self.value = value }

    func withLock<R>(_ body: (inout Value) throws -> R) rethrows -> R {
        lock.lock()
        defer { lock.unlock() }
        return try body(&value)
    }
}

/// APDAOTransaction (mpaas-docs functions/DAO/transaction.md): what `daoTransaction(_:)` of a
/// proxy, or of the preferences whose store holds its tables, does.
public enum DAOTransaction: Sendable {
    /// BEGIN: the calling thread's DAO calls on that store join one transaction.
    case begin
    /// COMMIT.
    case commit
    /// ROLLBACK: the calls since `begin` are undone together.
    case rollback
}
