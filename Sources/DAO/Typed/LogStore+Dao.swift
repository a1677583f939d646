import LogStore

extension LogStore {
    /// The typed Dao of `type`'s table in this store, creating the table, its unique columns
    /// and its indexes when they do not exist.
    /// - Throws: `DAOError` when `type.table` does not fit the record type, the engine's errors.
    public func dao<T: DAORecord>(for type: T.Type) throws -> Dao<T> {
        try Dao(runner: SQLDatabase.attached(to: self))
    }
}
