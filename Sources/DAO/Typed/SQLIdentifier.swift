import Foundation

/// SQL identifiers in generated statements.
enum SQLIdentifier {
    /// `name` as a double-quoted SQL identifier (inner quotes doubled), so no name can end the
    /// identifier early and inject SQL.
    static func quoted(_ name: String) -> String {
        "\"" + name.replacingOccurrences(of: "\"", with: "\"\"") + "\""
    }
}
