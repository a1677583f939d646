/// What the typed Dao needs of a SQL engine: one statement at a time with `?` arguments, and
/// whether a transaction is open. `SQLDatabase` is the product's; tests also run the Dao on
/// SQLite through it to check the generated SQL against the reference.
protocol StatementRunner: AnyObject {
    /// Runs one statement.
    func execute(_ sql: String, arguments: [DAOValue]) throws -> SQLResult
    /// Whether BEGIN has run without COMMIT or ROLLBACK yet.
    var inTransaction: Bool { get }
}

extension SQLDatabase: StatementRunner {}
