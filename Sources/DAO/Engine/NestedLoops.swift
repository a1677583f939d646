/// One run of a `JoinPlan`'s nested loops: for each loop level, the rows of its source that the
/// loops outside it admit (through a rowid probe, the single-table `Planner`'s access path, or
/// the materialised rows of a subquery), checked against the level's ON and WHERE terms.
///
/// The state lives in a class with unchecked exclusivity rather than in variables captured by
/// nested closures: a recursive closure's captures are boxed and every access to them was
/// checked at run time, which cost more than the row reads of a rowid join.
final class NestedLoops {
    /// Per loop level, outermost first: what the level reads and checks, in one object of
    /// constants. A level's row loop reads its fields without reference counting; read from
    /// per-level arrays, each array and each element read was retained and released for every
    /// row of the level.
    private final class Level {
        let source: JoinPlan.Source
        /// The source's position in the plan (its buffer's index).
        let sourceIndex: Int
        let filters: [Expr]
        let onTerms: [Expr]
        let lookupTerms: PlannerTerms?
        let rowidProbe: (operand: Expr, comparison: Affinity?, term: Int?)?
        let lookupOrigins: [Int]
        /// With a rowid probe: the terms its lookup enforces (`origins` of the probe's term),
        /// the same for every row, so made once here instead of twice an inner row.
        let probeSkipping: [Int]
        /// Whether its lookup terms came from its ON terms (a LEFT JOIN) or its filters.
        let lookupFromOn: Bool
        /// Whether the rows it admits are the same for every row of the loops around it (an
        /// inner join's table whose terms read only that table: a cross join filtered per
        /// table, as `FROM t1, t2 WHERE a1 = 5 AND b2 IN (...)`). Such a level is scanned once
        /// per run; the rows that passed are kept (`invariantRows`) and replayed for the next
        /// outer rows, instead of scanning and reading the table again for each of them.
        let invariant: Bool

        init(plan: JoinPlan, level: Int) {
            sourceIndex = plan.order[level]
            source = plan.sources[sourceIndex]
            filters = plan.filters[level]
            onTerms = plan.onTerms[level]
            lookupTerms = plan.lookupTerms[level]
            rowidProbe = plan.rowidProbes[level]
            lookupOrigins = plan.lookupOrigins[level]
            probeSkipping = NestedLoops.origins(lookupTerms, lookupOrigins, rowidProbe?.term.map { [$0] } ?? [])
            lookupFromOn = source.join == .left
            invariant = level > 0 && source.table != nil && source.join != .left && rowidProbe == nil
                && filters.allSatisfy { [source] in NestedLoops.readsOnly(source, $0) }
        }
    }
    private let levels: [Level]
    private let database: SQLDatabase
    private let context: RowContext
    /// The context the inner loops plan in: the joined row is its enclosing row.
    private let plannerContext: RowContext
    private let materialized: [[[SQLValue]]]
    private let body: () throws -> Bool
    /// Per source: the row decoded last.
    @exclusivity(unchecked) private var buffers: [[SQLValue]]
    /// Per level: whether a row passed the level's ON terms (a LEFT JOIN's null row otherwise).
    @exclusivity(unchecked) private var matched: [Bool]
    /// The access path each level took first (the plan text).
    @exclusivity(unchecked) private(set) var chosen: [AccessPath?]
    /// The plan, which keeps each level's equality index (`JoinPlan.equalityIndex`): entries
    /// after the first build that index's one-key range from the operand's value.
    private let plan: JoinPlan

    /// Per invariant level: the joined-row values (its columns, then its rowid) of each row
    /// that passed, once a whole scan was kept; nil before, or when it passed `invariantLimit`.
    @exclusivity(unchecked) private var invariantRows: [[SQLValue]?]
    /// Per invariant level: rows being kept during its first scan (nil: not keeping).
    @exclusivity(unchecked) private var keeping: [[SQLValue]?]
    /// Values an invariant level keeps at most (past them it is scanned per outer row).
    private static let invariantLimit = 1 << 16

    init(plan: JoinPlan, database: SQLDatabase, context: RowContext, materialized: [[[SQLValue]]], body: @escaping () throws -> Bool) {
        levels = plan.order.indices.map { Level(plan: plan, level: $0) }
        self.database = database
        self.context = context
        self.materialized = materialized
        self.body = body
        plannerContext = RowContext(parameters: context.parameters)
        plannerContext.outer = context
        plannerContext.database = database
        plannerContext.subqueries = context.subqueries
        buffers = .filled([], count: plan.sources.count)
        matched = .filled(false, count: levels.count)
        chosen = .filled(nil, count: levels.count)
        self.plan = plan
        if plan.equalityIndex.count != levels.count { plan.equalityIndex = .filled(nil, count: levels.count) }
        invariantRows = .filled(nil, count: levels.count)
        keeping = .filled(nil, count: levels.count)
    }

    /// Whether `term` reads nothing but `source`'s row (and values fixed for the run), with no
    /// subquery and no function whose value changes from call to call.
    private static func readsOnly(_ source: JoinPlan.Source, _ term: Expr) -> Bool {
        var slots = Set<Int>()
        term.collectSlots(into: &slots)
        guard slots.allSatisfy({ $0 >= source.offset && $0 <= source.offset + source.width }) else { return false }
        func fixed(_ expr: Expr) -> Bool {
            switch expr {
            case .subquery, .exists, .inSelect: return false
            case .function(let name, _, _, _) where ["random", "randomblob"].contains(name.lowercased()): return false
            default: return expr.children.allSatisfy(fixed)
            }
        }
        return fixed(term)
    }

    /// The access path of a level's lookup terms for the current outer rows, and the lookup
    /// conjuncts it enforces.
    private func path(_ level: Int, _ terms: PlannerTerms, _ table: TableState) throws -> (AccessPath, consumed: [Int]) {
        let equality = terms.singleEquality
        if let equality, let cached = plan.equalityIndex[level] {
            let raw = try Evaluator.evaluate(equality.operand, plannerContext)
            // `column = NULL` admits no row (the term stays among the level's filters).
            if case .null = raw { return (.rowids([]), []) }
            let value = SQLValues.apply(equality.comparison, to: raw)
            return (.indexRanges(index: cached.index, ranges: [KeyRange(lower: [value], upper: [value])], reverse: false), cached.consumed)
        }
        let choice = try Planner(table: table, context: plannerContext).choose(terms, orderBy: nil)
        if equality != nil, case .indexRanges(let index, let ranges, reverse: false) = choice.0, ranges.count == 1 {
            plan.equalityIndex[level] = (index, choice.consumed)
        }
        return (choice.0, choice.consumed)
    }

    private func passes(_ terms: [Expr], skipping: [Int] = []) throws -> Bool {
        for (number, term) in terms.enumerated() where try !skipping.contains(number) && !Evaluator.keeps(term, context) {
            return false
        }
        return true
    }

    /// The level's ON (LEFT JOIN) or filter terms that `consumed` lookup conjuncts came from:
    /// rows the access path yields satisfy them.
    private func origins(_ level: Level, _ consumed: [Int]) -> [Int] {
        Self.origins(level.lookupTerms, level.lookupOrigins, consumed)
    }

    /// `origins` of a level whose lookup terms are `terms`, their conjuncts coming from `origins`.
    fileprivate static func origins(_ terms: PlannerTerms?, _ origins: [Int], _ consumed: [Int]) -> [Int] {
        guard !consumed.isEmpty, terms?.conjuncts.count == origins.count else { return [] }
        return consumed.map { origins[$0] }
    }

    /// Runs level `level` and the levels inside it; false once `body` asked to stop.
    func loop(_ level: Int) throws -> Bool {
        if level == levels.count { return try body() }
        let current = levels[level]
        let source = current.source
        matched[level] = false
        var going = true
        if current.invariant {
            if let rows = invariantRows[level] { return try replay(level, source, rows) }
            keeping[level] = []
        }
        if let table = source.table {
            if let probe = current.rowidProbe {
                // One row by its rowid: no plan to choose, no scan to set up.
                if chosen[level] == nil { chosen[level] = .rowids([]) }
                let value = try Evaluator.evaluate(probe.operand, plannerContext)
                if let rowid = PlannerTerms.rowid(of: value, comparison: probe.comparison) {
                    going = try enter(level, current, table, rowid, skipping: current.probeSkipping)
                }
            } else {
                var path = AccessPath.fullScan(reverse: false)
                var skipping: [Int] = []
                if let terms = current.lookupTerms {
                    let choice = try self.path(level, terms, table)
                    path = choice.0
                    skipping = origins(current, choice.consumed)
                }
                if chosen[level] == nil { chosen[level] = path }
                let admitted = skipping
                try database.scan(table, path) { rowid in
                    going = try enter(level, current, table, rowid, skipping: admitted)
                    return going
                }
            }
        } else {
            for row in materialized[current.sourceIndex] {
                for i in 0..<min(source.width, row.count) { context.row[source.offset + i] = row[i] }
                going = try visit(level, current)
                if !going { break }
            }
        }
        if going && source.join == .left && !matched[level] {
            for i in 0..<source.width { context.row[source.offset + i] = .null }
            if source.table != nil { context.row[source.offset + source.width] = .null }
            if try passes(current.filters) { going = try loop(level + 1) }
        }
        if current.invariant {
            // A whole scan was kept: later outer rows replay it (a scan stopped early is not whole).
            if going, let kept = keeping[level] { invariantRows[level] = kept }
            keeping[level] = nil
        }
        return going
    }

    /// Reads row `rowid` of `current`'s table into the joined row and visits it; false to stop.
    private func enter(_ level: Int, _ current: Level, _ table: TableState, _ rowid: Int64, skipping: [Int]) throws -> Bool {
        let s = current.sourceIndex, source = current.source
        guard try database.load(table, rowid, columns: source.columns, into: &buffers[s]) else { return true }
        // Copied through buffer pointers: `let row = buffers[s]` retained and released the
        // row's array, and each `context.row[...] =` checked its uniqueness.
        let offset = source.offset, width = source.width, columns = source.columns
        buffers.withUnsafeBufferPointer { all in
            all[s].withUnsafeBufferPointer { row in
                context.row.withUnsafeMutableBufferPointer { joined in
                    if let columns {
                        for i in columns { joined[offset + i] = row[i] }
                    } else {
                        for i in 0..<width { joined[offset + i] = row[i] }
                    }
                    joined[offset + width] = .integer(rowid)
                }
            }
        }
        return try visit(level, current, skipping: skipping)
    }

    /// Checks the current row of `level` and runs the levels inside it; false to stop.
    /// `skipping`: terms (of the ON terms for a LEFT JOIN's level, else of the filters) the
    /// row's access path enforced.
    private func visit(_ level: Int, _ current: Level, skipping: [Int] = []) throws -> Bool {
        let fromOn = current.lookupFromOn
        // `skipping` holds distinct term numbers: as many as the terms means all of them.
        if current.onTerms.count > (fromOn ? skipping.count : 0) {
            guard try passes(current.onTerms, skipping: fromOn ? skipping : []) else { return true }
        }
        matched[level] = true
        if current.filters.count > (fromOn ? 0 : skipping.count) {
            guard try passes(current.filters, skipping: fromOn ? [] : skipping) else { return true }
        }
        if keeping[level] != nil { keep(level, current.source) }
        return try loop(level + 1)
    }

    /// Adds the current row of invariant level `level` to the rows it keeps (or stops keeping
    /// past `invariantLimit`).
    private func keep(_ level: Int, _ source: JoinPlan.Source) {
        guard let count = keeping[level]?.count, count + source.width + 1 <= Self.invariantLimit else {
            keeping[level] = nil
            return
        }
        keeping[level]?.append(contentsOf: context.row[source.offset...(source.offset + source.width)])
    }

    /// Runs the levels inside invariant level `level` for each of its kept rows.
    private func replay(_ level: Int, _ source: JoinPlan.Source, _ rows: [SQLValue]) throws -> Bool {
        let stride = source.width + 1
        var start = 0
        while start < rows.count {
            for i in 0..<stride { context.row[source.offset + i] = rows[start + i] }
            guard try loop(level + 1) else { return false }
            start += stride
        }
        return true
    }
}
