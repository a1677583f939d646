/// A SELECT that calls window functions becomes, as in SQLite's window.c, a SELECT over a
/// subquery. The subquery is the original FROM, WHERE, GROUP BY and HAVING; its result
/// columns are the original `*`, then every part of the result columns and ORDER BY that no
/// window function is inside, and every argument, PARTITION BY and ORDER BY term and frame
/// offset of the calls ("lifted" columns). The engine computes the calls over the subquery's
/// rows (Engine/WindowRunner.swift, one column each after the subquery's); the outer SELECT
/// reads those columns, applies DISTINCT, ORDER BY and LIMIT, and names its columns as the
/// original did.
///
/// The outer SELECT reads the subquery as `windowSourceAlias` and its columns by names no SQL
/// can write (`liftedColumnName`, `windowColumnName`), which `*` leaves out.
extension Parser {
    static let windowSourceAlias = "\u{1}window"

    /// The name of lifted column `j` of a window subquery.
    static func liftedColumnName(_ j: Int) -> String { "\u{1}c\(j)" }

    /// The name of the column holding window call `k`'s values.
    static func windowColumnName(_ k: Int) -> String { "\u{1}w\(k)" }

    /// `statement` with each of its SELECT cores that calls window functions rewritten.
    /// - Throws: `SQLExecutionError` "misuse of window function f()" for a call in WHERE,
    ///   GROUP BY, HAVING, inside an aggregate or another call's operands; the errors SQLite
    ///   gives for unknown or badly overridden named windows and for non-constant frame offsets.
    mutating func rewriteWindows(in statement: SelectStatement) throws -> SelectStatement {
        if statement.compound.isEmpty { return try rewriteWindowCore(statement) }
        var statement = statement
        // A compound's ORDER BY names its result columns; a window function there names none.
        for (number, term) in statement.orderBy.enumerated() where term.expr.firstWindowCall != nil {
            throw SQLExecutionError("\(SQLDatabase.ordinal(number + 1)) ORDER BY term does not match any column in the result set")
        }
        for k in statement.compound.indices {
            statement.compound[k].select = try rewriteWindowCore(statement.compound[k].select)
        }
        // The first core holds the compound's ORDER BY, LIMIT and WITH, which stay outside.
        var core = statement
        core.compound = []
        core.orderBy = []
        core.limit = nil
        core.offset = nil
        core.with = nil
        var rewritten = try rewriteWindowCore(core)
        rewritten.compound = statement.compound
        rewritten.orderBy = statement.orderBy
        rewritten.limit = statement.limit
        rewritten.offset = statement.offset
        rewritten.with = statement.with
        return rewritten
    }

    /// One SELECT core (with its own ORDER BY and LIMIT, if any) rewritten when it calls window
    /// functions; as it is otherwise.
    private mutating func rewriteWindowCore(_ select: SelectStatement) throws -> SelectStatement {
        for clause in [select.whereClause].compactMap({ $0 }) + select.groupBy + [select.having].compactMap({ $0 }) {
            if let k = clause.firstWindowCall { throw Parser.windowMisuse(k < windowCalls.count ? windowCalls[k].name : "?") }
        }
        let callsIn: (Expr) -> Bool = { $0.firstWindowCall != nil }
        let hasCalls = select.columns.contains { column in
            if case .expression(let expr) = column.kind { return callsIn(expr) }
            return false
        } || select.orderBy.contains { callsIn($0.expr) }
        guard hasCalls else { return select }

        var lifting = WindowLifting(calls: windowCalls, definitions: select.windowDefinitions)
        var innerColumns: [ResultColumn] = []
        var outerColumns: [ResultColumn] = []
        for column in select.columns {
            switch column.kind {
            case .all:
                guard innerColumns.isEmpty else { throw DAOError.unsupported("more than one * beside window functions") }
                innerColumns.append(column)
                outerColumns.append(ResultColumn(kind: .all, alias: nil, text: "*"))
            case .expression(let expr):
                if callsIn(expr) {
                    var rewritten = try lifting.outer(expr, aliases: [])
                    // A bare column would be named after the window's column: `+` (which leaves a
                    // window function's value as it is) keeps the text as written its name.
                    if case .column = rewritten { rewritten = .unary(.plus, rewritten) }
                    outerColumns.append(ResultColumn(kind: .expression(rewritten), alias: column.alias, text: column.text))
                } else {
                    // Lifted whole under its own alias and text: the subquery names it as the
                    // original would, and GROUP BY and HAVING still find the alias.
                    let j = lifting.lift(expr, alias: column.alias, text: column.text)
                    outerColumns.append(ResultColumn(kind: .expression(WindowLifting.liftedReference(j)), alias: column.alias, text: column.text))
                }
            }
        }
        let aliases = Set(select.columns.compactMap { $0.alias?.lowercased() })
        var orderBy: [OrderTerm] = []
        for term in select.orderBy {
            var term = term
            let written = Parser.collated(term.expr)?.0 ?? term.expr
            // A result column's place or alias stays for the outer SELECT to read.
            var isResultReference = SQLDatabase.resultPosition(term.expr) != nil
            if case .column(nil, let name) = written, aliases.contains(name.lowercased()) { isResultReference = true }
            if !isResultReference { term.expr = try lifting.outer(term.expr, aliases: aliases) }
            orderBy.append(term)
        }
        // A subquery needs a result column.
        if innerColumns.isEmpty && lifting.lifted.isEmpty { _ = lifting.lift(.literal(.integer(1)), alias: nil, text: "1") }

        var inner = SelectStatement(distinct: false, columns: innerColumns + lifting.lifted, table: select.table,
                                    tableAlias: select.tableAlias, whereClause: select.whereClause, groupBy: select.groupBy,
                                    having: select.having, orderBy: [], limit: nil, offset: nil)
        inner.indexHint = select.indexHint
        inner.from = select.from
        var outer = SelectStatement(distinct: select.distinct, columns: outerColumns, table: nil, tableAlias: nil, whereClause: nil,
                                    groupBy: [], having: nil, orderBy: orderBy, limit: select.limit, offset: select.offset)
        outer.with = select.with
        outer.from = [FromItem(source: .subquery(inner), alias: Parser.windowSourceAlias,
                               windows: WindowStage(calls: lifting.stage, liftedCount: lifting.lifted.count))]
        for k in lifting.taken { windowCallsTaken[k] = true }
        return outer
    }

    static func windowMisuse(_ name: String) -> SQLExecutionError {
        SQLExecutionError("misuse of window function \(name)()")
    }
}

/// The lifting of one SELECT's expressions into its window subquery.
private struct WindowLifting {
    let calls: [ParsedWindowCall]
    let definitions: [(name: String, definition: WindowDefinition)]
    /// The subquery's lifted result columns.
    var lifted: [ResultColumn] = []
    /// The calls as the engine computes them, and which parsed call each one is.
    var stage: [WindowCall] = []
    var taken: [Int] = []
    /// Each group's window as text (`WindowCall.group`).
    private var groups: [String] = []

    init(calls: [ParsedWindowCall], definitions: [(name: String, definition: WindowDefinition)]) {
        self.calls = calls
        self.definitions = definitions
    }

    static func liftedReference(_ j: Int) -> Expr { .column(table: Parser.windowSourceAlias, name: Parser.liftedColumnName(j)) }

    /// Adds `expr` as a lifted column; returns its number.
    mutating func lift(_ expr: Expr, alias: String? = nil, text: String = "") -> Int {
        lifted.append(ResultColumn(kind: .expression(expr), alias: alias, text: text))
        return lifted.count - 1
    }

    /// `expr` lifted as one column, refusing a window function inside it.
    mutating func liftOperand(_ expr: Expr) throws -> Int {
        if let k = expr.firstWindowCall { throw Parser.windowMisuse(name(ofCall: k)) }
        return lift(expr)
    }

    /// `expr` as the outer SELECT computes it: each window call read from its column, each
    /// largest part without one read from a lifted column (literals and parameters stay). A
    /// bare name in `aliases` (an ORDER BY naming a result column) stays for the outer SELECT.
    mutating func outer(_ expr: Expr, aliases: Set<String>) throws -> Expr {
        try expr.replacingNodes { node in
            if let k = node.windowCallNumber { return try column(ofCall: k) }
            if case .column(nil, let name) = node, aliases.contains(name.lowercased()) { return node }
            if let k = node.firstWindowCall {
                if node.isAggregateCall { throw Parser.windowMisuse(name(ofCall: k)) }
                return nil   // rebuilt from its parts
            }
            if !aliases.isEmpty, node.mentionsBareName(in: aliases), !node.isAggregateCall { return nil }
            switch node {
            case .literal, .parameter: return node
            default: return WindowLifting.liftedReference(lift(node))
            }
        }
    }

    /// The function name of parsed call `k` (markers are the parser's own, so `k` is one of
    /// its calls; "?" otherwise rather than a trap).
    private func name(ofCall k: Int) -> String { calls.indices.contains(k) ? calls[k].name : "?" }

    /// The column of parsed call `k` (met once: each call has its own marker), its operands lifted.
    private mutating func column(ofCall k: Int) throws -> Expr {
        guard calls.indices.contains(k) else { throw SQLExecutionError("misuse of window function") }
        let call = calls[k]
        let definition = try resolved(call)
        var frame = WindowFrame<Int>.standard
        if let written = definition.frame {
            if written.unit == .range, written.start.offset != nil || written.end.offset != nil, definition.order.count != 1 {
                throw SQLExecutionError("RANGE with offset PRECEDING/FOLLOWING requires one ORDER BY expression")
            }
            let kind = written.unit == .range ? "number" : "integer"
            // SQLite takes only constant offsets (a parameter is one).
            func offsetColumn(_ offset: Expr, _ which: String) throws -> Int {
                guard offset.isConstantOffset else { throw SQLExecutionError("frame \(which) offset must be a non-negative \(kind)") }
                return try liftOperand(offset)
            }
            frame = WindowFrame(unit: written.unit, start: try written.start.map { try offsetColumn($0, "starting") },
                                end: try written.end.map { try offsetColumn($0, "ending") }, exclusion: written.exclusion,
                                exclusionWritten: written.exclusionWritten)
        }
        let function = WindowFunction(name: call.name) ?? .aggregate(call.name)
        // SQLite gives the ranking functions, lag() and lead() frames of their own
        // (sqlite3WindowUpdate) before it compares windows.
        let frameText: String
        switch function {
        case .rowNumber, .lag: frameText = "ROWS UNBOUNDED PRECEDING CURRENT ROW"
        case .rank, .denseRank: frameText = "RANGE UNBOUNDED PRECEDING CURRENT ROW"
        case .percentRank: frameText = "GROUPS CURRENT ROW UNBOUNDED FOLLOWING"
        case .cumeDist: frameText = "GROUPS \(Expr.literal(.integer(1))) FOLLOWING UNBOUNDED FOLLOWING"
        case .ntile: frameText = "ROWS CURRENT ROW UNBOUNDED FOLLOWING"
        case .lead: frameText = "ROWS UNBOUNDED PRECEDING UNBOUNDED FOLLOWING"
        default: frameText = WindowLifting.text(of: definition.frame ?? WindowFrame<Expr>.standard)
        }
        let windowText = "\(definition.partition) \(definition.order) \(frameText)"
        let group = groups.firstIndex(of: windowText) ?? groups.count
        if group == groups.count { groups.append(windowText) }
        let lowered = WindowCall(function: function, arguments: try call.args.map { try liftOperand($0) }, star: call.star,
                                 partition: try definition.partition.map { try liftOperand($0) },
                                 order: try definition.order.map {
                                     WindowOrderTerm(operand: try liftOperand($0.operand), descending: $0.descending, nullsFirst: $0.nullsFirst)
                                 },
                                 frame: frame, group: group)
        stage.append(lowered)
        taken.append(k)
        return .column(table: Parser.windowSourceAlias, name: Parser.windowColumnName(stage.count - 1))
    }

    /// A frame as text that two frames SQLite counts as the same share (the default one is
    /// `RANGE UNBOUNDED PRECEDING CURRENT ROW`; any EXCLUDE clause written counts).
    static func text(of frame: WindowFrame<Expr>) -> String {
        func bound(_ bound: WindowFrameBound<Expr>) -> String {
            switch bound {
            case .unboundedPreceding: return "UNBOUNDED PRECEDING"
            case .preceding(let offset): return "\(offset) PRECEDING"
            case .currentRow: return "CURRENT ROW"
            case .following(let offset): return "\(offset) FOLLOWING"
            case .unboundedFollowing: return "UNBOUNDED FOLLOWING"
            }
        }
        let unit = frame.unit == .rows ? "ROWS" : frame.unit == .range ? "RANGE" : "GROUPS"
        return "\(unit) \(bound(frame.start)) \(bound(frame.end))" + (frame.exclusionWritten ? " EXCLUDE \(frame.exclusion)" : "")
    }

    /// A call's window with its named window and base resolved.
    private func resolved(_ call: ParsedWindowCall) throws -> WindowDefinition {
        if let name = call.windowName { return try named(name, depth: 0) }
        return try merged(call.definition, depth: 0)
    }

    /// `definition` with the window it builds on folded in, as SQLite allows it.
    private func merged(_ definition: WindowDefinition, depth: Int) throws -> WindowDefinition {
        guard let baseName = definition.base else { return definition }
        let base = try named(baseName, depth: depth + 1)
        if !definition.partition.isEmpty { throw SQLExecutionError("cannot override PARTITION clause of window: \(baseName)") }
        if !base.order.isEmpty && !definition.order.isEmpty {
            throw SQLExecutionError("cannot override ORDER BY clause of window: \(baseName)")
        }
        if base.frame != nil { throw SQLExecutionError("cannot override frame specification of window: \(baseName)") }
        var result = definition
        result.base = nil
        result.partition = base.partition
        if result.order.isEmpty { result.order = base.order }
        return result
    }

    /// The window `WINDOW name AS (...)` defines (the last definition of the name).
    private func named(_ name: String, depth: Int) throws -> WindowDefinition {
        let lowered = name.lowercased()
        guard depth <= definitions.count, let found = definitions.last(where: { $0.name.lowercased() == lowered }) else {
            throw SQLExecutionError("no such window: \(name)")
        }
        return try merged(found.definition, depth: depth)
    }
}

extension Expr {
    /// The number of the window call this marker stands for, nil for any other node.
    var windowCallNumber: Int? {
        guard case .function(Parser.windowCallFunctionName, let args, _, _) = self, args.count == 1,
              case .literal(.integer(let k)) = args[0] else { return nil }
        return Int(k)
    }

    /// The number of the first window call inside the expression (not inside its subqueries,
    /// which were rewritten on their own), nil when there is none. Walked without recursion.
    var firstWindowCall: Int? {
        var pending = [self]
        while let expr = pending.popLast() {
            if let k = expr.windowCallNumber { return k }
            pending.append(contentsOf: expr.children.reversed())
        }
        return nil
    }

    /// Whether a bare column name in `names` occurs in it.
    func mentionsBareName(in names: Set<String>) -> Bool {
        var pending = [self]
        while let expr = pending.popLast() {
            if case .column(nil, let name) = expr, names.contains(name.lowercased()) { return true }
            pending.append(contentsOf: expr.children)
        }
        return false
    }

    /// Whether it is an aggregate function's call.
    var isAggregateCall: Bool {
        guard case .function(let name, let args, _, _) = self else { return false }
        return ScalarFunctions.aggregateNames.contains(name) && !((name == "min" || name == "max") && args.count > 1)
    }

    /// Whether it can be a frame offset: no column and no subquery inside.
    var isConstantOffset: Bool {
        var pending = [self]
        while let expr = pending.popLast() {
            switch expr {
            case .column, .slot, .outerSlot, .subquery, .exists, .inSelect, .aggregate: return false
            default: pending.append(contentsOf: expr.children)
            }
        }
        return true
    }
}
