import Foundation

extension Dao {
    /// The records a query builder selects, now and after every commit that changes this
    /// Dao's table, as an asynchronous sequence (see `SQLDatabase.observe(_:arguments:)` for
    /// when elements come, coalescing and cancellation):
    ///
    /// ```swift
    /// let unread = dao.queryBuilder().where { $0.eq("unread", true) }.orderBy("time")
    /// for try await messages in dao.observe(unread) { show(messages) }
    /// ```
    ///
    /// The builder's WHERE, ORDER BY, LIMIT and OFFSET are read once, when this is called.
    /// - Throws: `DAOError` for an unknown column or malformed clause, and (from iteration) the
    ///   engine's errors and `DecodingError` when a row does not decode as `T`;
    ///   `DAOError.unsupported` when the Dao does not run on a `SQLDatabase`.
    public func observe(_ query: QueryBuilder<T>) throws -> DaoObservation<T> {
        guard let database = runner as? SQLDatabase else {
            throw DAOError.unsupported("observing a Dao that does not run on a SQLDatabase")
        }
        let (sql, arguments) = try query.selectStatement(limit: query.limitCount)
        return DaoObservation(results: database.observe(sql, arguments: arguments), columns: columns.map(\.name), decoder: decoder)
    }
}

/// The records of one Dao query over time; see `Dao.observe(_:)`.
public struct DaoObservation<T: DAORecord>: AsyncSequence {
    public typealias Element = [T]

    let results: SQLObservation
    let columns: [String]
    let decoder: DAORowDecoder

    /// A new iterator over the query's records.
    public func makeAsyncIterator() -> Iterator {
        Iterator(results: results.makeAsyncIterator(), columns: columns, decoder: decoder)
    }

    /// Delivers the records first, then again after each relevant commit.
    public struct Iterator: AsyncIteratorProtocol {
        var results: SQLObservation.Iterator
        let columns: [String]
        let decoder: DAORowDecoder

        /// The next records; nil once the task is cancelled.
        /// - Throws: as `Dao.observe(_:)` says.
        public mutating func next() async throws -> [T]? {
            guard let result = try await results.next() else { return nil }
            return try result.rows.map { try decoder.decode(T.self, columns: columns, values: $0) }
        }
    }
}
