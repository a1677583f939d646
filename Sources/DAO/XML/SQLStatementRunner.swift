/// What a DAO proxy needs of an SQL engine: run one statement, and say whether a transaction is
/// open. `SQLDatabase` is the product's; tests also run proxies on SQLite through it.
protocol SQLStatementRunner: AnyObject {
    /// Runs one statement with `?` parameters bound in order.
    func execute(_ sql: String, arguments: [DAOValue]) throws -> SQLResult
    /// Whether BEGIN was run without COMMIT or ROLLBACK yet.
    var inTransaction: Bool { get }
}

extension SQLDatabase: SQLStatementRunner {}

extension SQLStatementRunner {
    func execute(_ sql: String) throws -> SQLResult {
        try execute(sql, arguments: [])
    }
}
