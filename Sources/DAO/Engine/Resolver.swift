/// An aggregate call of a query, resolved.
struct AggregateCall {
    var name: String
    var args: [Expr]
    var distinct: Bool
    var star: Bool
    /// The argument's collation: min() and max() compare by it, DISTINCT tells values apart by it.
    var collation: Collation = .binary

    /// Whether `other` computes the same thing (same function, arguments and flags).
    func isSameCall(as other: AggregateCall) -> Bool {
        name == other.name && distinct == other.distinct && star == other.star && collation == other.collation
            && args.count == other.args.count && String(describing: args) == String(describing: other.args)
    }
}

/// One source of a query's FROM clause as name resolution sees it: its columns sit at
/// `offset...` of the query's row, its rowid at `rowidSlot` (-1: the context's rowid).
struct ScopeSource {
    var name: String
    var alias: String?
    /// Names and affinities (nil: none, as a subquery column that is not a column reference).
    var columns: [(name: String, affinity: Affinity?)]
    var offset: Int
    /// The row slot of its rowid (nil: it has none, as a subquery in FROM).
    var rowidSlot: Int?
    /// The column that aliases the rowid (INTEGER PRIMARY KEY), for result column names.
    var rowidAlias: Int?
    /// Right-hand columns of USING/NATURAL: found only when qualified, left out of `*`.
    var hidden: Set<Int> = []
    /// Whether a qualifier may be the table name even when an alias is given (one table).
    var lenient = false
    /// Each column's collation (empty: every column BINARY).
    var collations: [Collation] = []
    /// The names result columns show for its columns, when not their names (a window
    /// function subquery's lifted columns: SQL/WindowRewrite.swift).
    var displayNames: [String]? = nil

    /// The collation of column `c`.
    func collation(ofColumn c: Int) -> Collation { c < collations.count ? collations[c] : .binary }

    func answers(to qualifier: String) -> Bool {
        let q = qualifier.lowercased()
        if let alias { return alias.lowercased() == q || (lenient && name.lowercased() == q) }
        return name.lowercased() == q
    }

    /// The expression reading column `c`: a slot, under a unary + when it has no affinity (as
    /// SQLite's `+x`, which reads the value and drops the affinity).
    func expr(column c: Int) -> Expr {
        guard let affinity = columns[c].affinity else { return .unary(.plus, .slot(offset + c, .blob)) }
        return .slot(offset + c, affinity)
    }

    func columnIndex(_ name: String) -> Int? {
        let lowered = name.lowercased()
        return columns.firstIndex { $0.name.lowercased() == lowered }
    }
}

/// Resolves parsed expressions against the sources of a query (one table, several joined, or
/// none) and the queries around it: column names to row slots with their affinity (or to
/// `.outerSlot` for an enclosing query's column), aggregate calls to accumulator slots,
/// subqueries to compiled plans; checks function names and arity.
struct Resolver {
    let table: TableState?
    let alias: String?
    /// The sources of this query (FROM order).
    var sources: [ScopeSource] = []
    /// The sources of the enclosing queries, innermost first (correlated subqueries).
    var outer: [[ScopeSource]] = []
    /// The database subqueries compile against (nil: subqueries are refused here).
    var database: SQLDatabase?
    /// Slots of enclosing rows read, by depth (1 = the query directly around).
    var outerReads: [Int: Set<Int>] = [:]
    /// Aggregates found so far, when aggregates are allowed where resolving.
    var aggregates: [AggregateCall] = []
    /// Result column aliases (lower-cased) and their parsed expressions: SQLite lets WHERE,
    /// GROUP BY, HAVING and ORDER BY name them when no column has that name.
    var aliases: [String: Expr] = [:]
    private var expanding: Set<String> = []
    /// Explicit `COLLATE` markers resolved so far: a comparison tells from it whether an operand
    /// it just resolved holds one, without walking the operand (a chain of comparisons 1,000
    /// deep would walk its left side at every level).
    var explicitCollationsMade = 0

    init(table: TableState?, alias: String? = nil) {
        self.table = table
        self.alias = alias
        if let table {
            sources = [ScopeSource(name: table.name, alias: alias,
                                   columns: table.definition.columns.map { ($0.name, $0.affinity) }, offset: 0,
                                   rowidSlot: table.hidesRowid ? nil : -1, rowidAlias: table.definition.rowidColumn,
                                   collations: table.definition.columns.map(\.collation))]
        }
    }

    static let rowidNames: Set<String> = ["rowid", "oid", "_rowid_"]

    /// Finds a column in `sources`: its source and column position (nil position: the rowid).
    /// - Throws: "ambiguous column name" when two sources have it unqualified.
    static func find(_ name: String, qualifier: String?, in sources: [ScopeSource]) throws -> (source: Int, column: Int?)? {
        if let qualifier {
            guard let s = sources.firstIndex(where: { $0.answers(to: qualifier) }) else { return nil }
            if let c = sources[s].columnIndex(name) { return (s, c) }
            if rowidNames.contains(name.lowercased()), sources[s].rowidSlot != nil { return (s, nil) }
            return nil
        }
        var found: (Int, Int?)?
        for (s, source) in sources.enumerated() {
            guard let c = source.columnIndex(name), !source.hidden.contains(c) else { continue }
            if found != nil { throw SQLExecutionError("ambiguous column name: \(name)") }
            found = (s, c)
        }
        if let found { return found }
        if rowidNames.contains(name.lowercased()), sources.count == 1, sources[0].rowidSlot != nil { return (0, nil) }
        return nil
    }

    /// Whether an unqualified name is a column (or rowid) of this query's sources.
    func hasColumn(_ name: String) -> Bool {
        sources.contains { $0.columnIndex(name) != nil }
            || (Resolver.rowidNames.contains(name.lowercased()) && sources.count == 1 && sources[0].rowidSlot != nil)
    }

    /// The slot of a column name: an index in the row, or -1 for the rowid.
    func slot(of name: String, qualifier: String?) throws -> (Int, Affinity) {
        let shown = qualifier.map { "\($0).\(name)" } ?? name
        guard let (s, column) = try Resolver.find(name, qualifier: qualifier, in: sources) else { throw DAOError.noSuchColumn(shown) }
        let source = sources[s]
        if let column { return (source.offset + column, source.columns[column].affinity ?? .blob) }
        return (source.rowidSlot ?? -1, .integer)
    }

    /// A column reference: this query's slot, or an enclosing query's.
    mutating func reference(_ name: String, qualifier: String?) throws -> Expr {
        if let (s, column) = try Resolver.find(name, qualifier: qualifier, in: sources) {
            let source = sources[s]
            if let column { return source.expr(column: column) }
            return .slot(source.rowidSlot ?? -1, .integer)
        }
        for (level, scope) in outer.enumerated() {
            guard let (s, column) = try Resolver.find(name, qualifier: qualifier, in: scope) else { continue }
            let source = scope[s]
            let index = column.map { source.offset + $0 } ?? (source.rowidSlot ?? -1)
            outerReads[level + 1, default: []].insert(index)
            guard let column else { return .outerSlot(depth: level + 1, index: index, .integer) }
            guard let affinity = source.columns[column].affinity else {
                return .unary(.plus, .outerSlot(depth: level + 1, index: index, .blob))
            }
            return .outerSlot(depth: level + 1, index: index, affinity)
        }
        throw DAOError.noSuchColumn(qualifier.map { "\($0).\(name)" } ?? name)
    }

    /// SQLite's name of a result column that is a bare column reference: the declared name.
    func displayName(_ name: String, qualifier: String?) -> String? {
        guard let found = try? Resolver.find(name, qualifier: qualifier, in: sources) else { return nil }
        let (s, column) = found
        if let column { return sources[s].displayNames?[column] ?? sources[s].columns[column].name }
        return sources[s].rowidAlias.map { sources[s].columns[$0].name }
    }

    /// The columns `*` (qualifier nil) or `t.*` stands for: names and slots.
    func star(_ qualifier: String?) throws -> [(String, Expr)] {
        var result: [(String, Expr)] = []
        if let qualifier {
            guard let source = sources.first(where: { $0.answers(to: qualifier) }) else {
                throw SQLExecutionError("no such table: \(qualifier)")
            }
            for (c, column) in source.columns.enumerated() { result.append((column.name, source.expr(column: c))) }
            return result
        }
        guard !sources.isEmpty else { throw SQLExecutionError("no tables specified") }
        for source in sources {
            for (c, column) in source.columns.enumerated() where !source.hidden.contains(c) {
                result.append((column.name, source.expr(column: c)))
            }
        }
        return result
    }

    /// Resolves `expr`. `allowAggregates` is where aggregates may appear (result columns,
    /// HAVING, ORDER BY); elsewhere they are "misuse of aggregate".
    mutating func resolve(_ expr: Expr, allowAggregates: Bool) throws -> Expr {
        switch expr {
        case .literal, .parameter, .slot, .aggregate: return expr
        case .column(let qualifier, let name):
            if qualifier == nil, let aliased = aliases[name.lowercased()], !expanding.contains(name.lowercased()),
               !hasColumn(name) {
                expanding.insert(name.lowercased())
                defer { expanding.remove(name.lowercased()) }
                return try resolve(aliased, allowAggregates: allowAggregates)
            }
            return try reference(name, qualifier: qualifier)
        case .outerSlot: return expr
        case .subquery(let plan):
            let compiled = try compile(plan, firstRowOnly: true, scalar: true)
            if compiled.columnCount != 1 {
                throw SQLExecutionError("sub-select returns \(compiled.columnCount) columns - expected 1")
            }
            return .subquery(compiled)
        case .exists(let plan, let negated): return .exists(try compile(plan, firstRowOnly: true), negated: negated)
        case .inSelect(let left, let plan, let negated):
            return try resolveInSelect(left, plan, negated: negated, allowAggregates: allowAggregates)
        case .unary(let op, let inner): return .unary(op, try resolve(inner, allowAggregates: allowAggregates))
        // The comparisons take their collation in helpers of their own (Resolver+Collation.swift):
        // in a debug build every local of this switch sits in its frame, and a tree 1,000 deep
        // recurses through it 1,000 times.
        case .binary(let op, let l, let r): return try resolveBinary(op, l, r, allowAggregates: allowAggregates)
        case .isNull(let inner, let negated): return .isNull(try resolve(inner, allowAggregates: allowAggregates), negated: negated)
        case .inList(let l, let items, let negated): return try resolveInList(l, items, negated: negated, allowAggregates: allowAggregates)
        case .between(let a, let b, let c, let negated): return try resolveBetween(a, b, c, negated: negated, allowAggregates: allowAggregates)
        case .like(let a, let b, let escape, let negated):
            return .like(try resolve(a, allowAggregates: allowAggregates), try resolve(b, allowAggregates: allowAggregates),
                         escape: try escape.map { try resolve($0, allowAggregates: allowAggregates) }, negated: negated)
        case .glob(let a, let b, let negated):
            return .glob(try resolve(a, allowAggregates: allowAggregates), try resolve(b, allowAggregates: allowAggregates), negated: negated)
        case .caseWhen(let base, let whens, let otherwise):
            return try resolveCase(base, whens, otherwise, allowAggregates: allowAggregates)
        case .cast(let inner, let typeName): return .cast(try resolve(inner, allowAggregates: allowAggregates), typeName: typeName)
        case .function(let name, let args, let distinct, let star):
            let isAggregate = ScalarFunctions.aggregateNames.contains(name) && !((name == "min" || name == "max") && args.count > 1)
            if isAggregate {
                guard allowAggregates else { throw SQLExecutionError("misuse of aggregate function \(name)()") }
                switch name {
                case "count": if args.count > 1 || (star && !args.isEmpty) { throw arity(name) }
                case "group_concat": if args.isEmpty || args.count > 2 { throw arity(name) }
                default: if args.count != 1 { throw arity(name) }
                }
                if distinct && args.count != 1 {
                    throw SQLExecutionError("DISTINCT aggregates must have exactly one argument")
                }
                let resolvedArgs = try args.map { try resolve($0, allowAggregates: false) }
                if !outer.isEmpty, resolvedArgs.contains(where: { $0.readsOuterOnly }) {
                    throw DAOError.unsupported("aggregate of an enclosing query's column in a subquery")
                }
                let call = AggregateCall(name: name, args: resolvedArgs, distinct: distinct, star: star || args.isEmpty,
                                         collation: resolvedArgs.first.flatMap { collation(of: $0) } ?? .binary)
                // The same call written twice (`SELECT b, min(c) ... ORDER BY min(c)`) is one
                // aggregate, as in SQLite: a lone min() or max() then still picks the row that
                // bare columns read.
                if let same = aggregates.firstIndex(where: { $0.isSameCall(as: call) }) { return .aggregate(same) }
                aggregates.append(call)
                return .aggregate(aggregates.count - 1)
            }
            if Parser.marked(expr) != nil {   // `x COLLATE name`, or a marked value (a trigger's NEW.x)
                if name == Parser.collateFunctionName { explicitCollationsMade += 1 }
                return .function(name: name, args: [try resolve(args[0], allowAggregates: allowAggregates), args[1]], distinct: false, star: false)
            }
            if name == Parser.rowValueFunctionName {   // a row value other than in a comparison of two
                throw DAOError.unsupported("row value")
            }
            if name == TriggerRaise.functionName {   // RAISE(...) in a trigger's body (Triggers.swift)
                return .function(name: name, args: try args.map { try resolve($0, allowAggregates: false) }, distinct: false, star: false)
            }
            guard ScalarFunctions.names.contains(name) else { throw DAOError.unsupported("function \(name)") }
            if star { throw SQLExecutionError("wrong number of arguments to function \(name)()") }
            if distinct { throw SQLExecutionError("DISTINCT aggregates must have exactly one argument") }
            try ScalarFunctions.check(name, args)
            return .function(name: name, args: try args.map { try resolve($0, allowAggregates: allowAggregates) }, distinct: false, star: false)
        }
    }

    /// Compiles a subquery with this query's sources visible to it (as its depth 1), and
    /// notes what it reads of the queries around.
    /// - Throws: `DAOError.unsupported("subquery")` where no database is at hand (defaults).
    ///
    /// A scalar subquery without ORDER BY answers the first row of a scan whose order SQLite
    /// chooses (it may read a covering index): it runs whole and must give one value, or it is
    /// refused when it runs (`scalar` and no LIMIT), or refused now (with a LIMIT, unless it is
    /// an aggregate of one row).
    mutating func compile(_ plan: SubqueryPlan, firstRowOnly: Bool, scalar: Bool = false) throws -> SubqueryPlan {
        guard let database else { throw DAOError.unsupported("subquery") }
        var statement = plan.statement
        let hasFrom = statement.table != nil || !statement.from.isEmpty
        let unordered = scalar && statement.orderBy.isEmpty && hasFrom
        let checksSingleValue = unordered && statement.limit == nil && statement.offset == nil
        if firstRowOnly && !checksSingleValue {
            // SQLite runs a scalar or EXISTS subquery as LIMIT 1 (LIMIT X becomes LIMIT X<>0).
            statement.limit = statement.limit.map { .binary(.notEqual, $0, .literal(.integer(0))) } ?? .literal(.integer(1))
        }
        let compiled = try database.compileSelect(statement, outer: [sources] + outer)
        for (depth, slots) in compiled.outerReads where depth > 1 { outerReads[depth - 1, default: []].formUnion(slots) }
        let oneRow = compiled.isAggregate && compiled.groupBy.isEmpty
        if unordered && !checksSingleValue && !oneRow {
            throw DAOError.unsupported("scalar subquery with LIMIT and no ORDER BY")
        }
        let made = SubqueryPlan(statement: statement, compiled: compiled, schemaVersion: database.schemaVersion)
        made.checksSingleValue = checksSingleValue && !oneRow
        return made
    }

    private func arity(_ name: String) -> SQLExecutionError { SQLExecutionError("wrong number of arguments to function \(name)()") }
}

extension Expr {
    /// Whether the expression reads an enclosing query's column and none of its own query.
    var readsOuterOnly: Bool {
        var slots = Set<Int>()
        collectSlots(into: &slots)
        return slots.isEmpty && containsOuterSlot
    }

    /// Whether an `.outerSlot` is inside (not counting inside subqueries).
    var containsOuterSlot: Bool {
        if case .outerSlot = self { return true }
        return children.contains { $0.containsOuterSlot }
    }

    /// Whether a subquery is inside.
    var containsSubquery: Bool {
        switch self {
        case .subquery, .exists, .inSelect: return true
        default: return children.contains { $0.containsSubquery }
        }
    }

    /// Whether the expression reads no row of its query (literals, parameters and operations on them).
    var isConstant: Bool {
        switch self {
        // An enclosing query's column is fixed while this query runs.
        case .literal, .parameter, .outerSlot: return true
        case .slot, .column, .aggregate: return false
        case .subquery(let plan), .exists(let plan, _): return !plan.correlated
        case .inSelect(let e, let plan, _): return !plan.correlated && e.isConstant
        case .unary(_, let e), .cast(let e, _), .isNull(let e, _): return e.isConstant
        case .binary(_, let a, let b), .glob(let a, let b, _): return a.isConstant && b.isConstant
        case .like(let a, let b, let c, _): return a.isConstant && b.isConstant && (c?.isConstant ?? true)
        case .between(let a, let b, let c, _): return a.isConstant && b.isConstant && c.isConstant
        case .inList(let a, let items, _): return a.isConstant && items.allSatisfy(\.isConstant)
        case .caseWhen(let base, let whens, let otherwise):
            return (base?.isConstant ?? true) && whens.allSatisfy { $0.0.isConstant && $0.1.isConstant } && (otherwise?.isConstant ?? true)
        case .function(_, let args, _, _): return args.allSatisfy(\.isConstant)
        }
    }

    /// Whether any aggregate is inside.
    var containsAggregate: Bool {
        switch self {
        case .aggregate: return true
        case .literal, .parameter, .slot, .column, .outerSlot, .subquery, .exists: return false
        case .inSelect(let e, _, _): return e.containsAggregate
        case .unary(_, let e), .cast(let e, _), .isNull(let e, _): return e.containsAggregate
        case .binary(_, let a, let b), .glob(let a, let b, _): return a.containsAggregate || b.containsAggregate
        case .like(let a, let b, let c, _): return a.containsAggregate || b.containsAggregate || (c?.containsAggregate ?? false)
        case .between(let a, let b, let c, _): return a.containsAggregate || b.containsAggregate || c.containsAggregate
        case .inList(let a, let items, _): return a.containsAggregate || items.contains(where: \.containsAggregate)
        case .caseWhen(let base, let whens, let otherwise):
            return (base?.containsAggregate ?? false) || whens.contains { $0.0.containsAggregate || $0.1.containsAggregate }
                || (otherwise?.containsAggregate ?? false)
        case .function(_, let args, _, _): return args.contains(where: \.containsAggregate)
        }
    }

    /// Adds the row slots (column positions; -1 for the rowid) the expression reads.
    func collectSlots(into slots: inout Set<Int>) {
        switch self {
        case .slot(let index, _): slots.insert(index)
        case .literal, .parameter, .column, .aggregate, .outerSlot: return
        case .subquery(let plan), .exists(let plan, _): slots.formUnion(plan.outerSlots)
        case .inSelect(let e, let plan, _): e.collectSlots(into: &slots); slots.formUnion(plan.outerSlots)
        case .unary(_, let e), .cast(let e, _), .isNull(let e, _): e.collectSlots(into: &slots)
        case .binary(_, let a, let b), .glob(let a, let b, _):
            a.collectSlots(into: &slots); b.collectSlots(into: &slots)
        case .like(let a, let b, let c, _):
            a.collectSlots(into: &slots); b.collectSlots(into: &slots); c?.collectSlots(into: &slots)
        case .between(let a, let b, let c, _):
            a.collectSlots(into: &slots); b.collectSlots(into: &slots); c.collectSlots(into: &slots)
        case .inList(let a, let items, _):
            a.collectSlots(into: &slots); for item in items { item.collectSlots(into: &slots) }
        case .caseWhen(let base, let whens, let otherwise):
            base?.collectSlots(into: &slots)
            for (w, t) in whens { w.collectSlots(into: &slots); t.collectSlots(into: &slots) }
            otherwise?.collectSlots(into: &slots)
        case .function(_, let args, _, _): for arg in args { arg.collectSlots(into: &slots) }
        }
    }

    /// The AND-ed terms of a WHERE clause.
    var conjuncts: [Expr] {
        if case .binary(.and, let a, let b) = self { return a.conjuncts + b.conjuncts }
        return [self]
    }
}
