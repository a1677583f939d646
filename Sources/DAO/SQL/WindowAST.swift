/// Window functions (`f(...) OVER (...)`, SQLite's windowfunctions.html) as parsed, and as the
/// rewrite of their SELECT hands them to the engine (SQL/WindowRewrite.swift,
/// Engine/WindowRunner.swift).

/// `OVER (...)` or `WINDOW name AS (...)` as written.
struct WindowDefinition: Sendable {
    /// The named window it builds on (`OVER (w ORDER BY x)`), nil for none.
    var base: String?
    var partition: [Expr] = []
    var order: [WindowOrderTerm<Expr>] = []
    /// Its frame clause, nil when none is written (SQLite's default frame).
    var frame: WindowFrame<Expr>?
}

/// One ORDER BY term of a window: an expression while parsed, a column of the rewritten
/// query's rows after.
struct WindowOrderTerm<Operand: Sendable>: Sendable {
    var operand: Operand
    var descending: Bool
    /// Where NULLs go: first unless `NULLS LAST` (ascending) or DESC without `NULLS FIRST`.
    var nullsFirst: Bool
}

enum WindowFrameUnit: Sendable { case rows, range, groups }

/// A frame boundary; `Offset` is the offset's expression while parsed, its column after.
enum WindowFrameBound<Offset: Sendable>: Sendable {
    case unboundedPreceding, preceding(Offset), currentRow, following(Offset), unboundedFollowing

    /// SQLite's order of the kinds, for the "unsupported frame specification" check.
    var rank: Int {
        switch self {
        case .unboundedPreceding: return 0
        case .preceding: return 1
        case .currentRow: return 2
        case .following: return 3
        case .unboundedFollowing: return 4
        }
    }

    var offset: Offset? {
        switch self {
        case .preceding(let offset), .following(let offset): return offset
        default: return nil
        }
    }

    func map<T: Sendable>(_ transform: (Offset) throws -> T) rethrows -> WindowFrameBound<T> {
        switch self {
        case .unboundedPreceding: return .unboundedPreceding
        case .preceding(let offset): return .preceding(try transform(offset))
        case .currentRow: return .currentRow
        case .following(let offset): return .following(try transform(offset))
        case .unboundedFollowing: return .unboundedFollowing
        }
    }
}

/// Which rows of the frame `EXCLUDE` leaves out.
enum WindowFrameExclusion: Sendable { case noOthers, currentRow, group, ties }

/// `ROWS | RANGE | GROUPS BETWEEN start AND end [EXCLUDE ...]`.
struct WindowFrame<Offset: Sendable>: Sendable {
    var unit: WindowFrameUnit
    var start: WindowFrameBound<Offset>
    var end: WindowFrameBound<Offset>
    var exclusion: WindowFrameExclusion = .noOthers
    /// Whether an EXCLUDE clause is written (`EXCLUDE NO OTHERS` included): SQLite then sums
    /// each frame over its own rows instead of sliding one sum along (which a real that left
    /// the frame leaves real).
    var exclusionWritten = false

    /// SQLite's frame when none is written: `RANGE BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW`
    /// (the whole partition when there is no ORDER BY: every row is then a peer).
    static var standard: WindowFrame { WindowFrame(unit: .range, start: .unboundedPreceding, end: .currentRow) }

    func map<T: Sendable>(_ transform: (Offset) throws -> T) rethrows -> WindowFrame<T> {
        WindowFrame<T>(unit: unit, start: try start.map(transform), end: try end.map(transform), exclusion: exclusion,
                       exclusionWritten: exclusionWritten)
    }
}

/// A window function call as the parser met it, before its SELECT is rewritten.
struct ParsedWindowCall: Sendable {
    /// Lower-cased.
    var name: String
    var args: [Expr]
    /// `count(*)`.
    var star: Bool
    /// `OVER name`: the named window as it is.
    var windowName: String?
    /// `OVER (...)`.
    var definition: WindowDefinition
}

/// The built-in window functions, and the aggregates used as ones.
enum WindowFunction: Sendable, Equatable {
    case rowNumber, rank, denseRank, percentRank, cumeDist, ntile, lag, lead, firstValue, lastValue, nthValue
    /// count, sum, total, avg, min, max, group_concat over the frame.
    case aggregate(String)

    /// The function a name calls with `argumentCount` arguments, nil when it cannot be a window
    /// function.
    init?(name: String) {
        switch name {
        case "row_number": self = .rowNumber
        case "rank": self = .rank
        case "dense_rank": self = .denseRank
        case "percent_rank": self = .percentRank
        case "cume_dist": self = .cumeDist
        case "ntile": self = .ntile
        case "lag": self = .lag
        case "lead": self = .lead
        case "first_value": self = .firstValue
        case "last_value": self = .lastValue
        case "nth_value": self = .nthValue
        default:
            guard ScalarFunctions.aggregateNames.contains(name) else { return nil }
            self = .aggregate(name)
        }
    }

    /// Whether `count` arguments (and `*`) suit it, as SQLite checks them.
    func accepts(argumentCount count: Int, star: Bool) -> Bool {
        switch self {
        case .rowNumber, .rank, .denseRank, .percentRank, .cumeDist: return count == 0 && !star
        case .ntile, .firstValue, .lastValue: return count == 1
        case .lag, .lead: return (1...3).contains(count)
        case .nthValue: return count == 2
        case .aggregate("count"): return count <= 1
        case .aggregate("group_concat"): return count == 1 || count == 2
        case .aggregate: return count == 1
        }
    }

    /// Whether it is an aggregate function (which also runs without OVER).
    var isAggregate: Bool {
        if case .aggregate = self { return true }
        return false
    }

    /// Whether its value depends on the frame (the others read the partition and the peers).
    var usesFrame: Bool {
        switch self {
        case .firstValue, .lastValue, .nthValue, .aggregate: return true
        default: return false
        }
    }
}

/// One window function of a rewritten SELECT; its operands are columns of the rows of the
/// FROM subquery the rewrite made, counted from the first lifted column.
struct WindowCall: Sendable {
    var function: WindowFunction
    var arguments: [Int]
    /// `count(*)`.
    var star: Bool
    var partition: [Int]
    var order: [WindowOrderTerm<Int>]
    var frame: WindowFrame<Int>
    /// Calls whose windows SQLite counts as the same (the same PARTITION BY, ORDER BY and
    /// frame, a ranking function's frame being the one SQLite gives it) share a number, the
    /// calls' first appearance deciding the numbers' order. SQLite computes each such group
    /// over the rows in the order the groups after it left them, the last group first.
    var group: Int
}

/// What a rewritten SELECT computes over its FROM subquery's rows before its own result
/// columns: one column per call, after the subquery's own.
struct WindowStage: Sendable {
    var calls: [WindowCall]
    /// How many of the subquery's result columns, its last ones, the rewrite lifted out of the
    /// SELECT (the ones before them are the SELECT's `*` columns).
    var liftedCount: Int
}
