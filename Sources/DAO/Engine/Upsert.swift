/// An INSERT's ON CONFLICT clause resolved against its table. Its expressions read a row of
/// twice the table's width: the existing row's columns, then `excluded.` (the row the INSERT
/// proposed) at `width + column`.
struct CompiledUpsert {
    enum Target { case any, rowid, index(Int) }
    let target: Target
    /// DO UPDATE's column positions (-1: the rowid) and values; nil for DO NOTHING.
    let assignments: [(Int, Expr)]?
    let whereClause: Expr?
    /// The statement's context (its parameters), for the DO UPDATE expressions.
    let context: RowContext
}

/// `INSERT ... ON CONFLICT [(columns)] DO NOTHING | DO UPDATE SET ... [WHERE ...]` (SQLite's
/// upsert): when the row to insert collides in the target's PRIMARY KEY or UNIQUE constraint
/// (any of them without a target), DO NOTHING skips it and DO UPDATE updates the existing row
/// instead (when its WHERE holds), with the proposed values as `excluded.column`; a collision
/// in another constraint fails as without the clause. The target is checked first, as SQLite
/// does. An update counts as a change and leaves last_insert_rowid alone.
extension SQLDatabase {
    /// - Throws: "ON CONFLICT clause does not match any PRIMARY KEY or UNIQUE constraint";
    ///   `noSuchColumn` for an unknown column in the clause.
    func compileUpsert(_ clause: UpsertClause, _ table: TableState, _ context: RowContext) throws -> CompiledUpsert {
        let definition = table.definition
        var target = CompiledUpsert.Target.any
        if let names = clause.target {
            var positions = Set<Int>()
            for name in names {
                if let index = definition.columnIndex(name) { positions.insert(index) }
                else { throw DAOError.noSuchColumn(name) }
            }
            if let alias = definition.rowidColumn, positions == [alias] {
                target = .rowid
            } else if let index = table.indexes.firstIndex(where: { index in
                guard index.schema.unique, Set(index.schema.columns) == positions, index.schema.columns.count == positions.count else { return false }
                // A target column written with COLLATE matches only an index that compares it so.
                return zip(names, clause.targetCollations).allSatisfy { name, collation in
                    guard let collation, let column = definition.columnIndex(name),
                          let k = index.schema.columns.firstIndex(of: column) else { return true }
                    return index.schema.collations[k] == collation
                }
            }) {
                target = .index(index)
            } else {
                throw SQLExecutionError("ON CONFLICT clause does not match any PRIMARY KEY or UNIQUE constraint")
            }
        }
        var resolver = Resolver(table: table)
        resolver.database = self
        let width = definition.columns.count
        func resolve(_ expr: Expr) throws -> Expr {
            try resolver.resolve(expr.bindingExcluded(definition, width: width), allowAggregates: false)
        }
        var assignments: [(Int, Expr)]?
        if let written = clause.assignments {
            assignments = []
            for (name, expr) in written {
                let position: Int
                if let index = definition.columnIndex(name) { position = index }
                else if Resolver.rowidNames.contains(name.lowercased()) { position = -1 }
                else { throw DAOError.noSuchColumn(name) }
                assignments?.append((position, try resolve(expr)))
            }
        }
        let upsertContext = RowContext(parameters: context.parameters)
        upsertContext.database = self   // DO UPDATE may hold subqueries
        return CompiledUpsert(target: target, assignments: assignments, whereClause: try clause.whereClause.map(resolve),
                              context: upsertContext)
    }

    /// The row the proposed `row` collides with in the upsert's target, if any.
    func upsertConflict(_ table: TableState, _ upsert: CompiledUpsert, rowid: Int64, row: [SQLValue]) -> Int64? {
        switch upsert.target {
        case .rowid: return table.contains(rowid: rowid) ? rowid : nil
        case .index(let number):
            let key = table.indexes[number].key(of: row)
            if key.contains(where: { if case .null = $0 { return true }; return false }) { return nil }
            return table.indexes[number].rowids(matching: key).first
        case .any:
            if table.contains(rowid: rowid) { return rowid }
            return conflicts(table, row: row, except: nil).first?.rowid
        }
    }

    /// DO NOTHING (false) or DO UPDATE of row `victim` (true when its WHERE let it update).
    /// - Throws: the constraint errors an UPDATE of that row would throw.
    func upsertUpdate(_ table: TableState, _ upsert: CompiledUpsert, victim: Int64, proposed: [SQLValue]) throws -> Bool {
        guard let assignments = upsert.assignments, var old = try row(table, victim) else { return false }
        let context = upsert.context
        context.row = old + proposed
        context.rowid = victim
        if let whereClause = upsert.whereClause, try !Evaluator.keeps(whereClause, context) { return false }
        var values: [(Int, SQLValue)] = []
        for (target, expr) in assignments { values.append((target, try Evaluator.evaluate(expr, context))) }
        var updated = old
        var newRowid = victim
        for (target, value) in values {
            if target < 0 || target == table.definition.rowidColumn {
                guard let id = try rowidValue(value) else { throw SQLExecutionError("datatype mismatch") }
                newRowid = id
                if target >= 0 { updated[target] = value }
            } else {
                updated[target] = value
            }
        }
        _ = try prepareRow(table, &updated, mode: .abort, context)
        if let alias = table.definition.rowidColumn { updated[alias] = .integer(newRowid) }
        let columns = Set(assignments.map(\.0))
        if !table.triggers.isEmpty {   // DO UPDATE fires UPDATE triggers, as in SQLite (Triggers.swift)
            guard try fireTriggers(table, .before, .update, old: TriggerRow(rowid: victim, row: old),
                                   new: TriggerRow(rowid: newRowid, row: updated), updated: columns),
                  let current = try row(table, victim) else { return false }
            old = current
            reloadUnassigned(&updated, from: current, assigned: columns)
            if let alias = table.definition.rowidColumn { updated[alias] = .integer(newRowid) }
        }
        _ = try checkRow(table, updated, rowid: newRowid, mode: .abort)   // CheckConstraints.swift
        if newRowid != victim, table.contains(rowid: newRowid) { throw DAOError.constraint(rowidMessage(table)) }
        if let clash = conflicts(table, row: updated, except: victim).first { throw DAOError.constraint(uniqueMessage(table, clash.index)) }
        deleteRow(table, rowid: victim, row: old)
        insertRow(table, rowid: newRowid, row: updated)
        if !table.triggers.isEmpty {
            try fireTriggers(table, .after, .update, old: TriggerRow(rowid: victim, row: old), new: TriggerRow(rowid: newRowid, row: updated),
                             updated: columns)
        }
        return true
    }
}

extension Expr {
    /// The expression with `excluded.column` replaced by its slot in an upsert's row (`width`
    /// plus the column's position).
    func bindingExcluded(_ definition: TableDefinition, width: Int) throws -> Expr {
        // A subquery's own `excluded.x` stays unbound and fails as "no such column".
        try replacingNodes { node in
            guard case .column(let qualifier?, let name) = node, qualifier.lowercased() == "excluded" else { return nil }
            guard let index = definition.columnIndex(name) else { throw DAOError.noSuchColumn("excluded.\(name)") }
            return .slot(width + index, definition.columns[index].affinity)
        }
    }
}
