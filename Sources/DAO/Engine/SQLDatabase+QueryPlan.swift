import Foundation

extension SQLDatabase {
    /// How the engine reaches the rows of a SELECT, in the spirit of SQLite's
    /// `EXPLAIN QUERY PLAN`: `SCAN t`, `SCAN t REVERSE`, `SEARCH t USING ROWID (2 lookups)`,
    /// `SEARCH t USING ROWID RANGE 5...9`, `SEARCH t USING INDEX t_name (1 range)`, each followed
    /// by `, ORDER BY FROM INDEX` when no sort is needed for the ORDER BY, or `, SORT` when it is.
    /// A SELECT without FROM answers `CONSTANT ROW`.
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
            _ = try run(parsed, parameters: arguments)
            guard let tableName = select.table, let table = tables[tableName.lowercased()] else { return "CONSTANT ROW" }
            guard let (path, ordered) = lastAccess else { return "SCAN \(table.name)" }
            var text: String
            switch path {
            case .fullScan(let reverse): text = "SCAN \(table.name)" + (reverse ? " REVERSE" : "")
            case .rowids(let ids): text = "SEARCH \(table.name) USING ROWID (\(ids.count) lookup\(ids.count == 1 ? "" : "s"))"
            case .rowidRange(let lower, let upper, let reverse):
                text = "SEARCH \(table.name) USING ROWID RANGE \(lower)...\(upper)" + (reverse ? " REVERSE" : "")
            case .indexRanges(let index, let ranges, let reverse):
                let indexes = table.definition.indexes
                let name = indexes.indices.contains(index) ? indexes[index].name : "#\(index)"
                text = "SEARCH \(table.name) USING INDEX \(name) (\(ranges.count) range\(ranges.count == 1 ? "" : "s"))" + (reverse ? " REVERSE" : "")
            }
            if !select.orderBy.isEmpty { text += ordered ? ", ORDER BY FROM INDEX" : ", SORT" }
            return text
        }
    }
}
