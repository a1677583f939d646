/// The WHERE clause of a typed query, built OrmLite's way: conditions in order, joined by
/// `and()` / `or()` (which combine the clause before with the clause after, left to right, each
/// pair parenthesized) and negated by `not()` (which applies to the next clause).
///
/// ```swift
/// users.queryBuilder().where { $0.eq("name", "ann").and().lt("color", 3) }
/// ```
/// Two conditions with no operator between them are joined with AND. Column names must be the
/// record's coding keys; an unknown column, a dangling `and()`/`or()`/`not()` or an empty clause
/// is reported when the query runs (`DAOError.noSuchColumn` / `.syntax`). Values always bind as
/// `?` parameters, never spliced into the SQL.
public final class Where<T: DAORecord> {
    private enum Token {
        case clause(String, [DAOValue])
        case and, or, not
    }

    private let columns: Set<String>
    private var tokens: [Token] = []
    private var problem: DAOError?

    init(columns: Set<String>) {
        self.columns = columns
    }

    /// `column = value`; a nil value means `column IS NULL`.
    public func eq(_ column: String, _ value: (any DAOValueConvertible)?) -> Where {
        guard let value else { return isNull(column) }
        return add(column, "= ?", [value.daoValue])
    }

    /// `column <> value`; a nil value means `column IS NOT NULL`.
    public func ne(_ column: String, _ value: (any DAOValueConvertible)?) -> Where {
        guard let value else { return isNotNull(column) }
        return add(column, "<> ?", [value.daoValue])
    }

    /// `column < value`.
    public func lt(_ column: String, _ value: any DAOValueConvertible) -> Where { add(column, "< ?", [value.daoValue]) }
    /// `column <= value`.
    public func le(_ column: String, _ value: any DAOValueConvertible) -> Where { add(column, "<= ?", [value.daoValue]) }
    /// `column > value`.
    public func gt(_ column: String, _ value: any DAOValueConvertible) -> Where { add(column, "> ?", [value.daoValue]) }
    /// `column >= value`.
    public func ge(_ column: String, _ value: any DAOValueConvertible) -> Where { add(column, ">= ?", [value.daoValue]) }

    /// `column LIKE pattern` (SQLite's LIKE: `%`, `_`, ASCII case-insensitive).
    public func like(_ column: String, _ pattern: String) -> Where { add(column, "LIKE ?", [.text(pattern)]) }

    /// `column BETWEEN low AND high` (both ends included).
    public func between(_ column: String, _ low: any DAOValueConvertible, _ high: any DAOValueConvertible) -> Where {
        add(column, "BETWEEN ? AND ?", [low.daoValue, high.daoValue])
    }

    /// `column IN (values)`; an empty list matches no row.
    public func `in`(_ column: String, _ values: [any DAOValueConvertible]) -> Where {
        membership(column, values, negated: false)
    }

    /// `column NOT IN (values)`; an empty list matches every row.
    public func notIn(_ column: String, _ values: [any DAOValueConvertible]) -> Where {
        membership(column, values, negated: true)
    }

    /// `column IS NULL`.
    public func isNull(_ column: String) -> Where { add(column, "IS NULL", []) }
    /// `column IS NOT NULL`.
    public func isNotNull(_ column: String) -> Where { add(column, "IS NOT NULL", []) }

    /// Joins the clause before with the clause after: `(before AND after)`.
    public func and() -> Where { tokens.append(.and); return self }
    /// Joins the clause before with the clause after: `(before OR after)`.
    public func or() -> Where { tokens.append(.or); return self }
    /// Negates the next clause: `NOT (next)`.
    public func not() -> Where { tokens.append(.not); return self }

    private func membership(_ column: String, _ values: [any DAOValueConvertible], negated: Bool) -> Where {
        guard !values.isEmpty else {
            // SQLite: `x IN ()` is false and `x NOT IN ()` true for every x, NULL included.
            guard check(column) else { return self }
            tokens.append(.clause(negated ? "1" : "0", []))
            return self
        }
        let marks = Array(repeating: "?", count: values.count).joined(separator: ", ")
        return add(column, "\(negated ? "NOT IN" : "IN") (\(marks))", values.map(\.daoValue))
    }

    private func check(_ column: String) -> Bool {
        guard columns.contains(column) else {
            if problem == nil { problem = .noSuchColumn(column) }
            return false
        }
        return true
    }

    private func add(_ column: String, _ predicate: String, _ arguments: [DAOValue]) -> Where {
        guard check(column) else { return self }
        tokens.append(.clause("\(SQLIdentifier.quoted(column)) \(predicate)", arguments))
        return self
    }

    /// The condition's SQL (without `WHERE`) and its arguments; nil when no condition was added.
    /// - Throws: `DAOError.noSuchColumn` for an unknown column, `.syntax` for a misplaced
    ///   `and()`, `or()` or `not()`.
    func build() throws -> (sql: String, arguments: [DAOValue])? {
        if let problem { throw problem }
        var result: (sql: String, arguments: [DAOValue])?
        var pendingJoin: String?
        var negate = false
        for token in tokens {
            switch token {
            case .and, .or:
                guard result != nil, pendingJoin == nil, !negate else { throw misplaced(token) }
                pendingJoin = { if case .and = token { return "AND" } else { return "OR" } }()
            case .not:
                guard !negate else { throw misplaced(token) }
                negate = true
            case .clause(let sql, let arguments):
                let clause = negate ? "NOT (\(sql))" : sql
                negate = false
                if let current = result {
                    result = ("(\(current.sql)) \(pendingJoin ?? "AND") (\(clause))", current.arguments + arguments)
                } else {
                    result = (clause, arguments)
                }
                pendingJoin = nil
            }
        }
        if pendingJoin != nil || negate {
            throw DAOError.syntax(message: "where clause ends with and(), or() or not() and no clause after it", line: 1, column: 1)
        }
        return result
    }

    private func misplaced(_ token: Token) -> DAOError {
        let name: String
        switch token {
        case .and: name = "and()"
        case .or: name = "or()"
        default: name = "not()"
        }
        return .syntax(message: "\(name) needs a clause before it (and()/or()) and one after it", line: 1, column: 1)
    }
}
