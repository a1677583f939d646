/// The grammar of window functions: `OVER name`, `OVER (...)`, `WINDOW name AS (...)` and frame
/// clauses, as SQLite's parse.y reads them.
extension Parser {
    /// The name of the marker call that stands for a window function call until its SELECT is
    /// rewritten (a name no SQL can call: it has a space). Its one argument is the call's number
    /// in `windowCalls`.
    static let windowCallFunctionName = "window call"

    /// What follows `OVER` after a call of `name`: the call is kept in `windowCalls` and its
    /// marker returned.
    /// - Throws: `SQLExecutionError` worded as SQLite's for a function that cannot be a window
    ///   function, DISTINCT, a wrong number of arguments; `DAOError.syntax` for a bad clause.
    mutating func parseWindowCall(name: String, args: [Expr], distinct: Bool, star: Bool) throws -> Expr {
        // min() and max() of several arguments are scalar functions.
        guard let function = WindowFunction(name: name), !((name == "min" || name == "max") && args.count > 1) else {
            throw SQLExecutionError("\(name)() may not be used as a window function")
        }
        if distinct { throw SQLExecutionError("DISTINCT is not supported for window functions") }
        guard function.accepts(argumentCount: args.count, star: star) else {
            throw SQLExecutionError("wrong number of arguments to function \(name)()")
        }
        var call = ParsedWindowCall(name: name, args: args, star: star, windowName: nil, definition: WindowDefinition())
        if peekSymbol("(") {
            call.definition = try parseWindowDefinition()
        } else {
            call.windowName = try parseName()
        }
        windowCalls.append(call)
        windowCallsTaken.append(false)
        return .function(name: Parser.windowCallFunctionName, args: [.literal(.integer(Int64(windowCalls.count - 1)))],
                         distinct: false, star: false)
    }

    /// `( [base] [PARTITION BY ...] [ORDER BY ...] [frame] )`.
    mutating func parseWindowDefinition() throws -> WindowDefinition {
        try expectSymbol("(")
        var definition = WindowDefinition()
        let clauseWords: Set<String> = ["PARTITION", "ORDER", "ROWS", "RANGE", "GROUPS"]
        if current.kind == .quotedIdentifier || (current.kind == .identifier && !clauseWords.contains(current.upper)
                                                  && !Parser.reserved.contains(current.upper)) {
            definition.base = try parseName()
        }
        if acceptKeyword("PARTITION") {
            try expectKeyword("BY")
            repeat { definition.partition.append(try parseExpression()) } while acceptSymbol(",")
        }
        if acceptKeyword("ORDER") {
            try expectKeyword("BY")
            repeat {
                let expr = try parseExpression()
                let descending = acceptKeyword("DESC") ? true : (acceptKeyword("ASC") ? false : false)
                var nullsFirst = !descending
                if acceptKeyword("NULLS") {
                    nullsFirst = acceptKeyword("FIRST")
                    if !nullsFirst { try expectKeyword("LAST") }
                }
                definition.order.append(WindowOrderTerm(operand: expr, descending: descending, nullsFirst: nullsFirst))
            } while acceptSymbol(",")
        }
        if peekKeyword("ROWS") || peekKeyword("RANGE") || peekKeyword("GROUPS") { definition.frame = try parseWindowFrame() }
        try expectSymbol(")")
        return definition
    }

    /// `ROWS | RANGE | GROUPS` with one boundary (the start; the end is the current row) or
    /// `BETWEEN start AND end`, then `EXCLUDE ...`.
    /// - Throws: "unsupported frame specification" for an end before the start, as SQLite.
    private mutating func parseWindowFrame() throws -> WindowFrame<Expr> {
        let unit: WindowFrameUnit = acceptKeyword("ROWS") ? .rows : (acceptKeyword("RANGE") ? .range : .groups)
        if unit == .groups { try expectKeyword("GROUPS") }
        var frame: WindowFrame<Expr>
        if acceptKeyword("BETWEEN") {
            let start = try parseFrameBound(isStart: true)
            try expectKeyword("AND")
            frame = WindowFrame(unit: unit, start: start, end: try parseFrameBound(isStart: false))
        } else {
            frame = WindowFrame(unit: unit, start: try parseFrameBound(isStart: true), end: .currentRow)
        }
        if acceptKeyword("EXCLUDE") {
            frame.exclusionWritten = true
            if acceptKeyword("NO") {
                try expectKeyword("OTHERS")
                frame.exclusion = .noOthers
            } else if acceptKeyword("CURRENT") {
                try expectKeyword("ROW")
                frame.exclusion = .currentRow
            } else if acceptKeyword("GROUP") {
                frame.exclusion = .group
            } else {
                try expectKeyword("TIES")
                frame.exclusion = .ties
            }
        }
        let (start, end) = (frame.start.rank, frame.end.rank)
        if (start == 2 && end == 1) || (start == 3 && (end == 1 || end == 2)) {
            throw SQLExecutionError("unsupported frame specification")
        }
        return frame
    }

    /// `UNBOUNDED PRECEDING` (a start only), `UNBOUNDED FOLLOWING` (an end only), `CURRENT ROW`,
    /// `expr PRECEDING`, `expr FOLLOWING`.
    private mutating func parseFrameBound(isStart: Bool) throws -> WindowFrameBound<Expr> {
        if acceptKeyword("UNBOUNDED") {
            try expectKeyword(isStart ? "PRECEDING" : "FOLLOWING")
            return isStart ? .unboundedPreceding : .unboundedFollowing
        }
        if acceptKeyword("CURRENT") {
            try expectKeyword("ROW")
            return .currentRow
        }
        let offset = try parseExpression()
        if acceptKeyword("PRECEDING") { return .preceding(offset) }
        try expectKeyword("FOLLOWING")
        return .following(offset)
    }
}
