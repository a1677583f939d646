#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The scalar functions of the subset, as SQLite 3.40 computes them: length lower upper substr
/// (substring) abs coalesce ifnull nullif iif typeof trim ltrim rtrim instr replace round, max/min
/// of two or more arguments, hex quote unicode char zeroblob randomblob random likely unlikely
/// likelihood printf format sqlite_version changes last_insert_rowid total_changes, and the
/// date and time functions (`DateTimeFunctions`).
enum ScalarFunctions {
    static let names: Set<String> = Set(["length", "lower", "upper", "substr", "substring", "abs", "coalesce", "ifnull", "typeof",
                                     "trim", "ltrim", "rtrim", "instr", "replace", "round", "max", "min", "nullif", "iif",
                                     "hex", "quote", "unicode", "char", "zeroblob", "randomblob", "random", "likely",
                                     "unlikely", "likelihood", "printf", "format", "sqlite_version", "changes",
                                     "last_insert_rowid", "total_changes"]).union(DateTimeFunctions.names)
    static let aggregateNames: Set<String> = ["count", "sum", "total", "avg", "min", "max", "group_concat"]

    /// Blobs above this size (zeroblob, randomblob) are refused rather than built in memory.
    static let blobLimit: Int64 = 64 << 20

    /// Checks the argument count at prepare time, as SQLite does.
    static func checkArity(_ name: String, _ count: Int) throws {
        let ok: Bool
        switch name {
        case "length", "lower", "upper", "abs", "typeof", "hex", "quote", "unicode", "zeroblob", "randomblob",
             "likely", "unlikely":
            ok = count == 1
        case "substr", "substring": ok = count == 2 || count == 3
        case "coalesce": ok = count >= 2
        case "ifnull", "instr", "nullif", "likelihood": ok = count == 2
        case "trim", "ltrim", "rtrim", "round": ok = count == 1 || count == 2
        case "replace", "iif": ok = count == 3
        case "max", "min": ok = count >= 1
        case "random", "sqlite_version", "changes", "last_insert_rowid", "total_changes",
             "current_date", "current_time", "current_timestamp":
            ok = count == 0
        default: ok = true
        }
        if !ok { throw SQLExecutionError("wrong number of arguments to function \(name)()") }
    }

    /// Checks a call at prepare time: its argument count, and likelihood()'s constant.
    static func check(_ name: String, _ args: [Expr]) throws {
        try checkArity(name, args.count)
        if name == "likelihood" {
            // SQLite wants a real literal (not an expression, not an integer) in 0.0...1.0.
            guard case .literal(.real(let p)) = args[1], p >= 0, p <= 1 else {
                throw SQLExecutionError("second argument to likelihood() must be a constant between 0.0 and 1.0")
            }
        }
    }

    /// Evaluates a call: iif, coalesce and ifnull evaluate only the arguments they need (as
    /// SQLite's code does), the others all of their arguments first.
    static func evaluate(_ name: String, _ args: [Expr], _ context: RowContext) throws -> SQLValue {
        switch name {
        case "iif":
            if try Evaluator.keeps(args[0], context) { return try Evaluator.evaluate(args[1], context) }
            return try Evaluator.evaluate(args[2], context)
        case Parser.collateFunctionName, Parser.comparedByFunctionName, Parser.columnCollationFunctionName:   // x's value
            return try Evaluator.evaluate(args[0], context)
        case Parser.foldFunctionName:   // a sort or grouping key under a collation
            guard case .literal(.integer(let raw)) = args[1], let collation = Collation(rawValue: UInt8(truncatingIfNeeded: raw)) else { return .null }
            return collation.fold(try Evaluator.evaluate(args[0], context))
        case "coalesce", "ifnull":
            for (index, arg) in args.enumerated() {
                let value = try Evaluator.evaluate(arg, context)
                if case .null = value, index < args.count - 1 { continue }
                return value
            }
            return .null
        default:
            return try call(name, args.map { try Evaluator.evaluate($0, context) }, context)
        }
    }

    static func call(_ name: String, _ args: [SQLValue], _ context: RowContext? = nil) throws -> SQLValue {
        if DateTimeFunctions.names.contains(name) { return try DateTimeFunctions.call(name, args, context) }
        switch name {
        case TriggerRaise.functionName: throw TriggerRaise(args)   // RAISE(...) (Engine/Triggers.swift)
        case "length":
            switch args[0] {
            case .null: return .null
            case .blob(let b): return .integer(Int64(b.count))
            case .text(let t): return .integer(Int64(t.unicodeScalars.prefix { $0 != "\u{0}" }.count))
            default: return .integer(Int64(SQLiteText.characterCount(SQLiteText.bytes(of: args[0]) ?? [])))
            }
        case "lower", "upper":
            // ASCII letters only, byte by byte (SQLite without ICU).
            guard let text = SQLiteText.bytes(of: args[0]) else { return .null }
            let upper = name == "upper"
            let bytes = text.map { b -> UInt8 in
                if upper, b >= 0x61, b <= 0x7A { return b - 0x20 }
                if !upper, b >= 0x41, b <= 0x5A { return b + 0x20 }
                return b
            }
            return .text(bytes: bytes)
        case "substr", "substring": return substr(args)
        case "abs":
            switch args[0] {
            case .null: return .null
            case .integer(let i):
                guard i != Int64.min else { throw SQLExecutionError("integer overflow") }
                return .integer(Swift.abs(i))
            default: return .real(Swift.abs(SQLValues.double(args[0])))
            }
        case "coalesce", "ifnull":
            for arg in args { if case .null = arg { continue }; return arg }
            return .null
        case "typeof":
            switch args[0] {
            case .null: return .text("null")
            case .integer: return .text("integer")
            case .real: return .text("real")
            case .text, .invalidText: return .text("text")
            case .blob: return .text("blob")
            }
        case "trim", "ltrim", "rtrim": return trim(name, args)
        case "instr":
            if case .null = args[0] { return .null }
            if case .null = args[1] { return .null }
            if case .blob(let haystack) = args[0], case .blob(let needle) = args[1] {
                return .integer(Int64(firstIndex(of: needle, in: haystack).map { $0 + 1 } ?? 0))
            }
            return .integer(Int64(instr(SQLiteText.bytes(of: args[0]) ?? [], SQLiteText.bytes(of: args[1]) ?? [])))
        case "replace":
            // As SQLite: NULL X or Y gives NULL; an empty Y (or one starting with NUL) gives X
            // itself, whatever Z is; then a NULL Z gives NULL.
            guard let source = SQLiteText.bytes(of: args[0]), let find = SQLiteText.bytes(of: args[1]) else { return .null }
            if find.first == nil || find.first == 0 {
                // SQLite read X as text first, which turns a blob X itself into text.
                if case .blob = args[0] { return .text(bytes: source) }
                return args[0]
            }
            guard let with = SQLiteText.bytes(of: args[2]) else { return .null }
            var out: [UInt8] = []
            var i = 0
            while i < source.count {
                if i + find.count <= source.count, source[i..<i + find.count].elementsEqual(find) {
                    out.append(contentsOf: with)
                    i += find.count
                } else {
                    out.append(source[i])
                    i += 1
                }
            }
            return .text(bytes: out)
        case "round": return round(args)
        case "max", "min":
            var best: SQLValue?
            for arg in args {
                if case .null = arg { return .null }
                if let current = best {
                    // As SQLite's minmaxFunc: among equal values min() takes the last, max() the first.
                    let c = SQLValues.compare(arg, current)
                    if (name == "max" && c > 0) || (name == "min" && c <= 0) { best = arg }
                } else {
                    best = arg
                }
            }
            return best ?? .null
        default:
            return try ValueFunctions.call(name, args, context)
        }
    }

    static func firstIndex<T: Equatable>(of needle: [T], in haystack: [T]) -> Int? {
        if needle.isEmpty { return 0 }
        guard needle.count <= haystack.count else { return nil }
        for start in 0...(haystack.count - needle.count) where haystack[start..<start + needle.count].elementsEqual(needle) {
            return start
        }
        return nil
    }

    /// SQLite's substr, characters for text and bytes for blobs, negative and zero positions.
    static func substr(_ args: [SQLValue]) -> SQLValue {
        if case .null = args[0] { return .null }
        if case .null = args[1] { return .null }
        if args.count == 3, case .null = args[2] { return .null }
        let isBlob: Bool
        let bytes: [UInt8]
        if case .blob(let b) = args[0] {
            if b.isEmpty { return .null } // SQLite reads an empty blob as a NULL pointer
            isBlob = true
            bytes = b
        } else {
            isBlob = false
            bytes = SQLiteText.bytes(of: args[0]) ?? []
        }
        let text = SQLiteText.beforeNul(bytes)
        let length = Int64(isBlob ? bytes.count : SQLiteText.characterCount(bytes))
        var p1 = SQLValues.integer(args[1])
        var p2: Int64
        var negativeLength = false
        if args.count == 3 {
            p2 = SQLValues.integer(args[2])
            if p2 < 0 { p2 = p2 == Int64.min ? Int64.max : -p2; negativeLength = true }
        } else {
            p2 = 1_000_000_000
        }
        if p1 < 0 {
            p1 += length
            if p1 < 0 {
                p2 = p2 &+ p1
                if p2 < 0 { p2 = 0 }
                p1 = 0
            }
        } else if p1 > 0 {
            p1 -= 1
        } else if p2 > 0 {
            p2 -= 1
        }
        if negativeLength {
            p1 -= p2
            if p1 < 0 { p2 += p1; p1 = 0 }
        }
        if p1 > length { p1 = length }
        if p1 &+ p2 > length || p1 &+ p2 < p1 { p2 = length - p1 }
        if p2 < 0 { p2 = 0 }
        let from = Int(p1), to = Int(p1 + p2)
        if isBlob { return .blob(Array(bytes[from..<to])) }
        let start = SQLiteText.index(text, text.startIndex, advancedBy: from)
        let end = SQLiteText.index(text, start, advancedBy: to - from)
        return .text(bytes: text[start..<end])
    }

    /// trim, ltrim, rtrim: strips the characters of the second argument (a space by default),
    /// each matched by its bytes, as SQLite's trimFunc.
    static func trim(_ name: String, _ args: [SQLValue]) -> SQLValue {
        guard let text = SQLiteText.bytes(of: args[0]) else { return .null }
        var characters: [ArraySlice<UInt8>] = [[0x20]]
        if args.count == 2 {
            guard let set = SQLiteText.bytes(of: args[1]) else { return .null }
            let chars = SQLiteText.beforeNul(set)
            characters = []
            var i = chars.startIndex
            while i < chars.endIndex {
                let end = SQLiteText.characterEnd(chars, after: i)
                characters.append(chars[i..<end])
                i = end
            }
        }
        var start = 0, end = text.count
        if name != "rtrim" {
            while start < end, let c = characters.first(where: { $0.count <= end - start && text[start..<start + $0.count].elementsEqual($0) }) {
                start += c.count
            }
        }
        if name != "ltrim" {
            while start < end, let c = characters.first(where: { $0.count <= end - start && text[end - $0.count..<end].elementsEqual($0) }) {
                end -= c.count
            }
        }
        if case .text(let whole) = args[0], start == 0, end == text.count { return .text(whole) }
        return .text(bytes: text[start..<end])
    }

    /// instr(X, Y) of two texts' bytes (SQLite's instrFunc): the 1-based character position of
    /// the first occurrence of Y's bytes, 0 if none, 1 for an empty Y. Characters are counted by
    /// stepping over a byte and the continuation bytes after it.
    static func instr(_ haystack: [UInt8], _ needle: [UInt8]) -> Int {
        if needle.isEmpty { return 1 }
        var position = 1, at = 0
        while needle.count <= haystack.count - at {
            if haystack[at] == needle[0], haystack[at..<at + needle.count].elementsEqual(needle) { return position }
            position += 1
            repeat { at += 1 } while at < haystack.count && haystack[at] & 0xC0 == 0x80
        }
        return 0
    }

    /// round(x [, n]): a real, rounded half away from zero as SQLite's printf does.
    static func round(_ args: [SQLValue]) -> SQLValue {
        if case .null = args[0] { return .null }
        var digits: Int64 = 0
        if args.count == 2 {
            if case .null = args[1] { return .null }
            digits = min(max(SQLValues.integer(args[1]), 0), 30)
        }
        let r = SQLValues.double(args[0])
        if r.isNaN || r.isInfinite { return .real(r) }
        if digits == 0 {
            if r >= 0 && r < 9223372036854775806.0 { return .real(Double(Int64(r + 0.5))) }
            if r < 0 && -r < 9223372036854775806.0 { return .real(-Double(Int64(-r + 0.5))) }
            return .real(r)
        }
        return .real(printfRound(r, Int(digits)))
    }

    /// What SQLite's "%.*f" then atof gives: SQLite's printf adds half a unit of the last digit
    /// (plus 3e-16 of the value when few digits are asked) in extended precision, then writes at
    /// most 16 significant digits.
    static func printfRound(_ r: Double, _ digits: Int) -> Double {
        let negative = r < 0
        let magnitude = Swift.abs(r)
        var rounderDouble = 0.5
        for _ in 0..<digits { rounderDouble /= 10 }
        let table: [Double] = [5.0e-01, 5.0e-02, 5.0e-03, 5.0e-04, 5.0e-05, 5.0e-06, 5.0e-07, 5.0e-08, 5.0e-09, 5.0e-10]
        rounderDouble = table[digits % 10]
        var idx = digits
        while idx >= 10 { rounderDouble *= 1.0e-10; idx -= 10 }
        let exponent = Int((magnitude.bitPattern >> 52) & 0x7FF) - 1023
        #if arch(x86_64) || arch(i386)
        var value = Float80(magnitude)
        var rounder = Float80(rounderDouble)
        if digits + exponent / 3 < 15 { rounder += value * 3e-16 }
        value += rounder
        var scale: Float80 = 1
        for _ in 0..<digits { scale *= 10 }
        let scaled = (value * scale).rounded(.towardZero)
        #else
        var value = magnitude
        var rounder = rounderDouble
        if digits + exponent / 3 < 15 { rounder += value * 3e-16 }
        value += rounder
        let scaled = (value * pow(10, Double(digits))).rounded(.towardZero)
        #endif
        if scaled >= 9.2e18 { return r }
        var text = Array(String(Int64(scaled)))
        // Only 16 significant digits are written; the rest are zeros.
        if let firstNonZero = text.firstIndex(where: { $0 != "0" }), text.count - firstNonZero > 16 {
            for i in (firstNonZero + 16)..<text.count { text[i] = "0" }
        }
        while text.count <= digits { text.insert("0", at: 0) }
        let cut = text.count - digits
        let decimal = String(text[..<cut]) + "." + String(text[cut...])
        let result = Double(decimal) ?? r
        return negative ? -result : result
    }
}
