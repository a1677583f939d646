/// A subquery of an expression or a FROM clause: as parsed (`compiled` nil), then compiled
/// against the queries around it. Immutable once made, so compiled statements can share it.
final class SubqueryPlan: @unchecked Sendable {
    let statement: SelectStatement
    /// The compiled query, ready for `runSelect` (nil in the parsed form).
    let box: CompiledBox?
    /// Slots of the enclosing query's row it reads (its own and its nested subqueries').
    let outerSlots: Set<Int>
    /// Whether it reads any enclosing query's row: then it runs again for each outer row;
    /// otherwise once per statement run.
    let correlated: Bool
    let columnCount: Int
    /// The affinity of its first result column (SQLite's IN affinity rule reads it).
    let firstAffinity: Affinity?
    /// A scalar subquery without ORDER BY: all its rows must hold one value (see
    /// `Resolver.compile`).
    var checksSingleValue = false
    /// The access path of its last run (plan text); touched only under the statement lock.
    var lastAccess: (path: AccessPath, ordered: Bool)?

    /// The parsed form.
    init(_ statement: SelectStatement) {
        self.statement = statement
        box = nil
        outerSlots = []
        correlated = false
        columnCount = 0
        firstAffinity = nil
    }

    init(statement: SelectStatement, compiled: CompiledSelect, schemaVersion: Int) {
        self.statement = statement
        let box = CompiledBox()
        box.select = compiled
        box.version = schemaVersion
        self.box = box
        outerSlots = compiled.outerReads[1] ?? []
        correlated = !compiled.outerReads.isEmpty
        columnCount = compiled.names.count
        firstAffinity = compiled.outputs.first?.affinity
    }
}

/// Results of the uncorrelated subqueries of one statement run, shared by the statement's
/// row context and those of its correlated subqueries.
final class SubqueryCache {
    // Touched only by the statement running, under the statement lock (every statement asks
    // whether it is empty: the dynamic exclusivity checks cost ~130 instructions there).
    /// Rows by subquery.
    @exclusivity(unchecked) var rows: [ObjectIdentifier: [[SQLValue]]] = [:]
    /// IN (SELECT ...) value sets by subquery.
    @exclusivity(unchecked) var sets: [ObjectIdentifier: InValues] = [:]
    var isEmpty: Bool { rows.isEmpty && sets.isEmpty }
}

/// The values of an IN (SELECT ...) with the IN's affinity, whether NULL is among them, whether
/// the subquery gave no row. A class: read for every row tested, and a dictionary of tuples
/// looked its element type up at run time on each read.
final class InValues {
    let values: Set<ValueKey>
    /// The same values when every one is an integer (the common `id IN (SELECT id ...)`):
    /// a probe then hashes one Int64, without building a key array.
    let integers: Set<Int64>?
    let hasNull: Bool
    let isEmpty: Bool

    init(values: Set<ValueKey>, hasNull: Bool, isEmpty: Bool) {
        self.values = values
        self.hasNull = hasNull
        self.isEmpty = isEmpty
        var integers = Set<Int64>()
        for key in values {
            guard key.values.count == 1, case .integer(let i) = key.values[0] else { self.integers = nil; return }
            integers.insert(i)
        }
        self.integers = integers
    }

    /// Whether `value` (not NULL, the IN's affinity applied) equals one of the values.
    @inline(__always)
    func contains(_ value: SQLValue) -> Bool {
        if let integers {
            // Only a number can equal an integer; a real does when it is that integer exactly.
            switch value {
            case .integer(let i): return integers.contains(i)
            case .real(let r):
                guard r.rounded(.towardZero) == r, r >= -9223372036854775808.0, r < 9223372036854775808.0 else { return false }
                return integers.contains(Int64(r))
            default: return false
            }
        }
        return values.contains(ValueKey(values: [value]))
    }
}

/// Runs subqueries for the evaluator: scalar, EXISTS, IN (SELECT ...) and FROM subqueries.
enum SubqueryRunner {
    /// The value of slot `index` of the row `depth` queries out.
    static func outerValue(depth: Int, index: Int, _ context: RowContext) throws -> SQLValue {
        var current = context
        for _ in 0..<depth {
            guard let next = current.outer else { throw SQLExecutionError("no enclosing query for a correlated column") }
            current = next
        }
        if index < 0 { return .integer(current.rowid) }
        return index < current.row.count ? current.row[index] : .null
    }

    /// The rows of `plan` run with `context` as its enclosing row (cached per statement run
    /// when it is not correlated).
    static func rows(_ plan: SubqueryPlan, _ context: RowContext) throws -> [[SQLValue]] {
        let key = ObjectIdentifier(plan)
        if !plan.correlated, let rows = context.subqueries.rows[key] { return rows }
        let rows = try run(plan, context)
        if !plan.correlated { context.subqueries.rows[key] = rows }
        return rows
    }

    private static func run(_ plan: SubqueryPlan, _ context: RowContext) throws -> [[SQLValue]] {
        guard let database = context.database, let box = plan.box else { throw DAOError.unsupported("subquery") }
        let child = RowContext(parameters: context.parameters)
        child.outer = context
        child.database = database
        child.subqueries = context.subqueries
        // The statement's own access path stays the one its plan text reports.
        let saved = database.lastAccess
        defer { database.lastAccess = saved }
        database.lastAccess = nil
        let rows = try database.runSelect(plan.statement, child, cache: box).values
        plan.lastAccess = database.lastAccess
        return rows
    }

    /// A scalar subquery: the first column of its first row, NULL when it has none.
    /// - Throws: `DAOError.unsupported` when a subquery without ORDER BY gives several values
    ///   (which one SQLite answers depends on the scan order it picks).
    static func scalar(_ plan: SubqueryPlan, _ context: RowContext) throws -> SQLValue {
        let rows = try rows(plan, context)
        guard let first = rows.first?.first else { return .null }
        if plan.checksSingleValue, rows.contains(where: { $0.first != first }) {
            throw DAOError.unsupported("scalar subquery of several rows without ORDER BY")
        }
        return first
    }

    /// `[NOT] EXISTS`.
    static func exists(_ plan: SubqueryPlan, negated: Bool, _ context: RowContext) throws -> SQLValue {
        .integer(try rows(plan, context).isEmpty == negated ? 1 : 0)
    }

    /// `left [NOT] IN (SELECT ...)` with SQLite's rules: both sides take the affinity that a
    /// comparison of the left operand with the subquery's column would; NULL on the left is
    /// NULL unless the subquery is empty; no match with a NULL among the values is NULL.
    static func contains(_ left: Expr, _ plan: SubqueryPlan, negated: Bool, _ context: RowContext) throws -> SQLValue {
        let affinity = SQLValues.comparisonAffinity(left.affinity, plan.firstAffinity)
        // Under a collation other than BINARY, the set holds and is probed with folded texts.
        let collation = Parser.comparisonCollation(left)
        let key = ObjectIdentifier(plan)
        let found: InValues
        if !plan.correlated, let cached = context.subqueries.sets[key] {
            found = cached
        } else {
            let rows = plan.correlated ? try run(plan, context) : try self.rows(plan, context)
            var set = Set<ValueKey>()
            var null = false
            for row in rows {
                guard let value = row.first else { continue }
                if case .null = value { null = true; continue }
                set.insert(ValueKey(values: [collation.fold(SQLValues.apply(affinity, to: value))]))
            }
            found = InValues(values: set, hasNull: null, isEmpty: rows.isEmpty)
            if !plan.correlated { context.subqueries.sets[key] = found }
        }
        let value = try Evaluator.evaluate(left, context)
        if found.isEmpty { return .integer(negated ? 1 : 0) }
        if case .null = value { return .null }
        if found.contains(collation.fold(SQLValues.apply(affinity, to: value, unlessKept: left.keepsStorageClass))) {
            return .integer(negated ? 0 : 1)
        }
        if found.hasNull { return .null }
        return .integer(negated ? 1 : 0)
    }
}
