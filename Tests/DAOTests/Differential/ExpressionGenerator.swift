/// Random expressions of the subset over one table's columns.
struct ExpressionGenerator {
    var columns: [String]
    /// Where literals that become `:name` parameters go (nil: never use parameters).
    var parameters: ParameterBag? = nil
    /// Whether leaves sometimes carry an explicit `COLLATE` (the collation cases only, so the
    /// other cases keep the statements their seeds always gave).
    var explicitCollations = false

    /// `literal` as written, or sometimes as a named parameter bound to its value.
    func maybeParameter(_ literal: String, random: inout SeededRandom, chance: Double) -> String {
        guard let parameters, random.chance(chance) else { return literal }
        return parameters.add(literal: literal)
    }

    /// A scalar expression (no aggregates) at most `depth` levels deep.
    func scalar(_ depth: Int, random: inout SeededRandom) -> String {
        if depth <= 0 || random.chance(0.3) { return leaf(random: &random) }
        let d = depth - 1
        switch random.int(0...17) {
        case 0, 1:
            let op = random.pick(["+", "-", "*", "/", "%"])
            if op == "%", OpenFindings.avoid("F8") {
                // F8: `%` with text operands.
                return "(CAST(\(scalar(d, random: &random)) AS REAL) % CAST(\(scalar(d, random: &random)) AS REAL))"
            }
            return "(\(scalar(d, random: &random)) \(op) \(scalar(d, random: &random)))"
        case 2:
            return "(\(scalar(d, random: &random)) || \(scalar(d, random: &random)))"
        case 3, 4:
            return comparison(d, random: &random)
        case 5:
            return "(\(condition(d, random: &random)) \(random.pick(["AND", "OR"])) \(condition(d, random: &random)))"
        case 6:
            // A space after the sign: "--17" would start a comment.
            var forms = ["(- \(scalar(d, random: &random)))", "(NOT \(scalar(d, random: &random)))"]
            // F10: unary + keeps a column's affinity.
            if !OpenFindings.avoid("F10") { forms.append("(+ \(scalar(d, random: &random)))") }
            return random.pick(forms)
        case 7, 8:
            return function(d, random: &random)
        case 9:
            return caseExpression(d, random: &random)
        case 10:
            // F12: CAST(... AS NUMERIC) of integral values of 2^51 and more.
            let types = OpenFindings.avoid("F12") ? ["INTEGER", "REAL", "TEXT", "BLOB"] : ["INTEGER", "REAL", "TEXT", "BLOB", "NUMERIC"]
            let cast = "CAST(\(scalar(d, random: &random)) AS \(random.pick(types)))"
            // F15: a CAST's affinity in comparisons; unary + strips it.
            return OpenFindings.avoid("F15") ? "(+ \(cast))" : cast
        case 11:
            return "(\(scalar(d, random: &random)) IS\(random.chance(0.5) ? " NOT" : "") NULL)"
        case 12:
            // F7: columns inside the IN list.
            let list = (0..<random.int(1...4)).map { _ in
                OpenFindings.avoid("F7") ? ValueGenerator.literal(random: &random) : leafOrLiteral(random: &random)
            }.joined(separator: ", ")
            return "(\(scalar(d, random: &random))\(random.chance(0.3) ? " NOT" : "") IN (\(list)))"
        case 13:
            return "(\(scalar(d, random: &random))\(random.chance(0.3) ? " NOT" : "") BETWEEN \(leaf(random: &random)) AND \(leaf(random: &random)))"
        case 14:
            let escape = random.chance(0.2) ? " ESCAPE '\\'" : ""
            return "(\(patternOperand(d, random: &random))\(random.chance(0.3) ? " NOT" : "") LIKE \(ValueGenerator.likePattern(random: &random))\(escape))"
        case 15:
            return "(\(patternOperand(d, random: &random)) GLOB \(ValueGenerator.globPattern(random: &random)))"
        case 16:
            return "(\(scalar(d, random: &random)) IS\(random.chance(0.5) ? " NOT" : "") \(leaf(random: &random)))"
        default:
            return "(\(scalar(d, random: &random)))"
        }
    }

    /// A boolean-ish expression for WHERE and HAVING.
    func condition(_ depth: Int, random: inout SeededRandom) -> String {
        if random.chance(0.3) { return indexablePredicate(random: &random) }
        if random.chance(0.55) || depth <= 0 { return comparison(max(depth - 1, 0), random: &random) }
        return scalar(depth, random: &random)
    }

    /// A predicate of the shapes a planner serves from an index (column against literals:
    /// equality, ranges, IN, prefix LIKE, IS NULL), sometimes two joined by AND or OR.
    func indexablePredicate(random: inout SeededRandom) -> String {
        func one() -> String {
            let column = random.pick(columns)
            let value = maybeParameter(ValueGenerator.literal(random: &random), random: &random, chance: 0.3)
            switch random.int(0...7) {
            case 0, 1: return "\(column) \(random.pick(["=", "==", "IS"])) \(value)"
            case 2, 3: return "\(column) \(random.pick(["<", "<=", ">", ">="])) \(value)"
            case 4: return "\(column) BETWEEN \(value) AND \(ValueGenerator.literal(random: &random))"
            case 5: return "\(column) IN (\(value), \(ValueGenerator.literal(random: &random)))"
            case 6: return "\(OpenFindings.avoid("F4") ? "CAST(\(column) AS TEXT)" : column) LIKE \(random.pick(["'a%'", "'1%'", "'A%'", "'é%'", "'%'"]))"
            default: return "\(column) IS\(random.chance(0.5) ? " NOT" : "") NULL"
            }
        }
        if random.chance(0.3) { return "(\(one()) \(random.pick(["AND", "OR"])) \(one()))" }
        return one()
    }

    func comparison(_ depth: Int, random: inout SeededRandom) -> String {
        let op = random.pick(["=", "==", "!=", "<>", "<", "<=", ">", ">="])
        return "(\(scalar(depth, random: &random)) \(op) \(scalar(depth, random: &random)))"
    }

    /// The left operand of LIKE and GLOB.
    func patternOperand(_ d: Int, random: inout SeededRandom) -> String {
        let operand = scalar(d, random: &random)
        // F4: LIKE and GLOB with a blob operand.
        return OpenFindings.avoid("F4") ? "CAST(\(operand) AS TEXT)" : operand
    }

    /// A GROUP BY or ORDER BY term: never an integer literal, which SQLite reads as a result
    /// column's position.
    func orderTerm(_ depth: Int, random: inout SeededRandom) -> String {
        let term = random.chance(0.6) ? random.pick(columns) : scalar(depth, random: &random)
        return Self.isIntegerLiteral(term) ? random.pick(columns) : term
    }

    /// Whether `term` is an integer literal, maybe signed or parenthesized.
    static func isIntegerLiteral(_ term: String) -> Bool {
        // SQLite also folds `x AND 0` to the constant 0 before reading ORDER BY terms, so such a
        // term is a position too ("1st ORDER BY term out of range"): avoided as well.
        if term.contains(" AND 0)") || term.contains("(0 AND ") { return true }
        let digits = term.filter { !"()+- ".contains($0) }
        return !digits.isEmpty && digits.allSatisfy(\.isNumber)
    }

    func leaf(random: inout SeededRandom) -> String {
        let leaf = random.chance(0.6) ? random.pick(columns) : maybeParameter(ValueGenerator.literal(random: &random), random: &random, chance: 0.1)
        guard explicitCollations, random.chance(0.15) else { return leaf }
        return "(\(leaf) COLLATE \(random.pick(["NOCASE", "RTRIM", "BINARY"])))"
    }

    func leafOrLiteral(random: inout SeededRandom) -> String {
        random.chance(0.2) ? random.pick(columns) : ValueGenerator.literal(random: &random)
    }

    func function(_ d: Int, random: inout SeededRandom) -> String {
        let x = scalar(d, random: &random)
        switch random.int(0...23) {
        case 0: return "length(\(x))"
        case 1: return "lower(\(x))"
        case 2: return "upper(\(x))"
        // F5: substr of an empty blob.
        case 3: return "substr(\(OpenFindings.avoid("F5") ? "CAST(\(x) AS TEXT)" : x), \(ValueGenerator.smallInteger(random: &random)))"
        case 4: return "substr(\(OpenFindings.avoid("F5") ? "CAST(\(x) AS TEXT)" : x), \(ValueGenerator.smallInteger(random: &random)), \(ValueGenerator.smallInteger(random: &random)))"
        // F17: abs() overflowing on the right of an OR in a value (SQLite evaluates it).
        case 5: return OpenFindings.avoid("F17") ? "length(\(x))" : "abs(\(x))"
        case 6: return "coalesce(\(x), \(leaf(random: &random))\(random.chance(0.5) ? ", \(leaf(random: &random))" : ""))"
        case 7: return "ifnull(\(x), \(leaf(random: &random)))"
        case 8: return "typeof(\(x))"
        case 9: return random.chance(0.5) ? "trim(\(x))" : "trim(\(x), \(random.pick(["'a'", "' 1'", "'x'", "''"])))"
        case 10: return "instr(\(x), \(leaf(random: &random)))"
        case 11:
            // F6, F19: replace with an empty (or NUL-led) pattern.
            let pattern = OpenFindings.avoid("F6") || OpenFindings.avoid("F19") ? random.pick(["'a'", "'1'", "'ab'", "' '", "'.'"]) : leaf(random: &random)
            // F14: replace of a blob with an empty pattern gives the blob as text.
            return "replace(\(OpenFindings.avoid("F14") ? "CAST(\(x) AS TEXT)" : x), \(pattern), \(leaf(random: &random)))"
        case 12: return "round(\(x))"
        case 13: return "round(\(x), \(random.int(-1...4)))"
        // Issue 15 item 6.
        case 15: return "nullif(\(x), \(leaf(random: &random)))"
        case 16: return "iif(\(condition(d, random: &random)), \(x), \(leaf(random: &random)))"
        case 17: return random.chance(0.5) ? "hex(\(x))" : "quote(\(x))"
        case 18: return random.chance(0.5) ? "unicode(\(x))" : "\(random.pick(["ltrim", "rtrim"]))(\(x))"
        case 19: return "printf(\(random.pick(["'%d'", "'%5.2f|%s'", "'%x %e'", "'%-6s|%g'", "'%q'", "'%!.3g %i'"])), \(x), \(leaf(random: &random)))"
        case 20: return "max(\(x), \(leaf(random: &random)), \(leaf(random: &random)))"
        case 21: return "\(random.pick(["date", "datetime", "julianday", "unixepoch"]))(\(x)\(random.chance(0.5) ? ", " + random.pick(["'+1 day'", "'start of month'", "'unixepoch'", "'-3 hours'"]) : ""))"
        case 22: return "strftime('%Y-%m-%d %H:%M:%f %j %w', \(x))"
        case 23: return "min(\(x), \(leaf(random: &random)))"
        default: return "length(CAST(\(x) AS TEXT))"
        }
    }

    func caseExpression(_ d: Int, random: inout SeededRandom) -> String {
        var text = "CASE"
        let simple = random.chance(0.4)
        if simple { text += " \(scalar(d, random: &random))" }
        for _ in 0..<random.int(1...3) {
            let when = simple ? leafOrLiteral(random: &random) : condition(d, random: &random)
            text += " WHEN \(when) THEN \(scalar(d, random: &random))"
        }
        if random.chance(0.6) { text += " ELSE \(scalar(d, random: &random))" }
        return text + " END"
    }

    /// An aggregate whose result does not depend on the order rows are visited in: sum and avg
    /// only over bounded integers (exact, no overflow), group_concat only through its length.
    func aggregate(random: inout SeededRandom) -> String {
        let x = scalar(1, random: &random)
        let bounded = random.pick(["length(\(x))", "(CAST(\(x) AS INTEGER) % 1000)", "(\(x) IS NULL)", "(typeof(\(x)) = 'text')"])
        switch random.int(0...10) {
        case 0: return "count(*)"
        case 1: return "count(\(x))"
        case 2: return "sum(\(bounded))"
        case 3: return "avg(\(bounded))"
        // min/max keep either of two equal values (0 and -0.0, 1 and 1.0) by scan order, so
        // their argument is a column (only a typeless column can hold such a pair) or text.
        case 4, 5:
            let argument = random.chance(0.5) ? random.pick(columns) : random.pick(["lower(\(x))", "typeof(\(x))", "CAST(length(\(x)) AS TEXT)"])
            return "\(random.pick(["min", "max"]))(\(argument))"
        // Over values without NULs: SQLite's length() of text stops at the first NUL, so the
        // position of a blob's NUL in the concatenation (an order) would show.
        case 6: return "length(group_concat(\(random.pick(["typeof(\(x))", "length(\(x))", "CAST(\(x) AS INTEGER)"]))))"
        case 7: return "length(group_concat(length(\(x)), \(random.pick(["'-'", "''", "', '"]))))"
        // sum/total/avg over a mix of integers, reals, texts (numeric or not), blobs and NULLs
        // (issue 25: sum()'s type follows its inputs). No sum may depend on the order rows are
        // added in (1e308 and -1e308, 0.01 and 12, or an integer overflow before a real would):
        // numbers are mapped to small dyadic values and texts and blobs kept only up to 3
        // characters or bytes ('12', '1e3', '0.5', 'abc', x'3132'), whose values add exactly.
        case 9, 10:
            let column = random.pick(columns)
            let short = "length(\(column)) <= 3"
            let mixed = random.pick(["CASE typeof(\(column)) WHEN 'real' THEN 0.5 WHEN 'integer' THEN 3 ELSE (CASE WHEN \(short) THEN \(column) END) END",
                                     "CASE typeof(\(column)) WHEN 'real' THEN -1.25 WHEN 'integer' THEN NULL ELSE (CASE WHEN \(short) THEN \(column) END) END",
                                     "CASE WHEN typeof(\(column)) IN ('text', 'blob') AND \(short) THEN \(column) ELSE 7 END",
                                     "CASE WHEN NOT \(short) THEN NULL WHEN typeof(\(column)) = 'text' THEN CAST(\(column) AS BLOB) WHEN typeof(\(column)) = 'blob' THEN CAST(\(column) AS TEXT) ELSE 2 END"])
            return random.pick(["sum(\(mixed))", "total(\(mixed))", "avg(\(mixed))", "typeof(sum(\(mixed)))"])
        default: return "count(\(random.pick(columns)))"
        }
    }
}
