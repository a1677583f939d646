/// A SELECT over several FROM items (joins) or a subquery in FROM: its sources laid out in one
/// flat row (each source's columns from its offset, then a table's rowid), the order the nested
/// loops visit them, and the terms each loop checks. Built when the query compiles; the inner
/// side of each loop reaches its rows through the single-table `Planner` (rowid, unique or
/// secondary index) from the terms that the loops outside it have bound.
final class JoinPlan {
    /// A FROM item (a class: the loops read it once per row they enter, and copying a struct
    /// of this size each time shows in profiles).
    final class Source {
        /// The alias or table name (plan text).
        let name: String
        let table: TableState?
        /// A subquery (or view) in FROM, materialised once per run.
        let subquery: SubqueryPlan?
        /// The window functions computed over the subquery's rows (a SELECT that calls them).
        var windows: WindowRunner?
        let offset: Int
        /// Its number of columns.
        let width: Int
        let join: JoinOperator
        // Set while the join is planned, then only read (under the statement lock), once per
        // row entered: without the dynamic exclusivity check.
        /// Its ON and USING terms, resolved.
        @exclusivity(unchecked) var on: [Expr] = []
        /// The columns its loop decodes (nil: all).
        @exclusivity(unchecked) var columns: [Int]?

        init(name: String, table: TableState?, subquery: SubqueryPlan?, offset: Int, width: Int, join: JoinOperator) {
            self.name = name
            self.table = table
            self.subquery = subquery
            self.offset = offset
            self.width = width
            self.join = join
        }
    }

    var sources: [Source]
    /// Slots in the flat row: every source's columns, and a rowid after each table's.
    let width: Int
    /// Loop order: positions in `sources`.
    private(set) var order: [Int] = []
    /// Per loop: the terms checked once its row is set (WHERE, and ON of inner joins).
    private(set) var filters: [[Expr]] = []
    /// Per loop: a LEFT JOIN's ON terms (they decide whether the row matched).
    private(set) var onTerms: [[Expr]] = []
    /// Per loop: the terms the Planner may use to reach the inner rows (this source's slots as
    /// table slots, the outer loops' slots as `.outerSlot(depth: 1, ...)`), analysed once, so
    /// each entry into the loop only evaluates the operands (the outer row's values).
    private(set) var lookupTerms: [PlannerTerms?] = []
    /// Per loop: a rowid equality of `lookupTerms` (the Planner's first choice when there is
    /// one), so the loop reads its one row directly.
    private(set) var rowidProbes: [(operand: Expr, comparison: Affinity?, term: Int?)?] = []
    /// Per loop: for each conjunct of `lookupTerms`, the index of the term it was made from in
    /// the loop's `onTerms` (a LEFT JOIN's loop) or `filters` (any other loop), so the terms an
    /// access path enforces are skipped for the rows it yields.
    private(set) var lookupOrigins: [[Int]] = []
    /// The access path each loop took for its first outer row (for the plan text).
    var chosen: [AccessPath?] = []
    /// Per level whose lookup is a single `column = operand`: the index the Planner chose for
    /// it and the lookup conjuncts that choice enforced, found by the first run that planned
    /// it and kept for every later row and run of this compiled statement (the Planner picks
    /// the same index for every non-NULL value; `PlannerTerms.singleEquality`). A new schema
    /// compiles a new plan. Touched only under the statement lock.
    @exclusivity(unchecked) var equalityIndex: [(index: Int, consumed: [Int])?] = []

    init(sources: [Source], width: Int) {
        self.sources = sources
        self.width = width
    }

    /// The loop position of the source that owns `slot` (nil: not a slot of this row).
    /// O(log n): sources are laid out in slot order.
    private func source(of slot: Int) -> Int? {
        // Its last slot: a table's rowid after its columns; a subquery has no rowid.
        func last(_ source: Source) -> Int { source.offset + source.width - (source.table == nil ? 1 : 0) }
        var low = 0, high = sources.count
        while low < high {
            let mid = (low + high) >> 1
            if last(sources[mid]) < slot { low = mid + 1 } else { high = mid }
        }
        guard low < sources.count, slot >= sources[low].offset else { return nil }
        return low
    }

    /// Chooses the loop order and places the terms. `whereClause` is resolved; `reading` holds
    /// the slots the rest of the query reads.
    func finish(where whereClause: Expr?, reading: Set<Int>) throws {
        equalityIndex = []   // chosen again for the loop order decided here
        var pool = whereClause?.conjuncts ?? []
        for source in sources where source.join != .left { pool += source.on }
        // SQLite keeps a LEFT JOIN's and a CROSS JOIN's operands in FROM order.
        let fixed = sources.contains { $0.join == .left || $0.join == .cross }
        order = fixed ? Array(sources.indices) : greedyOrder(pool)
        var position = [Int].filled(0, count: sources.count)
        for (level, s) in order.enumerated() { position[s] = level }

        func level(of term: Expr) -> Int {
            var slots = Set<Int>()
            term.collectSlots(into: &slots)
            return slots.compactMap { source(of: $0).map { position[$0] } }.max() ?? 0
        }
        filters = .filled([], count: order.count)
        onTerms = .filled([], count: order.count)
        var lookups = [Expr?].filled(nil, count: order.count)
        lookupOrigins = .filled([], count: order.count)
        chosen = .filled(nil, count: order.count)
        for term in pool { filters[level(of: term)].append(term) }
        for (s, source) in sources.enumerated() where source.join == .left {
            if source.on.contains(where: { level(of: $0) > position[s] }) {
                throw DAOError.unsupported("ON clause of a LEFT JOIN naming a table joined after it")
            }
            onTerms[position[s]] = source.on
        }
        var read = reading
        for term in pool + sources.flatMap(\.on) { term.collectSlots(into: &read) }
        for (s, source) in sources.enumerated() {
            let local = read.filter { $0 >= source.offset && $0 < source.offset + source.width }.map { $0 - source.offset }.sorted()
            sources[s].columns = local.count == source.width ? nil : local
            guard source.table != nil else { continue }
            let candidates = source.join == .left ? source.on : filters[position[s]]
            var rewritten: [Expr] = []
            for (number, candidate) in candidates.enumerated() {
                guard let term = lookupTerm(candidate, for: source) else { continue }
                rewritten.append(term)
                lookupOrigins[position[s]].append(number)
            }
            lookups[position[s]] = rewritten.isEmpty ? nil : rewritten.dropFirst().reduce(rewritten[0]) { .binary(.and, $0, $1) }
        }
        lookupTerms = lookups.map { $0.map(PlannerTerms.init) }
        rowidProbes = order.indices.map { level in
            sources[order[level]].table.flatMap { lookupTerms[level]?.rowidEquality(rowidColumn: $0.definition.rowidColumn) }
        }
    }

    /// `term` for the Planner of `source`'s loop: its slots as table slots (rowid -1), other
    /// sources' slots as values of the enclosing row; nil when it holds a subquery.
    private func lookupTerm(_ term: Expr, for source: Source) -> Expr? {
        if term.containsSubquery { return nil }
        return term.replacingNodes { expr in
            switch expr {
            case .slot(let index, let affinity):
                if index == source.offset + source.width { return .slot(-1, .integer) }
                if index >= source.offset && index < source.offset + source.width { return .slot(index - source.offset, affinity) }
                return .outerSlot(depth: 1, index: index, affinity)
            case .outerSlot(let depth, let index, let affinity): return .outerSlot(depth: depth + 1, index: index, affinity)
            default: return nil
            }
        }
    }

    /// A join order for inner joins, from estimates of the rows each loop visits given the
    /// sources already placed (a rowid or unique-index equality is one row, a secondary-index
    /// equality ten, a range a quarter or a 64th of the table, otherwise the whole table); ties
    /// keep the FROM order.
    /// - Complexity: O(n³ × terms of a source) for n sources: each source tried as the outer
    ///   loop, the rest placed one at a time. The terms are sorted by source once
    ///   (`TermShape`), so a 64-table join (SQLite's limit) plans in milliseconds.
    private func greedyOrder(_ pool: [Expr]) -> [Int] {
        // Each source is tried as the outer loop, the others placed greedily (the cheapest
        // loop given those before it); the order with the fewest estimated row visits wins
        // (each loop costs its rows, plus one probe, once per row of the loops around it).
        let shapes = termShapes(pool)
        var bestOrder = Array(sources.indices), bestCost = Double.infinity
        var isPlaced = [Bool].filled(false, count: sources.count)
        for first in sources.indices {
            for i in isPlaced.indices { isPlaced[i] = false }
            var placed = [first]
            var remaining = sources.indices.filter { $0 != first }
            var outerRows = estimate(first, isPlaced: isPlaced, shapes[first])
            isPlaced[first] = true
            var total = outerRows
            while !remaining.isEmpty {
                var next = remaining[0], nextCost = Double.infinity
                for s in remaining {
                    let cost = estimate(s, isPlaced: isPlaced, shapes[s])
                    if cost < nextCost { next = s; nextCost = cost }
                }
                placed.append(next)
                isPlaced[next] = true
                remaining.removeAll { $0 == next }
                total += outerRows * (nextCost + 1)
                outerRows *= nextCost
            }
            if total < bestCost { bestOrder = placed; bestCost = total }
        }
        return bestOrder
    }

    /// A WHERE or ON term as the estimate of one source's loop sees it: a column of that source
    /// (table slot; -1 the rowid) compared with values from other sources.
    private struct TermShape {
        /// The column's position in its table (-1: the rowid).
        var position: Int
        /// 0 for an equality (`=`, `IS`, `IN (...)`), 1 for one side of a range, 2 for BETWEEN.
        var sides: Int
        /// The sources whose values the other side reads: the term applies once they are all
        /// placed.
        var needs: [Int]
    }

    /// Each source's `TermShape`s from the pool, in pool order. A term comparing columns of
    /// two sources is a shape of each (its left column's source first, as the estimate reads
    /// a term).
    private func termShapes(_ pool: [Expr]) -> [[TermShape]] {
        var shapes = [[TermShape]].filled([], count: sources.count)
        func add(_ column: Expr, _ others: [Expr], sides: Int, unless taken: Int? = nil) -> Int? {
            guard case .slot(let index, _) = column, let s = source(of: index), s != taken else { return nil }
            var slots = Set<Int>()
            for other in others { other.collectSlots(into: &slots) }
            let needs = Array(Set(slots.compactMap { source(of: $0) }))
            let owner = sources[s]
            let position = index == owner.offset + owner.width ? -1 : index - owner.offset
            shapes[s].append(TermShape(position: position, sides: sides, needs: needs))
            return s
        }
        for term in pool {
            switch term {
            case .binary(let op, let l, let r) where op == .equal || op == .isOp:
                let left = add(l, [r], sides: 0)
                _ = add(r, [l], sides: 0, unless: left)
            case .binary(let op, let l, let r) where op == .less || op == .lessEqual || op == .greater || op == .greaterEqual:
                let left = add(l, [r], sides: 1)
                _ = add(r, [l], sides: 1, unless: left)
            case .between(let l, let low, let high, negated: false): _ = add(l, [low, high], sides: 2)
            case .inList(let l, let items, negated: false): _ = add(l, items, sides: 0)
            default: continue
            }
        }
        return shapes
    }

    private func estimate(_ s: Int, isPlaced: [Bool], _ shapes: [TermShape]) -> Double {
        let source = sources[s]
        guard let table = source.table else { return 1_000 }
        let rows = Double(max(table.rowids.count, 1))
        // Columns (table slots; -1 rowid) compared with values the placed loops know: by
        // equality (`bound`), or by a range (`ranged`: how many sides, 1 or 2).
        var bound = Set<Int>()
        var ranged: [Int: Int] = [:]
        // A term applies once every source its other side reads is placed (one reading this
        // same source never does: it is not placed while its loop is estimated).
        for shape in shapes where shape.needs.allSatisfy({ isPlaced[$0] }) {
            if shape.sides == 0 { bound.insert(shape.position) } else { ranged[shape.position, default: 0] += shape.sides }
        }
        if bound.contains(-1) || table.definition.rowidColumn.map(bound.contains) == true { return 1 }
        // A range keeps a share of the rows, as SQLite guesses it: 1/4 for one side, 1/64 for two.
        func rangeShare(_ position: Int) -> Double? {
            guard let sides = ranged[position] else { return nil }
            return sides >= 2 ? 1.0 / 64 : 1.0 / 4
        }
        var best = rows
        for position in [-1] + (table.definition.rowidColumn.map { [$0] } ?? []) {
            if let share = rangeShare(position) { best = min(best, rows * share + 1) }
        }
        for index in table.indexes {
            let first = index.schema.columns[0]
            if bound.contains(first) {
                let covered = index.schema.columns.allSatisfy(bound.contains)
                // As SQLite without statistics: an equality on a non-unique index finds 10 rows.
                best = min(best, index.schema.unique && covered ? 1.5 : min(rows, 10) + 1)
            } else if let share = rangeShare(first) {
                best = min(best, rows * share + 2)
            }
        }
        return best
    }

    /// Runs the nested loops, calling `body` for each joined row set in `context.row`
    /// (stopping when it returns false).
    func run(_ database: SQLDatabase, _ context: RowContext, _ body: () throws -> Bool) throws {
        var materialized = [[[SQLValue]]].filled([], count: sources.count)
        for (s, source) in sources.enumerated() {
            if let subquery = source.subquery {
                let rows = try SubqueryRunner.rows(subquery, context)
                materialized[s] = try source.windows.map { try $0.run(over: rows, context) } ?? rows
            }
        }
        context.row = [SQLValue].filled(.null, count: width)
        chosen = .filled(nil, count: order.count)
        try withoutActuallyEscaping(body) { body in
            let loops = NestedLoops(plan: self, database: database, context: context, materialized: materialized, body: body)
            _ = try loops.loop(0)
            chosen = loops.chosen
        }
    }

    /// One line per loop, outermost first, in the spirit of SQLite's EXPLAIN QUERY PLAN.
    func planLines() -> [String] {
        order.enumerated().map { level, s in
            let source = sources[s]
            guard let table = source.table else { return "SCAN \(source.name) (subquery)" }
            let shown = source.name == table.name ? table.name : "\(source.name) (\(table.name))"
            let prefix = source.join == .left ? "LEFT " : ""
            switch chosen[level] ?? .fullScan(reverse: false) {
            case .fullScan: return prefix + "SCAN \(shown)"
            case .rowids: return prefix + "SEARCH \(shown) USING ROWID"
            case .rowidRange: return prefix + "SEARCH \(shown) USING ROWID RANGE"
            case .indexRanges(let index, _, _):
                let indexes = table.definition.indexes
                let name = indexes.indices.contains(index) ? indexes[index].name : "#\(index)"
                return prefix + "SEARCH \(shown) USING INDEX \(name)"
            }
        }
    }
}

extension JoinPlan {
    /// Lays out the FROM items, makes them the resolver's sources, and resolves their ON and
    /// USING/NATURAL terms (USING's right-hand columns are then found only when qualified).
    /// - Throws: `DAOError.noSuchTable`, `SQLExecutionError` as SQLite words it for a bad
    ///   USING or NATURAL, what compiling a subquery in FROM throws.
    static func build(_ items: [FromItem], _ database: SQLDatabase, _ resolver: inout Resolver) throws -> JoinPlan {
        var sources: [Source] = []
        var scope: [ScopeSource] = []
        var offset = 0
        func appendSubquery(_ statement: SelectStatement, name: String, _ item: FromItem, columnNames: [String]? = nil,
                            withTable: Bool = false) throws {
            // Compiled with an empty scope for this query: a FROM subquery sees the queries
            // around this one, not its sibling sources.
            var outerResolver = resolver
            outerResolver.sources = []
            let compiled = try outerResolver.compile(SubqueryPlan(statement), firstRowOnly: false)
            resolver.outerReads.merge(outerResolver.outerReads) { $0.union($1) }
            guard let select = compiled.box?.select else { throw DAOError.unsupported("subquery") }
            var names = select.names
            if let columnNames {
                guard columnNames.count == names.count else {
                    if withTable { throw SQLExecutionError("table \(name) has \(names.count) values for \(columnNames.count) columns") }
                    throw SQLExecutionError("expected \(columnNames.count) columns for '\(name)' but got \(names.count)")
                }
                names = columnNames
            }
            var source = ScopeSource(name: name, alias: item.alias, columns: zip(names, select.outputs).map { ($0, $1.affinity) },
                                     offset: offset, rowidSlot: nil, rowidAlias: nil,
                                     collations: select.outputCollations.map { $0?.collation ?? .binary })
            var runner: WindowRunner?
            if let stage = item.windows {
                // The rewrite's subquery: its lifted columns and the calls' columns are read by
                // names of their own and left out of `*`; the lifted ones show their own names.
                let first = names.count - stage.liftedCount
                guard first >= 0 else { throw DAOError.unsupported("window function subquery") }
                runner = WindowRunner(stage: stage, firstLifted: first, collations: source.collations)
                source.displayNames = names + stage.calls.indices.map(Parser.windowColumnName)
                for j in 0..<stage.liftedCount { source.columns[first + j].name = Parser.liftedColumnName(j) }
                source.columns += stage.calls.indices.map { (Parser.windowColumnName($0), nil) }
                source.hidden = Set(first..<source.columns.count)
            }
            scope.append(source)
            let width = source.columns.count
            // The rewrite's alias is no name to show in a plan.
            let made = Source(name: runner == nil ? name : "(window functions)", table: nil, subquery: compiled, offset: offset,
                              width: width, join: item.join)
            made.windows = runner
            sources.append(made)
            offset += width
        }

        for (number, item) in items.enumerated() {
            switch item.source {
            case .table(let name):
                if let table = try database.tableIfExists(named: name) {
                    let columns = table.definition.columns
                    scope.append(ScopeSource(name: table.name, alias: item.alias, columns: columns.map { ($0.name, $0.affinity) },
                                             offset: offset, rowidSlot: table.hidesRowid ? nil : offset + columns.count, rowidAlias: table.definition.rowidColumn,
                                             collations: columns.map(\.collation)))
                    sources.append(Source(name: item.alias ?? table.name, table: table, subquery: nil, offset: offset,
                                          width: columns.count, join: item.join))
                    offset += columns.count + 1
                    continue
                }
                guard let view = try database.viewStatement(named: name) else { throw DAOError.noSuchTable(name) }
                let key = name.lowercased()
                guard database.viewsExpanding.insert(key).inserted else {
                    throw SQLExecutionError("view \(view.name) is circularly defined")
                }
                defer { database.viewsExpanding.remove(key) }
                try appendSubquery(view.select, name: view.name, item, columnNames: view.columns)
            case .subquery(let statement):
                try appendSubquery(statement, name: item.alias ?? "(subquery-\(number + 1))", item, columnNames: item.columnNames,
                                   withTable: item.columnNames != nil)
            }
        }

        // USING and NATURAL: equalities with the leftmost earlier source that has the column.
        var joinTerms = [[Expr]].filled([], count: items.count)
        for (k, item) in items.enumerated() where k > 0 {
            if item.natural && (item.on != nil || item.using != nil) {
                throw SQLExecutionError("a NATURAL join may not have an ON or USING clause")
            }
            var names = item.using ?? []
            if item.natural {
                names = scope[k].columns.map(\.name).filter { name in scope[0..<k].contains { $0.columnIndex(name) != nil } }
            }
            for name in names {
                // As SQLite: the leftmost earlier source with that column (merged or not).
                guard let right = scope[k].columnIndex(name),
                      let left = scope[0..<k].firstIndex(where: { $0.columnIndex(name) != nil }),
                      let column = scope[left].columnIndex(name) else {
                    throw SQLExecutionError("cannot join using column \(name) - column not present in both tables")
                }
                joinTerms[k].append(.binary(.equal, scope[left].expr(column: column), scope[k].expr(column: right)))
                scope[k].hidden.insert(right)
            }
        }
        resolver.sources = scope
        for (k, item) in items.enumerated() {
            // `USING (c)` is `left.c = right.c`, compared under the collation that gives.
            sources[k].on = joinTerms[k].map { term in
                guard case .binary(let op, let left, let right) = term else { return term }
                return .binary(op, Resolver.collate(left, resolver.comparisonCollation(left, right)), right)
            }
            if let on = item.on { sources[k].on += try resolver.resolve(on, allowAggregates: false).conjuncts }
        }
        return JoinPlan(sources: sources, width: offset)
    }
}
