/// SQL literals of every storage class, weighted towards the values where engines disagree.
enum ValueGenerator {
    static let integers = ["0", "-1", "1", "2", "7", "42", "-17", "100", "9223372036854775807", "-9223372036854775808",
                           "4294967296", "-2147483648"]
    /// Reals are never integral below 2^53, so equal integer and real values do not both occur
    /// in a column without affinity (their tie would make min/max/DISTINCT pick by scan order).
    static let reals = ["0.5", "-2.5", "1e308", "-1e308", "3.14159", "1e-300", "2.5e15", "-0.125", "1.5", "123.456"]
    static let texts = ["'12'", "' 12 '", "'1e3'", "''", "'abc'", "'ABC'", "'Abc%'", "'a_c'", "'é'", "'É'", "'0x10'", "'-0'",
                        "'12abc'", "'9223372036854775808'", "'0.5'", "'x''y'", "' '", "'zz'", "'a'", "'1'"]
    static let blobs = ["x''", "x'00'", "x'3132'", "x'ff00'", "x'61'"]

    /// One literal of a random storage class (`NULL` only when `allowNull`).
    static func literal(random: inout SeededRandom, allowNull: Bool = true) -> String {
        switch random.int(0...9) {
        case 0 where allowNull: return "NULL"
        case 0, 1, 2: return random.pick(integers)
        case 3, 4: return random.pick(reals)
        case 5, 6, 7: return random.pick(texts)
        case 8: return random.pick(blobs)
        default: return String(random.int(-5...20))
        }
    }

    /// A literal for `column`. An INTEGER PRIMARY KEY never gets the largest rowid: SQLite then
    /// picks the next rowid at random, which no second engine can match.
    static func literal(for column: GeneratedColumn, random: inout SeededRandom) -> String {
        guard column.integerPrimaryKey else { return literal(random: &random) }
        return random.pick(["NULL", "NULL", "NULL", "1", "2", "-1", "0", "42", "-9223372036854775808", "'12'", "' 12 '", "'1e3'", "0.5", "3.0", "'abc'", "x'3132'", String(random.int(1...30))])
    }

    /// A small integer literal.
    static func smallInteger(random: inout SeededRandom) -> String { String(random.int(-2...10)) }

    /// A LIKE pattern.
    static func likePattern(random: inout SeededRandom) -> String {
        random.pick(["'a%'", "'%b%'", "'_'", "'%'", "'1%'", "'ABC'", "'%c'", "'a_c'", "'é'", "'%\\%%'", "'' ", "'_2%'"])
    }

    /// A GLOB pattern.
    static func globPattern(random: inout SeededRandom) -> String {
        random.pick(["'a*'", "'*b*'", "'?'", "'*'", "'1*'", "'[a-c]*'", "'A?c'", "'[^a]*'"])
    }
}
