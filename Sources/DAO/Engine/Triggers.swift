/// Triggers (CREATE TRIGGER / DROP TRIGGER): kept by their table (`TableState.triggers`, parsed
/// once, when created or when the catalog loads) and persisted in its catalog record (FORMAT.md
/// "DAO tables", format 0x02). Row triggers fire from the INSERT, UPDATE and DELETE loops
/// (SQLDatabase+DML.swift) inside the statement's undo mark, so a failing trigger or a
/// RAISE(ABORT) leaves everything as it was. As SQLite with recursive_triggers OFF, a trigger
/// that is already running does not fire again. NEW and OLD are replaced by the row's values
/// before each body statement is resolved.
extension SQLDatabase {
    /// The row a trigger sees as NEW or OLD.
    struct TriggerRow {
        var rowid: Int64
        var row: [SQLValue]
    }

    /// The table holding the trigger named `key` (lower-cased) and its position there.
    func trigger(named key: String) -> (TableState, Int)? {
        for table in tables.values {
            if let position = table.triggers.firstIndex(where: { $0.name.lowercased() == key }) { return (table, position) }
        }
        return nil
    }

    func createTrigger(_ statement: CreateTriggerStatement) throws {
        let key = statement.name.lowercased()
        if trigger(named: key) != nil {
            if statement.ifNotExists { return }
            throw SQLExecutionError("trigger \(statement.name) already exists")
        }
        if key.hasPrefix("sqlite_") { throw SQLExecutionError("object name reserved for internal use: \(statement.name)") }
        let tableKey = statement.table.lowercased()
        if temporaryTables[tableKey] != nil { throw DAOError.unsupported("TRIGGER on a TEMP table") }
        guard let table = tables[tableKey] else { throw SQLExecutionError("no such table: main.\(statement.table)") }
        table.triggers.append(statement)
        // A TEMP trigger changes no catalog record.
        changeSchema(statement.temporary ? [] : [table.name]) { [unowned table] in table.triggers.removeAll { $0.name.lowercased() == key } }
    }

    func dropTrigger(_ name: String, ifExists: Bool) throws {
        guard let (table, position) = trigger(named: name.lowercased()) else {
            if ifExists { return }
            throw SQLExecutionError("no such trigger: \(name)")
        }
        let removed = table.triggers.remove(at: position)
        changeSchema(removed.temporary ? [] : [table.name]) { [unowned table] in table.triggers.insert(removed, at: position) }
    }

    /// ALTER TABLE RENAME COLUMN on a table with triggers would leave their SQL text naming the
    /// old column (SQLite rewrites it); refused until that is done. (RENAME TO rewrites the
    /// triggers and views that name the table: SQLDatabase+RenameTable.swift.)
    func refuseTriggers(_ table: String) throws {
        if let state = tables[table.lowercased()], !state.triggers.isEmpty {
            throw DAOError.unsupported("ALTER TABLE RENAME COLUMN on a table with triggers")
        }
    }

    /// Ends a statement that RAISE(FAIL) stopped: what it changed before stays (committed
    /// now outside a transaction), and the error is RAISE's message.
    /// - Throws: always: `DAOError.constraint`, or the commit's error (the statement then undone).
    func keepChanges(after failure: FailResolution, mark: Int) throws -> Never {
        if !explicitTransaction {
            do {
                try commit()
            } catch {
                rollback(to: mark)
                discardPending()
                throw error
            }
        }
        throw DAOError.constraint(failure.message)
    }

    /// SQLite's ROLLBACK resolution (RAISE(ROLLBACK), INSERT/UPDATE OR ROLLBACK): the open
    /// transaction is rolled back and ended, then the statement fails with `message` (without a
    /// transaction it is ABORT).
    func endingTransaction(_ message: String) -> DAOError {
        if explicitTransaction {
            rollback(to: 0)
            explicitTransaction = false
        }
        return DAOError.constraint(message)
    }

    // MARK: Firing

    /// After BEFORE UPDATE triggers: the columns the UPDATE does not set take the row's current
    /// values again (a trigger may have changed them), as SQLite reloads them.
    func reloadUnassigned(_ row: inout [SQLValue], from current: [SQLValue], assigned: Set<Int>) {
        for index in current.indices where !assigned.contains(index) { row[index] = current[index] }
    }

    /// BEFORE INSERT triggers of one row about to be inserted (its columns get their affinity
    /// first, as SQLite's NEW has it); false when RAISE(IGNORE) skips the row.
    func fireBeforeInsert(_ table: TableState, row: [SQLValue], explicitRowid: SQLValue?) throws -> Bool {
        var row = row
        let columns = table.definition.columns
        for index in columns.indices { row[index] = SQLValues.apply(columns[index].affinity, to: row[index]) }
        let rowid = (try? explicitRowid.flatMap { try rowidValue($0) }) ?? -1
        if let alias = table.definition.rowidColumn { row[alias] = .integer(rowid) }   // SQLite's -1 for a rowid still to choose
        return try fireTriggers(table, .before, .insert, old: nil, new: TriggerRow(rowid: rowid, row: row))
    }

    /// Runs the triggers of `table` for `event` at `timing` on one row, newest trigger first
    /// (SQLite's order). Returns false when a BEFORE trigger's RAISE(IGNORE) skips the row.
    /// `updated`: the columns an UPDATE sets (UPDATE OF fires only when one of its columns is).
    /// - Throws: the body's errors; `DAOError.constraint` with RAISE's message for ABORT, FAIL
    ///   and ROLLBACK (ROLLBACK first ends the open transaction, undoing it).
    @discardableResult
    func fireTriggers(_ table: TableState, _ timing: TriggerTiming, _ event: TriggerEvent,
                      old: TriggerRow?, new: TriggerRow?, updated: Set<Int> = []) throws -> Bool {
        for trigger in table.triggers.reversed() where trigger.timing == timing && trigger.event == event {
            let key = trigger.name.lowercased()
            if firingTriggers.contains(key) { continue }
            if let columns = trigger.columns {
                let fires = columns.contains { name in
                    if let index = table.definition.columnIndex(name) { return updated.contains(index) }
                    return Resolver.rowidNames.contains(name.lowercased()) && updated.contains(-1)
                }
                if !fires { continue }
            }
            let rows = TriggerRows(table: table, old: old, new: new)
            if let when = trigger.when {
                var resolver = Resolver(table: nil)
                resolver.database = self   // WHEN may hold subqueries
                let condition = try resolver.resolve(try rows.substitute(when), allowAggregates: false)
                let whenContext = RowContext(parameters: [])
                whenContext.database = self
                guard try Evaluator.keeps(condition, whenContext) else { continue }
            }
            do {
                try runTriggerBody(trigger, key: key, rows)
            } catch let raise as TriggerRaise {
                switch raise.action {
                case .ignore: return timing == .after
                case .abort: throw DAOError.constraint(raise.message)
                case .fail: throw FailResolution(message: raise.message)
                case .rollback: throw endingTransaction(raise.message)
                }
            }
        }
        return true
    }

    /// Runs a trigger's statements for one row with their own row context, RETURNING capture
    /// and last insert rowid (a trigger's inserts do not change the statement's).
    private func runTriggerBody(_ trigger: CreateTriggerStatement, key: String, _ rows: TriggerRows) throws {
        firingTriggers.append(key)
        let savedCapture = rowCapture, savedRowid = lastInsertRowIdValue
        rowCapture = RowCapture()
        defer {
            firingTriggers.removeLast()
            rowCapture = savedCapture
            lastInsertRowIdValue = savedRowid
        }
        for statement in trigger.body {
            let context = RowContext(parameters: [])
            context.database = self   // subqueries of the body run against it; 'now' is the statement's
            switch try rows.substitute(statement) {
            case .insert(let insert): _ = try runInsert(insert, context)
            case .update(let update): _ = try runUpdate(update, context)
            case .delete(let delete): _ = try runDelete(delete, context)
            case .select(let select): _ = try runSelect(select, context)
            default: throw DAOError.unsupported("statement in a trigger body")
            }
        }
    }
}

/// NEW and OLD of one firing: replaces `NEW.col` / `OLD.col` in a trigger's statements by the
/// row's values (SQLite's "no such column" for the one the event has not).
struct TriggerRows {
    let table: TableState
    let old: SQLDatabase.TriggerRow?
    let new: SQLDatabase.TriggerRow?

    func value(_ qualifier: String, _ name: String) throws -> Expr? {
        let lower = qualifier.lowercased()
        let source: SQLDatabase.TriggerRow?
        if lower == "new" { source = new } else if lower == "old" { source = old } else { return nil }
        guard let source else { throw DAOError.noSuchColumn("\(qualifier).\(name)") }
        // As in SQLite 3.40, NEW.x and OLD.x are bare values: no column affinity in comparisons;
        // but they compare under the column's collation.
        if let index = table.definition.columnIndex(name) {
            // Marked even as BINARY: a column's BINARY goes before the other operand's collation.
            let collation = table.definition.columns[index].collation
            return .function(name: Parser.columnCollationFunctionName,
                             args: [.literal(source.row[index]), .literal(.integer(Int64(collation.rawValue)))], distinct: false, star: false)
        }
        if Resolver.rowidNames.contains(name.lowercased()) { return .literal(.integer(source.rowid)) }
        throw DAOError.noSuchColumn("\(qualifier).\(name)")
    }

    func substitute(_ expr: Expr) throws -> Expr {
        try expr.replacingNodes { node in
            switch node {
            case .column(let table?, let name): return try value(table, name)
            // Subqueries of a trigger body are still in parsed form: NEW/OLD inside them too.
            case .subquery(let plan): return .subquery(SubqueryPlan(try substitute(plan.statement)))
            case .exists(let plan, let negated): return .exists(SubqueryPlan(try substitute(plan.statement)), negated: negated)
            case .inSelect(let e, let plan, let negated):
                return .inSelect(try substitute(e), SubqueryPlan(try substitute(plan.statement)), negated: negated)
            default: return nil
            }
        }
    }

    func substitute(_ statement: Statement) throws -> Statement {
        switch statement {
        case .insert(var insert):
            insert.values = try insert.values?.map { try $0.map(substitute) }
            insert.select = try insert.select.map(substitute)
            return .insert(insert)
        case .update(var update):
            update.assignments = try update.assignments.map { ($0.0, try substitute($0.1)) }
            update.whereClause = try update.whereClause.map(substitute)
            return .update(update)
        case .delete(var delete):
            delete.whereClause = try delete.whereClause.map(substitute)
            return .delete(delete)
        case .select(let select): return .select(try substitute(select))
        default: return statement
        }
    }

    func substitute(_ select: SelectStatement) throws -> SelectStatement {
        var select = try select.mappingExpressions(substitute)
        select.from = try select.from.map { item in
            var item = item
            if case .subquery(let inner) = item.source { item.source = .subquery(try substitute(inner)) }
            return item
        }
        select.compound = try select.compound.map { CompoundTerm(op: $0.op, select: try substitute($0.select)) }
        if var with = select.with {
            with.tables = try with.tables.map { CommonTableExpression(name: $0.name, columns: $0.columns, select: try substitute($0.select)) }
            select.with = with
        }
        return select
    }
}
