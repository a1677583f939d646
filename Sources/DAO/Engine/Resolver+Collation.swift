/// Which collation an expression and a comparison use, by SQLite's rules (datatype3.html,
/// "Collating Sequences"; `sqlite3ExprCollSeq`, `sqlite3BinaryCompareCollSeq`):
/// - an explicit `COLLATE` anywhere in an operand (the leftmost found, outermost first) wins,
///   the left operand's before the right's;
/// - else a column operand (through unary `+` and CAST) gives its column's collation, the left
///   operand's before the right's;
/// - else BINARY.
extension Resolver {
    /// The collation of a resolved expression: its explicit `COLLATE`, or its column's; nil when
    /// it has neither (a literal, a computed value, a rowid). `explicitInside` false: the caller
    /// knows no explicit `COLLATE` is inside, so none is looked for. O(size of the expression).
    func collation(of expr: Expr, explicitInside: Bool = true) -> Collation? {
        var current = expr
        while true {
            switch current {
            case .slot(let index, _):
                return Resolver.columnCollation(index, in: sources)
            case .outerSlot(let depth, let index, _):
                return depth >= 1 && depth <= outer.count ? Resolver.columnCollation(index, in: outer[depth - 1]) : nil
            case .unary(.plus, let inner), .cast(let inner, _):
                current = inner
            case .function(Parser.columnCollationFunctionName, _, _, _):
                return Parser.marked(current)?.1
            default:
                if let (_, collation) = Parser.collated(current) { return collation }
                // SQLite walks down to the first operand holding an explicit COLLATE, which is
                // the first one a left-to-right walk of the tree meets.
                return explicitInside ? current.firstExplicitCollation : nil
            }
        }
    }

    /// The collation a comparison of `left` with `right` uses. `leftExplicit`/`rightExplicit`:
    /// whether an explicit `COLLATE` is inside each (nil: look).
    func comparisonCollation(_ left: Expr, _ right: Expr, leftExplicit: Bool? = nil, rightExplicit: Bool? = nil) -> Collation {
        let leftHas = leftExplicit ?? left.hasExplicitCollation
        if leftHas { return collation(of: left) ?? .binary }
        let rightHas = rightExplicit ?? right.hasExplicitCollation
        if rightHas { return collation(of: right) ?? .binary }
        return collation(of: left, explicitInside: false) ?? collation(of: right, explicitInside: false) ?? .binary
    }

    /// Resolves `expr`, and tells whether an explicit `COLLATE` came out in it.
    mutating func resolveNotingCollation(_ expr: Expr, allowAggregates: Bool) throws -> (Expr, explicit: Bool) {
        let before = explicitCollationsMade
        let resolved = try resolve(expr, allowAggregates: allowAggregates)
        return (resolved, explicitCollationsMade > before)
    }

    /// The collation of the column at row slot `slot` of `sources`; nil for a rowid slot.
    static func columnCollation(_ slot: Int, in sources: [ScopeSource]) -> Collation? {
        for source in sources where slot >= source.offset && slot < source.offset + source.columns.count {
            return source.collation(ofColumn: slot - source.offset)
        }
        return nil
    }

    /// `operand` marked with the collation its comparison uses (`Parser.comparisonCollation`
    /// reads it back), unless it already carries exactly that one (BINARY needs no mark).
    static func collate(_ operand: Expr, _ collation: Collation) -> Expr {
        guard Parser.comparisonCollation(operand) != collation else { return operand }
        return .function(name: Parser.comparedByFunctionName, args: [operand, .literal(.integer(Int64(collation.rawValue)))],
                         distinct: false, star: false)
    }
}

/// The resolution of the expressions that compare, each marking the operand that carries the
/// comparison's collation (`collate`), so the evaluator, the IN-subquery sets and the Planner
/// read the same one.
extension Resolver {
    mutating func resolveBinary(_ op: BinaryOperator, _ l: Expr, _ r: Expr, allowAggregates: Bool) throws -> Expr {
        let (left, leftExplicit) = try resolveNotingCollation(l, allowAggregates: allowAggregates)
        let (right, rightExplicit) = try resolveNotingCollation(r, allowAggregates: allowAggregates)
        guard op.isComparison else { return .binary(op, left, right) }
        let collation = comparisonCollation(left, right, leftExplicit: leftExplicit, rightExplicit: rightExplicit)
        return .binary(op, Resolver.collate(left, collation), right)
    }

    /// SQLite compares the items under the collation of the left operand, except that it reads
    /// `x IN (constant)` as `x = constant` (a collation on that item then counts too).
    mutating func resolveInList(_ l: Expr, _ items: [Expr], negated: Bool, allowAggregates: Bool) throws -> Expr {
        let (left, leftExplicit) = try resolveNotingCollation(l, allowAggregates: allowAggregates)
        let resolvedItems = try items.map { try resolve($0, allowAggregates: allowAggregates) }
        let single = resolvedItems.count == 1 && resolvedItems[0].isConstant && !resolvedItems[0].containsOuterSlot
        let collation = single ? comparisonCollation(left, resolvedItems[0], leftExplicit: leftExplicit)
            : collation(of: left, explicitInside: leftExplicit) ?? .binary
        return .inList(Resolver.collate(left, collation), resolvedItems, negated: negated)
    }

    /// `x BETWEEN y AND z` is `x >= y AND x <= z`, each comparison with its own collation.
    mutating func resolveBetween(_ a: Expr, _ b: Expr, _ c: Expr, negated: Bool, allowAggregates: Bool) throws -> Expr {
        let (subject, subjectExplicit) = try resolveNotingCollation(a, allowAggregates: allowAggregates)
        let (low, lowExplicit) = try resolveNotingCollation(b, allowAggregates: allowAggregates)
        let (high, highExplicit) = try resolveNotingCollation(c, allowAggregates: allowAggregates)
        let lowCollation = comparisonCollation(subject, low, leftExplicit: subjectExplicit, rightExplicit: lowExplicit)
        let highCollation = comparisonCollation(subject, high, leftExplicit: subjectExplicit, rightExplicit: highExplicit)
        if lowCollation == highCollation {
            return .between(Resolver.collate(subject, lowCollation), low, high, negated: negated)
        }
        let both = Expr.binary(.and, .binary(.greaterEqual, Resolver.collate(subject, lowCollation), low),
                               .binary(.lessEqual, Resolver.collate(subject, highCollation), high))
        return negated ? .unary(.not, both) : both
    }

    /// `CASE x WHEN y` compares as `x = y`; each candidate carries its comparison's collation.
    mutating func resolveCase(_ base: Expr?, _ whens: [(Expr, Expr)], _ otherwise: Expr?, allowAggregates: Bool) throws -> Expr {
        let resolvedBase = try base.map { try resolveNotingCollation($0, allowAggregates: allowAggregates) }
        var resolvedWhens: [(Expr, Expr)] = []
        for (when, then) in whens {
            var (candidate, candidateExplicit) = try resolveNotingCollation(when, allowAggregates: allowAggregates)
            if let (base, baseExplicit) = resolvedBase {
                candidate = Resolver.collate(candidate, comparisonCollation(base, candidate, leftExplicit: baseExplicit,
                                                                            rightExplicit: candidateExplicit))
            }
            resolvedWhens.append((candidate, try resolve(then, allowAggregates: allowAggregates)))
        }
        return .caseWhen(base: resolvedBase?.0, whens: resolvedWhens, otherwise: try otherwise.map { try resolve($0, allowAggregates: allowAggregates) })
    }

    /// `x IN (SELECT y ...)`, compared as `x = y`: an explicit COLLATE on x, then on y, then
    /// x's column's collation, then y's. Of a compound, y is the rightmost select's column
    /// (SQLite 3.40).
    /// - Throws: "sub-select returns n columns - expected 1".
    mutating func resolveInSelect(_ left: Expr, _ plan: SubqueryPlan, negated: Bool, allowAggregates: Bool) throws -> Expr {
        let (resolvedLeft, leftExplicit) = try resolveNotingCollation(left, allowAggregates: allowAggregates)
        let compiled = try compile(plan, firstRowOnly: false)
        if compiled.columnCount != 1 {
            throw SQLExecutionError("sub-select returns \(compiled.columnCount) columns - expected 1")
        }
        var y = compiled.box?.select?.outputCollations.first ?? nil
        if let last = plan.statement.compound.last?.select, let core = try? compile(SubqueryPlan(last), firstRowOnly: false) {
            y = core.box?.select?.outputCollations.first ?? nil
        }
        let collation: Collation
        if leftExplicit { collation = self.collation(of: resolvedLeft) ?? .binary }
        else if let y, y.explicit { collation = y.collation }
        else { collation = self.collation(of: resolvedLeft, explicitInside: false) ?? y?.collation ?? .binary }
        return .inSelect(Resolver.collate(resolvedLeft, collation), compiled, negated: negated)
    }
}

extension Expr {
    /// Whether an explicit `COLLATE` is inside (subqueries not looked into): SQLite's EP_Collate.
    var hasExplicitCollation: Bool { firstExplicitCollation != nil }

    /// The collation of the first explicit `COLLATE` a left-to-right, outermost-first walk of
    /// the tree meets (subqueries not looked into), or nil. O(size), without recursion.
    var firstExplicitCollation: Collation? {
        var pending: [Expr] = [self]
        while let expr = pending.popLast() {
            if let (_, collation) = Parser.collated(expr) { return collation }
            pending.append(contentsOf: expr.children.reversed())
        }
        return nil
    }
}
