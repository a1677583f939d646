/// An INSERT resolved against the schema.
final class CompiledInsert {
    let table: TableState
    let targets: [Int]
    let values: [[Expr]]?

    init(table: TableState, targets: [Int], values: [[Expr]]?) {
        self.table = table
        self.targets = targets
        self.values = values
    }
}

extension SQLDatabase {
    // MARK: INSERT

    /// Resolves an INSERT's target columns and VALUES expressions.
    func compileInsert(_ insert: InsertStatement) throws -> CompiledInsert {
        let table = try self.table(named: insert.table)
        let columns = table.definition.columns
        var targets: [Int]
        if let names = insert.columns {
            targets = []
            for name in names {
                if let index = table.definition.columnIndex(name) {
                    targets.append(index)
                } else if Resolver.rowidNames.contains(name.lowercased()) {
                    targets.append(-1)
                } else {
                    throw SQLExecutionError("table \(table.name) has no column named \(name)")
                }
            }
        } else {
            targets = Array(columns.indices)
        }
        var values: [[Expr]]?
        if let rows = insert.values {
            if rows.isEmpty {
                targets = []
                values = [[]]
            } else {
                var resolver = Resolver(table: nil)
                resolver.database = self
                let resolved = try rows.map { row in try row.map { try resolver.resolve($0, allowAggregates: false) } }
                if let first = resolved.first, first.count != targets.count {
                    throw SQLExecutionError(insert.columns == nil
                        ? "table \(table.name) has \(targets.count) columns but \(first.count) values were supplied"
                        : "\(first.count) values for \(targets.count) columns")
                }
                values = resolved
            }
        }
        return CompiledInsert(table: table, targets: targets, values: values)
    }

    func runInsert(_ insert: InsertStatement, _ context: RowContext, cache: CompiledBox? = nil) throws -> SQLResult {
        let compiled: CompiledInsert
        if let cache, cache.version == schemaVersion, let cached = cache.insert {
            compiled = cached
        } else {
            compiled = try compileInsert(insert)
            cache?.version = schemaVersion
            cache?.insert = compiled
        }
        let table = compiled.table, targets = compiled.targets
        let columns = table.definition.columns
        var sourceRows: [[SQLValue]] = []
        if let select = insert.select {
            sourceRows = try runSelect(select, context).values
            if let first = sourceRows.first, first.count != targets.count {
                throw SQLExecutionError(insert.columns == nil
                    ? "table \(table.name) has \(targets.count) columns but \(first.count) values were supplied"
                    : "\(first.count) values for \(targets.count) columns")
            }
            if sourceRows.isEmpty, select.columns.count != targets.count, !select.columns.contains(where: { if case .all = $0.kind { return true }; return false }) {
                throw SQLExecutionError(insert.columns == nil
                    ? "table \(table.name) has \(targets.count) columns but \(select.columns.count) values were supplied"
                    : "\(select.columns.count) values for \(targets.count) columns")
            }
        } else if let values = compiled.values, values.count != 1 {
            sourceRows = try values.map { row in try row.map { try Evaluator.evaluate($0, context) } }
        }
        let upsert = try insert.upsert.map { try compileUpsert($0, table, context) }   // Upsert.swift
        var changes = 0
        /// Inserts the source row whose value at each position `value` gives.
        func insertSource(_ value: (Int) throws -> SQLValue) throws {
            var row = [SQLValue].filled(.null, count: columns.count)
            var given = [Bool].filled(false, count: columns.count)
            var explicitRowid: SQLValue?
            for (position, target) in targets.enumerated() {
                let source = try value(position)
                if target < 0 { explicitRowid = source; continue }
                row[target] = source
                given[target] = true
            }
            for index in columns.indices where !given[index] {
                row[index] = try defaultValue(columns[index], context)
            }
            if let alias = table.definition.rowidColumn, given[alias] { explicitRowid = row[alias] }
            if !table.triggers.isEmpty, try !fireBeforeInsert(table, row: row, explicitRowid: explicitRowid) { return }   // Triggers.swift
            if try insertOne(table, row: row, explicitRowid: explicitRowid, mode: insert.mode, upsert: upsert) { changes += 1 }
        }
        if insert.select == nil, let values = compiled.values, values.count == 1 {
            // One row of VALUES (the usual INSERT): evaluated straight into its slots, without
            // the arrays of source rows. (Several rows are all evaluated first, as before.)
            let expressions = values[0]
            if expressions.count != targets.count {
                sourceRows = [try expressions.map { try Evaluator.evaluate($0, context) }]
            } else {
                try insertSource { try Evaluator.evaluate(expressions[$0], context) }
                return SQLResult(changes: changes, lastInsertRowId: lastInsertRowIdValue)
            }
        }
        for source in sourceRows { try insertSource { source[$0] } }
        return SQLResult(changes: changes, lastInsertRowId: lastInsertRowIdValue)
    }

    func defaultValue(_ column: ColumnSchema, _ context: RowContext) throws -> SQLValue {
        guard let expr = column.defaultValue else { return .null }
        var resolver = Resolver(table: nil)
        return try Evaluator.evaluate(try resolver.resolve(expr, allowAggregates: false), RowContext(parameters: []))
    }

    /// The rowid a value names, or "datatype mismatch".
    func rowidValue(_ value: SQLValue) throws -> Int64? {
        switch SQLValues.apply(.integer, to: value) {
        case .null: return nil
        case .integer(let i): return i
        default: throw SQLExecutionError("datatype mismatch")
        }
    }

    func newRowid(_ table: TableState) throws -> Int64 {
        // max(rowid) + 1 (negative maxima included); 1 for an empty table; AUTOINCREMENT never
        // goes below its sequence.
        var largest = table.maxRowid ?? 0
        if table.definition.autoincrement { largest = max(largest, table.sequence) }
        guard largest < Int64.max else {
            if table.definition.autoincrement { throw SQLExecutionError("database or disk is full") }
            // SQLite then tries random rowids; the smallest free one is as good.
            var candidate: Int64 = 1
            while table.contains(rowid: candidate) { candidate += 1 }
            return candidate
        }
        return largest + 1
    }

    func columnName(_ table: TableState, _ index: Int) -> String { "\(table.name).\(table.definition.columns[index].name)" }

    /// Applies affinity and checks NOT NULL; nil when the row is to be skipped (OR IGNORE).
    func prepareRow(_ table: TableState, _ row: inout [SQLValue], mode: ConflictMode, _ context: RowContext) throws -> Bool {
        let columns = table.definition.columns
        // Written only where the affinity converts: the row often shares its storage with the
        // statement's parameters, and a write would copy it.
        for index in columns.indices where SQLValues.mayConvert(columns[index].affinity, row[index]) {
            row[index] = SQLValues.apply(columns[index].affinity, to: row[index])
        }
        for index in columns.indices where columns[index].notNull && index != table.definition.rowidColumn {
            if case .null = row[index] {
                switch mode.resolved(columns[index].notNullConflict) {
                case .ignore: return false
                case .replace:
                    let fallback = SQLValues.apply(columns[index].affinity, to: try defaultValue(columns[index], context))
                    if case .null = fallback { fallthrough }
                    row[index] = fallback
                case .abort, .unspecified:
                    throw DAOError.constraint("NOT NULL constraint failed: \(columnName(table, index))")
                case .fail:
                    throw FailResolution(message: "NOT NULL constraint failed: \(columnName(table, index))")
                case .rollback:
                    throw endingTransaction("NOT NULL constraint failed: \(columnName(table, index))")
                }
            }
        }
        return true
    }

    /// Rowids of rows other than `except` that collide with `row` in a unique index, with the
    /// index's columns for the error message. In SQLite's order: the newest index first (its
    /// schema keeps a table's indexes newest first: CREATE INDEX ones, then the constraints'
    /// from the last declared), so a row that breaks two constraints names the one SQLite names.
    func conflicts(_ table: TableState, row: [SQLValue], except: Int64?) -> [(rowid: Int64, index: Int)] {
        var found: [(Int64, Int)] = []
        for (number, index) in table.indexes.enumerated().reversed() where index.schema.unique {
            let key = index.key(of: row)
            if key.contains(where: { if case .null = $0 { return true }; return false }) { continue }
            for rowid in index.rowids(matching: key) where rowid != except { found.append((rowid, number)) }
        }
        return found
    }

    func uniqueMessage(_ table: TableState, _ index: Int) -> String {
        "UNIQUE constraint failed: " + table.indexes[index].schema.columns.map { columnName(table, $0) }.joined(separator: ", ")
    }

    func rowidMessage(_ table: TableState) -> String {
        "UNIQUE constraint failed: " + (table.definition.rowidColumn.map { columnName(table, $0) } ?? "\(table.name).rowid")
    }

    /// The rows `row` clashes with when it goes in at `rowid`: the row holding that rowid when
    /// `rowidTaken`, then those equal to it in a unique index (other than `except`). Each
    /// clash is resolved by `mode`, or with `unspecified` by its constraint's ON CONFLICT
    /// clause (ABORT without one). In SQLite's order: the clashes resolved otherwise than by
    /// REPLACE first (the rowid's, then the indexes' in order), the first of them deciding:
    /// ABORT, FAIL and ROLLBACK throw SQLite's message, IGNORE returns nil (the row is
    /// skipped); only when every clash is REPLACE are the rowids returned, to be deleted
    /// before the row goes in.
    func clashingRows(_ table: TableState, row: [SQLValue], at rowid: Int64, rowidTaken: Bool, except: Int64?,
                      mode: ConflictMode) throws -> Set<Int64>? {
        var victims: [Int64] = []
        var clashes: [(rowids: [Int64], mode: ConflictMode, message: () -> String)] = []
        if rowidTaken {
            clashes.append(([rowid], mode.resolved(table.definition.rowidColumn != nil ? table.definition.primaryKeyConflict : nil),
                            { self.rowidMessage(table) }))
        }
        for clash in conflicts(table, row: row, except: except) {
            clashes.append(([clash.rowid], mode.resolved(table.indexes[clash.index].schema.conflict),
                            { self.uniqueMessage(table, clash.index) }))
        }
        for clash in clashes {
            switch clash.mode {
            case .abort, .unspecified: throw DAOError.constraint(clash.message())
            case .fail: throw FailResolution(message: clash.message())
            case .rollback: throw endingTransaction(clash.message())
            case .ignore: return nil
            case .replace: victims.append(contentsOf: clash.rowids)
            }
        }
        return Set(victims)
    }

    /// Inserts one row; returns whether it was inserted.
    func insertOne(_ table: TableState, row: [SQLValue], explicitRowid: SQLValue?, mode: ConflictMode,
                   upsert: CompiledUpsert? = nil) throws -> Bool {
        var row = row
        let context = RowContext(parameters: [])
        var rowid = try explicitRowid.flatMap { try rowidValue($0) }
        if rowid == nil { rowid = try newRowid(table) }
        guard let rowid else { return false }
        // The AUTOINCREMENT sequence moves before the constraint checks, as in SQLite: a row
        // that OR IGNORE then skips still uses up its number.
        var sequenceBefore: Int64?
        if table.definition.autoincrement && rowid > table.sequence {
            sequenceBefore = table.sequence
            setSequence(of: table, to: rowid)
        }
        let victims: Set<Int64>
        do {
            guard try prepareRow(table, &row, mode: mode, context) else { return false }
            if let alias = table.definition.rowidColumn { row[alias] = .integer(rowid) }
            guard try checkRow(table, row, rowid: rowid, mode: mode) else { return false }   // CheckConstraints.swift
            // ON CONFLICT: its target is checked first, and a conflict there is resolved by it.
            if let upsert, let victim = upsertConflict(table, upsert, rowid: rowid, row: row) {
                return try upsertUpdate(table, upsert, victim: victim, proposed: row)
            }
            guard let clashing = try clashingRows(table, row: row, at: rowid, rowidTaken: table.contains(rowid: rowid), except: nil, mode: mode) else {
                return false
            }
            victims = clashing
        } catch let failure as FailResolution {
            // OR FAIL keeps the statement's earlier rows but not the failing row's number: SQLite
            // writes the sequence when the statement ends, which a failure skips.
            if let sequenceBefore {
                table.sequence = sequenceBefore
                sequenceMoved()
            }
            throw failure
        }
        for victim in victims {
            if let old = try self.row(table, victim) { deleteRow(table, rowid: victim, row: old) }
        }
        insertRow(table, rowid: rowid, row: row)
        lastInsertRowIdValue = rowid
        if !table.triggers.isEmpty { try fireTriggers(table, .after, .insert, old: nil, new: TriggerRow(rowid: rowid, row: row)) }
        return true
    }

    // MARK: UPDATE and DELETE

    /// Rowids matching `whereClause`, collected before any change. The WHERE clause runs as a
    /// SELECT's does (`RowFilter`: conjunct by conjunct, a full scan narrowed by its prefilter).
    func matchingRows(_ table: TableState, _ whereClause: Expr?, _ context: RowContext) throws -> [(Int64, [SQLValue])] {
        let (chosen, _) = try Planner(table: table, context: context).choose(where: whereClause, orderBy: nil)
        lastAccess = (chosen, false)
        let filter = whereClause.flatMap { RowFilter($0, context) }
        let path = try prefiltered(chosen, table, filter)
        var matches: [(Int64, [SQLValue])] = []
        try scan(table, path) { rowid in
            guard let row = try row(table, rowid) else { return true }
            context.row = row
            context.rowid = rowid
            if let filter {
                if try !filter.matches(context) { return true }
            } else if let whereClause, try !Evaluator.keeps(whereClause, context) {
                return true
            }
            matches.append((rowid, row))
            return true
        }
        return matches
    }

    func runUpdate(_ update: UpdateStatement, _ context: RowContext) throws -> SQLResult {
        if let result = try writeSequences(update.table, assignments: update.assignments, whereClause: update.whereClause, context) {
            return result   // SchemaTables.swift
        }
        let table = try self.table(named: update.table)
        var resolver = Resolver(table: table)
        resolver.database = self
        let whereClause = try update.whereClause.map { try resolver.resolve($0, allowAggregates: false) }
        var assignments: [(Int, Expr)] = []
        for (name, expr) in update.assignments {
            let target: Int
            if let index = table.definition.columnIndex(name) { target = index }
            else if Resolver.rowidNames.contains(name.lowercased()) { target = -1 }
            else { throw DAOError.noSuchColumn(name) }
            let resolved = try resolver.resolve(expr, allowAggregates: false)
            var plans: [(String, SubqueryPlan)] = []
            resolved.collectSubqueries(into: &plans)
            // A subquery run per row that reads the table being updated would see some of its
            // rows changed (refused: not checked against SQLite's order); one that reads other
            // tables only (`SET c = (SELECT x FROM o WHERE o.k = t.k)`, a migration's usual
            // data fix) reads them as they are.
            if plans.contains(where: { $0.1.correlated && tablesRead($0.1.statement).contains(table.name.lowercased()) }) {
                throw DAOError.unsupported("correlated subquery in UPDATE SET reading the updated table")
            }
            assignments.append((target, resolved))
        }
        let matches = try matchingRows(table, whereClause, context)
        let updated = Set(assignments.map(\.0))
        var changes = 0
        // Rowids whose row this statement deleted (OR REPLACE) or moved a row into: as in
        // SQLite, a matched rowid is updated as it holds its row when its turn comes (none:
        // skipped), not as it held it when matched.
        var touched = Set<Int64>()
        for (rowid, matched) in matches {
            var old = matched
            if !touched.isEmpty, touched.contains(rowid) {
                guard let current = try self.row(table, rowid) else { continue }
                old = current
            }
            context.row = old
            context.rowid = rowid
            var row = old
            var newRowid = rowid
            var values: [(Int, SQLValue)] = []
            for (target, expr) in assignments { values.append((target, try Evaluator.evaluate(expr, context))) }
            for (target, value) in values {
                if target < 0 || target == table.definition.rowidColumn {
                    guard let id = try rowidValue(value) else { throw SQLExecutionError("datatype mismatch") }
                    newRowid = id
                    if target >= 0 { row[target] = value }
                } else {
                    row[target] = value
                }
            }
            // OR IGNORE skips a row that breaks NOT NULL; OR REPLACE puts the column's default.
            guard try prepareRow(table, &row, mode: update.mode, context) else { continue }
            if let alias = table.definition.rowidColumn { row[alias] = .integer(newRowid) }
            if !table.triggers.isEmpty {   // Triggers.swift; a BEFORE trigger may have changed or deleted the row
                guard try fireTriggers(table, .before, .update, old: TriggerRow(rowid: rowid, row: old),
                                       new: TriggerRow(rowid: newRowid, row: row), updated: updated),
                      let current = try self.row(table, rowid) else { continue }
                old = current
                reloadUnassigned(&row, from: current, assigned: updated)
                if let alias = table.definition.rowidColumn { row[alias] = .integer(newRowid) }
            }
            guard try checkRow(table, row, rowid: newRowid, mode: update.mode) else { continue }   // CheckConstraints.swift
            // OR IGNORE skips the row; OR REPLACE deletes the rows it clashes with (no DELETE
            // triggers, as SQLite without recursive_triggers).
            guard let victims = try clashingRows(table, row: row, at: newRowid, rowidTaken: newRowid != rowid && table.contains(rowid: newRowid),
                                                 except: rowid, mode: update.mode) else { continue }
            for victim in victims {
                if let gone = try self.row(table, victim) { deleteRow(table, rowid: victim, row: gone) }
                touched.insert(victim)
            }
            if newRowid != rowid { touched.insert(newRowid) }
            deleteRow(table, rowid: rowid, row: old)
            insertRow(table, rowid: newRowid, row: row)
            changes += 1
            if !table.triggers.isEmpty {
                try fireTriggers(table, .after, .update, old: TriggerRow(rowid: rowid, row: old), new: TriggerRow(rowid: newRowid, row: row),
                                 updated: updated)
            }
        }
        return SQLResult(changes: changes, lastInsertRowId: lastInsertRowIdValue)
    }

    func runDelete(_ delete: DeleteStatement, _ context: RowContext) throws -> SQLResult {
        if let result = try writeSequences(delete.table, assignments: nil, whereClause: delete.whereClause, context) { return result }
        let table = try self.table(named: delete.table)
        var resolver = Resolver(table: table)
        resolver.database = self
        let whereClause = try delete.whereClause.map { try resolver.resolve($0, allowAggregates: false) }
        let matches = try matchingRows(table, whereClause, context)
        guard !table.triggers.isEmpty else {
            for (rowid, row) in matches { deleteRow(table, rowid: rowid, row: row) }
            return SQLResult(changes: matches.count, lastInsertRowId: lastInsertRowIdValue)
        }
        var changes = 0
        for (rowid, row) in matches {   // Triggers.swift; a BEFORE trigger may have deleted the row
            guard try fireTriggers(table, .before, .delete, old: TriggerRow(rowid: rowid, row: row), new: nil),
                  let current = try self.row(table, rowid) else { continue }
            deleteRow(table, rowid: rowid, row: current)
            changes += 1
            try fireTriggers(table, .after, .delete, old: TriggerRow(rowid: rowid, row: current), new: nil)
        }
        return SQLResult(changes: changes, lastInsertRowId: lastInsertRowIdValue)
    }
}
