import LogStore

extension SQLDatabase {
    /// The stored schema versions record as this connection sees it (the open transaction's
    /// pending record first); an empty record when there is none.
    /// - Throws: `StoreError` from the store, `.corrupt` when the record does not decode.
    func readVersionRecord() throws -> SchemaVersionRecord {
        try withStatementLock { try readVersionRecordLocked() }
    }

    /// `readVersionRecord` for a caller that holds the statement lock (a running statement:
    /// `PRAGMA user_version`).
    func readVersionRecordLocked() throws -> SchemaVersionRecord {
        if let pendingVersionRecord { return try SchemaVersionRecord(decoding: pendingVersionRecord) }
        let space: LogStore.KeySpace?
        if let catalogSpace { space = catalogSpace } else { space = try existingSpace(named: "dao.catalog") }
        guard let space, let bytes = try store.get(forKey: SchemaVersionRecord.key, space: space) else {
            return SchemaVersionRecord()
        }
        return try SchemaVersionRecord(decoding: bytes)
    }

    /// Runs `body` in one transaction (BEGIN ... COMMIT, one atomic batch of the store) and
    /// writes the record it returns (when not nil) in the same batch. `body` gets the record
    /// as stored when the transaction began, so two openers cannot both act on the same one.
    /// When `body` or the commit throws, everything it did is rolled back and the error
    /// rethrown. `what` names the callback in `SchemaVersionError.transactionEnded`.
    func inSchemaTransaction<T>(_ what: String,
                                _ body: (SchemaVersionRecord) throws -> (T, SchemaVersionRecord?)) throws -> T {
        try execute("BEGIN")
        do {
            let (result, record) = try body(try readVersionRecord())
            guard inTransaction else { throw SchemaVersionError.transactionEnded(what) }
            if let record {
                let bytes = record.encoded()
                try withStatementLock { pendingVersionRecord = bytes }
            }
            try execute("COMMIT")
            return result
        } catch {
            if inTransaction { _ = try? execute("ROLLBACK") }
            throw error
        }
    }
}
