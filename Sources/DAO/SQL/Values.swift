#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// SQLite 3's value semantics: storage-class order, numeric conversion of text, affinity,
/// arithmetic with overflow to real, and the text form of reals.
enum SQLValues {
    // MARK: Order and equality

    /// SQLite's order of any two values (BINARY collation): NULL < numbers < text < blob;
    /// integers and reals compare by numeric value; text and blobs bytewise.
    @inline(__always)
    static func compare(_ a: SQLValue, _ b: SQLValue) -> Int {
        switch (a, b) {
        case (.integer(let x), .integer(let y)): return x < y ? -1 : (x > y ? 1 : 0)
        case (.real(let x), .real(let y)): return x < y ? -1 : (x > y ? 1 : 0)
        case (.integer(let x), .real(let y)): return compareIntReal(x, y)
        case (.real(let x), .integer(let y)): return -compareIntReal(y, x)
        case (.text(let x), .text(let y)): return compareText(x, y)
        case (.blob(let x), .blob(let y)): return compareBytes(x, y)
        case (.invalidText(let x), .invalidText(let y)): return compareBytes(x, y)
        case (.text(let x), .invalidText(let y)): return compareBytes(Array(x.utf8), y)
        case (.invalidText(let x), .text(let y)): return compareBytes(x, Array(y.utf8))
        default: return rank(a) - rank(b)
        }
    }

    static func rank(_ value: SQLValue) -> Int {
        switch value {
        case .null: return 0
        case .integer, .real: return 1
        case .text, .invalidText: return 2
        case .blob: return 3
        }
    }

    static func compareIntReal(_ i: Int64, _ r: Double) -> Int {
        if r.isNaN { return 1 }
        if r < -9223372036854775808.0 { return 1 }
        if r >= 9223372036854775808.0 { return -1 }
        let y = Int64(r)
        if i < y { return -1 }
        if i > y { return 1 }
        let s = Double(i)
        if s < r { return -1 }
        if s > r { return 1 }
        return 0
    }

    static func compareText(_ a: String, _ b: String) -> Int {
        var a = a, b = b
        return a.withUTF8 { x in
            b.withUTF8 { y in
                let common = min(x.count, y.count)
                if common > 0, let px = x.baseAddress, let py = y.baseAddress {
                    let c = memcmp(px, py, common)
                    if c != 0 { return c < 0 ? -1 : 1 }
                }
                return x.count < y.count ? -1 : (x.count > y.count ? 1 : 0)
            }
        }
    }

    static func compareBytes(_ x: [UInt8], _ y: [UInt8]) -> Int {
        let common = min(x.count, y.count)
        let c = x.withUnsafeBytes { px in y.withUnsafeBytes { py in common == 0 ? 0 : memcmp(px.baseAddress!, py.baseAddress!, common) } }
        if c != 0 { return c < 0 ? -1 : 1 }
        return x.count < y.count ? -1 : (x.count > y.count ? 1 : 0)
    }

    static func compare(_ a: [SQLValue], _ b: [SQLValue]) -> Int {
        for i in 0..<min(a.count, b.count) {
            let c = compare(a[i], b[i])
            if c != 0 { return c }
        }
        return a.count - b.count
    }

    // MARK: Text to number

    /// How much of a text is a number (SQLite's sqlite3AtoF classification).
    enum NumberForm { case integer, real, prefixOnly, none }

    /// Parses the longest numeric prefix of `text` (after leading spaces). `form` says whether
    /// the whole text (but trailing spaces) was an integer, a real, only a prefix, or nothing.
    static func parseNumber(_ text: String) -> (value: SQLValue, form: NumberForm) {
        var text = text
        return text.withUTF8 { parseNumber($0) }
    }

    static func parseNumber(_ bytes: UnsafeBufferPointer<UInt8>) -> (value: SQLValue, form: NumberForm) {
        var i = 0
        let n = bytes.count
        func isSpace(_ b: UInt8) -> Bool { b == 0x20 || b == 0x09 || b == 0x0A || b == 0x0D || b == 0x0C || b == 0x0B }
        func isDigit(_ b: UInt8) -> Bool { b >= 0x30 && b <= 0x39 }
        while i < n, isSpace(bytes[i]) { i += 1 }
        let start = i
        if i < n, bytes[i] == 0x2B || bytes[i] == 0x2D { i += 1 }
        let digitsStart = i
        while i < n, isDigit(bytes[i]) { i += 1 }
        var sawDigits = i > digitsStart
        var isReal = false
        if i < n, bytes[i] == 0x2E {
            let afterDot = i + 1
            var j = afterDot
            while j < n, isDigit(bytes[j]) { j += 1 }
            if sawDigits || j > afterDot {
                sawDigits = true
                isReal = true
                i = j
            }
        }
        guard sawDigits else { return (.integer(0), .none) }
        if i < n, bytes[i] == 0x65 || bytes[i] == 0x45 {
            var j = i + 1
            if j < n, bytes[j] == 0x2B || bytes[j] == 0x2D { j += 1 }
            let expStart = j
            while j < n, isDigit(bytes[j]) { j += 1 }
            if j > expStart { isReal = true; i = j }
        }
        let end = i
        while i < n, isSpace(bytes[i]) { i += 1 }
        let whole = i == n
        let literal = String(decoding: UnsafeBufferPointer(rebasing: bytes[start..<end]), as: UTF8.self)
        if !isReal, let integer = Int64(literal) {
            return (.integer(integer), whole ? .integer : .prefixOnly)
        }
        return (.real(atof(literal)), whole ? .real : .prefixOnly)
    }

    /// A well-formed numeric literal (sign, digits, point, digits, exponent) as SQLite's
    /// sqlite3AtoF reads it: the significand as a 64-bit integer (digits beyond its range
    /// only move the exponent), scaled by powers of ten in extended precision, then rounded to
    /// a double. Not always the correctly rounded double, and so not Double(String)'s.
    static func atof(_ literal: String) -> Double {
        var bytes = Array(literal.utf8)[...]
        var sign: Double = 1
        if let first = bytes.first, first == 0x2B || first == 0x2D {
            if first == 0x2D { sign = -1 }
            bytes = bytes.dropFirst()
        }
        var s: UInt64 = 0
        var d = 0
        let limit = (UInt64(Int64.max) - 9) / 10
        func isDigit(_ b: UInt8) -> Bool { b >= 0x30 && b <= 0x39 }
        while let b = bytes.first, isDigit(b) {
            if s < limit { s = s * 10 + UInt64(b - 0x30) } else { d += 1 }
            bytes = bytes.dropFirst()
        }
        if bytes.first == 0x2E {
            bytes = bytes.dropFirst()
            while let b = bytes.first, isDigit(b) {
                if s < limit { s = s * 10 + UInt64(b - 0x30); d -= 1 }
                bytes = bytes.dropFirst()
            }
        }
        var e = 0
        var esign = 1
        if let b = bytes.first, b == 0x65 || b == 0x45 {
            bytes = bytes.dropFirst()
            if let c = bytes.first, c == 0x2B || c == 0x2D {
                if c == 0x2D { esign = -1 }
                bytes = bytes.dropFirst()
            }
            while let c = bytes.first, isDigit(c) {
                e = e < 10000 ? e * 10 + Int(c - 0x30) : 10000
                bytes = bytes.dropFirst()
            }
        }
        e = e * esign + d
        if e < 0 { esign = -1; e = -e } else { esign = 1 }
        if s == 0 { return sign < 0 ? -0.0 : 0.0 }
        #if arch(x86_64) || arch(i386)
        typealias Wide = Float80
        #else
        typealias Wide = Double
        #endif
        var scale: Wide = 1
        var result: Double
        if e > 307 {
            if e < 342 {
                while e % 308 != 0 { scale *= 10; e -= 1 }
                if esign < 0 {
                    result = Double(Wide(s) / scale)
                    result /= 1.0e308
                } else {
                    result = Double(Wide(s) * scale)
                    result *= 1.0e308
                }
            } else {
                result = esign < 0 ? 0.0 * Double(s) : .infinity
            }
        } else {
            while e % 22 != 0 { scale *= 10; e -= 1 }
            while e > 0 { scale *= 1.0e22; e -= 22 }
            result = Double(esign < 0 ? Wide(s) / scale : Wide(s) * scale)
        }
        return sign * result
    }

    /// A value as a number for arithmetic: text and blobs by their numeric prefix (0 if none).
    static func numeric(_ value: SQLValue) -> SQLValue {
        switch value {
        case .integer, .real, .null: return value
        case .text(let text): return parseNumber(text).value
        case .blob(let bytes), .invalidText(let bytes): return bytes.withUnsafeBufferPointer { parseNumber($0).value }
        }
    }

    /// What sum(), total() and avg() add for a non-NULL value (SQLite 3.40's
    /// sqlite3_value_numeric_type, then sqlite3_value_int64 or _double): an integer for an
    /// integer, and for a text spelling an integer that fits 64 bits (' 12 ', '-0'); a real
    /// for everything else: a real, a text spelling a real ('1e3', '0.5'), any other text (its
    /// numeric prefix: '12abc' adds 12.0, 'abc' 0.0) and any blob (its bytes read as text:
    /// x'37' adds 7.0). One real operand makes sum() a real.
    static func sumOperand(_ value: SQLValue) -> SQLValue {
        switch value {
        case .integer, .real, .null: return value
        case .text(let text):
            let parsed = parseNumber(text)
            if parsed.form == .integer, case .integer = parsed.value { return parsed.value }
            return .real(double(value))
        case .blob, .invalidText: return .real(double(value))   // never an integer's whole spelling
        }
    }

    /// The integer a real converts to exactly, if any (SQLite's sqlite3VdbeIntegerAffinity).
    static func exactInteger(_ r: Double) -> Int64? {
        guard r > -9223372036854775808.0, r < 9223372036854775808.0 else { return nil }
        let i = Int64(r)
        guard Double(i) == r, i > Int64.min, i < Int64.max else { return nil }
        return i
    }

    // MARK: Affinity

    /// Applies a column affinity to a value being stored (or compared).
    static func apply(_ affinity: Affinity?, to value: SQLValue) -> SQLValue {
        guard let affinity else { return value }
        switch affinity {
        case .blob: return value
        case .text:
            switch value {
            case .integer, .real: return .text(text(of: value) ?? "")
            default: return value
            }
        case .numeric, .integer:
            switch value {
            case .text(let text):
                let parsed = parseNumber(text)
                switch parsed.form {
                case .integer: return parsed.value
                case .real:
                    if case .real(let r) = parsed.value, let i = exactInteger(r) { return .integer(i) }
                    return parsed.value
                default: return value
                }
            case .real(let r):
                if let i = exactInteger(r) { return .integer(i) }
                return value
            default: return value
            }
        case .real:
            switch value {
            case .text(let text):
                let parsed = parseNumber(text)
                switch parsed.form {
                case .integer, .real: return positiveZero(realValue(parsed.value))
                default: return value
                }
            case .integer(let i): return .real(Double(i))
            case .real: return positiveZero(value)
            default: return value
            }
        }
    }

    /// Whether `apply(affinity, to: value)` may give something other than `value`; false means
    /// it gives `value` back. A caller that writes only then leaves an array it shares with
    /// others (a statement's parameters) uncopied when nothing converts, the usual case.
    static func mayConvert(_ affinity: Affinity?, _ value: SQLValue) -> Bool {
        guard let affinity else { return false }
        switch (affinity, value) {
        case (.blob, _), (_, .null), (_, .blob), (_, .invalidText): return false
        case (.text, .integer), (.text, .real): return true
        case (.text, _): return false
        case (.numeric, .text), (.integer, .text), (.real, .text), (.real, .integer): return true
        case (.numeric, .real(let r)), (.integer, .real(let r)): return exactInteger(r) != nil
        case (.real, .real(let r)): return r == 0 && r.sign == .minus
        case (.numeric, .integer), (.integer, .integer): return false
        }
    }

    /// -0.0 as 0.0, any other value as it is. SQLite stores an integral real of a REAL column
    /// as an integer and reads it back as a real, so a REAL column never holds -0.0 (a column
    /// without affinity does). Comparisons are unaffected (-0.0 = 0.0).
    static func positiveZero(_ value: SQLValue) -> SQLValue {
        if case .real(let r) = value, r == 0, r.sign == .minus { return .real(0) }
        return value
    }

    /// `apply`, except for a number that carries a text form (`kept`), which no affinity changes.
    static func apply(_ affinity: Affinity?, to value: SQLValue, unlessKept kept: Bool) -> SQLValue {
        if kept {
            switch value {
            case .integer, .real: return value
            default: break
            }
        }
        return apply(affinity, to: value)
    }

    /// The affinity both operands of a comparison get (SQLite's sqlite3CompareAffinity).
    /// A column declared without a type has BLOB affinity, which counts as an affinity here (it
    /// keeps a TEXT operand from converting it); literals have none.
    /// Any numeric affinity converts only text operands, and to a number (never an integer to
    /// a real), so INTEGER, REAL and NUMERIC all act as NUMERIC here.
    static func comparisonAffinity(_ left: Affinity?, _ right: Affinity?) -> Affinity? {
        if let l = left, let r = right {
            return (l.isNumeric || r.isNumeric) ? .numeric : nil
        }
        return comparing(left ?? right)
    }

    /// The affinity a comparison applies for an operand's own affinity.
    static func comparing(_ affinity: Affinity?) -> Affinity? {
        switch affinity {
        case .none, .blob?: return nil
        case .text?: return .text
        default: return .numeric
        }
    }

    static func realValue(_ value: SQLValue) -> SQLValue {
        if case .integer(let i) = value { return .real(Double(i)) }
        return value
    }

    // MARK: Conversions

    /// The text form of a value (SQLite's: reals as "%!.15g"); nil for NULL.
    static func text(of value: SQLValue) -> String? {
        switch value {
        case .null: return nil
        case .integer(let i): return String(i)
        case .real(let r): return format(real: r)
        case .text(let t): return t
        // Repaired (U+FFFD): only for uses where the ill-formed bytes cannot matter (a date's
        // text, an error message); text functions take `SQLiteText.bytes(of:)`.
        case .blob(let b), .invalidText(let b): return String(decoding: b, as: UTF8.self)
        }
    }

    /// SQLite's "%!.15g": 15 significant digits, always a decimal point, Inf for infinity.
    static func format(real: Double) -> String {
        if real.isNaN { return "NaN" }
        if real.isInfinite { return real < 0 ? "-Inf" : "Inf" }
        let value = real == 0 ? 0.0 : real
        var buffer = [CChar](repeating: 0, count: 48)
        _ = withVaList([value]) { vsnprintf(&buffer, 48, "%.15g", $0) }
        var text = String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
        if let e = text.firstIndex(of: "e") {
            if !text[..<e].contains(".") { text.insert(contentsOf: ".0", at: e) }
        } else if !text.contains(".") {
            text += ".0"
        }
        return text
    }

    /// CAST(x AS INTEGER): the numeric prefix of text, reals truncated (saturating).
    static func castInteger(_ value: SQLValue) -> SQLValue {
        switch value {
        case .null: return .null
        case .integer: return value
        case .real(let r): return .integer(saturatingInteger(r))
        case .text, .blob, .invalidText:
            let bytes = SQLiteText.bytes(of: value) ?? []
            return bytes.withUnsafeBufferPointer { buffer -> SQLValue in
                // CAST to INTEGER reads only the leading integer digits ('1e5' is 1).
                var i = 0
                while i < buffer.count, [0x20, 0x09, 0x0A, 0x0D, 0x0C, 0x0B].contains(buffer[i]) { i += 1 }
                let start = i
                if i < buffer.count, buffer[i] == 0x2B || buffer[i] == 0x2D { i += 1 }
                while i < buffer.count, buffer[i] >= 0x30, buffer[i] <= 0x39 { i += 1 }
                let literal = String(decoding: UnsafeBufferPointer(rebasing: buffer[start..<i]), as: UTF8.self)
                if let v = Int64(literal) { return .integer(v) }
                let digits = literal.filter(\.isNumber)
                if digits.isEmpty { return .integer(0) }
                return .integer(literal.hasPrefix("-") ? Int64.min : Int64.max)
            }
        }
    }

    static func saturatingInteger(_ r: Double) -> Int64 {
        if r.isNaN { return 0 }
        if r <= -9223372036854775808.0 { return Int64.min }
        if r >= 9223372036854775807.0 { return Int64.max }
        return Int64(r)
    }

    /// CAST(x AS REAL).
    static func castReal(_ value: SQLValue) -> SQLValue {
        switch value {
        case .null: return .null
        case .integer(let i): return .real(Double(i))
        case .real: return value
        case .text, .blob, .invalidText: return realValue(numeric(value))
        }
    }

    /// CAST(x AS NUMERIC): text becomes an integer when it reads as one exactly; reals stay.
    static func castNumeric(_ value: SQLValue) -> SQLValue {
        switch value {
        case .null, .integer, .real: return value
        case .text, .blob, .invalidText:
            // An integral real becomes an integer only within +-2^51 (sqlite3RealSameAsInt).
            let number = numeric(value)
            if case .real(let r) = number, let i = exactInteger(r), i >= -2251799813685248, i < 2251799813685248 {
                return .integer(i)
            }
            return number
        }
    }

    /// Text as SQLite's text functions see it: up to the first NUL byte.
    static func cString(_ text: String) -> String {
        guard text.utf8.contains(0) else { return text }
        return String(decoding: text.utf8.prefix { $0 != 0 }, as: UTF8.self)
    }

    /// The value of a CAST to `typeName` (its affinity decides).
    static func cast(_ value: SQLValue, to typeName: String) -> SQLValue {
        switch Affinity(declaredType: typeName) {
        case .integer: return castInteger(value)
        case .real: return castReal(value)
        case .numeric: return castNumeric(value)
        case .text:
            return SQLiteText.textValue(of: value)
        case .blob:
            switch value {
            case .null, .blob: return value
            case .invalidText(let bytes): return .blob(bytes)
            default: return .blob(Array((text(of: value) ?? "").utf8))
            }
        }
    }

    /// SQL truth: NULL is unknown (nil); numbers are true when non-zero; text by its number.
    @inline(__always)
    static func truth(_ value: SQLValue) -> Bool? {
        switch value {
        case .null: return nil
        case .integer(let i): return i != 0
        case .real(let r): return r != 0
        default:
            switch numeric(value) {
            case .integer(let i): return i != 0
            case .real(let r): return r != 0
            default: return false
            }
        }
    }

    // MARK: Arithmetic

    static func arithmetic(_ op: BinaryOperator, _ a: SQLValue, _ b: SQLValue) -> SQLValue {
        if case .null = a { return .null }
        if case .null = b { return .null }
        let x = numeric(a), y = numeric(b)
        if case .integer(let i) = x, case .integer(let j) = y {
            switch op {
            case .add:
                let (r, o) = i.addingReportingOverflow(j)
                return o ? .real(Double(i) + Double(j)) : .integer(r)
            case .subtract:
                let (r, o) = i.subtractingReportingOverflow(j)
                return o ? .real(Double(i) - Double(j)) : .integer(r)
            case .multiply:
                let (r, o) = i.multipliedReportingOverflow(by: j)
                return o ? .real(Double(i) * Double(j)) : .integer(r)
            case .divide:
                if j == 0 { return .null }
                if i == Int64.min && j == -1 { return .real(-Double(i)) }
                return .integer(i / j)
            case .remainder:
                if j == 0 { return .null }
                if j == -1 { return .integer(0) }
                return .integer(i % j)
            default: return .null
            }
        }
        let r = double(x), s = double(y)
        let result: Double
        switch op {
        case .add: result = r + s
        case .subtract: result = r - s
        case .multiply: result = r * s
        case .divide:
            if s == 0 { return .null }
            result = r / s
        case .remainder:
            // SQLite takes each operand's integer value: reals truncated, text by its leading
            // integer digits ('1e3' is 1).
            let i = remainderOperand(a)
            var j = remainderOperand(b)
            if j == 0 { return .null }
            if j == -1 { j = 1 }
            result = Double(i % j)
        default: return .null
        }
        return result.isNaN ? .null : .real(result)
    }

    static func remainderOperand(_ value: SQLValue) -> Int64 {
        switch value {
        case .integer(let i): return i
        case .real(let r): return saturatingInteger(r)
        default:
            if case .integer(let i) = castInteger(value) { return i }
            return 0
        }
    }

    static func double(_ value: SQLValue) -> Double {
        switch value {
        case .integer(let i): return Double(i)
        case .real(let r): return r
        default: return double(numeric(value))
        }
    }

    /// The integer of a value for bitwise operators (reals truncated, text by prefix).
    static func integer(_ value: SQLValue) -> Int64 {
        switch numeric(value) {
        case .integer(let i): return i
        case .real(let r): return saturatingInteger(r)
        default: return 0
        }
    }

    static func bitwise(_ op: BinaryOperator, _ a: SQLValue, _ b: SQLValue) -> SQLValue {
        if case .null = a { return .null }
        if case .null = b { return .null }
        let i = integer(a), j = integer(b)
        switch op {
        case .bitAnd: return .integer(i & j)
        case .bitOr: return .integer(i | j)
        case .shiftLeft, .shiftRight:
            var shift = j
            var left = op == .shiftLeft
            if shift < 0 { left.toggle(); shift = shift == Int64.min ? 64 : -shift }
            if shift >= 64 { return .integer(left || i >= 0 ? 0 : -1) }
            return .integer(left ? Int64(bitPattern: UInt64(bitPattern: i) << UInt64(shift)) : i >> shift)
        default: return .null
        }
    }

    static func negate(_ value: SQLValue) -> SQLValue {
        switch numeric(value) {
        case .integer(let i): return i == Int64.min ? .real(9223372036854775808.0) : .integer(-i)
        case .real(let r): return .real(-r)
        default: return .null
        }
    }
}

/// A value as a hashable key where SQLite's equality decides (1 and 1.0 are one key; text by
/// bytes): for DISTINCT, GROUP BY and IN lists.
struct ValueKey: Hashable {
    var values: [SQLValue]

    static func == (a: ValueKey, b: ValueKey) -> Bool {
        guard a.values.count == b.values.count else { return false }
        for i in 0..<a.values.count where SQLValues.compare(a.values[i], b.values[i]) != 0 { return false }
        return true
    }

    func hash(into hasher: inout Hasher) {
        for value in values {
            switch value {
            case .null: hasher.combine(0 as UInt8)
            case .integer(let i): hasher.combine(1 as UInt8); hasher.combine(Double(i))
            case .real(let r): hasher.combine(1 as UInt8); hasher.combine(r)
            case .text(let t): hasher.combine(2 as UInt8); hasher.combine(t.utf8.count); for b in t.utf8.prefix(32) { hasher.combine(b) }
            case .invalidText(let t): hasher.combine(2 as UInt8); hasher.combine(t.count); for b in t.prefix(32) { hasher.combine(b) }
            case .blob(let b): hasher.combine(3 as UInt8); hasher.combine(b)
            }
        }
    }
}
