/// Accumulates one aggregate over the rows of a group.
struct Accumulator {
    /// The aggregate functions, told apart once (not by comparing names per row).
    enum Kind { case count, sum, total, avg, min, max, groupConcat, other }

    let call: AggregateCall
    let kind: Kind
    var count: Int64 = 0
    var integerSum: Int64 = 0
    var realSum: Double = 0
    var approximate = false
    var overflow = false
    var best: SQLValue?
    var text: [UInt8]?
    var seen: Set<ValueKey>?

    init(_ call: AggregateCall) {
        self.call = call
        switch call.name {
        case "count": kind = .count
        case "sum": kind = .sum
        case "total": kind = .total
        case "avg": kind = .avg
        case "min": kind = .min
        case "max": kind = .max
        case "group_concat": kind = .groupConcat
        default: kind = .other
        }
        if call.distinct { seen = [] }
    }

    /// Adds a row; returns true when a min()/max() took this row's value (for bare columns).
    mutating func add(_ context: RowContext) throws -> Bool {
        if call.star { count += 1; return false }
        let value = try Evaluator.evaluate(call.args[0], context)
        if case .null = value { return false }
        if seen != nil {
            guard seen!.insert(ValueKey(values: [call.collation.fold(value)])).inserted else { return false }
        }
        switch kind {
        case .count: count += 1
        case .sum, .total, .avg:
            count += 1
            // SQLite 3.40's sumStep: an input is an integer when it is one or a text that
            // reads as one; anything else (real, other text, any blob) makes the sum a real.
            let number = SQLValues.sumOperand(value)
            switch number {
            case .integer(let i):
                realSum += Double(i)
                if !approximate && !overflow {
                    let (sum, didOverflow) = integerSum.addingReportingOverflow(i)
                    // Overflow before any real: sum() fails even if reals follow.
                    if didOverflow { overflow = true; approximate = true } else { integerSum = sum }
                }
            default:
                approximate = true
                realSum += SQLValues.double(number)
            }
        case .min, .max:
            if let current = best {
                let c = call.collation.compare(value, current)
                if (kind == .max && c > 0) || (kind == .min && c < 0) { best = value; return true }
            } else {
                best = value
                return true
            }
        case .groupConcat:
            let piece = SQLiteText.bytes(of: value) ?? []
            if var joined = text {
                var separator: [UInt8] = [0x2C]   // ","
                if call.args.count == 2 { separator = SQLiteText.bytes(of: try Evaluator.evaluate(call.args[1], context)) ?? [] }
                text = nil   // keeps `joined` the array's only reference while it grows
                joined.append(contentsOf: separator)
                joined.append(contentsOf: piece)
                text = joined
            } else {
                text = piece
            }
        case .other: break
        }
        return false
    }

    /// Takes back a row `add` took, as SQLite's window functions do when a row leaves a sliding
    /// frame (xInverse of count(), sum(), total() and avg()): the count and the sums go down,
    /// and a sum that has turned real or overflowed stays so until its partition ends.
    mutating func remove(_ context: RowContext) throws {
        if call.star { count -= 1; return }
        let value = try Evaluator.evaluate(call.args[0], context)
        if case .null = value { return }
        count -= 1
        guard kind == .sum || kind == .total || kind == .avg else { return }
        let number = SQLValues.sumOperand(value)
        if case .integer(let i) = number, !approximate {
            realSum -= Double(i)
            integerSum = integerSum &- i
        } else {
            realSum -= SQLValues.double(number)
        }
    }

    func result() throws -> SQLValue {
        switch kind {
        case .count: return .integer(count)
        case .sum:
            if count == 0 { return .null }
            if overflow { throw SQLExecutionError("integer overflow") }
            if approximate { return .real(realSum) }
            return .integer(integerSum)
        case .total: return .real(realSum)
        case .avg: return count == 0 ? .null : .real(realSum / Double(count))
        case .min, .max: return best ?? .null
        case .groupConcat: return text.map { .text(bytes: $0) } ?? .null
        case .other: return .null
        }
    }
}

/// A SELECT resolved against the schema: what does not depend on the arguments. A class, so
/// that running a cached one copies nothing.
final class CompiledSelect {
    let table: TableState?
    let names: [String]
    let outputs: [Expr]
    let whereClause: Expr?
    let groupBy: [Expr]
    let having: Expr?
    let orderBy: [(expr: Expr, descending: Bool, output: Int?)]
    let aggregates: [AggregateCall]
    let isAggregate: Bool
    /// Column positions the query reads (nil: all of them).
    let columns: [Int]?
    /// The joined sources, when FROM has several items or a subquery (`table` is then nil).
    @exclusivity(unchecked) var join: JoinPlan?
    /// Slots of enclosing queries' rows it reads, by depth (a correlated subquery).
    @exclusivity(unchecked) var outerReads: [Int: Set<Int>] = [:]
    /// The WHERE terms as the Planner reads them, analysed on first use and kept with the
    /// compiled statement (touched only under the statement lock, like the statement).
    var plannerTerms: PlannerTerms {
        if let plannerTermsMade { return plannerTermsMade }
        let terms = PlannerTerms(whereClause)
        plannerTermsMade = terms
        return terms
    }
    // The memos below are stored optionals rather than `lazy var`s: a lazy property cannot
    // skip the dynamic exclusivity check, which cost every run ~30 instructions an access.
    @exclusivity(unchecked) private var plannerTermsMade: PlannerTerms?
    /// The Planner's index for a lone equality term, kept from the first run that planned it
    /// (EqualityPlan.swift); touched only under the statement lock.
    @exclusivity(unchecked) var equalityChoice: EqualityChoice?
    /// The row slots of the result columns when every one is a bare column (-1: the rowid):
    /// a streamed row then copies them without the evaluator.
    var outputSlots: [Int]? {
        if let outputSlotsMade { return outputSlotsMade }
        var slots: [Int]? = []
        for output in outputs {
            guard case .slot(let slot, _) = output else { slots = nil; break }
            slots?.append(slot)
        }
        outputSlotsMade = .some(slots)
        return slots
    }
    @exclusivity(unchecked) private var outputSlotsMade: [Int]??
    /// The ORDER BY as the Planner reads it: slots and directions when every term is a bare
    /// column (and the query is neither an aggregate nor DISTINCT, unless it has no ORDER BY),
    /// else nil. Made once per compiled statement (it was an array made per run).
    /// A column sorted under NOCASE or RTRIM (its sort key, `Parser.sortKey`) counts as bare
    /// too: `simpleOrderCollations` gives each term's collation, which the index must share.
    @exclusivity(unchecked) private var simpleOrderMade: (distinct: Bool, order: [(slot: Int, descending: Bool)]?)?
    @exclusivity(unchecked) private(set) var simpleOrderCollations: [Collation] = []
    func simpleOrder(distinct: Bool) -> [(slot: Int, descending: Bool)]? {
        if let made = simpleOrderMade, made.distinct == distinct { return made.order }
        var order: [(slot: Int, descending: Bool)]? = []
        var collations: [Collation] = []
        for term in orderBy {
            if let (slot, collation) = Self.sortedColumn(term.expr) {
                order?.append((slot, term.descending))
                collations.append(collation)
            } else {
                order = nil
            }
        }
        if isAggregate || distinct { order = order?.isEmpty == true ? [] : nil }
        simpleOrderMade = (distinct, order)
        simpleOrderCollations = order == nil ? [] : collations
        return order
    }

    /// The column an ORDER BY term sorts by and under which collation: a bare column (BINARY),
    /// or a column's sort key under NOCASE or RTRIM; nil for any other term.
    private static func sortedColumn(_ expr: Expr) -> (slot: Int, collation: Collation)? {
        if case .slot(let slot, _) = expr { return (slot, .binary) }
        guard case .function(Parser.foldFunctionName, let args, _, _) = expr, args.count == 2,
              case .slot(let slot, _) = args[0], case .literal(.integer(let raw)) = args[1],
              let collation = Collation(rawValue: UInt8(truncatingIfNeeded: raw)) else { return nil }
        return (slot, collation)
    }
    /// Whether the result columns are the table's columns, each once and in order
    /// (`SELECT *`, or every column named in order): a streamed row of a single-table scan is
    /// then the scan's row itself, handed out without a copy.
    var outputIsWholeRow: Bool {
        if let outputIsWholeRowMade { return outputIsWholeRowMade }
        var whole = false
        if let table, join == nil, let slots = outputSlots { whole = slots == Array(0..<table.definition.columns.count) }
        outputIsWholeRowMade = whole
        return whole
    }
    @exclusivity(unchecked) private var outputIsWholeRowMade: Bool?
    /// The WHERE clause without the terms an access path consumed, for the consumed set it was
    /// made for (the same from run to run unless an operand turns NULL).
    @exclusivity(unchecked) private var residualCache: (consumed: [Int], clause: Expr?)?

    /// The WHERE clause a scan whose path enforces the terms `consumed` still evaluates.
    func residualWhere(consumed: [Int]) -> Expr? {
        if consumed.isEmpty { return whereClause }
        if let cached = residualCache, cached.consumed == consumed { return cached.clause }
        let clause = plannerTerms.residual(without: consumed)
        residualCache = (consumed, clause)
        return clause
    }

    /// Each result column's collation (nil: none, BINARY) and whether it is an explicit
    /// `COLLATE`: a view or FROM subquery column has it, `x IN (SELECT y)` compares by it, and
    /// DISTINCT tells rows apart by it.
    @exclusivity(unchecked) var outputCollations: [(collation: Collation, explicit: Bool)?] = [] {
        didSet { hasFoldedOutputs = outputCollations.contains { ($0?.collation ?? .binary) != .binary } }
    }

    /// Whether some result column has a collation other than BINARY (DISTINCT folds them);
    /// kept with `outputCollations`, as DISTINCT asks per row.
    @exclusivity(unchecked) private(set) var hasFoldedOutputs = false

    /// `row` with each text folded by its result column's collation (DISTINCT's key).
    func foldedOutputs(_ row: [SQLValue]) -> [SQLValue] {
        var folded = row
        for (i, entry) in outputCollations.enumerated() where i < folded.count {
            if let collation = entry?.collation, collation != .binary { folded[i] = collation.fold(folded[i]) }
        }
        return folded
    }

    init(table: TableState?, names: [String], outputs: [Expr], whereClause: Expr?, groupBy: [Expr], having: Expr?,
         orderBy: [(expr: Expr, descending: Bool, output: Int?)], aggregates: [AggregateCall], isAggregate: Bool, columns: [Int]?) {
        self.table = table
        self.names = names
        self.outputs = outputs
        self.whereClause = whereClause
        self.groupBy = groupBy
        self.having = having
        self.orderBy = orderBy
        self.aggregates = aggregates
        self.isAggregate = isAggregate
        self.columns = columns
    }
}

/// The compiled form of one parsed statement, valid while the schema version is unchanged.
/// Touched only under the database's statement lock.
final class CompiledBox: @unchecked Sendable {
    @exclusivity(unchecked) var version = -1
    @exclusivity(unchecked) var select: CompiledSelect?
    @exclusivity(unchecked) var insert: CompiledInsert?
    /// The last run's state, cleared, for the next run of the statement (a run takes it out,
    /// so a nested run of the same statement makes its own): a one-row SELECT spent ~600 of
    /// its ~9,700 instructions making and freeing one.
    @exclusivity(unchecked) var idleRun: SelectRun?
}

/// The groups of an aggregate query while its rows are added. A class, so that the row
/// closures reach its state without the run-time exclusivity check (and boxing) that variables
/// captured by nested closures pay on every access.
final class Aggregation {
    let aggregates: [AggregateCall]
    let groupBy: [Expr]
    /// The one min() or max() among the aggregates, whose chosen row the bare columns read.
    let singleMinMax: Int?
    @exclusivity(unchecked) var groups: [Group] = []
    @exclusivity(unchecked) var groupIndex: [ValueKey: Int] = [:]
    @exclusivity(unchecked) var groupKeys: [[SQLValue]] = []

    init(aggregates: [AggregateCall], groupBy: [Expr]) {
        self.aggregates = aggregates
        self.groupBy = groupBy
        singleMinMax = aggregates.filter { $0.name == "min" || $0.name == "max" }.count == 1
            ? aggregates.firstIndex { $0.name == "min" || $0.name == "max" } : nil
    }

    /// Adds the context's current row to its group (made on first sight).
    func add(_ context: RowContext) throws {
        let index: Int
        if groupBy.isEmpty, !groups.isEmpty {
            // One group: no key to compute or look up.
            index = 0
        } else if groupBy.isEmpty {
            index = 0
            groups.append(Group(accumulators: aggregates.map(Accumulator.init), row: context.row, rowid: context.rowid))
            groupKeys.append([])
        } else {
            var key: [SQLValue] = []
            for expr in groupBy { key.append(try Evaluator.evaluate(expr, context)) }
            if let existing = groupIndex[ValueKey(values: key)] {
                index = existing
            } else {
                index = groups.count
                groupIndex[ValueKey(values: key)] = index
                groups.append(Group(accumulators: aggregates.map(Accumulator.init), row: context.row, rowid: context.rowid))
                groupKeys.append(key)
            }
        }
        // Through buffer pointers: `groups[index].accumulators[a]` checked the uniqueness of
        // both arrays and copied the group on every row.
        let singleMinMax = singleMinMax
        try groups.withUnsafeMutableBufferPointer { groups in
            var tookRow = false
            try groups[index].accumulators.withUnsafeMutableBufferPointer { accumulators in
                for a in accumulators.indices where try accumulators[a].add(context) && a == singleMinMax { tookRow = true }
            }
            // Bare columns read the group's first row, or the row a lone min()/max() chose.
            if tookRow {
                groups[index].row = context.row
                groups[index].rowid = context.rowid
            }
        }
    }
}

/// One group of an aggregate query.
struct Group {
    var accumulators: [Accumulator]
    var row: [SQLValue]
    var rowid: Int64
}

extension SQLDatabase {
    /// Evaluates a LIMIT or OFFSET expression: it must be an integer.
    func integerClause(_ expr: Expr?, _ context: RowContext) throws -> Int64? {
        guard let expr else { return nil }
        let value: SQLValue
        if case .literal(let literal) = expr {
            // `LIMIT 10`: what resolving and evaluating a literal gives, without a resolver.
            value = SQLValues.apply(.numeric, to: literal)
        } else {
            var resolver = Resolver(table: nil)
            value = SQLValues.apply(.numeric, to: try Evaluator.evaluate(try resolver.resolve(expr, allowAggregates: false), context))
        }
        guard case .integer(let i) = value else { throw SQLExecutionError("datatype mismatch") }
        return i
    }

    /// The result position an ORDER BY or GROUP BY term names, and the COLLATE written on it:
    /// an integer literal that fits in 32 bits, as SQLite reads one (`sqlite3ExprIsInteger`; a
    /// larger one is a constant to sort by); nil for any other term.
    static func resultPosition(_ term: Expr) -> (position: Int64, collation: Collation?)? {
        var current = term
        var collation: Collation?
        while let (inner, written) = Parser.collated(current) {
            if collation == nil { collation = written }
            current = inner
        }
        // `+k` and `-k` are integers to SQLite too (so `ORDER BY -1` is out of range); a
        // COLLATE under the sign (`+(-4 COLLATE x)`) makes the term an expression.
        var sign: Int64 = 1
        while case .unary(let op, let inner) = current, op == .plus || op == .negate {
            if op == .negate { sign = -sign }
            current = inner
        }
        guard case .literal(.integer(let magnitude)) = current, magnitude >= Int64(Int32.min), magnitude <= Int64(Int32.max) else {
            return nil
        }
        return (sign * magnitude, collation)
    }

    /// Runs a SELECT and returns its rows.
    /// Resolves a SELECT against the current schema (cached per statement and schema version).
    /// `outer`: the sources of the queries around a subquery, innermost first.
    func compileSelect(_ select: SelectStatement, outer: [[ScopeSource]] = []) throws -> CompiledSelect {
        if let name = select.table, tables[name.lowercased()] == nil, try viewStatement(named: name) != nil {
            // A view: one FROM item that is its query.
            var viaView = select
            viaView.table = nil
            viaView.tableAlias = nil
            viaView.from = [FromItem(source: .table(name), alias: select.tableAlias)]
            return try compileSelect(viaView, outer: outer)
        }
        let table = try select.table.map { try self.table(named: $0) }
        var resolver = Resolver(table: table, alias: select.tableAlias)
        resolver.database = self
        resolver.outer = outer
        for column in select.columns {
            if let alias = column.alias, case .expression(let expr) = column.kind {
                resolver.aliases[alias.lowercased()] = expr
            }
        }
        let join = select.from.isEmpty ? nil : try JoinPlan.build(select.from, self, &resolver)

        // Result columns.
        var names: [String] = []
        var outputs: [Expr] = []
        for column in select.columns {
            switch column.kind {
            case .all:
                for (name, expr) in try resolver.star(column.qualifier) {
                    names.append(name)
                    outputs.append(expr)
                }
            case .expression(let expr):
                outputs.append(try resolver.resolve(expr, allowAggregates: true))
                if let alias = column.alias {
                    names.append(alias)
                } else if case .column(let qualifier, let name) = expr, let shown = resolver.displayName(name, qualifier: qualifier) {
                    names.append(shown)
                } else if case .column(_, let name) = expr {
                    names.append(name)
                } else {
                    names.append(column.text)
                }
            }
        }
        let whereClause = try select.whereClause.map { try resolver.resolve($0, allowAggregates: false) }
        var groupBy: [Expr] = []
        for (number, term) in select.groupBy.enumerated() {
            // Groups are told apart under each term's collation: a term that has one other than
            // BINARY groups by its folded value.
            if let (k, collation) = Self.resultPosition(term) {
                guard k >= 1, Int(k) <= outputs.count else {
                    throw SQLExecutionError("\(ordinal(number + 1)) GROUP BY term out of range - should be between 1 and \(outputs.count)")
                }
                let output = outputs[Int(k) - 1]
                if output.containsAggregate { throw SQLExecutionError("aggregate functions are not allowed in the GROUP BY clause") }
                groupBy.append(Parser.sortKey(output, collation: collation ?? resolver.collation(of: output) ?? .binary))
                continue
            }
            let resolved: Expr
            if case .column(nil, let name) = term, let position = aliasPosition(name, select, resolver) {
                resolved = outputs[position]
            } else {
                resolved = try resolver.resolve(term, allowAggregates: false)
            }
            groupBy.append(Parser.sortKey(resolved, collation: resolver.collation(of: resolved) ?? .binary))
        }
        let having = try select.having.map { try resolver.resolve($0, allowAggregates: true) }
        // ORDER BY: a result position, an alias, or an expression.
        var orderBy: [(expr: Expr, descending: Bool, output: Int?)] = []
        for (number, term) in select.orderBy.enumerated() {
            // `ORDER BY k COLLATE x` / `alias COLLATE x`: that output, sorted under x.
            let collated = Parser.collated(term.expr)
            let written = collated?.0 ?? term.expr
            var explicit = collated?.1
            var resolved: (expr: Expr, descending: Bool, output: Int?)
            if let (k, collation) = Self.resultPosition(term.expr) {
                explicit = collation
                guard k >= 1, Int(k) <= outputs.count else {
                    throw SQLExecutionError("\(ordinal(number + 1)) ORDER BY term out of range - should be between 1 and \(outputs.count)")
                }
                resolved = (outputs[Int(k) - 1], term.descending, Int(k) - 1)
            } else if case .column(nil, let name) = written, let position = aliasPosition(name, select, resolver) {
                resolved = (outputs[position], term.descending, position)
            } else {
                resolved = (try resolver.resolve(written, allowAggregates: true), term.descending, nil)
            }
            // Sorted under the term's collation: a folded key in place of the value.
            if let collation = explicit ?? resolver.collation(of: resolved.expr), collation != .binary {
                resolved = (Parser.sortKey(resolved.expr, collation: collation), resolved.descending, nil)
            }
            orderBy.append(resolved)
        }
        let aggregates = resolver.aggregates
        let isAggregate = !aggregates.isEmpty || !groupBy.isEmpty || having != nil
        if having != nil && groupBy.isEmpty && aggregates.isEmpty {
            throw SQLExecutionError("a GROUP BY clause is required before HAVING")
        }
        // The columns the query reads: rows are decoded only that far.
        var slots = Set<Int>()
        for expr in outputs + groupBy + orderBy.map(\.expr) { expr.collectSlots(into: &slots) }
        whereClause?.collectSlots(into: &slots)
        having?.collectSlots(into: &slots)
        for call in aggregates { for arg in call.args { arg.collectSlots(into: &slots) } }
        let columns = slots.filter { $0 >= 0 }.sorted()
        try join?.finish(where: whereClause, reading: slots)
        let compiled = CompiledSelect(table: table, names: names, outputs: outputs, whereClause: whereClause, groupBy: groupBy,
                                      having: having, orderBy: orderBy, aggregates: aggregates, isAggregate: isAggregate,
                                      columns: columns.count == (table?.definition.columns.count ?? 0) ? nil : columns)
        compiled.join = join
        compiled.outerReads = resolver.outerReads
        compiled.outputCollations = outputs.map { output in resolver.collation(of: output).map { ($0, output.hasExplicitCollation) } }
        return compiled
    }

    /// Runs a SELECT and returns its rows.
    /// With `sink` (the top-level query of `forEachRow`), rows that come in their final order
    /// go to it as they are made and are not in the result; the result holds the others.
    func runSelect(_ select: SelectStatement, _ context: RowContext, cache: CompiledBox? = nil, sink: RowSink? = nil) throws -> SQLResult {
        // WITH and compound selects run above the single core (CompoundSelect.swift).
        if select.with != nil || !select.compound.isEmpty { return try runSelectReportingAffinities(select, context).0 }
        let compiled: CompiledSelect
        if let cache, cache.version == schemaVersion, let cached = cache.select {
            compiled = cached
        } else {
            compiled = try compileSelect(select)
            cache?.version = schemaVersion
            cache?.select = compiled
        }
        let table = compiled.table, names = compiled.names, whereClause = compiled.whereClause
        let groupBy = compiled.groupBy, having = compiled.having, orderBy = compiled.orderBy
        let aggregates = compiled.aggregates, isAggregate = compiled.isAggregate
        // Read once: the row closures below must not capture `select` (a large value that
        // they would otherwise copy and destroy for every row visited).
        let distinct = select.distinct

        let limit = try integerClause(select.limit, context)
        // LIMIT 0: as in SQLite, nothing else is evaluated (not the OFFSET, no row, no key).
        if limit == 0 { return SQLResult(columns: names, values: [], lastInsertRowId: lastInsertRowIdValue, isQuery: true) }
        let offset = max(try integerClause(select.offset, context) ?? 0, 0)
        let wanted: Int64? = limit.flatMap { $0 < 0 ? nil : $0 }

        // Access path.
        var path = AccessPath.fullScan(reverse: false)
        var pathOrdered = orderBy.isEmpty
        // What a single-table scan evaluates per row: WHERE without the terms its path enforces.
        var residual = whereClause
        if let table {
            let simpleOrder = orderBy.isEmpty ? [] : compiled.simpleOrder(distinct: distinct)
            var planner = Planner(table: table, context: context)
            planner.orderCollations = compiled.simpleOrderCollations
            let plannerOrder = simpleOrder ?? [(slot: Int.min, descending: false)]
            if select.indexHint == nil, let kept = compiled.equalityChoice, let keptPath = try planner.path(kept, compiled.plannerTerms) {
                // The index an earlier run chose for the same equality term (EqualityPlan.swift).
                path = keptPath
                residual = compiled.residualWhere(consumed: kept.consumed)
            } else {
                let choice = try planner.choose(compiled.plannerTerms, orderBy: plannerOrder)
                path = choice.0
                pathOrdered = orderBy.isEmpty || (simpleOrder != nil && choice.ordered)
                if let hint = select.indexHint {
                    try apply(hint, table, &path, &pathOrdered, orderBy.isEmpty)
                } else {
                    residual = compiled.residualWhere(consumed: choice.consumed)
                    compiled.equalityChoice = EqualityChoice.keep(choice, terms: compiled.plannerTerms, orderBy: plannerOrder, table: table)
                }
            }
        }
        // Constants from here: variables captured by the row closures below would be boxed
        // and checked for exclusive access on every row.
        let ordered = pathOrdered, rowFilter = residual
        lastAccess = (path, ordered && !orderBy.isEmpty)
        // The filter's column-constant comparisons with their constants evaluated once (RowFilter).
        let fastFilter = rowFilter.flatMap { RowFilter($0, context) }

        // Per-row state in a class (SelectRun): see there.
        let run = cache?.idleRun ?? SelectRun()
        cache?.idleRun = nil
        defer {
            if let cache {
                run.clear()
                cache.idleRun = run
            }
        }
        let earlyStop: Int64? = ordered ? wanted.map { $0.addingReportingOverflow(offset).overflow ? Int64.max : $0 + offset } : nil
        // A full scan that reads to the end keeps only the rows its leading comparisons cannot
        // rule out on the stored bytes (ScanPrefilter); with a LIMIT it may stop early, and
        // the usual scan is cheaper then.
        if let table, earlyStop == nil, compiled.join == nil { path = try prefiltered(path, table, fastFilter) }
        // Result columns are evaluated only for the rows returned, as in SQLite (a row skipped
        // by OFFSET or cut by LIMIT never raises an error); ORDER BY keys for every row.
        // DISTINCT needs every row's columns to tell duplicates, so it evaluates them all; so
        // does a sort without LIMIT (SQLite sorts whole result rows then). With a sort and a
        // LIMIT, SQLite evaluates the rows that enter its bounded sorter as they are scanned, a
        // superset of those returned: only an error of a row not returned can differ.
        let deferOutputs = !distinct && (ordered || wanted != nil)
        // Rows go straight to the sink when they come in their final order: with the OFFSET
        // skipped and the LIMIT counted as they are made (the deferred path), or with neither
        // (the other path cuts its window after the scan).
        let streaming = sink != nil && ordered && (deferOutputs || (offset == 0 && wanted == nil))

        let step = SelectRowStep(database: self, compiled: compiled, context: context, run: run, sink: sink,
                                 fastFilter: fastFilter, rowFilter: rowFilter, ordered: ordered, distinct: distinct,
                                 deferOutputs: deferOutputs, streaming: streaming, offset: offset, wanted: wanted,
                                 earlyStop: earlyStop)

        if isAggregate {
            let aggregation = Aggregation(aggregates: aggregates, groupBy: groupBy)
            func accumulate() throws { try aggregation.add(context) }
            if let join = compiled.join {
                try join.run(self, context) { try accumulate(); return true }
            } else if let table {
                try visitRows(table, path, columns: compiled.columns, context) {
                    if try !step.passes() { return true }
                    try accumulate()
                    return true
                }
            } else if try whereClause.map({ try Evaluator.keeps($0, context) }) ?? true {
                try accumulate()
            }
            if aggregation.groups.isEmpty && groupBy.isEmpty {
                let columnCount = compiled.join?.width ?? table?.definition.columns.count ?? 0
                aggregation.groups.append(Group(accumulators: aggregates.map(Accumulator.init), row: .filled(.null, count: columnCount), rowid: 0))
                aggregation.groupKeys.append([])
            }
            let groups = aggregation.groups, groupKeys = aggregation.groupKeys
            // Groups come out in GROUP BY key order, as SQLite's sorter gives them.
            var order = Array(groups.indices)
            if !groupBy.isEmpty { order.sort { SQLValues.compare(groupKeys[$0], groupKeys[$1]) < 0 } }
            for g in order {
                context.row = groups[g].row
                context.rowid = groups[g].rowid
                context.aggregates = try groups[g].accumulators.map { try $0.result() }
                if let having, try !Evaluator.keeps(having, context) { continue }
                if try !step.emit() { break }
            }
        } else if let join = compiled.join {
            try join.run(self, context) { try step.emit() }
        } else if let table {
            try visitRows(table, path, columns: compiled.columns, context) { try step.visit() }
        } else {
            if try whereClause.map({ try Evaluator.keeps($0, context) }) ?? true {
                _ = try step.emit()
            }
        }

        if deferOutputs {
            if !ordered {
                // Sort the rows by their keys, keep the LIMIT/OFFSET window, then evaluate
                // the result columns of the rows kept.
                let window = LimitWindow.window(count: run.deferred.count, offset: offset, limit: wanted)
                for index in LimitWindow.sortedIndices(run.sortKeys, descending: orderBy.map(\.descending))[window] {
                    run.deferred[index].restore(into: context)
                    run.rows.append(try step.evaluateOutputs())
                }
            }
            return SQLResult(columns: names, values: run.rows, lastInsertRowId: lastInsertRowIdValue, isQuery: true)
        }
        if !ordered && !orderBy.isEmpty {
            let directions = orderBy.map(\.descending)
            var indices = Array(run.rows.indices)
            indices.sort { a, b in
                for (i, descending) in directions.enumerated() {
                    let c = SQLValues.compare(run.sortKeys[a][i], run.sortKeys[b][i])
                    if c != 0 { return descending ? c > 0 : c < 0 }
                }
                return a < b
            }
            run.rows = indices.map { run.rows[$0] }
        }
        if offset > 0 || wanted != nil {
            let start = Int(min(offset, Int64(run.rows.count)))
            let end = wanted.map { $0 >= Int64(run.rows.count - start) ? run.rows.count : start + Int($0) } ?? run.rows.count
            run.rows = Array(run.rows[start..<end])
        }
        return SQLResult(columns: names, values: run.rows, lastInsertRowId: lastInsertRowIdValue, isQuery: true)
    }

    /// The result column whose alias is `name`, unless the name is a column of the table
    /// (SQLite resolves ORDER BY and GROUP BY identifiers against aliases first).
    func aliasPosition(_ name: String, _ select: SelectStatement, _ resolver: Resolver) -> Int? {
        let lowered = name.lowercased()
        var position = 0
        for column in select.columns {
            switch column.kind {
            case .all: position += (try? resolver.star(column.qualifier).count) ?? 0
            case .expression:
                if column.alias?.lowercased() == lowered { return position }
                position += 1
            }
        }
        return nil
    }

    func ordinal(_ n: Int) -> String { Self.ordinal(n) }

    /// `n` as SQLite writes a term's place in its messages: 1st, 2nd, 3rd, 4th, ..., 11th, 21st.
    static func ordinal(_ n: Int) -> String {
        let suffix: String
        switch (n % 100, n % 10) {
        case (11...13, _): suffix = "th"
        case (_, 1): suffix = "st"
        case (_, 2): suffix = "nd"
        case (_, 3): suffix = "rd"
        default: suffix = "th"
        }
        return "\(n)\(suffix)"
    }
}

/// The mutable state of one SELECT's run. A class: the row closures capture it once, and its
/// fields, unlike local variables captured by those closures, take no dynamic exclusivity
/// check per access (`swift_beginAccess`: about 500 instructions a row under callgrind). Used
/// by one statement on one thread.
final class SelectRun {
    @exclusivity(unchecked) var rows: [[SQLValue]] = []
    @exclusivity(unchecked) var sortKeys: [[SQLValue]] = []
    @exclusivity(unchecked) var seen = Set<ValueKey>()
    /// Rows skipped for the OFFSET so far (rows in final order).
    @exclusivity(unchecked) var skipped: Int64 = 0
    /// Rows kept for a sort with a LIMIT, their columns evaluated after it.
    @exclusivity(unchecked) var deferred: [LimitWindow.DeferredRow] = []
    /// Result rows made so far (kept or handed to a sink).
    @exclusivity(unchecked) var produced: Int64 = 0
    /// A streamed row's columns, evaluated into one buffer that is reused while the sink keeps
    /// no copy of it.
    @exclusivity(unchecked) var outputBuffer: [SQLValue] = []

    /// Back to a new run's state, holding on to no value (the result has them): the output
    /// buffer keeps its size, its values set to NULL (a text or blob of the last row is not
    /// kept alive by the cached statement).
    func clear() {
        rows = []
        sortKeys = []
        if !seen.isEmpty { seen = [] }
        skipped = 0
        deferred = []
        produced = 0
        // Not entered when empty (a run that streamed whole rows never filled it): entering
        // the shared empty array for writing allocates a buffer of its own.
        if !outputBuffer.isEmpty {
            outputBuffer.withUnsafeMutableBufferPointer { buffer in
                for i in buffer.indices { buffer[i] = .null }
            }
        }
    }
}
