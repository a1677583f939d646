/// The LIMIT/OFFSET side of a SELECT that evaluates result columns only for the rows it
/// returns (SQLite's behaviour: a row skipped or cut never raises an error of its columns).
enum LimitWindow {
    /// What the result columns of one row (or aggregate group) need, kept until the row is
    /// known to be returned.
    struct DeferredRow {
        let row: [SQLValue]
        let rowid: Int64
        let aggregates: [SQLValue]

        init(_ context: RowContext) {
            row = context.row
            rowid = context.rowid
            aggregates = context.aggregates
        }

        func restore(into context: RowContext) {
            context.row = row
            context.rowid = rowid
            context.aggregates = aggregates
        }
    }

    /// The positions kept of `count` rows: from `offset` (>= 0), at most `limit` (nil: all).
    static func window(count: Int, offset: Int64, limit: Int64?) -> Range<Int> {
        let start = Int(min(offset, Int64(count)))
        guard let limit else { return start..<count }
        return start..<(limit >= Int64(count - start) ? count : start + Int(limit))
    }

    /// Row positions in ORDER BY order: by `keys` (one array per row, one value per term),
    /// each term ascending or `descending`; ties keep the order the rows came in.
    /// - Complexity: O(n log n) comparisons.
    static func sortedIndices(_ keys: [[SQLValue]], descending: [Bool]) -> [Int] {
        var indices = Array(keys.indices)
        indices.sort { a, b in
            for (i, down) in descending.enumerated() {
                let c = SQLValues.compare(keys[a][i], keys[b][i])
                if c != 0 { return down ? c > 0 : c < 0 }
            }
            return a < b
        }
        return indices
    }
}
