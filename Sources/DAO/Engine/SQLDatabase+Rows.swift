import Foundation

extension SQLDatabase {
    /// Runs one statement and hands each row of its result to `body` as the query makes it,
    /// without building the result in memory: SQLite's `sqlite3_step` loop, GRDB's cursors.
    /// A query whose rows come in their final order from its access path (no sort beyond what
    /// an index gives, no DISTINCT with LIMIT or OFFSET, no compound select) streams: memory
    /// stays flat whatever the number of rows, and a row costs no `[[DAOValue]]` entry. Other
    /// statements (a sort, a compound select, INSERT ... RETURNING, PRAGMA) hand out their rows
    /// after they ran. Rows and their order are those `execute(_:arguments:)` returns.
    ///
    /// The statement runs under the database's statement lock, as `execute` does: other
    /// threads wait until this call returns. `body` may read the row and the database's state
    /// (`tableNames()`, `lastInsertRowId`, ...) but must not run a statement on this database
    /// (that throws `SQLExecutionError`); to stop early, throw from `body` (the error comes out
    /// of this call unchanged) or put a LIMIT in the query.
    /// - Returns: the number of rows handed to `body`.
    /// - Throws: as `execute(_:arguments:)`, and whatever `body` throws. A statement that
    ///   writes (INSERT ... RETURNING) has made its changes, atomically as with `execute`,
    ///   before its first row is handed out: an error from `body` does not undo them (as in
    ///   SQLite, where they are made at the first step).
    @discardableResult
    public func forEachRow(_ sql: String, arguments: [DAOValue] = [], _ body: (SQLRow) throws -> Void) throws -> Int {
        try forEachRow({ try parsedStatement(sql) }, arguments: { _ in arguments.map(SQLValue.init) }, body)
    }

    /// `forEachRow` of a statement parsed by `parse` (under the statement lock), with the
    /// parameters `bind` gives for it.
    func forEachRow(_ parse: () throws -> ParsedStatement, arguments bind: (ParsedStatement) -> [SQLValue],
                    _ body: (SQLRow) throws -> Void) throws -> Int {
        try withoutActuallyEscaping(body) { body in
            let sink = RowSink(body)
            try withStatementLock {
                let parsed = try parse()
                streamingThread.store(Self.currentThreadID, ordering: .releasing)
                defer { streamingThread.store(0, ordering: .releasing) }
                let result = try run(parsed, parameters: bind(parsed), sink: sink)
                // Rows the statement made whole (not streamed) go out now, in result order.
                sink.statementDone = true
                for row in result.values { try sink.deliver(row) }
                lastStreamedRows = sink.streamed
            }
            return sink.delivered
        }
    }
}

extension SQLStatement {
    /// `SQLDatabase.forEachRow` of this prepared statement, binding `?` parameters in order.
    /// - Returns: the number of rows handed to `body`.
    /// - Throws: as `SQLDatabase.forEachRow(_:arguments:_:)`.
    @discardableResult
    public func forEachRow(arguments: [DAOValue] = [], _ body: (SQLRow) throws -> Void) throws -> Int {
        try database.forEachRow({ parsed }, arguments: { _ in arguments.map(SQLValue.init) }, body)
    }

    /// `SQLDatabase.forEachRow` of this prepared statement, binding `:name` parameters by name.
    /// - Returns: the number of rows handed to `body`.
    /// - Throws: as `SQLDatabase.forEachRow(_:arguments:_:)`.
    @discardableResult
    public func forEachRow(named arguments: [String: DAOValue], _ body: (SQLRow) throws -> Void) throws -> Int {
        try database.forEachRow({ parsed }, arguments: { $0.bind(named: arguments) }, body)
    }
}
