/// A typed SELECT over one record type's table: a WHERE clause, ORDER BY terms, LIMIT and
/// OFFSET, run by `query()`, `queryForFirst()` or `countOf()`.
///
/// Column names must be the record's coding keys; an unknown one throws
/// `DAOError.noSuchColumn` when the query runs.
public final class QueryBuilder<T: DAORecord> {
    private let dao: Dao<T>
    private var condition: Where<T>?
    private var ordering: [(column: String, ascending: Bool)] = []
    private(set) var limitCount: Int?
    private var offsetCount: Int?

    init(dao: Dao<T>) {
        self.dao = dao
    }

    /// Sets the WHERE clause, built by `build` on a fresh `Where` (replacing an earlier one).
    public func `where`(_ build: (Where<T>) -> Where<T>) -> QueryBuilder {
        condition = build(Where<T>(columns: dao.columnNames))
        return self
    }

    /// Adds an ORDER BY term after the ones already added.
    public func orderBy(_ column: String, ascending: Bool = true) -> QueryBuilder {
        ordering.append((column, ascending))
        return self
    }

    /// Returns at most `n` rows (a negative `n`: no limit).
    public func limit(_ n: Int) -> QueryBuilder {
        limitCount = n
        return self
    }

    /// Skips the first `n` rows.
    public func offset(_ n: Int) -> QueryBuilder {
        offsetCount = n
        return self
    }

    /// The matching records.
    /// - Throws: `DAOError` for an unknown column or a malformed clause, the engine's errors,
    ///   `DecodingError` when a row does not decode as `T`.
    public func query() throws -> [T] {
        let (sql, arguments) = try selectStatement(limit: limitCount)
        return try dao.records(sql, arguments)
    }

    /// The first matching record, nil when none matches.
    /// - Throws: as `query()`.
    public func queryForFirst() throws -> T? {
        let (sql, arguments) = try selectStatement(limit: 1)
        return try dao.records(sql, arguments).first
    }

    /// How many records match the WHERE clause (ORDER BY, LIMIT and OFFSET do not count).
    /// - Throws: as `query()`.
    public func countOf() throws -> Int {
        var sql = "SELECT count(*) FROM \(SQLIdentifier.quoted(dao.tableName))"
        var arguments: [DAOValue] = []
        if let built = try condition?.build() {
            sql += " WHERE \(built.sql)"
            arguments = built.arguments
        }
        return try dao.count(sql, arguments)
    }

    func selectStatement(limit: Int?) throws -> (String, [DAOValue]) {
        var sql = "SELECT \(dao.selectColumns) FROM \(SQLIdentifier.quoted(dao.tableName))"
        var arguments: [DAOValue] = []
        if let built = try condition?.build() {
            sql += " WHERE \(built.sql)"
            arguments = built.arguments
        }
        if !ordering.isEmpty {
            let terms = try ordering.map { term -> String in
                guard dao.columnNames.contains(term.column) else { throw DAOError.noSuchColumn(term.column) }
                return "\(SQLIdentifier.quoted(term.column)) \(term.ascending ? "ASC" : "DESC")"
            }
            sql += " ORDER BY " + terms.joined(separator: ", ")
        }
        if limit != nil || offsetCount != nil {
            // SQLite needs a LIMIT before OFFSET; -1 means no limit.
            sql += " LIMIT \(limit ?? -1)"
            if let offsetCount { sql += " OFFSET \(offsetCount)" }
        }
        return (sql, arguments)
    }
}
