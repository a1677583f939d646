/// The WHERE terms a `Planner` can use, analysed once: which column each constrains, how, and
/// the operand expressions whose values key the access path. What depends only on the
/// statement (term shapes, affinities, whether an operand is constant) is decided here; the
/// Planner evaluates the operands per call. A join's inner loop keeps one of these per level, so
/// planning it for each row of the loops around it costs the operands' evaluation, not a walk
/// of the expression tree.
struct PlannerTerms {
    /// How a term constrains its column.
    enum Kind {
        /// `column op operand` (`=`, `IS`, `<`, `<=`, `>`, `>=`), with the column on the left.
        case compare(BinaryOperator, operand: Expr, comparison: Affinity?)
        /// `column IN (items)`.
        case inList([Expr], comparison: Affinity?)
        /// `column IN (SELECT ...)`, uncorrelated.
        case inSelect(SubqueryPlan, comparison: Affinity?)
        /// `column BETWEEN low AND high`.
        case between(low: Expr, Affinity?, high: Expr, Affinity?)
        /// `column LIKE pattern` on a TEXT column, without ESCAPE.
        case like(pattern: Expr)
    }

    struct Shape {
        /// The table slot constrained (-1: the rowid).
        let slot: Int
        let kind: Kind
        /// The WHERE conjunct it came from (`conjuncts` index).
        var term = 0
        /// The collation its comparison uses: an index serves it only with that collation.
        var collation: Collation = .binary
    }

    let shapes: [Shape]
    /// The WHERE clause's conjuncts, in order.
    let conjuncts: [Expr]
    /// `[shapes[0].term]` when there is one shape: the consumed list of a lone term's path,
    /// made once here rather than by every run that plans with it.
    let firstTermOnly: [Int]

    /// The operand of the first rowid equality (`rowid = x`, `rowid IS x`, with the rowid slot
    /// -1 or the table's INTEGER PRIMARY KEY column `rowidColumn`) and its comparison affinity:
    /// the Planner's first choice whenever such a term exists, so a caller may look the row up
    /// directly (`rowid(of:)`) instead of planning.
    /// `term` is its conjunct, which a row read by that rowid satisfies (unless the operand is
    /// replace()'s result, whose storage class a comparison keeps: then nil).
    func rowidEquality(rowidColumn: Int?) -> (operand: Expr, comparison: Affinity?, term: Int?)? {
        for shape in shapes where shape.slot == -1 || shape.slot == rowidColumn {
            if case .compare(let op, let operand, let comparison) = shape.kind, op == .equal || op == .isOp {
                return (operand, comparison, operand.keepsStorageClass ? nil : shape.term)
            }
        }
        return nil
    }

    /// The operand and comparison affinity when the terms are one `column = operand` and
    /// nothing else: the Planner then picks the same index for every non-NULL value (or the
    /// rowid), so a caller that saw its choice once may build the path from the value alone.
    var singleEquality: (operand: Expr, comparison: Affinity?)? {
        guard shapes.count == 1, case .compare(.equal, let operand, let comparison) = shapes[0].kind else { return nil }
        return (operand, comparison)
    }

    /// The rowid an equality operand's value names, as the Planner reads it: an integer, or a
    /// real holding one exactly, after the comparison affinity; nil when it names no row (NULL,
    /// a fraction, a text or blob that stays one).
    static func rowid(of value: SQLValue, comparison: Affinity?) -> Int64? {
        switch SQLValues.apply(comparison, to: value) {
        case .integer(let i): return i
        case .real(let r): return SQLValues.exactInteger(r)
        default: return nil
        }
    }

    /// The usable shapes among the conjuncts of `whereClause`: a bare column compared with
    /// constants, under a comparison that keeps the index order (`Planner.indexOrderHolds`).
    init(_ whereClause: Expr?) {
        var shapes: [Shape] = []
        let conjuncts = whereClause?.conjuncts ?? []
        for (number, term) in conjuncts.enumerated() {
            let before = shapes.count
            // The comparison's collation is on its left operand (Resolver.collate); the column
            // and its operand are read without their collation marks.
            var collation = Collation.binary
            defer {
                if shapes.count > before {
                    shapes[before].term = number
                    shapes[before].collation = collation
                }
            }
            switch PlannerTerms.unmarked(term, &collation) {
            case .binary(let op, let l, let r) where PlannerTerms.isComparison(op):
                var column = l, other = r, operation = op
                if case .slot = l {} else if case .slot = r {
                    column = r; other = l
                    operation = PlannerTerms.mirrored(op)
                }
                guard case .slot(let slot, let affinity) = column, other.isConstant else { continue }
                let comparison = SQLValues.comparisonAffinity(affinity, other.affinity)
                guard Planner.indexOrderHolds(column: affinity, comparison: comparison) else { continue }
                shapes.append(Shape(slot: slot, kind: .compare(operation, operand: other, comparison: comparison)))
            case .inList(.slot(let slot, let affinity), let items, negated: false):
                guard items.allSatisfy(\.isConstant) else { continue }
                shapes.append(Shape(slot: slot, kind: .inList(items, comparison: SQLValues.comparing(affinity))))
            case .inSelect(.slot(let slot, let affinity), let plan, negated: false) where !plan.correlated:
                let comparison = SQLValues.comparisonAffinity(affinity, plan.firstAffinity)
                guard Planner.indexOrderHolds(column: affinity, comparison: comparison) else { continue }
                shapes.append(Shape(slot: slot, kind: .inSelect(plan, comparison: comparison)))
            case .between(.slot(let slot, let affinity), let low, let high, negated: false):
                guard low.isConstant, high.isConstant else { continue }
                let lowComparison = SQLValues.comparisonAffinity(affinity, low.affinity)
                let highComparison = SQLValues.comparisonAffinity(affinity, high.affinity)
                guard Planner.indexOrderHolds(column: affinity, comparison: lowComparison),
                      Planner.indexOrderHolds(column: affinity, comparison: highComparison) else { continue }
                shapes.append(Shape(slot: slot, kind: .between(low: low, lowComparison, high: high, highComparison)))
            case .like(.slot(let slot, .text), let pattern, escape: nil, negated: false):
                guard pattern.isConstant else { continue }
                shapes.append(Shape(slot: slot, kind: .like(pattern: pattern)))
            default: continue
            }
        }
        self.shapes = shapes
        self.conjuncts = conjuncts
        firstTermOnly = shapes.count == 1 ? [shapes[0].term] : []
    }

    /// The WHERE clause without the conjuncts `consumed` (an access path enforces them): the
    /// others joined by AND in their order; nil when none is left. Dropping a conjunct that is
    /// true for every row changes neither the result nor which operands get evaluated.
    func residual(without consumed: [Int]) -> Expr? {
        var result: Expr?
        for (number, term) in conjuncts.enumerated() where !consumed.contains(number) {
            result = result.map { .binary(.and, $0, term) } ?? term
        }
        return result
    }

    /// `term` with the collation marks taken off its compared operands (the column side and
    /// the value side), and the collation its comparison uses in `collation`.
    static func unmarked(_ term: Expr, _ collation: inout Collation) -> Expr {
        func strip(_ expr: Expr) -> Expr {
            var expr = expr
            while case .function = expr, let (inner, _, _) = Parser.marked(expr) { expr = inner }
            return expr
        }
        switch term {
        case .binary(let op, let l, let r) where isComparison(op):
            collation = Parser.comparisonCollation(l)
            return .binary(op, strip(l), strip(r))
        case .inList(let l, let items, let negated):
            collation = Parser.comparisonCollation(l)
            return .inList(strip(l), items, negated: negated)
        case .inSelect(let l, let plan, let negated):
            collation = Parser.comparisonCollation(l)
            return .inSelect(strip(l), plan, negated: negated)
        case .between(let l, let low, let high, let negated):
            collation = Parser.comparisonCollation(l)
            return .between(strip(l), strip(low), strip(high), negated: negated)
        default:
            return term
        }
    }

    private static func isComparison(_ op: BinaryOperator) -> Bool {
        switch op {
        case .equal, .isOp, .less, .lessEqual, .greater, .greaterEqual: return true
        default: return false
        }
    }

    /// The operator with its operands swapped (`a < b` is `b > a`).
    private static func mirrored(_ op: BinaryOperator) -> BinaryOperator {
        switch op {
        case .less: return .greater
        case .lessEqual: return .greaterEqual
        case .greater: return .less
        case .greaterEqual: return .lessEqual
        default: return op
        }
    }
}
