/// Binary operators of the subset.
enum BinaryOperator: Sendable {
    case add, subtract, multiply, divide, remainder, concat
    case equal, notEqual, less, lessEqual, greater, greaterEqual
    case isOp, isNot
    case and, or
    case bitAnd, bitOr, shiftLeft, shiftRight

    var isComparison: Bool {
        switch self {
        case .equal, .notEqual, .less, .lessEqual, .greater, .greaterEqual, .isOp, .isNot: return true
        default: return false
        }
    }
}

enum UnaryOperator: Sendable { case negate, plus, not, bitNot }

/// A column affinity (SQLite's "type affinity").
enum Affinity: Sendable, Equatable {
    case integer, text, blob, real, numeric

    /// SQLite's rules for a declared type name (section 3.1 of its datatype documentation).
    init(declaredType: String) {
        let t = declaredType.uppercased()
        if t.contains("INT") { self = .integer }
        else if t.contains("CHAR") || t.contains("CLOB") || t.contains("TEXT") { self = .text }
        else if t.contains("BLOB") || t.isEmpty { self = .blob }
        else if t.contains("REAL") || t.contains("FLOA") || t.contains("DOUB") { self = .real }
        else { self = .numeric }
    }

    var isNumeric: Bool { self == .integer || self == .real || self == .numeric }
}

/// An expression: parsed form, then resolved in place (columns to slots, aggregates to
/// accumulator slots) before it runs.
indirect enum Expr: Sendable {
    case literal(SQLValue)
    /// A bound parameter, by 0-based slot.
    case parameter(Int)
    /// A column as written (`t.a`, `a`, `rowid`); replaced by `.slot` when resolved.
    case column(table: String?, name: String)
    /// A resolved column: index into the row (-1 = rowid), with its affinity.
    case slot(Int, Affinity)
    case unary(UnaryOperator, Expr)
    case binary(BinaryOperator, Expr, Expr)
    case isNull(Expr, negated: Bool)
    case inList(Expr, [Expr], negated: Bool)
    case between(Expr, Expr, Expr, negated: Bool)
    case like(Expr, Expr, escape: Expr?, negated: Bool)
    case glob(Expr, Expr, negated: Bool)
    case caseWhen(base: Expr?, whens: [(Expr, Expr)], otherwise: Expr?)
    case cast(Expr, typeName: String)
    /// A function call as written; aggregates are replaced by `.aggregate` when resolved.
    case function(name: String, args: [Expr], distinct: Bool, star: Bool)
    /// The result of aggregate number n of the query (for the current group).
    case aggregate(Int)
    /// A column of an enclosing query's row (correlated subquery): `depth` queries out (1 =
    /// the query directly around), slot `index` of that row (-1 = its rowid).
    case outerSlot(depth: Int, index: Int, Affinity)
    /// A scalar subquery: its first row's first column, or NULL.
    case subquery(SubqueryPlan)
    /// `[NOT] EXISTS (SELECT ...)`.
    case exists(SubqueryPlan, negated: Bool)
    /// `x [NOT] IN (SELECT ...)` and `x [NOT] IN table`.
    case inSelect(Expr, SubqueryPlan, negated: Bool)

    /// The expressions directly inside this one.
    var children: [Expr] {
        switch self {
        case .literal, .parameter, .column, .slot, .aggregate, .outerSlot, .subquery, .exists: return []
        case .inSelect(let operand, _, _): return [operand]
        case .unary(_, let operand), .isNull(let operand, _), .cast(let operand, _): return [operand]
        case .binary(_, let left, let right), .glob(let left, let right, _): return [left, right]
        case .inList(let operand, let list, _): return [operand] + list
        case .between(let operand, let low, let high, _): return [operand, low, high]
        case .like(let operand, let pattern, let escape, _): return [operand, pattern] + (escape.map { [$0] } ?? [])
        case .caseWhen(let base, let whens, let otherwise):
            return (base.map { [$0] } ?? []) + whens.flatMap { [$0.0, $0.1] } + (otherwise.map { [$0] } ?? [])
        case .function(_, let args, _, _): return args
        }
    }

    /// Nodes on the longest path from this one to a leaf (a literal is 1), found without
    /// recursion, so any tree can be measured.
    var depth: Int {
        var deepest = 0
        var pending: [(Expr, Int)] = [(self, 1)]
        while let (expr, level) = pending.popLast() {
            deepest = max(deepest, level)
            for child in expr.children { pending.append((child, level + 1)) }
        }
        return deepest
    }

    /// A value that takes no affinity in a comparison: what replace() hands back unchanged.
    /// SQLite read that argument as text first, so it carries a text form (MEM_Str) beside its
    /// number, and applying an affinity to it changes nothing (finding F19).
    var keepsStorageClass: Bool {
        if case .function(name: "replace", _, _, _) = self { return true }
        if let (inner, _, _) = Parser.marked(self) { return inner.keepsStorageClass }
        return false
    }

    /// Whether the expression names a column (its affinity matters in comparisons).
    var affinity: Affinity? {
        switch self {
        case .slot(_, let affinity), .outerSlot(_, _, let affinity): return affinity
        case .cast(_, let typeName): return Affinity(declaredType: typeName)
        case .function(Parser.collateFunctionName, let args, _, _) where args.count == 2,
             .function(Parser.comparedByFunctionName, let args, _, _) where args.count == 2,
             .function(Parser.columnCollationFunctionName, let args, _, _) where args.count == 2:
            return args[0].affinity   // COLLATE leaves the affinity as it is (SQLite)
        default: return nil
        }
    }
}

/// A column of CREATE TABLE or ALTER TABLE ADD COLUMN.
struct ColumnDefinition: Sendable {
    var name: String
    var typeName: String
    var primaryKey = false
    var primaryKeyDescending = false
    var autoincrement = false
    var notNull = false
    var unique = false
    /// The `ON CONFLICT` clauses of the column's PRIMARY KEY, NOT NULL and UNIQUE.
    var primaryKeyConflict: ConflictMode?
    var notNullConflict: ConflictMode?
    var uniqueConflict: ConflictMode?
    var defaultValue: Expr?
    /// The default's SQL text as written (persisted in the catalog).
    var defaultText: String?
    /// A REFERENCES constraint of the column.
    var references: ForeignKey?
    /// Its CHECK constraints.
    var checks: [CheckConstraint] = []
    /// Its `COLLATE` clause (nil: none, BINARY).
    var collation: Collation?
}

struct IndexedColumn: Sendable {
    var name: String
    var descending: Bool
    /// `COLLATE` after the name (nil: the column's own collation).
    var collation: Collation? = nil
}

/// A FOREIGN KEY or REFERENCES clause: kept in the catalog and listed by `PRAGMA
/// foreign_key_list`, not enforced (SQLite's default, `PRAGMA foreign_keys` off).
struct ForeignKey: Sendable, Equatable {
    /// The child columns (the one column of a REFERENCES column constraint).
    var columns: [String]
    var parent: String
    /// The parent's columns, nil when not given (its primary key).
    var parentColumns: [String]?
    /// `ON DELETE` / `ON UPDATE` actions as SQLite names them: NO ACTION, RESTRICT, SET NULL,
    /// SET DEFAULT, CASCADE.
    var onDelete = "NO ACTION"
    var onUpdate = "NO ACTION"
    /// `[NOT] DEFERRABLE [INITIALLY DEFERRED | IMMEDIATE]` as written (upper-cased), or nil.
    var deferrable: String?
    /// Declared on its column (`a REFERENCES p`), not as a table constraint.
    var onColumn = false

    /// The clause after REFERENCES: `"p" ("id") ON DELETE CASCADE ...`.
    var referencesText: String {
        var text = SQLText.quote(parent)
        if let parentColumns { text += " (" + parentColumns.map(SQLText.quote).joined(separator: ", ") + ")" }
        if onDelete != "NO ACTION" { text += " ON DELETE " + onDelete }
        if onUpdate != "NO ACTION" { text += " ON UPDATE " + onUpdate }
        if let deferrable { text += " " + deferrable }
        return text
    }
}

/// A CHECK constraint: a row whose expression is false (not NULL) breaks it.
struct CheckConstraint: Sendable {
    /// `CONSTRAINT name` before it, if any: SQLite's message names it; otherwise the text.
    var name: String?
    /// The expression as written (the catalog keeps it; the message quotes it).
    var text: String
    var expr: Expr
    /// The column it was declared on, nil for a table constraint.
    var column: String?
}

struct CreateTableStatement: Sendable {
    var name: String
    var ifNotExists: Bool
    var columns: [ColumnDefinition]
    var primaryKey: [IndexedColumn]?
    var uniques: [[IndexedColumn]]
    /// The `ON CONFLICT` clauses of the table's PRIMARY KEY and of each UNIQUE (in order).
    var primaryKeyConflict: ConflictMode? = nil
    var uniqueConflicts: [ConflictMode?] = []
    var foreignKeys: [ForeignKey] = []
    /// Column CHECK constraints (in column order), then the table's.
    var checks: [CheckConstraint] = []
    /// CREATE TEMP TABLE: in memory for the SQLDatabase's lifetime (TemporaryTables.swift).
    var temporary = false
}

struct CreateIndexStatement: Sendable {
    var name: String
    var table: String
    var unique: Bool
    var ifNotExists: Bool
    var columns: [IndexedColumn]
}

/// How INSERT OR / UPDATE OR resolves a broken constraint.
/// How a statement resolves a constraint violation: `INSERT OR ...` / `UPDATE OR ...`, or,
/// with `unspecified` (no OR clause), each constraint's own `ON CONFLICT` clause, ABORT where it
/// has none (SQLite's rule).
enum ConflictMode: Sendable, Equatable {
    case abort, fail, replace, ignore, rollback, unspecified

    /// The resolution for a constraint declared with `declared` (its ON CONFLICT clause).
    func resolved(_ declared: ConflictMode?) -> ConflictMode {
        self == .unspecified ? (declared ?? .abort) : self
    }

    /// The clause's keyword (ABORT for `unspecified`).
    var keyword: String {
        switch self {
        case .abort, .unspecified: return "ABORT"
        case .fail: return "FAIL"
        case .replace: return "REPLACE"
        case .ignore: return "IGNORE"
        case .rollback: return "ROLLBACK"
        }
    }
}

struct InsertStatement: Sendable {
    var table: String
    var mode: ConflictMode
    var columns: [String]?
    /// VALUES rows, or nil when the source is a SELECT / DEFAULT VALUES.
    var values: [[Expr]]?
    var select: SelectStatement?
    /// ON CONFLICT ... DO NOTHING / DO UPDATE (Upsert.swift).
    var upsert: UpsertClause? = nil
    /// RETURNING's result columns (Returning.swift).
    var returning: [ResultColumn]? = nil
    /// The WITH clause before it (CommonTableExpressions.swift).
    var with: WithClause? = nil
}

struct ResultColumn: Sendable {
    enum Kind: Sendable { case all, expression(Expr) }
    var kind: Kind
    var alias: String?
    /// The expression's text as written (SQLite's column name when there is no alias).
    var text: String
    /// `t` of `t.*` (nil for `*` and expressions).
    var qualifier: String? = nil
}

/// How a FROM item joins the items before it.
enum JoinOperator: Sendable { case inner, left, cross }

/// One item of a FROM clause with several sources (joins) or a subquery.
struct FromItem: Sendable {
    enum Source: Sendable {
        /// A table or view, by name.
        case table(String)
        /// `(SELECT ...)`.
        case subquery(SelectStatement)
    }
    var source: Source
    var alias: String?
    /// How it joins the items before it (the first item: `.inner`).
    var join: JoinOperator = .inner
    var natural = false
    var on: Expr?
    var using: [String]?
    /// INDEXED BY / NOT INDEXED after it (IndexHints.swift; used only when it is the one table).
    var indexHint: IndexHint? = nil
    /// The window functions computed over a subquery's rows: set only by the rewrite of a
    /// SELECT that calls them (SQL/WindowRewrite.swift).
    var windows: WindowStage? = nil
    /// The names a subquery's columns go by (a WITH table's `c(p, q)` inlined:
    /// SQL/CommonTableInlining.swift); nil: its own.
    var columnNames: [String]? = nil
}

struct OrderTerm: Sendable {
    var expr: Expr
    var descending: Bool
}

struct SelectStatement: Sendable {
    var distinct: Bool
    var columns: [ResultColumn]
    var table: String?
    var tableAlias: String?
    var whereClause: Expr?
    var groupBy: [Expr]
    var having: Expr?
    var orderBy: [OrderTerm]
    var limit: Expr?
    var offset: Expr?
    /// The SELECT cores after this one when it is a compound select (its ORDER BY, LIMIT and
    /// OFFSET then apply to the whole; CompoundSelect.swift).
    var compound: [CompoundTerm] = []
    /// The WITH clause before it (CommonTableExpressions.swift).
    var with: WithClause? = nil
    /// INDEXED BY / NOT INDEXED on its table (IndexHints.swift).
    var indexHint: IndexHint? = nil
    /// The FROM clause when it is more than one plain table (joins) or holds a subquery;
    /// empty when it is one table (`table`, `tableAlias`) or none.
    var from: [FromItem] = []
    /// `WINDOW name AS (...)` definitions, in order (read by the window rewrite as it parses).
    var windowDefinitions: [(name: String, definition: WindowDefinition)] = []
}

/// `CREATE [TEMP] VIEW [IF NOT EXISTS] name [(columns)] AS select`.
struct CreateViewStatement: Sendable {
    var name: String
    var temporary: Bool
    var ifNotExists: Bool
    /// Names given to the view's columns (nil: the query's own).
    var columns: [String]?
    var select: SelectStatement
    /// The statement as written (the catalog keeps it).
    var text: String
}

struct UpdateStatement: Sendable {
    var table: String
    var assignments: [(String, Expr)]
    var whereClause: Expr?
    var returning: [ResultColumn]? = nil
    /// `UPDATE OR REPLACE | IGNORE | ABORT | FAIL` (what Android's `updateWithOnConflict`
    /// writes); `unspecified` when none is given.
    var mode: ConflictMode = .unspecified
    /// The WITH clause before it (CommonTableExpressions.swift).
    var with: WithClause? = nil
}

struct DeleteStatement: Sendable {
    var table: String
    var whereClause: Expr?
    var returning: [ResultColumn]? = nil
    /// The WITH clause before it (CommonTableExpressions.swift).
    var with: WithClause? = nil
}

/// One parsed statement of the subset.
/// `PRAGMA [main.]name`, `PRAGMA name = value` or `PRAGMA name(value)`.
struct PragmaStatement: Sendable {
    /// Lower-cased.
    var name: String
    /// The value as written: a name or string's text, a number with its sign; nil for none.
    var value: String?
    /// Whether the value was given with `=` (a setting), not in parentheses (an argument).
    var assigns: Bool
}

enum Statement: Sendable {
    case createTable(CreateTableStatement)
    case createIndex(CreateIndexStatement)
    case dropTable(String, ifExists: Bool)
    case dropIndex(String, ifExists: Bool)
    case addColumn(table: String, ColumnDefinition)
    case renameTable(String, to: String)
    /// ALTER TABLE t RENAME [COLUMN] a TO b (Engine/SQLDatabase+AlterTable.swift).
    case renameColumn(table: String, String, to: String)
    /// ALTER TABLE t DROP [COLUMN] c (Engine/SQLDatabase+AlterTable.swift).
    case dropColumn(table: String, String)
    case insert(InsertStatement)
    case select(SelectStatement)
    case update(UpdateStatement)
    case delete(DeleteStatement)
    /// REINDEX [name] (IndexHints.swift).
    case reindex(String?)
    /// VACUUM [schema] (SQLDatabase+Maintenance.swift).
    case vacuum(schema: String?)
    /// ANALYZE [[schema.]table-or-index] (SQLDatabase+Maintenance.swift).
    case analyze(schema: String?, name: String?)
    /// CREATE TRIGGER / DROP TRIGGER (SQL/TriggerAST.swift, Engine/Triggers.swift).
    case createTrigger(CreateTriggerStatement)
    case dropTrigger(String, ifExists: Bool)
    case begin, commit, rollback
    /// SAVEPOINT name, RELEASE [SAVEPOINT] name, ROLLBACK [TRANSACTION] TO [SAVEPOINT] name
    /// (Engine/Savepoints.swift).
    case savepoint(String), release(String), rollbackTo(String)
    case createView(CreateViewStatement)
    case dropView(String, ifExists: Bool)
    /// PRAGMA name [= value | (value)] (Engine/Pragmas.swift).
    case pragma(PragmaStatement)

    /// Whether the statement only reads (a SELECT).
    var isSelect: Bool {
        if case .select = self { return true }
        return false
    }
}
