/// Which collation an expression and a comparison use, by SQLite's rules (datatype3.html,
/// "Collating Sequences"; `sqlite3ExprCollSeq`, `sqlite3BinaryCompareCollSeq`):
/// - an explicit `COLLATE` anywhere in an operand (the leftmost found, outermost first) wins,
///   the left operand's before the right's;
/// - else a column operand (through unary `+` and CAST) gives its column's collation, the left
///   operand's before the right's;
/// - else BINARY.
extension Resolver {
    /// The collation of a resolved expression: its explicit `COLLATE`, or its column's; nil when
    /// it has neither (a literal, a computed value, a rowid).
    func collation(of expr: Expr) -> Collation? {
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
                guard let child = current.children.first(where: \.hasExplicitCollation) else { return nil }
                current = child
            }
        }
    }

    /// The collation a comparison of `left` with `right` uses.
    func comparisonCollation(_ left: Expr, _ right: Expr) -> Collation {
        if left.hasExplicitCollation { return collation(of: left) ?? .binary }
        if right.hasExplicitCollation { return collation(of: right) ?? .binary }
        return collation(of: left) ?? collation(of: right) ?? .binary
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

extension Expr {
    /// Whether an explicit `COLLATE` is inside (subqueries not looked into): SQLite's EP_Collate.
    var hasExplicitCollation: Bool {
        if Parser.collated(self) != nil { return true }
        return children.contains { $0.hasExplicitCollation }
    }
}
