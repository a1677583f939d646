/// A WITH clause where a subquery goes (in FROM, an expression, IN, EXISTS, a view's query):
/// each read of a WITH table becomes its query as a subquery in FROM, named as the table, with
/// the columns the table names (`WITH c(p, q) AS ...`). The same answers as computing the table
/// once; a statement's own WITH clause (SQLDatabase `runWithClause`) still computes each table
/// once, and a recursive table is computed only there.
///
/// Inner WITH clauses were inlined when their subqueries were read, so a name that an inner
/// clause gives again is already its own there (shadowing needs no scope).
extension Parser {
    /// `select` with its WITH clause inlined (as it is when it has none).
    /// - Throws: `DAOError.unsupported` for a table that reads itself (RECURSIVE) and for
    ///   more than `ReadCount.limit` reads of the clause's tables, "circular reference" for
    ///   tables that read each other.
    static func inliningCommonTables(_ select: SelectStatement) throws -> SelectStatement {
        try inliningCommonTables(select, reads: CommonTableInliner.ReadCount())
    }

    /// `select` with its WITH clause inlined, the reads counted on `reads` (one count for a
    /// clause and the clauses inside its tables' queries).
    fileprivate static func inliningCommonTables(_ select: SelectStatement, reads: CommonTableInliner.ReadCount) throws -> SelectStatement {
        guard let with = select.with else { return select }
        var tables: [String: CommonTableExpression] = [:]
        for table in with.tables {
            if table.select.readsTable(table.name.lowercased()) {
                throw DAOError.unsupported("recursive WITH table in a subquery or view")
            }
            tables[table.name.lowercased()] = table
        }
        var body = select
        body.with = nil
        return try CommonTableInliner(tables: tables, visiting: [], reads: reads).inlined(body)
    }
}

/// Replaces the reads of WITH tables in one SELECT, its compound terms and its subqueries.
fileprivate struct CommonTableInliner {
    let tables: [String: CommonTableExpression]
    /// The tables whose queries are being inlined (a read of one of them is circular).
    let visiting: Set<String>
    /// The reads inlined so far, shared by the inliners of one clause: tables that read each
    /// other several times each would grow the statement exponentially (3 reads a level, 10
    /// levels: 59,049 copies), so past `ReadCount.limit` the clause is refused.
    let reads: ReadCount

    final class ReadCount {
        static let limit = 1_000
        var count = 0
    }

    func inlined(_ select: SelectStatement) throws -> SelectStatement {
        // A WITH table's own query may have a WITH clause: its names come first.
        var select = try Parser.inliningCommonTables(select, reads: reads)
        if let name = select.table, let table = tables[name.lowercased()] {
            if select.indexHint != nil { throw DAOError.unsupported("INDEXED BY on a WITH table") }
            select.from = [try item(FromItem(source: .table(name), alias: select.tableAlias), table)]
            select.table = nil
            select.tableAlias = nil
        }
        select = try select.mappingExpressions(expression)
        select.from = try select.from.map { item in
            switch item.source {
            case .table(let name):
                if let table = tables[name.lowercased()] { return try self.item(item, table) }
            case .subquery(let inner):
                var item = item
                item.source = .subquery(try inlined(inner))
                return item
            }
            return item
        }
        select.compound = try select.compound.map { term in
            var term = term
            term.select = try inlined(term.select)
            return term
        }
        return select
    }

    /// A FROM item that reads `table`: its query (inlined in turn), named as the item was.
    private func item(_ item: FromItem, _ table: CommonTableExpression) throws -> FromItem {
        let key = table.name.lowercased()
        guard !visiting.contains(key) else { throw SQLExecutionError("circular reference: \(table.name)") }
        reads.count += 1
        guard reads.count <= ReadCount.limit else {
            throw DAOError.unsupported("WITH tables read more than \(ReadCount.limit) times in one subquery")
        }
        let inner = CommonTableInliner(tables: tables, visiting: visiting.union([key]), reads: reads)
        var item = item
        if case .table(let written) = item.source, item.alias == nil { item.alias = written }
        item.source = .subquery(try inner.inlined(table.select))
        item.columnNames = table.columns
        return item
    }

    /// An expression with the subqueries inside it inlined.
    private func expression(_ expr: Expr) throws -> Expr {
        try expr.replacingNodes { node in
            switch node {
            case .subquery(let plan): return .subquery(SubqueryPlan(try inlined(plan.statement)))
            case .exists(let plan, let negated): return .exists(SubqueryPlan(try inlined(plan.statement)), negated: negated)
            case .inSelect(let left, let plan, let negated):
                return .inSelect(try expression(left), SubqueryPlan(try inlined(plan.statement)), negated: negated)
            default: return nil
            }
        }
    }
}
