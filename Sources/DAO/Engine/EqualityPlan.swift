/// The Planner's choice for a single-table query whose only usable WHERE term is an equality on
/// an indexed column that is not the rowid (`col = ?`, `col IS ?`, `col IN (...)`,
/// `col IN (SELECT ...)`), kept with the compiled statement so later runs build the index ranges
/// from the operand values without planning.
///
/// With one such term and no ORDER BY the Planner's step 2 picks the same index for every
/// value (the first unique one that starts with the column, else the first one that does), and
/// the terms it consumes depend only on the term's shape: only the keys change from run to
/// run. A `= NULL` / `IS NULL` operand gives the Planner no predicate at all, so such a run
/// plans again (`Planner.choose`) instead.
struct EqualityChoice {
    /// The index chosen (`TableState.indexes`).
    let index: Int
    /// The conjuncts its path enforces (`PlannerTerms.conjuncts` indexes).
    let consumed: [Int]

    /// The choice to keep after `Planner.choose` returned `choice` for `terms` with
    /// `orderBy`, or nil when the plan may depend on the values.
    static func keep(_ choice: (AccessPath, ordered: Bool, consumed: [Int]), terms: PlannerTerms,
                     orderBy: [(slot: Int, descending: Bool)]?, table: TableState) -> EqualityChoice? {
        guard orderBy?.isEmpty == true, terms.shapes.count == 1, Planner.isEqualityKind(terms.shapes[0].kind),
              case .indexRanges(let index, _, reverse: false) = choice.0, table.indexes.indices.contains(index) else { return nil }
        let slot = terms.shapes[0].slot
        guard slot >= 0, slot != table.definition.rowidColumn, table.indexes[index].schema.columns.first == slot else { return nil }
        return EqualityChoice(index: index, consumed: choice.consumed)
    }
}

extension Planner {
    /// Whether the Planner reads `kind` as an equality predicate (`Predicate.equal`).
    static func isEqualityKind(_ kind: PlannerTerms.Kind) -> Bool {
        switch kind {
        case .compare(let op, _, _): return op == .equal || op == .isOp
        case .inList, .inSelect: return true
        case .between, .like: return false
        }
    }

    /// The values an equality-like term admits, as `predicates` computes them (operands
    /// evaluated, NULLs left out, the comparison affinity applied); nil when the term gives no
    /// predicate (a `= NULL` operand) or is not equality-like.
    func equalityValues(_ kind: PlannerTerms.Kind) throws -> [SQLValue]? {
        switch kind {
        case .compare(let op, let operand, let comparison) where op == .equal || op == .isOp:
            let raw = try Evaluator.evaluate(operand, context)
            if case .null = raw { return nil }
            return [SQLValues.apply(comparison, to: raw)]
        case .inList(let items, let comparison):
            var values: [SQLValue] = []
            values.reserveCapacity(items.count)
            for item in items {
                let raw = try Evaluator.evaluate(item, context)
                if case .null = raw { continue }
                values.append(SQLValues.apply(comparison, to: raw))
            }
            return values
        case .inSelect(let plan, let comparison):
            // An uncorrelated IN (SELECT ...): its values, with the IN's affinity, as keys.
            var values: [SQLValue] = []
            for row in try SubqueryRunner.rows(plan, context) {
                guard let raw = row.first else { continue }
                if case .null = raw { continue }
                values.append(SQLValues.apply(comparison, to: raw))
            }
            return values
        default:
            return nil
        }
    }

    /// The path of a kept `EqualityChoice` for this run's values: one single-key range per
    /// distinct value, in index order (as the Planner's step 2 makes them); nil when the
    /// Planner must choose again.
    func path(_ kept: EqualityChoice, _ terms: PlannerTerms) throws -> AccessPath? {
        guard terms.shapes.count == 1, table.indexes.indices.contains(kept.index),
              let values = try equalityValues(terms.shapes[0].kind) else { return nil }
        // The key order of the index's first column (IndexState.compareKeys on one column).
        let descending = table.indexes[kept.index].schema.descending.first ?? false
        let collation = table.indexes[kept.index].schema.collations.first ?? .binary
        func compare(_ a: SQLValue, _ b: SQLValue) -> Int {
            let c = collation.compare(a, b)
            return descending ? -c : c
        }
        var ranges: [KeyRange] = []
        ranges.reserveCapacity(values.count)
        if values.count == 1 {
            ranges.append(KeyRange(lower: values, upper: values))
        } else if values.count > 1 {
            let sorted = values.sorted { compare($0, $1) < 0 }
            var last: SQLValue?
            for value in sorted where last.map({ compare($0, value) != 0 }) ?? true {
                ranges.append(KeyRange(lower: [value], upper: [value]))
                last = value
            }
        }
        return .indexRanges(index: kept.index, ranges: ranges, reverse: false)
    }
}
