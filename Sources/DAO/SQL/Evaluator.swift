/// The state an expression reads: the current row, its rowid, the bound parameters and the
/// current group's aggregate results. One per statement run, updated row by row.
///
/// Exclusivity is unchecked: a context is only used by the statement running under its
/// database's statement lock, and the dynamic checks cost on every row an expression reads.
final class RowContext {
    @exclusivity(unchecked) var row: [SQLValue] = []
    @exclusivity(unchecked) var rowid: Int64 = 0
    @exclusivity(unchecked) var aggregates: [SQLValue] = []
    @exclusivity(unchecked) var parameters: [SQLValue]
    /// Compiled LIKE patterns by pattern text as written (before its first NUL is cut) and
    /// escape: constant patterns compile once, and a row pays one dictionary lookup.
    @exclusivity(unchecked) var likePatterns: [LikePatternKey: LikePattern] = [:]
    /// The statement's 'now' (julian-day milliseconds), read on first use; nil between statements.
    @exclusivity(unchecked) var statementTime: Int64?
    /// The row context of the query around (correlated subqueries read its row).
    @exclusivity(unchecked) var outer: RowContext?
    /// The database whose statement runs: subqueries run against it; changes(),
    /// last_insert_rowid() and total_changes() read it (set when a statement starts).
    /// Unowned, not weak: a context lives inside one statement of its database (or is the
    /// database's own), and a weak reference would give the database a side table, which sends
    /// every retain and release of it, several a row, down Swift's slow path (~5% of an
    /// indexed range's instructions).
    @exclusivity(unchecked) unowned var database: SQLDatabase?
    /// Uncorrelated subquery results of the running statement.
    @exclusivity(unchecked) var subqueries = SubqueryCache()

    init(parameters: [SQLValue]) { self.parameters = parameters }
}

/// A compiled LIKE pattern's cache key: the pattern's text and the ESCAPE code point.
struct LikePatternKey: Hashable {
    let pattern: String
    let escape: UInt32?
}

/// Evaluates resolved expressions with SQLite's semantics.
enum Evaluator {
    static func evaluate(_ expr: Expr, _ context: RowContext) throws -> SQLValue {
        switch expr {
        case .literal(let value): return value
        case .parameter(let slot): return slot < context.parameters.count ? context.parameters[slot] : .null
        case .slot(let index, _): return index < 0 ? .integer(context.rowid) : context.row[index]
        case .aggregate(let index): return context.aggregates[index]
        case .column(_, let name): throw DAOError.noSuchColumn(name)
        case .outerSlot(let depth, let index, _): return try SubqueryRunner.outerValue(depth: depth, index: index, context)
        case .subquery(let plan): return try SubqueryRunner.scalar(plan, context)
        case .exists(let plan, let negated): return try SubqueryRunner.exists(plan, negated: negated, context)
        case .inSelect(let left, let plan, let negated): return try SubqueryRunner.contains(left, plan, negated: negated, context)
        case .unary(let op, let inner):
            let value = try evaluate(inner, context)
            switch op {
            case .plus: return value
            case .negate:
                // SQLite negates a numeric literal itself (-0.0 is -0.0) and computes any other
                // -x as 0 - x, which makes a zero real 0.0.
                if case .literal(let literal) = inner, case .real = literal { return SQLValues.negate(value) }
                return SQLValues.positiveZero(SQLValues.negate(value))
            case .not:
                guard let truth = SQLValues.truth(value) else { return .null }
                return .integer(truth ? 0 : 1)
            case .bitNot:
                if case .null = value { return .null }
                return .integer(~SQLValues.integer(value))
            }
        case .binary(let op, let left, let right):
            switch op {
            case .and:
                let l = SQLValues.truth(try evaluate(left, context))
                if l == false { return .integer(0) }
                let r = SQLValues.truth(try evaluate(right, context))
                if r == false { return .integer(0) }
                if l == nil || r == nil { return .null }
                return .integer(1)
            case .or:
                // As a value, SQLite evaluates both operands of OR (an error on the right
                // surfaces even when the left is true); as a condition it short-circuits.
                let l = SQLValues.truth(try evaluate(left, context))
                let r = SQLValues.truth(try evaluate(right, context))
                if l == true { return .integer(1) }
                if r == true { return .integer(1) }
                if l == nil || r == nil { return .null }
                return .integer(0)
            case .add, .subtract, .multiply, .divide, .remainder:
                return SQLValues.arithmetic(op, try evaluate(left, context), try evaluate(right, context))
            case .bitAnd, .bitOr, .shiftLeft, .shiftRight:
                return SQLValues.bitwise(op, try evaluate(left, context), try evaluate(right, context))
            case .concat:
                let l = try evaluate(left, context), r = try evaluate(right, context)
                if case .text(let a) = l, case .text(let b) = r { return .text(a + b) }
                guard let a = SQLiteText.bytes(of: l), let b = SQLiteText.bytes(of: r) else { return .null }
                return .text(bytes: a + b)
            default:
                return compare(op, try evaluate(left, context), left.affinity, try evaluate(right, context), right.affinity,
                               keepLeft: left.keepsStorageClass, keepRight: right.keepsStorageClass,
                               collation: Parser.comparisonCollation(left))
            }
        case .isNull(let inner, let negated):
            let isNull: Bool
            if case .null = try evaluate(inner, context) { isNull = true } else { isNull = false }
            return .integer(isNull != negated ? 1 : 0)
        case .inList(let left, let items, let negated):
            let value = try evaluate(left, context)
            if case .null = value { return items.isEmpty ? .integer(negated ? 1 : 0) : .null }
            var sawNull = false
            let collation = Parser.comparisonCollation(left)
            for item in items {
                let candidate = try evaluate(item, context)
                if case .null = candidate { sawNull = true; continue }
                // SQLite compares with the left operand's affinity only.
                let affinity = SQLValues.comparing(left.affinity)
                let converted = SQLValues.apply(affinity, to: candidate, unlessKept: item.keepsStorageClass)
                if collation.compare(SQLValues.apply(affinity, to: value, unlessKept: left.keepsStorageClass), converted) == 0 {
                    return .integer(negated ? 0 : 1)
                }
            }
            if sawNull { return .null }
            return .integer(negated ? 1 : 0)
        case .between(let subject, let low, let high, let negated):
            let value = try evaluate(subject, context)
            let collation = Parser.comparisonCollation(subject)
            let lower = compare(.greaterEqual, value, subject.affinity, try evaluate(low, context), low.affinity,
                                keepLeft: subject.keepsStorageClass, keepRight: low.keepsStorageClass, collation: collation)
            let upper = compare(.lessEqual, value, subject.affinity, try evaluate(high, context), high.affinity,
                                keepLeft: subject.keepsStorageClass, keepRight: high.keepsStorageClass, collation: collation)
            let l = SQLValues.truth(lower), u = SQLValues.truth(upper)
            let result: Bool?
            if l == false || u == false { result = false } else if l == nil || u == nil { result = nil } else { result = true }
            guard let result else { return .null }
            return .integer(result != negated ? 1 : 0)
        case .like(let subject, let pattern, let escape, let negated):
            let value = try evaluate(subject, context)
            let patternValue = try evaluate(pattern, context)
            var escapePoint: UInt32?
            if let escape {
                let escapeValue = try evaluate(escape, context)
                guard let bytes = SQLiteText.bytes(of: escapeValue) else { return .null }
                let text = SQLiteText.beforeNul(bytes)
                guard !text.isEmpty, SQLiteText.characterEnd(text, after: text.startIndex) == text.endIndex else {
                    throw SQLExecutionError("ESCAPE expression must be a single character")
                }
                escapePoint = SQLiteText.decode(text)
            }
            if case .null = value { return .null }
            if case .null = patternValue { return .null }
            // SQLite 3.40 matches no blob (on either side) with LIKE or GLOB.
            if case .blob = value { return .integer(negated ? 1 : 0) }
            if case .blob = patternValue { return .integer(negated ? 1 : 0) }
            let subjectText = SQLiteText.textValue(of: value), patternText = SQLiteText.textValue(of: patternValue)
            guard case .text(let rawText) = subjectText, case .text(let rawPattern) = patternText else {
                // Text that is not valid UTF-8: characters as SQLite reads them.
                let compiled = LikePattern("", codePoints: Self.codePoints(patternText), escape: escapePoint)
                let subject = SQLiteText.beforeNul(SQLiteText.bytes(of: subjectText) ?? [])
                return .integer(subject.withUnsafeBufferPointer { compiled.matches(utf8: $0) } != negated ? 1 : 0)
            }
            let cacheKey = LikePatternKey(pattern: rawPattern, escape: escapePoint)
            let compiled: LikePattern
            if let cached = context.likePatterns[cacheKey] {
                compiled = cached
            } else {
                let pattern = SQLValues.cString(rawPattern)
                compiled = LikePattern(pattern, codePoints: pattern.unicodeScalars.map(\.value), escape: escapePoint)
                if context.likePatterns.count < 64 { context.likePatterns[cacheKey] = compiled }
            }
            var text = rawText
            let matched = text.withUTF8 { compiled.matches(utf8: SQLiteText.beforeNul($0)) }
            return .integer(matched != negated ? 1 : 0)
        case .glob(let subject, let pattern, let negated):
            let value = try evaluate(subject, context), patternValue = try evaluate(pattern, context)
            if case .null = value { return .null }
            if case .null = patternValue { return .null }
            // SQLite 3.40 matches no blob (on either side) with LIKE or GLOB.
            if case .blob = value { return .integer(negated ? 1 : 0) }
            if case .blob = patternValue { return .integer(negated ? 1 : 0) }
            let matched = Glob.matches(pattern: Self.codePoints(patternValue), Self.codePoints(value))
            return .integer(matched != negated ? 1 : 0)
        case .caseWhen(let base, let whens, let otherwise):
            if let base {
                let value = try evaluate(base, context)
                for (candidate, result) in whens {
                    let c = try evaluate(candidate, context)
                    // The resolver marks each candidate with the collation of its `base = candidate`.
                    if SQLValues.truth(compare(.equal, value, base.affinity, c, candidate.affinity,
                                               keepLeft: base.keepsStorageClass, keepRight: candidate.keepsStorageClass,
                                               collation: Parser.comparisonCollation(candidate))) == true {
                        return try evaluate(result, context)
                    }
                }
            } else {
                for (when, result) in whens where try Evaluator.keeps(when, context) {
                    return try evaluate(result, context)
                }
            }
            return try otherwise.map { try evaluate($0, context) } ?? .null
        case .cast(let inner, let typeName):
            return SQLValues.cast(try evaluate(inner, context), to: typeName)
        case .function(let name, let args, _, _):
            return try ScalarFunctions.evaluate(name, args, context)
        }
    }

    /// The code points of a value's text up to its first NUL, as LIKE and GLOB read them.
    static func codePoints(_ value: SQLValue) -> [UInt32] {
        SQLiteText.codePoints(SQLiteText.beforeNul(SQLiteText.bytes(of: value) ?? []))
    }

    /// Whether a filtering clause (WHERE, HAVING, a trigger's WHEN, an upsert's WHERE, CASE's
    /// WHEN, iif's test) keeps the row: true only when `expr` is true. SQLite decides such a
    /// clause with jumps that stop as soon as the answer is known, NULL counting as not true:
    /// an AND stops at a part that is false or NULL, an OR at one that is true (so a part after
    /// a NULL one of an AND is not evaluated and cannot raise an error); below NOT and in other
    /// expressions, `condition`'s three-valued rules.
    static func keeps(_ expr: Expr, _ context: RowContext) throws -> Bool {
        switch expr {
        case .binary(.and, let left, let right): return try keeps(left, context) && keeps(right, context)
        case .binary(.or, let left, let right): return try keeps(left, context) || keeps(right, context)
        default: return try condition(expr, context) == true
        }
    }

    /// The truth of a condition (WHERE, HAVING, CASE WHEN): AND, OR and NOT short-circuit, as
    /// SQLite's jumps do; nil is unknown.
    static func condition(_ expr: Expr, _ context: RowContext) throws -> Bool? {
        switch expr {
        case .binary(.and, let left, let right):
            let l = try condition(left, context)
            if l == false { return false }
            let r = try condition(right, context)
            if r == false { return false }
            return (l == nil || r == nil) ? nil : true
        case .binary(.or, let left, let right):
            let l = try condition(left, context)
            if l == true { return true }
            let r = try condition(right, context)
            if r == true { return true }
            return (l == nil || r == nil) ? nil : false
        case .unary(.not, let inner):
            return try condition(inner, context).map { !$0 }
        default:
            return SQLValues.truth(try evaluate(expr, context))
        }
    }

    /// A comparison operator with SQLite's affinity rules and NULL handling.
    /// `keepLeft`/`keepRight`: that operand takes no affinity (see `Expr.keepsStorageClass`).
    /// `collation`: how two texts compare.
    static func compare(_ op: BinaryOperator, _ l: SQLValue, _ leftAffinity: Affinity?, _ r: SQLValue, _ rightAffinity: Affinity?,
                        keepLeft: Bool = false, keepRight: Bool = false, collation: Collation = .binary) -> SQLValue {
        let lNull: Bool, rNull: Bool
        if case .null = l { lNull = true } else { lNull = false }
        if case .null = r { rNull = true } else { rNull = false }
        if op == .isOp || op == .isNot {
            if lNull || rNull { return .integer((lNull && rNull) == (op == .isOp) ? 1 : 0) }
        } else if lNull || rNull {
            return .null
        }
        let affinity = SQLValues.comparisonAffinity(leftAffinity, rightAffinity)
        let c = affinity == nil ? collation.compare(l, r)
            : collation.compare(SQLValues.apply(affinity, to: l, unlessKept: keepLeft), SQLValues.apply(affinity, to: r, unlessKept: keepRight))
        let result: Bool
        switch op {
        case .equal, .isOp: result = c == 0
        case .notEqual, .isNot: result = c != 0
        case .less: result = c < 0
        case .lessEqual: result = c <= 0
        case .greater: result = c > 0
        case .greaterEqual: result = c >= 0
        default: result = false
        }
        return .integer(result ? 1 : 0)
    }
}

/// SQLite's GLOB: `*` any run, `?` one character, `[...]` a set (`^` negates, `a-z` ranges),
/// case-sensitive; over code points as `sqlite3Utf8Read` gives them (`SQLiteText`).
enum Glob {
    static func matches(pattern: [UInt32], _ text: [UInt32]) -> Bool {
        match(pattern, 0, text, 0)
    }

    private static let star: UInt32 = 0x2A, question: UInt32 = 0x3F, open: UInt32 = 0x5B, close: UInt32 = 0x5D
    private static let caret: UInt32 = 0x5E, dash: UInt32 = 0x2D

    private static func match(_ p: [UInt32], _ pi: Int, _ t: [UInt32], _ ti: Int) -> Bool {
        var pi = pi, ti = ti
        while pi < p.count {
            let c = p[pi]
            if c == star {
                while pi < p.count, p[pi] == star || p[pi] == question {
                    if p[pi] == question { if ti >= t.count { return false }; ti += 1 }
                    pi += 1
                }
                if pi == p.count { return true }
                var start = ti
                while start <= t.count {
                    if match(p, pi, t, start) { return true }
                    start += 1
                }
                return false
            }
            guard ti < t.count else { return false }
            if c == question { pi += 1; ti += 1; continue }
            if c == open {
                guard let (matched, next) = matchSet(p, pi, t[ti]) else { return false }
                if !matched { return false }
                pi = next
                ti += 1
                continue
            }
            if c != t[ti] { return false }
            pi += 1
            ti += 1
        }
        return ti == t.count
    }

    /// Matches `scalar` against the set starting at `p[start] == "["`; nil for an unclosed set.
    private static func matchSet(_ p: [UInt32], _ start: Int, _ scalar: UInt32) -> (Bool, Int)? {
        var i = start + 1
        var invert = false
        if i < p.count, p[i] == caret { invert = true; i += 1 }
        var found = false
        var first = true
        var previous: UInt32?
        while i < p.count {
            let c = p[i]
            if c == close && !first { return (found != invert, i + 1) }
            if c == dash, let low = previous, i + 1 < p.count, p[i + 1] != close {
                let high = p[i + 1]
                if scalar >= low && scalar <= high { found = true }
                previous = nil
                i += 2
                first = false
                continue
            }
            if c == scalar { found = true }
            previous = c
            first = false
            i += 1
        }
        return nil
    }
}
