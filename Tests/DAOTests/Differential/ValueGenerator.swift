import DAO
import Foundation

/// SQL literals of every storage class, weighted towards the values where engines disagree.
enum ValueGenerator {
    /// F13: an integer and a real near 2^63 compare exactly; until fixed, no Int64.max.
    static var integers: [String] {
        ["0", "-1", "1", "2", "7", "42", "-17", "100", "-9223372036854775808", "4294967296", "-2147483648"]
            + (OpenFindings.avoid("F13") ? [] : ["9223372036854775807"])
    }
    /// Reals are never integral below 2^53, so equal integer and real values do not both occur
    /// in a column without affinity (their tie would make min/max/DISTINCT pick by scan order).
    /// F16: text of a tiny real read back as a real (SQLite's conversion is not correctly rounded).
    static var reals: [String] {
        ["0.5", "-2.5", "1e308", "-1e308", "3.14159", "2.5e15", "-0.125", "1.5", "123.456"] + (OpenFindings.avoid("F16") ? [] : ["1e-300"])
    }
    static var texts: [String] { textsWithoutF13 + (OpenFindings.avoid("F13") ? [] : ["'9223372036854775808'"]) }
    static let textsWithoutF13 = ["'12'", "' 12 '", "'1e3'", "''", "'abc'", "'ABC'", "'Abc%'", "'a_c'", "'é'", "'É'", "'0x10'", "'-0'",
                        "'12abc'", "'0.5'", "'x''y'", "' '", "'zz'", "'a'", "'1'"]
    /// F11: text holding a NUL (a blob read as text); F18: invalid UTF-8 read as text and
    /// written back as bytes. Each avoided while open.
    static var blobs: [String] {
        ["x''", "x'3132'", "x'61'"] + (OpenFindings.avoid("F11") ? ["x'01'"] : ["x'00'"]) + (OpenFindings.avoid("F18") ? ["x'c3a9'"] : ["x'ff00'"])
    }

    /// Texts made from blobs (issue 25): bytes that are not valid UTF-8 (a stray continuation
    /// byte, a cut sequence, an overlong form, a surrogate, 0xFF, a NUL inside) and valid ones,
    /// with ASCII around them. Expressions, not literals: no parameter and no DEFAULT takes them.
    static var textsFromBlobs: [String] {
        guard !OpenFindings.avoid("F18") else { return [] }
        return ["x'8e30'", "x'c384c39631'", "x'c3'", "x'61ff62'", "x'c0af'", "x'eda080'", "x'f09f9880'", "x'41e282'", "x'ff00'",
                "x'6162c3a9'", "x'e282ac'", "x'80'", "x'f4908080'", "x'2520ff'"].map { "CAST(\($0) AS TEXT)" }
    }

    /// One literal of a random storage class (`NULL` only when `allowNull`; with
    /// `expressions`, sometimes a text made from a blob).
    static func literal(random: inout SeededRandom, allowNull: Bool = true, expressions: Bool = true) -> String {
        switch random.int(0...9) {
        case 0 where allowNull: return "NULL"
        case 0, 1, 2: return random.pick(integers)
        case 3, 4: return random.pick(reals)
        case 5 where expressions && !textsFromBlobs.isEmpty && random.chance(0.35): return random.pick(textsFromBlobs)
        case 5, 6, 7: return random.pick(texts)
        case 8: return random.pick(blobs)
        case 9 where random.chance(0.3):
            // Other spellings of numbers: a point with no digits on one side, an exponent, an
            // integer too large for 64 bits (a real).
            // Reals stay non-integral below 2^53 (see `reals`).
            return random.pick(["5E-1", ".5", "12.5e-1", "99999999999999999999", "1e-2", "007", "-.25"])
        default: return String(random.int(-5...20))
        }
    }

    /// A literal for `column`. An INTEGER PRIMARY KEY never gets the largest rowid: SQLite then
    /// picks the next rowid at random, which no second engine can match.
    static func literal(for column: GeneratedColumn, random: inout SeededRandom) -> String {
        guard column.integerPrimaryKey else { return literal(random: &random) }
        var choices = ["NULL", "NULL", "NULL", "1", "2", "0", "42", "'12'", "' 12 '", "'1e3'", "0.5", "3.0", "'abc'", "x'3132'", String(random.int(1...30))]
        // F2: the next rowid after negative ones.
        if !OpenFindings.avoid("F2") { choices += ["-1", "-9223372036854775808"] }
        return random.pick(choices)
    }

    /// A small integer literal.
    static func smallInteger(random: inout SeededRandom) -> String { String(random.int(-2...10)) }

    /// A LIKE pattern.
    static func likePattern(random: inout SeededRandom) -> String {
        random.pick(["'a%'", "'%b%'", "'_'", "'%'", "'1%'", "'ABC'", "'%c'", "'a_c'", "'é'", "'%\\%%'", "'' ", "'_2%'"]
                    + (OpenFindings.avoid("F18") ? [] : ["CAST(x'25ff25' AS TEXT)", "CAST(x'615f' AS TEXT)", "CAST(x'8e25' AS TEXT)"]))
    }

    /// A GLOB pattern.
    static func globPattern(random: inout SeededRandom) -> String {
        random.pick(["'a*'", "'*b*'", "'?'", "'*'", "'1*'", "'[a-c]*'", "'A?c'", "'[^a]*'"]
                    + (OpenFindings.avoid("F18") ? [] : ["CAST(x'2aff2a' AS TEXT)", "CAST(x'3f30' AS TEXT)", "CAST(x'5b80ff5d2a' AS TEXT)"]))
    }

    /// The value a literal of these lists spells (what binding it as a parameter passes).
    static func value(ofLiteral literal: String) -> DAOValue {
        if literal == "NULL" { return .null }
        if literal.hasPrefix("x'") {
            let hex = Array(literal.dropFirst(2).dropLast().utf8)
            var bytes: [UInt8] = []
            var index = 0
            while index + 1 < hex.count {
                bytes.append(UInt8(String(decoding: hex[index...index + 1], as: UTF8.self), radix: 16) ?? 0)
                index += 2
            }
            return .blob(bytes)
        }
        if literal.hasPrefix("'") {
            return .text(String(literal.dropFirst().dropLast()).replacingOccurrences(of: "''", with: "'"))
        }
        if let integer = Int64(literal) { return .integer(integer) }
        return .real(Double(literal) ?? 0)
    }
}

/// The parameters of one generated statement: `:p1`, `:p2`, ... in order of first appearance.
final class ParameterBag {
    private(set) var values: [DAOValue] = []

    /// A new parameter bound to `literal`'s value; returns its `:name` (or the expression
    /// itself for a text made from a blob, which no `DAOValue` can carry).
    func add(literal: String) -> String {
        if literal.hasPrefix("CAST(") { return literal }
        values.append(ValueGenerator.value(ofLiteral: literal))
        return ":p\(values.count)"
    }
}
