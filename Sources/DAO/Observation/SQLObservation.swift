import Foundation

extension SQLDatabase {
    /// The results of the query `sql` now and after every commit that changes the table it
    /// reads, as an asynchronous sequence (GRDB's ValueObservation, for this engine):
    ///
    /// ```swift
    /// for try await result in db.observe("SELECT name FROM t WHERE done = ?", arguments: [0]) {
    ///     show(result.rows)
    /// }
    /// ```
    ///
    /// The first element is the current result. After that, a commit (an autocommit statement
    /// or a COMMIT) that wrote rows of the query's table, or changed its schema, makes the query
    /// run again and its result delivered; commits of other tables do not. Commits that happen
    /// while the consumer is busy are coalesced: the next element reflects all of them. Rolled
    /// back changes are never seen. Iteration ends when its task is cancelled (then `next()`
    /// returns nil). The query runs on the consumer's task with the database's statement lock,
    /// so while another thread holds an open transaction it waits for its end.
    ///
    /// - Throws (from iteration): `DAOError.unsupported` when `sql` is not a SELECT; the errors of
    ///   `execute(_:arguments:)`, such as `noSuchTable` or `StoreError.closed`, which end it.
    public func observe(_ sql: String, arguments: [DAOValue] = []) -> SQLObservation {
        SQLObservation(database: self, sql: sql, arguments: arguments)
    }
}

/// The results of one query over time; see `SQLDatabase.observe(_:arguments:)`.
public struct SQLObservation: AsyncSequence, Sendable {
    public typealias Element = SQLResult

    let database: SQLDatabase
    let sql: String
    let arguments: [DAOValue]

    /// A new iterator: it registers for commits when first asked for an element.
    public func makeAsyncIterator() -> Iterator {
        Iterator(database: database, sql: sql, arguments: arguments)
    }

    /// Delivers the query's result first, then again after each relevant commit.
    public struct Iterator: AsyncIteratorProtocol {
        let registration: Registration

        init(database: SQLDatabase, sql: String, arguments: [DAOValue]) {
            registration = Registration(database: database, sql: sql, arguments: arguments)
        }

        /// The next result: at once the first time, then after a commit touching the query's
        /// table; nil once the task is cancelled.
        /// - Throws: as `SQLDatabase.observe(_:arguments:)` says.
        public mutating func next() async throws -> SQLResult? {
            try await registration.next()
        }
    }

    /// The iterator's state: its commit registration, removed when the iterator goes away.
    final class Registration: @unchecked Sendable {
        let database: SQLDatabase
        let sql: String
        let arguments: [DAOValue]
        private(set) var signal: CommitSignal?
        private var token: UInt64?

        init(database: SQLDatabase, sql: String, arguments: [DAOValue]) {
            self.database = database
            self.sql = sql
            self.arguments = arguments
        }

        deinit {
            if let token { CommitObservers.shared.remove(token, for: database) }
        }

        func next() async throws -> SQLResult? {
            if Task.isCancelled { return nil }
            if let signal {
                guard await signal.wait() else { return nil }
            } else {
                // Registered before the first run, so no commit after it is missed.
                let signal = CommitSignal(tables: try database.tablesRead(by: sql))
                token = CommitObservers.shared.add({ signal.committed($0) }, for: database)
                self.signal = signal
            }
            return try database.execute(sql, arguments: arguments)
        }
    }
}

extension SQLDatabase {
    /// The tables (lower-cased) a query reads: its FROM tables, the tables of the views,
    /// subqueries, compound terms and WITH tables it reads; none for a SELECT without FROM.
    /// - Throws: `DAOError.syntax` / `.unsupported` for a statement that is not a SELECT.
    func tablesRead(by sql: String) throws -> Set<String> {
        let parsed = try withStatementLock { try parsedStatement(sql) }
        guard case .select(let select) = parsed.statement else {
            throw DAOError.unsupported("observing a statement other than SELECT")
        }
        return try withStatementLock { tablesRead(select) }
    }
}
