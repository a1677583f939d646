/// CHECK constraints: a row whose expression is false breaks the constraint (NULL does not), as
/// SQLite checks them after NOT NULL and before the UNIQUE and PRIMARY KEY constraints, on every
/// row an INSERT or UPDATE (upsert's DO UPDATE included) writes.
extension SQLDatabase {
    /// Whether `row` (its affinity applied, its rowid alias set) keeps `table`'s CHECK
    /// constraints; false when OR IGNORE skips it.
    /// - Throws: `DAOError.constraint` "CHECK constraint failed: <name or text>" (ABORT; REPLACE
    ///   too, as in SQLite), `FailResolution` with it (FAIL); the expression's errors.
    func checkRow(_ table: TableState, _ row: [SQLValue], rowid: Int64, mode: ConflictMode) throws -> Bool {
        let checks = table.definition.checks
        guard !checks.isEmpty else { return true }
        let expressions = try resolvedChecks(table)
        let context = RowContext(parameters: [])
        context.row = row
        context.rowid = rowid
        context.database = self
        for (check, expr) in zip(checks, expressions) where SQLValues.truth(try Evaluator.evaluate(expr, context)) == false {
            let message = "CHECK constraint failed: " + (check.name ?? check.text)
            switch mode {
            case .ignore: return false
            case .fail: throw FailResolution(message: message)
            case .rollback: throw endingTransaction(message)
            case .abort, .replace, .unspecified: throw DAOError.constraint(message)   // CHECK has no ON CONFLICT
            }
        }
        return true
    }

    /// The table's CHECK expressions resolved against its columns (once per schema version).
    /// - Throws: `DAOError.noSuchColumn` and the like for an expression that names what the
    ///   table does not have (CREATE TABLE runs this, so such a table is refused).
    func resolvedChecks(_ table: TableState) throws -> [Expr] {
        if let cached = table.resolvedChecks, cached.version == schemaVersion { return cached.expressions }
        var resolver = Resolver(table: table)
        resolver.database = self
        let expressions = try table.definition.checks.map { try resolver.resolve($0.expr, allowAggregates: false) }
        table.resolvedChecks = (schemaVersion, expressions)
        return expressions
    }
}
