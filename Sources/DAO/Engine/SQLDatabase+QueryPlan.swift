import Foundation

extension SQLDatabase {
    /// How the engine reaches the rows of a SELECT, in the spirit of SQLite's
    /// `EXPLAIN QUERY PLAN`: `SCAN t`, `SCAN t REVERSE`, `SEARCH t USING ROWID (2 lookups)`,
    /// `SEARCH t USING ROWID RANGE 5...9`, `SEARCH t USING INDEX t_name (1 range)`, each followed
    /// by `, ORDER BY FROM INDEX` when no sort is needed for the ORDER BY, or `, SORT` when it is.
    /// A SELECT without FROM answers `CONSTANT ROW`. A join answers one line per nested loop,
    /// outermost first (`SCAN t1`, then `SEARCH t2 USING INDEX t2_x` when the inner side is
    /// reached through an index, `LEFT ` before a LEFT JOIN's table, `USE TEMP B-TREE FOR ORDER
    /// BY` when it sorts); each subquery adds a line (`SCALAR SUBQUERY`, `EXISTS SUBQUERY`,
    /// `LIST SUBQUERY`, prefixed `CORRELATED ` when it runs per outer row; `MATERIALIZE s` for
    /// one in FROM) followed by its own plan indented by two spaces. Lines end with "\n".
    ///
    /// The statement is run (reads only) to plan it with its arguments bound; its rows are
    /// dropped.
    /// - Throws: `DAOError.unsupported` when `sql` is not a SELECT; otherwise as
    ///   `execute(_:arguments:)`.
    /// - Complexity: that of running the query.
    public func queryPlan(_ sql: String, arguments: [DAOValue] = []) throws -> String {
        try withStatementLock {
            let parsed = try parsedStatement(sql)
            guard case .select(let select) = parsed.statement else {
                throw DAOError.unsupported("a query plan of a statement other than SELECT")
            }
            lastAccess = nil
            _ = try run(parsed, parameters: arguments.map(SQLValue.init))
            guard let compiled = parsed.compiled.select else { return "CONSTANT ROW" }
            return planLines(compiled, select, access: lastAccess).joined(separator: "\n")
        }
    }

    /// The plan of one compiled SELECT: a line per source (outermost loop first), then each
    /// subquery's kind and its plan indented.
    func planLines(_ compiled: CompiledSelect, _ select: SelectStatement, access: (path: AccessPath, ordered: Bool)?) -> [String] {
        var lines: [String]
        if let join = compiled.join {
            lines = join.planLines()
            for source in join.sources {
                guard let subquery = source.subquery, let inner = subquery.box?.select else { continue }
                lines.append("MATERIALIZE \(source.name)")
                lines += planLines(inner, subquery.statement, access: subquery.lastAccess).map { "  " + $0 }
            }
            if !select.orderBy.isEmpty { lines.append("USE TEMP B-TREE FOR ORDER BY") }
        } else if let table = compiled.table {
            lines = [singleTablePlan(table, select, access, columns: compiled.columns)]
        } else {
            lines = ["CONSTANT ROW"]
        }
        var exprs = compiled.outputs + compiled.groupBy + compiled.orderBy.map(\.expr)
        exprs += [compiled.whereClause, compiled.having].compactMap { $0 }
        exprs += compiled.join?.sources.flatMap(\.on) ?? []
        var plans: [(String, SubqueryPlan)] = []
        for expr in exprs { expr.collectSubqueries(into: &plans) }
        var seen = Set<ObjectIdentifier>()
        for (kind, plan) in plans where seen.insert(ObjectIdentifier(plan)).inserted {
            guard let inner = plan.box?.select else { continue }
            lines.append((plan.correlated ? "CORRELATED " : "") + kind)
            lines += planLines(inner, plan.statement, access: plan.lastAccess).map { "  " + $0 }
        }
        return lines
    }

    /// `SCAN t`, `SEARCH t USING ...` for a query on one table.
    private func singleTablePlan(_ table: TableState, _ select: SelectStatement, _ access: (path: AccessPath, ordered: Bool)?,
                                 columns: [Int]?) -> String {
            guard let (path, ordered) = access else { return "SCAN \(table.name)" }
            var text: String
            switch path {
            case .fullScan(let reverse): text = "SCAN \(table.name)" + (reverse ? " REVERSE" : "")
            case .rowids(let ids): text = "SEARCH \(table.name) USING ROWID (\(ids.count) lookup\(ids.count == 1 ? "" : "s"))"
            case .rowidRange(let lower, let upper, let reverse):
                text = "SEARCH \(table.name) USING ROWID RANGE \(lower)...\(upper)" + (reverse ? " REVERSE" : "")
            case .indexRanges(let index, let ranges, let reverse):
                let indexes = table.definition.indexes
                let name = indexes.indices.contains(index) ? indexes[index].name : "#\(index)"
                let kind = CoveringIndex(table, path, reading: columns) == nil ? "INDEX" : "COVERING INDEX"
                text = "SEARCH \(table.name) USING \(kind) \(name) (\(ranges.count) range\(ranges.count == 1 ? "" : "s"))" + (reverse ? " REVERSE" : "")
            }
            if !select.orderBy.isEmpty { text += ordered ? ", ORDER BY FROM INDEX" : ", SORT" }
            return text
    }
}

extension Expr {
    /// The subqueries inside, with SQLite's plan word for each kind.
    func collectSubqueries(into plans: inout [(String, SubqueryPlan)]) {
        switch self {
        case .subquery(let plan): plans.append(("SCALAR SUBQUERY", plan))
        case .exists(let plan, _): plans.append(("EXISTS SUBQUERY", plan))
        case .inSelect(let left, let plan, _):
            left.collectSubqueries(into: &plans)
            plans.append(("LIST SUBQUERY", plan))
        default: for child in children { child.collectSubqueries(into: &plans) }
        }
    }
}
