/// One SQL value, in SQLite's five storage classes.
///
/// Results of the SQL subset come back as these, with the storage class SQLite would give
/// (`SELECT 1` is `.integer(1)`, `SELECT 1.0` is `.real(1.0)`, `SELECT '1'` is `.text("1")`).
/// Literals build them: `let v: DAOValue = 42`, `"ann"`, `2.5`, `nil`.
///
/// Text is bytes, as in SQLite: the engine stores, compares, sorts, hashes and measures a
/// TEXT value's bytes exactly as they are, valid UTF-8 or not (`CAST(x'8e30' AS TEXT)` is a
/// text of two bytes). A Swift `String` cannot hold bytes that are not valid UTF-8, so such a
/// text comes out of a query as `.text` with each ill-formed sequence replaced by U+FFFD
/// (`String(decoding:as:)`); its exact bytes are `SQLResult.textBytes(row:column:)`, a `Data`
/// or `[UInt8]` property of a typed `Dao` record, an XML `binary` result, or
/// `CAST(column AS BLOB)`. To store such bytes as text, bind them as a blob and write
/// `CAST(? AS TEXT)`.
public enum DAOValue: Equatable, Sendable, ExpressibleByIntegerLiteral, ExpressibleByStringLiteral,
    ExpressibleByFloatLiteral, ExpressibleByNilLiteral
{
    /// SQL NULL.
    case null
    /// A 64-bit signed integer.
    case integer(Int64)
    /// An IEEE 754 double.
    case real(Double)
    /// Text (valid UTF-8; see above for text whose bytes are not).
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
