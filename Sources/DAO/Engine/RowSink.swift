/// Where a query run by `SQLDatabase.forEachRow` puts its result rows: straight into the
/// caller's body as the scan makes them (no result array, no `DAOValue` copy of each row), or,
/// for a query that must see every row before the first one is known (a sort the access path
/// does not give, DISTINCT with LIMIT or OFFSET, a compound select, RETURNING), after the
/// statement from the rows it returned.
///
/// A statement that touched a damaged block of the index checkpoint is run again on tables
/// rebuilt from the rows (`SQLDatabase.run`). A block is checked before any of its entries is
/// read, so the rows delivered before the damage was found are true rows; the run again makes
/// the same rows in the same order (same rows in the store, indexes rebuilt with the same
/// entries), and the sink skips as many as it had delivered.
final class RowSink {
    // One statement's sink, used by the thread running it under the statement lock: its
    // counters skip the dynamic exclusivity checks (four a row).
    private let body: (SQLRow) throws -> Void
    /// Rows handed to `body` so far.
    @exclusivity(unchecked) private(set) var delivered = 0
    /// Rows still to drop before the next one is handed out (after a run again).
    @exclusivity(unchecked) private var skipping = 0
    /// Rows handed out while the query ran (the rest came from its result afterwards).
    @exclusivity(unchecked) private(set) var streamed = 0
    /// Set once the statement has run: what is delivered now comes from its result.
    @exclusivity(unchecked) var statementDone = false

    init(_ body: @escaping (SQLRow) throws -> Void) {
        self.body = body
    }

    /// Hands `values` (one result row) to the body, unless it is one the body already saw.
    func deliver(_ values: [SQLValue]) throws {
        if skipping > 0 {
            skipping -= 1
            return
        }
        delivered += 1
        if !statementDone { streamed += 1 }
        try body(SQLRow(values: values))
    }

    /// Before the statement runs again: the rows delivered are skipped the second time.
    func restart() {
        skipping = delivered
    }
}

/// One row of a query's result, as `SQLDatabase.forEachRow` hands it to its body. Valid for
/// reading during that call; keep what you need from it (a copy of the row is also safe).
public struct SQLRow: Sendable {
    let storage: [SQLValue]

    init(values: [SQLValue]) { storage = values }

    /// The number of columns.
    public var count: Int { storage.count }

    /// The value of column `column` (0-based), as `SQLResult.rows` would hold it: a TEXT whose
    /// bytes are not valid UTF-8 comes back with each ill-formed sequence replaced by U+FFFD
    /// (its exact bytes are `textBytes(_:)`). `.null` for a column outside the row, as
    /// SQLite's `sqlite3_column_*` give NULL there.
    /// - Complexity: O(1).
    public subscript(column: Int) -> DAOValue {
        guard storage.indices.contains(column) else { return .null }
        return DAOValue(storage[column])
    }

    /// Whether column `column` is NULL (or outside the row).
    public func isNull(_ column: Int) -> Bool {
        guard storage.indices.contains(column) else { return true }
        if case .null = storage[column] { return true }
        return false
    }

    /// The bytes of a TEXT value exactly as stored (valid UTF-8 or not), or of a BLOB; nil
    /// for a number, NULL or a column outside the row.
    /// - Complexity: O(length).
    public func textBytes(_ column: Int) -> [UInt8]? {
        guard storage.indices.contains(column) else { return nil }
        switch storage[column] {
        case .text(let text): return Array(text.utf8)
        case .invalidText(let bytes), .blob(let bytes): return bytes
        default: return nil
        }
    }

    /// The row's values, as `subscript(column:)` gives each.
    public var values: [DAOValue] { storage.map(DAOValue.init) }
}
