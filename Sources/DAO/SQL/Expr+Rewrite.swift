extension Expr {
    /// The expression with each node that `replace` answers replaced; a node it does not
    /// answer (nil) is rebuilt from its children, each treated the same way. A replaced node is
    /// not descended into. Subqueries are leaves: a caller that must reach into them answers
    /// `.subquery`, `.exists` and `.inSelect` itself.
    /// - Throws: what `replace` throws.
    func replacingNodes(_ replace: (Expr) throws -> Expr?) rethrows -> Expr {
        if let replaced = try replace(self) { return replaced }
        switch self {
        case .literal, .parameter, .column, .slot, .aggregate, .outerSlot, .subquery, .exists: return self
        case .inSelect(let e, let plan, let negated): return .inSelect(try e.replacingNodes(replace), plan, negated: negated)
        case .unary(let op, let e): return .unary(op, try e.replacingNodes(replace))
        case .binary(let op, let a, let b): return .binary(op, try a.replacingNodes(replace), try b.replacingNodes(replace))
        case .isNull(let e, let negated): return .isNull(try e.replacingNodes(replace), negated: negated)
        case .inList(let e, let items, let negated):
            return .inList(try e.replacingNodes(replace), try items.map { try $0.replacingNodes(replace) }, negated: negated)
        case .between(let a, let b, let c, let negated):
            return .between(try a.replacingNodes(replace), try b.replacingNodes(replace), try c.replacingNodes(replace), negated: negated)
        case .like(let a, let b, let c, let negated):
            return .like(try a.replacingNodes(replace), try b.replacingNodes(replace), escape: try c.map { try $0.replacingNodes(replace) },
                         negated: negated)
        case .glob(let a, let b, let negated): return .glob(try a.replacingNodes(replace), try b.replacingNodes(replace), negated: negated)
        case .caseWhen(let base, let whens, let otherwise):
            return .caseWhen(base: try base.map { try $0.replacingNodes(replace) },
                             whens: try whens.map { (try $0.0.replacingNodes(replace), try $0.1.replacingNodes(replace)) },
                             otherwise: try otherwise.map { try $0.replacingNodes(replace) })
        case .cast(let e, let typeName): return .cast(try e.replacingNodes(replace), typeName: typeName)
        case .function(let name, let args, let distinct, let star):
            return .function(name: name, args: try args.map { try $0.replacingNodes(replace) }, distinct: distinct, star: star)
        }
    }
}

extension SelectStatement {
    /// The statement with `transform` applied to each expression of this core: result columns,
    /// WHERE, GROUP BY, HAVING, ORDER BY, LIMIT, OFFSET and the ON of its FROM items. Its FROM
    /// subqueries, compound terms and WITH tables are left to the caller.
    /// - Throws: what `transform` throws.
    func mappingExpressions(_ transform: (Expr) throws -> Expr) rethrows -> SelectStatement {
        var select = self
        select.columns = try columns.map { column in
            guard case .expression(let expr) = column.kind else { return column }
            var column = column
            column.kind = .expression(try transform(expr))
            return column
        }
        select.whereClause = try whereClause.map(transform)
        select.groupBy = try groupBy.map(transform)
        select.having = try having.map(transform)
        select.orderBy = try orderBy.map { OrderTerm(expr: try transform($0.expr), descending: $0.descending) }
        select.limit = try limit.map(transform)
        select.offset = try offset.map(transform)
        select.from = try from.map { item in
            var item = item
            item.on = try item.on.map(transform)
            return item
        }
        return select
    }
}
