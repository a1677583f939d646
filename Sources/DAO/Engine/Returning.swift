/// What a statement with RETURNING collects: the rows it inserts (INSERT, UPDATE: the new
/// row, with each row's values as of its own change) or deletes, in the order it changes them.
struct RowCapture {
    enum Mode { case none, inserted, updated, deleted }
    var mode = Mode.none
    var table: TableState?
    /// Each row: the rowid it is returned in the order of (an UPDATE's old rowid), its rowid
    /// and values.
    var rows: [(order: Int64, rowid: Int64, row: [SQLValue])] = []
    /// An UPDATE's old rowid of the row being changed (its delete comes before its insert).
    var deletedRowid: Int64?

    mutating func inserted(_ table: TableState, _ rowid: Int64, _ row: [SQLValue]) {
        guard (mode == .inserted || mode == .updated), self.table === table else { return }
        rows.append((deletedRowid ?? rowid, rowid, row))
        deletedRowid = nil
    }

    mutating func deleted(_ table: TableState, _ rowid: Int64, _ row: [SQLValue]) {
        guard self.table === table else { return }
        if mode == .deleted { rows.append((rowid, rowid, row)) } else if mode == .updated { deletedRowid = rowid }
    }
}

/// `INSERT/UPDATE/DELETE ... RETURNING columns`: the statement runs, then its result columns
/// are evaluated on each row it inserted, updated (the new values) or deleted (the old ones),
/// in the order it changed them. An upsert's DO UPDATE returns the updated row, DO NOTHING and
/// OR IGNORE return nothing for a skipped row.
extension SQLDatabase {
    func returning(_ columns: [ResultColumn], of tableName: String, capturing mode: RowCapture.Mode,
                   _ run: () throws -> SQLResult) throws -> SQLResult {
        let table = try self.table(named: tableName)
        var resolver = Resolver(table: table)
        resolver.database = self
        var names: [String] = []
        var outputs: [Expr] = []
        for column in columns {
            switch column.kind {
            case .all:
                for (index, definition) in table.definition.columns.enumerated() {
                    names.append(definition.name)
                    outputs.append(.slot(index, definition.affinity))
                }
            case .expression(let expr):
                outputs.append(try resolver.resolve(expr, allowAggregates: false))
                // Named as a SELECT names them: a column by its declared name, the rowid by its alias.
                if let alias = column.alias {
                    names.append(alias)
                } else if case .column(_, let name) = expr, let index = table.definition.columnIndex(name) {
                    names.append(table.definition.columns[index].name)
                } else if case .column(_, let name) = expr, Resolver.rowidNames.contains(name.lowercased()),
                          let alias = table.definition.rowidColumn {
                    names.append(table.definition.columns[alias].name)
                } else if case .column(_, let name) = expr {
                    names.append(name)
                } else {
                    names.append(column.text)
                }
            }
        }
        let saved = rowCapture
        rowCapture = RowCapture(mode: mode, table: table, rows: [])
        defer { rowCapture = saved }
        var result = try run()
        let context = RowContext(parameters: self.context.parameters)
        context.database = self
        var rows: [[SQLValue]] = []
        // SQLite changes the rows an UPDATE or DELETE matched in rowid order (its RowSet).
        let captured = mode == .inserted ? rowCapture.rows : rowCapture.rows.sorted { $0.order < $1.order }
        for (_, rowid, row) in captured {
            context.row = row
            context.rowid = rowid
            var values: [SQLValue] = []
            for expr in outputs {
                let value = try Evaluator.evaluate(expr, context)
                // SQLite 3.40 returns a REAL column's new integral value that fits in 6 bytes
                // as an integer (its MEM_IntReal), though typeof() says real.
                if mode != .deleted, case .slot(let slot, .real) = expr, slot >= 0, case .real(let x) = value,
                   x == x.rounded(), abs(x) < 140_737_488_355_328 {
                    values.append(.integer(Int64(x)))
                } else {
                    values.append(value)
                }
            }
            rows.append(values)
        }
        result.columns = names
        result.values = rows
        result.isQuery = true
        return result
    }
}
