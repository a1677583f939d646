/// A single-table scan's WHERE clause made ready for one run of its statement. The conjuncts
/// that compare a column with a constant (`col op ?`, `? op col`, `col BETWEEN ? AND ?`, with
/// literals or parameters) have the constant evaluated and converted to the comparison's
/// affinity once, so a row costs the column read, its own conversion and one comparison;
/// `Evaluator.compare` worked out both operands' affinities, their conversions and the
/// operator for every row (about 1,000 instructions a row for a BETWEEN). Other conjuncts go
/// to the Evaluator as before.
///
/// The conjuncts run in the WHERE clause's order, as SQLite runs its WHERE terms: a false or
/// NULL one ends the row (SQLite's terms jump to the next row on either), so those after it
/// are not evaluated and cannot raise an error.
struct RowFilter {
    /// `column op constant`, with everything but the row's value decided.
    struct Comparison {
        /// The row slot (-1: the rowid).
        let slot: Int
        let op: BinaryOperator
        /// The comparison's affinity (`SQLValues.comparisonAffinity`), nil for none.
        let affinity: Affinity?
        /// Whether the column's value takes no affinity (`Expr.keepsStorageClass`).
        let keepColumn: Bool
        /// The constant, converted to `affinity`; nil when it is NULL (no row matches).
        let constant: SQLValue?
    }

    enum Conjunct {
        case comparisons([Comparison])   // all must hold (BETWEEN is two)
        case expression(Expr)
    }

    let conjuncts: [Conjunct]

    /// Nil when `expr` is one conjunct that is not a column-constant comparison (the Evaluator
    /// then runs it).
    init?(_ expr: Expr, _ context: RowContext) {
        var parts: [Expr] = []
        Self.flatten(expr, into: &parts)
        var conjuncts: [Conjunct] = []
        var anyFast = false
        for part in parts {
            if let comparisons = Self.comparisons(part, context) {
                conjuncts.append(.comparisons(comparisons))
                anyFast = true
            } else {
                conjuncts.append(.expression(part))
            }
        }
        // Several conjuncts without a fast one still go one by one, for the WHERE terms' rule
        // on NULL above (the Evaluator's AND evaluates its right side after a NULL left one).
        guard anyFast || parts.count > 1 else { return nil }
        self.conjuncts = conjuncts
    }

    /// Whether the current row of `context` passes (as `Evaluator.keeps` would say).
    /// - Throws: what a conjunct evaluated by the Evaluator throws.
    @inline(__always)
    func matches(_ context: RowContext) throws -> Bool {
        for conjunct in conjuncts {
            switch conjunct {
            case .comparisons(let comparisons):
                for comparison in comparisons where Self.holds(comparison, context) != true { return false }
            case .expression(let expr):
                if try !Evaluator.keeps(expr, context) { return false }
            }
        }
        return true
    }

    /// The comparison for the current row: nil when either side is NULL.
    @inline(__always)
    private static func holds(_ comparison: Comparison, _ context: RowContext) -> Bool? {
        guard let constant = comparison.constant else { return nil }
        let value = comparison.slot < 0 ? SQLValue.integer(context.rowid) : context.row[comparison.slot]
        if case .null = value { return nil }
        let left = comparison.affinity.map { SQLValues.apply($0, to: value, unlessKept: comparison.keepColumn) } ?? value
        let c = SQLValues.compare(left, constant)
        switch comparison.op {
        case .equal: return c == 0
        case .notEqual: return c != 0
        case .less: return c < 0
        case .lessEqual: return c <= 0
        case .greater: return c > 0
        case .greaterEqual: return c >= 0
        default: return nil
        }
    }

    /// The conjuncts of an AND tree, left to right.
    private static func flatten(_ expr: Expr, into parts: inout [Expr]) {
        if case .binary(.and, let left, let right) = expr {
            flatten(left, into: &parts)
            flatten(right, into: &parts)
        } else {
            parts.append(expr)
        }
    }

    /// `expr` as comparisons of a column with constants, or nil.
    private static func comparisons(_ expr: Expr, _ context: RowContext) -> [Comparison]? {
        switch expr {
        case .binary(let op, let left, let right) where mirrored(op) != nil:
            if let comparison = comparison(op, column: left, constant: right, context) { return [comparison] }
            if let flipped = mirrored(op), let comparison = comparison(flipped, column: right, constant: left, context) { return [comparison] }
            return nil
        case .between(let subject, let low, let high, negated: false):
            guard let lower = comparison(.greaterEqual, column: subject, constant: low, context),
                  let upper = comparison(.lessEqual, column: subject, constant: high, context) else { return nil }
            return [lower, upper]
        default:
            return nil
        }
    }

    private static func comparison(_ op: BinaryOperator, column: Expr, constant: Expr, _ context: RowContext) -> Comparison? {
        guard case .slot(let slot, _) = column else { return nil }
        switch constant {
        case .literal, .parameter: break
        default: return nil
        }
        guard let value = try? Evaluator.evaluate(constant, context) else { return nil }
        // As Evaluator.compare: the affinity both operands take, each unless it keeps its class.
        let affinity = SQLValues.comparisonAffinity(column.affinity, constant.affinity)
        let converted: SQLValue?
        if case .null = value { converted = nil } else {
            converted = affinity.map { SQLValues.apply($0, to: value, unlessKept: constant.keepsStorageClass) } ?? value
        }
        return Comparison(slot: slot, op: op, affinity: affinity, keepColumn: column.keepsStorageClass, constant: converted)
    }

    /// The operator with its operands swapped (`a < b` is `b > a`); nil for other operators.
    private static func mirrored(_ op: BinaryOperator) -> BinaryOperator? {
        switch op {
        case .equal: return .equal
        case .notEqual: return .notEqual
        case .less: return .greater
        case .lessEqual: return .greaterEqual
        case .greater: return .less
        case .greaterEqual: return .lessEqual
        default: return nil
        }
    }
}
