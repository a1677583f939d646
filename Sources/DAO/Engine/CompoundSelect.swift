/// Compound selects (`UNION`, `UNION ALL`, `INTERSECT`, `EXCEPT`): each SELECT core runs on
/// the single-core executor, then their rows are combined as SQLite 3.40 combines them, so
/// that which of two equal rows (1 and 1.0) is kept and the order of the rows agree:
///
/// - without ORDER BY, left to right: UNION ALL appends; UNION, INTERSECT and EXCEPT keep
///   their rows in a sorted set where a row replaces an equal one already there (SQLite's
///   ephemeral index), INTERSECT and EXCEPT keeping the left side's rows;
/// - with ORDER BY, each side sorted by the ORDER BY terms (then by the other columns, unless
///   every operator from there up is UNION ALL) and merged as SQLite's multiSelectOrderBy does.
///
/// LIMIT and OFFSET apply to the whole.
extension SQLDatabase {
    /// Runs a SELECT with its WITH clause and compound terms, if any; also gives the
    /// affinities of its result columns (those of the first core's expressions, SQLite 3.40's
    /// rule for a compound read as a table).
    func runSelectReportingAffinities(_ select: SelectStatement, _ context: RowContext) throws -> (SQLResult, [Affinity]) {
        if let with = select.with {
            var inner = select
            inner.with = nil
            return try runWithClause(with, inner, context)
        }
        if select.compound.isEmpty {
            let box = CompiledBox()
            let result = try runSelect(select, context, cache: box)
            return (result, box.select?.outputs.map { $0.affinity ?? .blob } ?? [])
        }
        return try runCompound(select, context)
    }

    private func runCompound(_ select: SelectStatement, _ context: RowContext) throws -> (SQLResult, [Affinity]) {
        let cores = [select.core] + select.compound.map(\.select)
        let operators = select.compound.map(\.op)
        // Every core is resolved before any row is read, as SQLite prepares the whole statement.
        var compiled: [CompiledSelect] = []
        var boxes: [CompiledBox] = []
        for (index, core) in cores.enumerated() {
            let resolved = try compileSelect(core)
            if index > 0, resolved.names.count != compiled[0].names.count {
                throw SQLExecutionError("SELECTs to the left and right of \(operators[index - 1].name) do not have the same number of result columns")
            }
            let box = CompiledBox()
            box.version = schemaVersion
            box.select = resolved
            compiled.append(resolved)
            boxes.append(box)
        }
        let names = compiled[0].names
        let affinities = compiled[0].outputs.map { $0.affinity ?? .blob }
        let order = try compoundOrder(select, cores, compiled)
        let limit = try integerClause(select.limit, context)
        if limit == 0 {
            return (SQLResult(columns: names, values: [], lastInsertRowId: lastInsertRowIdValue, isQuery: true), affinities)
        }
        let offset = max(try integerClause(select.offset, context) ?? 0, 0)
        var results: [[[SQLValue]]] = []
        for (core, box) in zip(cores, boxes) { results.append(try runSelect(core, context, cache: box).values) }
        let rows = order.isEmpty
            ? Self.combineUnordered(results, operators)
            : Self.combineOrdered(results, operators, order: order, width: names.count)
        let window = LimitWindow.window(count: rows.count, offset: offset, limit: limit.flatMap { $0 < 0 ? nil : $0 })
        return (SQLResult(columns: names, values: Array(rows[window]), lastInsertRowId: lastInsertRowIdValue, isQuery: true),
                affinities)
    }

    /// The ORDER BY of a compound: each term a result position and direction. A term is a
    /// position (1-based), or the alias of a result column, or an expression equal to a
    /// result column, tried on each core from the left (SQLite's resolveCompoundOrderBy).
    private func compoundOrder(_ select: SelectStatement, _ cores: [SelectStatement], _ compiled: [CompiledSelect]) throws -> [(Int, Bool)] {
        let width = compiled[0].names.count
        var order: [(Int, Bool)] = []
        for (index, term) in select.orderBy.enumerated() {
            if case .literal(.integer(let k)) = term.expr {
                guard k >= 1, k <= Int64(width) else {
                    throw SQLExecutionError("\(ordinal(index + 1)) ORDER BY term out of range - should be between 1 and \(width)")
                }
                order.append((Int(k) - 1, term.descending))
                continue
            }
            var found: Int?
            for (core, resolved) in zip(cores, compiled) {
                var resolver = try scopeResolver(core, resolved.table)
                if case .column(nil, let name) = term.expr, let position = aliasPosition(name, core, resolver) {
                    found = position
                    break
                }
                if let expr = try? resolver.resolve(term.expr, allowAggregates: false) {
                    let text = String(describing: expr)
                    if let position = resolved.outputs.firstIndex(where: { String(describing: $0) == text }) {
                        found = position
                        break
                    }
                }
            }
            guard let found else {
                throw SQLExecutionError("\(ordinal(index + 1)) ORDER BY term does not match any column in the result set")
            }
            order.append((found, term.descending))
        }
        return order
    }

    /// A resolver over a core's FROM (its table, or its joined sources), for matching ORDER BY
    /// terms of the whole against the core's result columns.
    private func scopeResolver(_ core: SelectStatement, _ table: TableState?) throws -> Resolver {
        var resolver = Resolver(table: table, alias: core.tableAlias)
        resolver.database = self
        if !core.from.isEmpty { _ = try JoinPlan.build(core.from, self, &resolver) }
        return resolver
    }

    /// Rows of a compound without ORDER BY (see the type's comment).
    static func combineUnordered(_ results: [[[SQLValue]]], _ operators: [CompoundOperator]) -> [[SQLValue]] {
        var current = results[0]
        for (index, op) in operators.enumerated() {
            let right = results[index + 1]
            switch op {
            case .unionAll: current += right
            case .union: current = sortedSet(current + right)
            case .except, .intersect:
                let other = Set(right.map { ValueKey(values: $0) })
                current = sortedSet(current).filter { other.contains(ValueKey(values: $0)) == (op == .intersect) }
            }
        }
        return current
    }

    /// Distinct rows in ascending order, a later row replacing an equal earlier one.
    private static func sortedSet(_ rows: [[SQLValue]]) -> [[SQLValue]] {
        var positions: [ValueKey: Int] = [:]
        var kept: [[SQLValue]] = []
        for row in rows {
            let key = ValueKey(values: row)
            if let position = positions[key] {
                kept[position] = row
            } else {
                positions[key] = kept.count
                kept.append(row)
            }
        }
        kept.sort { SQLValues.compare($0, $1) < 0 }
        return kept
    }

    /// Rows of a compound with ORDER BY `order` (positions, descending), merged level by level.
    static func combineOrdered(_ results: [[[SQLValue]]], _ operators: [CompoundOperator], order: [(Int, Bool)], width: Int) -> [[SQLValue]] {
        let extended = order + (0..<width).filter { position in !order.contains { $0.0 == position } }.map { ($0, false) }
        // The key of operator i: extended when it or any operator after it dedupes.
        func key(_ i: Int) -> [(Int, Bool)] { operators[i...].contains { $0 != .unionAll } ? extended : order }
        func compare(_ a: [SQLValue], _ b: [SQLValue], _ key: [(Int, Bool)]) -> Int {
            for (position, descending) in key {
                let c = SQLValues.compare(a[position], b[position])
                if c != 0 { return descending ? -c : c }
            }
            return 0
        }
        func sorted(_ rows: [[SQLValue]], _ key: [(Int, Bool)]) -> [[SQLValue]] {
            let keys = rows.map { row in key.map { row[$0.0] } }
            return LimitWindow.sortedIndices(keys, descending: key.map(\.1)).map { rows[$0] }
        }
        var current = sorted(results[0], key(0))
        for (index, op) in operators.enumerated() {
            let k = key(index)
            let right = sorted(results[index + 1], k)
            var merged: [[SQLValue]] = []
            func output(_ row: [SQLValue]) {
                // Every operator but UNION ALL drops a row equal to the one output before it.
                if op != .unionAll, let last = merged.last, SQLValues.compare(last, row) == 0 { return }
                merged.append(row)
            }
            var a = 0, b = 0
            while a < current.count && b < right.count {
                let c = compare(current[a], right[b], k)
                if c < 0 {
                    if op != .intersect { output(current[a]) }
                    a += 1
                } else if c == 0 {
                    if op == .unionAll || op == .intersect { output(current[a]) }
                    a += 1
                } else {
                    if op == .union || op == .unionAll { output(right[b]) }
                    b += 1
                }
            }
            if op != .intersect { for row in current[a...] { output(row) } }
            if op == .union || op == .unionAll { for row in right[b...] { output(row) } }
            current = merged
        }
        return current
    }
}
