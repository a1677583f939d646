import LogStore

/// The SQL engine of one LogStore: its tables (indexed record sets, each in a key space of the
/// store), their indexes, and the state of the one connection (an open transaction, the last
/// insert rowid).
///
/// Every layer reaches a store's tables through the same instance, `attached(to:)`, so a
/// transaction begun by one layer is seen by the others and indexes are built once.
///
/// ```swift
/// let db = try SQLDatabase.attached(to: store)
/// try db.execute("CREATE TABLE t (id INTEGER PRIMARY KEY, name TEXT)")
/// let r = try db.execute("SELECT name FROM t WHERE id = ?", arguments: [7])
/// ```
///
/// Thread-safe: statements run one at a time; while a transaction is open, statements of other
/// threads wait for it to end.
///
/// INTERFACE STUB: the SQL engine (issue 7) fills this in. Its declarations are what the typed
/// Dao, the XML DAO proxies and `ustore sql` are written against.
public final class SQLDatabase: @unchecked Sendable {
    /// The store whose tables these are.
    public let store: LogStore

    private init(store: LogStore) {
        self.store = store
    }

    /// The database of `store`, created on first use (loading the table catalog and building or
    /// loading the indexes).
    /// - Throws: `StoreError` when the store is closed or its catalog cannot be read.
    public static func attached(to store: LogStore) throws -> SQLDatabase {
        throw DAOError.unsupported("SQL engine not built yet")
    }

    /// Runs one statement of the subset (API.md "DAO" 2), binding `?` parameters in order.
    /// A statement is atomic: when it throws, the tables are as they were before it.
    /// - Throws: `DAOError` (`syntax` with line and column, `unsupported` naming the construct,
    ///   `constraint`, `noSuchTable`, `noSuchColumn`) or `StoreError` from the store.
    public func execute(_ sql: String, arguments: [DAOValue] = []) throws -> SQLResult {
        throw DAOError.unsupported("SQL engine not built yet")
    }

    /// Runs one statement binding `:name` parameters by name (without the colon).
    /// - Throws: as `execute(_:arguments:)`.
    public func execute(_ sql: String, named arguments: [String: DAOValue]) throws -> SQLResult {
        throw DAOError.unsupported("SQL engine not built yet")
    }

    /// Whether a transaction (BEGIN without COMMIT or ROLLBACK yet) is open.
    public var inTransaction: Bool { false }
}
