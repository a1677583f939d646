/// One run of a `JoinPlan`'s nested loops: for each loop level, the rows of its source that the
/// loops outside it admit (through a rowid probe, the single-table `Planner`'s access path, or
/// the materialised rows of a subquery), checked against the level's ON and WHERE terms.
///
/// The state lives in a class with unchecked exclusivity rather than in variables captured by
/// nested closures: a recursive closure's captures are boxed and every access to them was
/// checked at run time, which cost more than the row reads of a rowid join.
final class NestedLoops {
    // The plan's per-level arrays, copied into constants (a class's `var` pays an access
    // check on every read).
    private let sources: [JoinPlan.Source]
    private let order: [Int]
    private let filters: [[Expr]]
    private let onTerms: [[Expr]]
    private let lookupTerms: [PlannerTerms?]
    private let rowidProbes: [(operand: Expr, comparison: Affinity?)?]
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

    init(plan: JoinPlan, database: SQLDatabase, context: RowContext, materialized: [[[SQLValue]]], body: @escaping () throws -> Bool) {
        sources = plan.sources
        order = plan.order
        filters = plan.filters
        onTerms = plan.onTerms
        lookupTerms = plan.lookupTerms
        rowidProbes = plan.rowidProbes
        self.database = database
        self.context = context
        self.materialized = materialized
        self.body = body
        plannerContext = RowContext(parameters: context.parameters)
        plannerContext.outer = context
        plannerContext.database = database
        plannerContext.subqueries = context.subqueries
        buffers = Array(repeating: [], count: sources.count)
        matched = Array(repeating: false, count: order.count)
        chosen = Array(repeating: nil, count: order.count)
    }

    private func passes(_ terms: [Expr]) throws -> Bool {
        for term in terms where try Evaluator.condition(term, context) != true { return false }
        return true
    }

    /// Runs level `level` and the levels inside it; false once `body` asked to stop.
    func loop(_ level: Int) throws -> Bool {
        if level == order.count { return try body() }
        let s = order[level]
        let source = sources[s]
        matched[level] = false
        var going = true
        if let table = source.table {
            if let probe = rowidProbes[level] {
                // One row by its rowid: no plan to choose, no scan to set up.
                if chosen[level] == nil { chosen[level] = .rowids([]) }
                let value = try Evaluator.evaluate(probe.operand, plannerContext)
                if let rowid = PlannerTerms.rowid(of: value, comparison: probe.comparison) {
                    going = try enter(level, source, table, rowid)
                }
            } else {
                var path = AccessPath.fullScan(reverse: false)
                if let terms = lookupTerms[level] {
                    path = try Planner(table: table, context: plannerContext).choose(terms, orderBy: nil).0
                }
                if chosen[level] == nil { chosen[level] = path }
                try database.scan(table, path) { rowid in
                    going = try enter(level, source, table, rowid)
                    return going
                }
            }
        } else {
            for row in materialized[s] {
                for i in 0..<min(source.width, row.count) { context.row[source.offset + i] = row[i] }
                going = try visit(level)
                if !going { break }
            }
        }
        if going && source.join == .left && !matched[level] {
            for i in 0..<source.width { context.row[source.offset + i] = .null }
            if source.table != nil { context.row[source.offset + source.width] = .null }
            if try passes(filters[level]) { going = try loop(level + 1) }
        }
        return going
    }

    /// Reads row `rowid` of `source` into the joined row and visits it; false to stop.
    private func enter(_ level: Int, _ source: JoinPlan.Source, _ table: TableState, _ rowid: Int64) throws -> Bool {
        guard try database.load(table, rowid, columns: source.columns, into: &buffers[order[level]]) else { return true }
        let row = buffers[order[level]]
        if let columns = source.columns {
            for i in columns { context.row[source.offset + i] = row[i] }
        } else {
            for i in 0..<source.width { context.row[source.offset + i] = row[i] }
        }
        context.row[source.offset + source.width] = .integer(rowid)
        return try visit(level)
    }

    /// Checks the current row of `level` and runs the levels inside it; false to stop.
    private func visit(_ level: Int) throws -> Bool {
        guard try passes(onTerms[level]) else { return true }
        matched[level] = true
        guard try passes(filters[level]) else { return true }
        return try loop(level + 1)
    }
}
