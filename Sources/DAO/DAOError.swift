/// What went wrong in the DAO layer: in a statement, a schema, a config or a call.
///
/// Every error leaves the tables as they were before the statement (or the transaction, for
/// errors inside one that the caller rolls back).
public enum DAOError: Error, Sendable {
    /// A construct outside the supported subset, named: "JOIN", "subquery", "WINDOW", ...
    case unsupported(String)
    /// A statement that does not parse; `line` and `column` are 1-based, in the statement's text.
    case syntax(message: String, line: Int, column: Int)
    /// A UNIQUE, NOT NULL or PRIMARY KEY violation, worded like SQLite's message.
    case constraint(String)
    /// A table the statement names does not exist.
    case noSuchTable(String)
    /// A column the statement names does not exist.
    case noSuchColumn(String)
    /// Any other error SQLite reports for the statement, with SQLite's message: "integer
    /// overflow", "datatype mismatch", "table t already exists", "table t has 2 columns but 3
    /// values were supplied", "cannot start a transaction within a transaction", ...
    case execution(String)
    /// A DAO config has no method of that id (with that argument count).
    case noSuchMethod(String)
    /// A `$`-prefixed argument of a DAO config method was nil.
    case nilArgument(String)
    /// A DAO config that does not load; `line` and `column` are 1-based, in the config file.
    case config(message: String, line: Int, column: Int)
}
