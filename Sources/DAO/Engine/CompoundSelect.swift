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
    /// rule for a compound read as a table) and their collations (the first core's, BINARY
    /// where it has none).
    func runSelectReportingAffinities(_ select: SelectStatement, _ context: RowContext) throws -> (SQLResult, [Affinity], [Collation]) {
        if let with = select.with {
            var inner = select
            inner.with = nil
            return try runWithClause(with, inner, context)
        }
        if select.compound.isEmpty {
            let box = CompiledBox()
            let result = try runSelect(select, context, cache: box)
            return (result, box.select?.outputs.map { $0.affinity ?? .blob } ?? [],
                    box.select?.outputCollations.map { $0?.collation ?? .binary } ?? [])
        }
        return try runCompound(select, context)
    }

    private func runCompound(_ select: SelectStatement, _ context: RowContext) throws -> (SQLResult, [Affinity], [Collation]) {
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
        let (order, orderCollations) = try compoundOrder(select, cores, compiled)
        let limit = try integerClause(select.limit, context)
        // Rows are told apart and ordered under each column's collation: the leftmost core's
        // that has one (a literal has none, so the next core's counts), else BINARY.
        let collations = names.indices.map { column in
            compiled.lazy.compactMap { column < $0.outputCollations.count ? $0.outputCollations[column]?.collation : nil }.first
                ?? .binary
        }
        if limit == 0 {
            return (SQLResult(columns: names, values: [], lastInsertRowId: lastInsertRowIdValue, isQuery: true), affinities,
                    compiled[0].outputCollations.map { $0?.collation ?? .binary })
        }
        let offset = max(try integerClause(select.offset, context) ?? 0, 0)
        var results: [[[SQLValue]]] = []
        for (core, box) in zip(cores, boxes) { results.append(try runSelect(core, context, cache: box).values) }
        let rows = order.isEmpty
            ? Self.combineUnordered(results, operators, collations: collations)
            : Self.combineOrdered(results, operators, order: order, width: names.count, collations: collations,
                                  orderCollations: orderCollations)
        let window = LimitWindow.window(count: rows.count, offset: offset, limit: limit.flatMap { $0 < 0 ? nil : $0 })
        return (SQLResult(columns: names, values: Array(rows[window]), lastInsertRowId: lastInsertRowIdValue, isQuery: true),
                affinities, compiled[0].outputCollations.map { $0?.collation ?? .binary })
    }

    /// The ORDER BY of a compound: each term a result position and direction. A term is a
    /// position (1-based), or the alias of a result column, or an expression equal to a
    /// result column, tried on each core from the left (SQLite's resolveCompoundOrderBy).
    /// Also gives the collation an ORDER BY term names with `COLLATE`, by result position.
    private func compoundOrder(_ select: SelectStatement, _ cores: [SelectStatement], _ compiled: [CompiledSelect]) throws
        -> ([(Int, Bool)], [Int: Collation]) {
        let width = compiled[0].names.count
        var order: [(Int, Bool)] = []
        var collations: [Int: Collation] = [:]
        for (index, written) in select.orderBy.enumerated() {
            var term = written
            let explicit = Parser.collated(written.expr)
            if let (inner, _) = explicit { term.expr = inner }
            defer { if let (_, collation) = explicit, let last = order.last { collations[last.0] = collation } }
            if let (k, _) = Self.resultPosition(term.expr) {
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
        return (order, collations)
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
    static func combineUnordered(_ results: [[[SQLValue]]], _ operators: [CompoundOperator], collations: [Collation] = []) -> [[SQLValue]] {
        let fold = folding(collations)
        var current = results[0]
        for (index, op) in operators.enumerated() {
            let right = results[index + 1]
            switch op {
            case .unionAll: current += right
            case .union: current = sortedSet(current + right, fold)
            case .except, .intersect:
                let other = Set(right.map { ValueKey(values: fold($0)) })
                current = sortedSet(current, fold).filter { other.contains(ValueKey(values: fold($0))) == (op == .intersect) }
            }
        }
        return current
    }

    /// A row as the compound tells rows apart and orders them: each text folded by its
    /// column's collation (the row itself when every column is BINARY).
    private static func folding(_ collations: [Collation]) -> ([SQLValue]) -> [SQLValue] {
        guard collations.contains(where: { $0 != .binary }) else { return { $0 } }
        return { row in
            var folded = row
            for (i, collation) in collations.enumerated() where i < folded.count && collation != .binary {
                folded[i] = collation.fold(folded[i])
            }
            return folded
        }
    }

    /// Distinct rows (under `fold`) in ascending order, a later row replacing an equal earlier one.
    private static func sortedSet(_ rows: [[SQLValue]], _ fold: ([SQLValue]) -> [SQLValue]) -> [[SQLValue]] {
        var positions: [ValueKey: Int] = [:]
        var kept: [(row: [SQLValue], key: [SQLValue])] = []
        for row in rows {
            let folded = fold(row)
            let key = ValueKey(values: folded)
            if let position = positions[key] {
                kept[position] = (row, folded)
            } else {
                positions[key] = kept.count
                kept.append((row, folded))
            }
        }
        kept.sort { SQLValues.compare($0.key, $1.key) < 0 }
        return kept.map(\.row)
    }

    /// Rows of a compound with ORDER BY `order` (positions, descending), merged level by level.
    /// `collations`: each column's, which tell rows apart; `orderCollations`: an ORDER BY term's
    /// own `COLLATE`, which orders its column instead.
    static func combineOrdered(_ results: [[[SQLValue]]], _ operators: [CompoundOperator], order: [(Int, Bool)], width: Int,
                               collations: [Collation] = [], orderCollations: [Int: Collation] = [:]) -> [[SQLValue]] {
        let extended = order + (0..<width).filter { position in !order.contains { $0.0 == position } }.map { ($0, false) }
        let folded = collations.contains { $0 != .binary } || !orderCollations.isEmpty
        func collation(_ position: Int) -> Collation {
            orderCollations[position] ?? (position < collations.count ? collations[position] : .binary)
        }
        func columnCollation(_ position: Int) -> Collation { position < collations.count ? collations[position] : .binary }
        // The key of operator i: extended when it or any operator after it dedupes.
        func key(_ i: Int) -> [(Int, Bool)] { operators[i...].contains { $0 != .unionAll } ? extended : order }
        func compare(_ a: [SQLValue], _ b: [SQLValue], _ key: [(Int, Bool)]) -> Int {
            for (position, descending) in key {
                let c = folded ? collation(position).compare(a[position], b[position]) : SQLValues.compare(a[position], b[position])
                if c != 0 { return descending ? -c : c }
            }
            // Rows tied under an ORDER BY term's own collation are then told apart by their
            // columns' (so 0 means equal rows wherever the key is extended).
            if key.count == extended.count {
                for (position, _) in order where orderCollations[position] != nil {
                    // Ascending whatever the term's direction, as SQLite's merge breaks such ties.
                    let c = columnCollation(position).compare(a[position], b[position])
                    if c != 0 { return c }
                }
            }
            return 0
        }
        func equal(_ a: [SQLValue], _ b: [SQLValue]) -> Bool {
            folded ? a.indices.allSatisfy { columnCollation($0).compare(a[$0], b[$0]) == 0 } : SQLValues.compare(a, b) == 0
        }
        func sorted(_ rows: [[SQLValue]], _ key: [(Int, Bool)]) -> [[SQLValue]] {
            let keys = rows.map { row in key.map { collation($0.0).fold(row[$0.0]) } }
            return LimitWindow.sortedIndices(keys, descending: key.map(\.1)).map { rows[$0] }
        }
        var current = sorted(results[0], key(0))
        for (index, op) in operators.enumerated() {
            let k = key(index)
            let right = sorted(results[index + 1], k)
            var merged: [[SQLValue]] = []
            func output(_ row: [SQLValue]) {
                // Every operator but UNION ALL drops a row equal to the one output before it.
                if op != .unionAll, let last = merged.last, equal(last, row) { return }
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
