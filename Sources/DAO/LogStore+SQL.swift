import LogStore

extension LogStore {
    /// Runs one SQL statement of the subset (API.md "DAO" 2) on this store's tables and returns
    /// a query's rows (an empty array for DDL and DML; `SQLDatabase.execute` also gives changes
    /// and the last insert rowid).
    /// - Throws: `DAOError` or `StoreError`; the tables are then as they were.
    public func sql(_ statement: String, arguments: [DAOValue] = []) throws -> [[DAOValue]] {
        try SQLDatabase.attached(to: self).execute(statement, arguments: arguments).rows
    }
}
