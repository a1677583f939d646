import LogStore

extension SQLDatabase {
    /// The schema version the last versioned open committed (`openVersion`); 0 when the
    /// store's tables were never opened with a version (as SQLite's `PRAGMA user_version`).
    /// - Throws: `StoreError` from the store, `.corrupt` when the record does not decode.
    public func userVersion() throws -> Int {
        Int(try readVersionRecord().version)
    }

    /// Brings the store's tables to schema `version`, as Android's SQLiteOpenHelper (and
    /// OrmLite's helper) do at open: `onCreate` when the store has no version yet,
    /// `onUpgrade(db, from, to)` when it is lower, `onDowngrade(db, from, to)` when it is
    /// higher, nothing when it is equal. At most one callback runs, and it runs inside one
    /// transaction (BEGIN ... COMMIT: one atomic write batch of the store) that also writes the
    /// new version (FORMAT.md "DAO schema versions"): when the callback throws, or the process
    /// dies before the batch is on disk, the tables, their rows and the version are as they
    /// were, and the next open runs the callback again. While it runs, statements of other
    /// threads wait (the transaction belongs to this thread).
    ///
    /// The callbacks get this database; they run statements with `execute` (and may use typed
    /// Daos of the same store) but must not COMMIT or ROLLBACK themselves.
    ///
    /// ```swift
    /// try db.openVersion(2,
    ///     onCreate: { db in try db.execute("CREATE TABLE User (id INTEGER PRIMARY KEY, name TEXT)") },
    ///     onUpgrade: { db, _, _ in
    ///         try db.execute("DROP TABLE IF EXISTS User")
    ///         try db.execute("CREATE TABLE User (id INTEGER PRIMARY KEY, name TEXT, age INTEGER)")
    ///     })
    /// ```
    /// - Parameters:
    ///   - version: the schema version the code expects, 1 or more.
    ///   - onDowngrade: nil (the default) refuses a downgrade with
    ///     `SchemaVersionError.downgradeRefused`, as SQLiteOpenHelper does.
    /// - Returns: which callback ran.
    /// - Throws: `SchemaVersionError.invalidVersion` (version below 1), `.downgradeRefused`,
    ///   `.transactionEnded` (a callback ended the transaction); what a callback throws; the
    ///   engine's and the store's errors (`SQLExecutionError` when a transaction is already
    ///   open). Nothing is changed then.
    /// - Complexity: one read of the versions record when nothing needs to run.
    @discardableResult
    public func openVersion(_ version: Int,
                            onCreate: (SQLDatabase) throws -> Void,
                            onUpgrade: (SQLDatabase, _ from: Int, _ to: Int) throws -> Void,
                            onDowngrade: ((SQLDatabase, _ from: Int, _ to: Int) throws -> Void)? = nil) throws -> SchemaVersionChange {
        guard version >= 1 else { throw SchemaVersionError.invalidVersion(version) }
        // Fast path: the usual open finds the version it expects and begins no transaction.
        if try userVersion() == version { return .unchanged(version: version) }
        return try inSchemaTransaction("the schema version \(version) callback") { record in
            let stored = Int(record.version)
            var updated = record
            updated.version = Int64(version)
            if stored == version { return (.unchanged(version: version), nil) }
            if stored == 0 {
                try onCreate(self)
                return (.created(version: version), updated)
            }
            if stored < version {
                try onUpgrade(self, stored, version)
                return (.upgraded(from: stored, to: version), updated)
            }
            guard let onDowngrade else {
                throw SchemaVersionError.downgradeRefused(stored: stored, requested: version)
            }
            try onDowngrade(self, stored, version)
            return (.downgraded(from: stored, to: version), updated)
        }
    }
}

extension LogStore {
    /// This store's SQL database with its tables at schema `version`: attaches the database
    /// and runs `SQLDatabase.openVersion` (at most one of the callbacks, in one transaction
    /// with the new version) before returning it. The shape of OrmLite's
    /// `OrmLiteSqliteOpenHelper(context, name, factory, version)`.
    /// - Throws: as `SQLDatabase.attached(to:)` and `SQLDatabase.openVersion`; the tables and
    ///   the version are then as they were.
    public func openTables(version: Int,
                           onCreate: (SQLDatabase) throws -> Void,
                           onUpgrade: (SQLDatabase, _ from: Int, _ to: Int) throws -> Void,
                           onDowngrade: ((SQLDatabase, _ from: Int, _ to: Int) throws -> Void)? = nil) throws -> SQLDatabase {
        let database = try SQLDatabase.attached(to: self)
        try database.openVersion(version, onCreate: onCreate, onUpgrade: onUpgrade, onDowngrade: onDowngrade)
        return database
    }
}
