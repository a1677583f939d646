/// What one SQL statement produced.
public struct SQLResult: Sendable, Equatable {
    /// Column names of a query's rows (aliases where given, as SQLite names them); empty for
    /// statements that are not queries.
    public var columns: [String]
    /// A query's rows in result order; empty for statements that are not queries.
    ///
    /// A TEXT value whose bytes are not valid UTF-8 (SQLite keeps such bytes as they are, for
    /// example `CAST(x'8e30' AS TEXT)`) cannot be a Swift `String`: it comes back as `.text`
    /// with each ill-formed sequence replaced by U+FFFD, and its exact bytes are
    /// `textBytes(row:column:)` (or the value of `CAST(column AS BLOB)`).
    public var rows: [[DAOValue]]
    /// Rows inserted, updated or deleted by an INSERT, UPDATE, DELETE or REPLACE (SQLite's
    /// `changes()`); 0 for other statements.
    public var changes: Int
    /// The rowid of the last row inserted through this database (SQLite's
    /// `last_insert_rowid()`: unchanged by statements that insert nothing).
    public var lastInsertRowId: Int64
    /// Whether the statement was a query (SELECT), whose rows are the result.
    public var isQuery: Bool
    /// The exact bytes of the text values in `rows` that are not valid UTF-8, by position.
    var invalidTexts: [CellPosition: [UInt8]] = [:]
    /// The rows as the engine made them, before `publish()` moves them into `rows`.
    var values: [[SQLValue]] = []

    /// A cell of `rows`.
    struct CellPosition: Hashable, Sendable {
        var row: Int
        var column: Int
    }

    /// A result.
    public init(columns: [String] = [], rows: [[DAOValue]] = [], changes: Int = 0, lastInsertRowId: Int64 = 0, isQuery: Bool = false) {
        self.columns = columns
        self.rows = rows
        self.changes = changes
        self.lastInsertRowId = lastInsertRowId
        self.isQuery = isQuery
    }

    /// A result of the engine's rows (published later by `publish()`).
    init(columns: [String], values: [[SQLValue]], lastInsertRowId: Int64, isQuery: Bool) {
        self.init(columns: columns, lastInsertRowId: lastInsertRowId, isQuery: isQuery)
        self.values = values
    }

    /// The bytes of the text at `row`, `column` exactly as stored (valid UTF-8 or not); the
    /// bytes of a blob; nil for a number, NULL or a position outside `rows`.
    /// - Complexity: O(1) for a text that is not valid UTF-8, O(length) otherwise.
    public func textBytes(row: Int, column: Int) -> [UInt8]? {
        if let bytes = invalidTexts[CellPosition(row: row, column: column)] { return bytes }
        guard rows.indices.contains(row), rows[row].indices.contains(column) else { return nil }
        switch rows[row][column] {
        case .text(let text): return Array(text.utf8)
        case .blob(let bytes): return bytes
        default: return nil
        }
    }

    /// Moves the engine's rows into the public `rows`, remembering the bytes of every text
    /// that a `String` cannot hold.
    mutating func publish() {
        guard !values.isEmpty else { return }
        var published: [[DAOValue]] = []
        published.reserveCapacity(values.count)
        for (r, row) in values.enumerated() {
            var out: [DAOValue] = []
            out.reserveCapacity(row.count)
            for (c, value) in row.enumerated() {
                if case .invalidText(let bytes) = value { invalidTexts[CellPosition(row: r, column: c)] = bytes }
                out.append(DAOValue(value))
            }
            published.append(out)
        }
        rows = published
        values = []
    }
}
