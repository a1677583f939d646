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
            } else if let index = table.indexes.firstIndex(where: { $0.schema.unique && Set($0.schema.columns) == positions
                                                                   && $0.schema.columns.count == positions.count }) {
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
    func upsertConflict(_ table: TableState, _ upsert: CompiledUpsert, rowid: Int64, row: [DAOValue]) -> Int64? {
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
    func upsertUpdate(_ table: TableState, _ upsert: CompiledUpsert, victim: Int64, proposed: [DAOValue]) throws -> Bool {
        guard let assignments = upsert.assignments, var old = try row(table, victim) else { return false }
        let context = upsert.context
        context.row = old + proposed
        context.rowid = victim
        if let whereClause = upsert.whereClause, try Evaluator.condition(whereClause, context) != true { return false }
        var values: [(Int, DAOValue)] = []
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
        func bind(_ expr: Expr) throws -> Expr { try expr.bindingExcluded(definition, width: width) }
        switch self {
        case .column(let qualifier?, let name) where qualifier.lowercased() == "excluded":
            guard let index = definition.columnIndex(name) else { throw DAOError.noSuchColumn("excluded.\(name)") }
            return .slot(width + index, definition.columns[index].affinity)
        case .literal, .parameter, .column, .slot, .aggregate, .outerSlot: return self
        // A subquery's own `excluded.x` stays unbound and fails as "no such column".
        case .subquery, .exists: return self
        case .inSelect(let l, let plan, let negated): return .inSelect(try bind(l), plan, negated: negated)
        case .unary(let op, let inner): return .unary(op, try bind(inner))
        case .binary(let op, let l, let r): return .binary(op, try bind(l), try bind(r))
        case .isNull(let inner, let negated): return .isNull(try bind(inner), negated: negated)
        case .inList(let l, let items, let negated): return .inList(try bind(l), try items.map(bind), negated: negated)
        case .between(let a, let b, let c, let negated): return .between(try bind(a), try bind(b), try bind(c), negated: negated)
        case .like(let a, let b, let escape, let negated):
            return .like(try bind(a), try bind(b), escape: try escape.map(bind), negated: negated)
        case .glob(let a, let b, let negated): return .glob(try bind(a), try bind(b), negated: negated)
        case .caseWhen(let base, let whens, let otherwise):
            return .caseWhen(base: try base.map(bind), whens: try whens.map { (try bind($0.0), try bind($0.1)) },
                             otherwise: try otherwise.map(bind))
        case .cast(let inner, let typeName): return .cast(try bind(inner), typeName: typeName)
        case .function(let name, let args, let distinct, let star):
            return .function(name: name, args: try args.map(bind), distinct: distinct, star: star)
        }
    }
}
