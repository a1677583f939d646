/// One SQL value, in SQLite's five storage classes.
///
/// Results of the SQL subset come back as these, with the storage class SQLite would give
/// (`SELECT 1` is `.integer(1)`, `SELECT 1.0` is `.real(1.0)`, `SELECT '1'` is `.text("1")`).
/// Literals build them: `let v: DAOValue = 42`, `"ann"`, `2.5`, `nil`.
public enum DAOValue: Equatable, Sendable, ExpressibleByIntegerLiteral, ExpressibleByStringLiteral,
    ExpressibleByFloatLiteral, ExpressibleByNilLiteral
{
    /// SQL NULL.
    case null
    /// A 64-bit signed integer.
    case integer(Int64)
    /// An IEEE 754 double.
    case real(Double)
    /// UTF-8 text.
    case text(String)
    /// Bytes.
    case blob([UInt8])

    /// An `.integer`.
    public init(integerLiteral value: Int64) { self = .integer(value) }
    /// A `.text`.
    public init(stringLiteral value: String) { self = .text(value) }
    /// A `.real`.
    public init(floatLiteral value: Double) { self = .real(value) }
    /// `.null`.
    public init(nilLiteral: ()) { self = .null }
}
