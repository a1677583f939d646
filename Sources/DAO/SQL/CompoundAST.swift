/// The operator joining two SELECTs of a compound select.
enum CompoundOperator: Sendable {
    case union, unionAll, intersect, except

    /// Its name as SQLite's messages spell it.
    var name: String {
        switch self {
        case .union: return "UNION"
        case .unionAll: return "UNION ALL"
        case .intersect: return "INTERSECT"
        case .except: return "EXCEPT"
        }
    }
}

/// One SELECT core after the first of a compound select, with the operator before it.
struct CompoundTerm: Sendable {
    var op: CompoundOperator
    var select: SelectStatement
}

/// One table of a WITH clause: `name [(columns)] AS (select)`.
struct CommonTableExpression: Sendable {
    var name: String
    var columns: [String]?
    var select: SelectStatement
}

/// A WITH clause: its tables, in the order written (each may read the ones before it, and
/// itself when the clause is RECURSIVE).
struct WithClause: Sendable {
    var recursive: Bool
    var tables: [CommonTableExpression]
}

/// `INDEXED BY name` or `NOT INDEXED` after a SELECT's table.
enum IndexHint: Sendable {
    case indexedBy(String)
    case notIndexed
}

/// `ON CONFLICT [(columns)] DO NOTHING | DO UPDATE SET ... [WHERE ...]` of an INSERT.
struct UpsertClause: Sendable {
    /// The conflict target's columns; nil: any uniqueness constraint.
    var target: [String]?
    /// The `COLLATE` of each target column, where given: the index must compare it so.
    var targetCollations: [Collation?] = []
    /// DO UPDATE's assignments; nil for DO NOTHING.
    var assignments: [(String, Expr)]?
    var whereClause: Expr?
}
