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
    /// A DAO config has no method of that id (with that argument count).
    case noSuchMethod(String)
    /// A `$`-prefixed argument of a DAO config method was nil.
    case nilArgument(String)
    /// A DAO config that does not load; `line` and `column` are 1-based, in the config file.
    case config(message: String, line: Int, column: Int)
}

/// Any other error SQLite reports for a statement, with SQLite's message: "integer overflow",
/// "datatype mismatch", "table t already exists", "table t has 2 columns but 3 values were
/// supplied", "cannot start a transaction within a transaction", ...
///
/// A type of its own rather than a case of `DAOError`, whose cases are fixed by the API
/// contract (code that switches over them keeps compiling). Like `DAOError`, it leaves the
/// tables as they were before the statement.
public struct SQLExecutionError: Error, Sendable, Equatable, CustomStringConvertible {
    /// SQLite's message for the error.
    public let message: String

    /// An error with SQLite's `message`.
    public init(_ message: String) { self.message = message }

    public var description: String { message }
}
