/// What one SQL statement produced.
public struct SQLResult: Sendable, Equatable {
    /// Column names of a query's rows (aliases where given, as SQLite names them); empty for
    /// statements that are not queries.
    public var columns: [String]
    /// A query's rows in result order; empty for statements that are not queries.
    public var rows: [[DAOValue]]
    /// Rows inserted, updated or deleted by an INSERT, UPDATE, DELETE or REPLACE (SQLite's
    /// `changes()`); 0 for other statements.
    public var changes: Int
    /// The rowid of the last row inserted through this database (SQLite's
    /// `last_insert_rowid()`: unchanged by statements that insert nothing).
    public var lastInsertRowId: Int64
    /// Whether the statement was a query (SELECT), whose rows are the result.
    public var isQuery: Bool

    /// A result.
    public init(columns: [String] = [], rows: [[DAOValue]] = [], changes: Int = 0, lastInsertRowId: Int64 = 0, isQuery: Bool = false) {
        self.columns = columns
        self.rows = rows
        self.changes = changes
        self.lastInsertRowId = lastInsertRowId
        self.isQuery = isQuery
    }
}
