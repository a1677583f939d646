/// An aggregate call of a query, resolved.
struct AggregateCall {
    var name: String
    var args: [Expr]
    var distinct: Bool
    var star: Bool
}

/// Resolves parsed expressions against one table (or none): column names to row slots with
/// their affinity, aggregate calls to accumulator slots, and checks function names and arity.
struct Resolver {
    let table: TableState?
    let alias: String?
    /// Aggregates found so far, when aggregates are allowed where resolving.
    var aggregates: [AggregateCall] = []
    /// Result column aliases (lower-cased) and their parsed expressions: SQLite lets WHERE,
    /// GROUP BY, HAVING and ORDER BY name them when no column has that name.
    var aliases: [String: Expr] = [:]
    private var expanding: Set<String> = []

    init(table: TableState?, alias: String? = nil) {
        self.table = table
        self.alias = alias
    }

    static let rowidNames: Set<String> = ["rowid", "oid", "_rowid_"]

    /// The slot of a column name: an index in the row, or -1 for the rowid.
    func slot(of name: String, qualifier: String?) throws -> (Int, Affinity) {
        let shown = qualifier.map { "\($0).\(name)" } ?? name
        guard let table else { throw DAOError.noSuchColumn(shown) }
        if let qualifier {
            let q = qualifier.lowercased()
            guard q == table.name.lowercased() || q == alias?.lowercased() else { throw DAOError.noSuchColumn(shown) }
        }
        if let index = table.definition.columnIndex(name) {
            return (index, table.definition.columns[index].affinity)
        }
        if !table.hidesRowid, Resolver.rowidNames.contains(name.lowercased()) { return (-1, .integer) }
        throw DAOError.noSuchColumn(shown)
    }

    /// Resolves `expr`. `allowAggregates` is where aggregates may appear (result columns,
    /// HAVING, ORDER BY); elsewhere they are "misuse of aggregate".
    mutating func resolve(_ expr: Expr, allowAggregates: Bool) throws -> Expr {
        switch expr {
        case .literal, .parameter, .slot, .aggregate: return expr
        case .column(let qualifier, let name):
            if qualifier == nil, let aliased = aliases[name.lowercased()], !expanding.contains(name.lowercased()),
               table?.definition.columnIndex(name) == nil, !Resolver.rowidNames.contains(name.lowercased()) || table == nil {
                expanding.insert(name.lowercased())
                defer { expanding.remove(name.lowercased()) }
                return try resolve(aliased, allowAggregates: allowAggregates)
            }
            let (index, affinity) = try slot(of: name, qualifier: qualifier)
            return .slot(index, affinity)
        case .unary(let op, let inner): return .unary(op, try resolve(inner, allowAggregates: allowAggregates))
        case .binary(let op, let l, let r):
            return .binary(op, try resolve(l, allowAggregates: allowAggregates), try resolve(r, allowAggregates: allowAggregates))
        case .isNull(let inner, let negated): return .isNull(try resolve(inner, allowAggregates: allowAggregates), negated: negated)
        case .inList(let l, let items, let negated):
            return .inList(try resolve(l, allowAggregates: allowAggregates),
                           try items.map { try resolve($0, allowAggregates: allowAggregates) }, negated: negated)
        case .between(let a, let b, let c, let negated):
            return .between(try resolve(a, allowAggregates: allowAggregates), try resolve(b, allowAggregates: allowAggregates),
                            try resolve(c, allowAggregates: allowAggregates), negated: negated)
        case .like(let a, let b, let escape, let negated):
            return .like(try resolve(a, allowAggregates: allowAggregates), try resolve(b, allowAggregates: allowAggregates),
                         escape: try escape.map { try resolve($0, allowAggregates: allowAggregates) }, negated: negated)
        case .glob(let a, let b, let negated):
            return .glob(try resolve(a, allowAggregates: allowAggregates), try resolve(b, allowAggregates: allowAggregates), negated: negated)
        case .caseWhen(let base, let whens, let otherwise):
            return .caseWhen(base: try base.map { try resolve($0, allowAggregates: allowAggregates) },
                             whens: try whens.map { (try resolve($0.0, allowAggregates: allowAggregates), try resolve($0.1, allowAggregates: allowAggregates)) },
                             otherwise: try otherwise.map { try resolve($0, allowAggregates: allowAggregates) })
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
                aggregates.append(AggregateCall(name: name, args: resolvedArgs, distinct: distinct, star: star || args.isEmpty))
                return .aggregate(aggregates.count - 1)
            }
            if name == TriggerRaise.functionName {   // RAISE(...) in a trigger's body (Triggers.swift)
                return .function(name: name, args: try args.map { try resolve($0, allowAggregates: false) }, distinct: false, star: false)
            }
            guard ScalarFunctions.names.contains(name) else { throw DAOError.unsupported("function \(name)") }
            if star { throw SQLExecutionError("wrong number of arguments to function \(name)()") }
            if distinct { throw SQLExecutionError("DISTINCT aggregates must have exactly one argument") }
            try ScalarFunctions.checkArity(name, args.count)
            return .function(name: name, args: try args.map { try resolve($0, allowAggregates: allowAggregates) }, distinct: false, star: false)
        }
    }

    private func arity(_ name: String) -> SQLExecutionError { SQLExecutionError("wrong number of arguments to function \(name)()") }
}

extension Expr {
    /// Whether the expression reads no row (literals, parameters and operations on them).
    var isConstant: Bool {
        switch self {
        case .literal, .parameter: return true
        case .slot, .column, .aggregate: return false
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
        case .literal, .parameter, .slot, .column: return false
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
        case .literal, .parameter, .column, .aggregate: return
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
