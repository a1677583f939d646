import LogStore

/// Entry points for the fuzzers in Fuzz/ (`@_spi(Fuzzing) import DAO`). Not part of the public
/// API. The XML config loader and the `<if>` expression parser are reached through the public
/// `DAOProxy.checkConfig` and `DAOProxy.checkExpression`.
@_spi(Fuzzing)
public enum DAOFuzzing {
    /// Parses `sql` as one statement of the subset. Returns whether it parsed.
    public static func parseSQL(_ sql: String) -> Bool {
        (try? Parser.parse(sql)) != nil
    }
}
