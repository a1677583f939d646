/// An index that holds every column a single-table query reads (SQLite's covering index): its
/// scan takes the values from the index entries and reads no row. A value the entry cannot
/// give exactly (see `IndexKeyCodec.decodeKey`) makes that one row read from the table instead.
struct CoveringIndex {
    /// The index's position in the table.
    let number: Int
    /// Per index column: the table column it holds.
    let columns: [Int]
    let descending: [Bool]
    let affinities: [Affinity]
    /// The table's INTEGER PRIMARY KEY column (filled from the entry's rowid).
    let rowidColumn: Int?

    /// The covering index of `path`, when it is an index scan and every column in `reading`
    /// (nil: every column) is an index column or the rowid alias.
    init?(_ table: TableState, _ path: AccessPath, reading: [Int]?) {
        guard case .indexRanges(let number, _, _) = path, table.indexes.indices.contains(number) else { return nil }
        // Checked on the table's own arrays, without copying the schema or making the list of
        // every column when the query reads them all: most index scans are not covered.
        let alias = table.definition.rowidColumn
        // A column the index folds (a collation other than BINARY) cannot be read back from it.
        func held(_ column: Int) -> Bool {
            if column == alias { return true }
            let schema = table.indexes[number].schema
            for k in schema.columns.indices where schema.columns[k] == column && schema.collations[k] == .binary { return true }
            return false
        }
        if let reading {
            guard reading.allSatisfy(held) else { return nil }
        } else {
            guard (0..<table.definition.columns.count).allSatisfy(held) else { return nil }
        }
        let schema = table.indexes[number].schema
        let definition = table.definition
        self.number = number
        columns = schema.columns
        descending = schema.descending
        affinities = schema.columns.map { definition.columns[$0].affinity }
        rowidColumn = definition.rowidColumn
    }
}

extension SQLDatabase {
    /// Calls `body` for each row of `path` with its columns `columns` (nil: all) in
    /// `context.row` and its rowid in `context.rowid`, stopping when `body` returns false.
    /// Through a covering index the values come from the index entries.
    func visitRows(_ table: TableState, _ path: AccessPath, columns: [Int]?, _ context: RowContext,
                   _ body: () throws -> Bool) throws {
        guard case .indexRanges(let number, let ranges, let reverse) = path, table.indexes.indices.contains(number) else {
            // One row by its rowid (a primary-key lookup): read directly, the loader object
            // would cost more than the reference counting it saves over one row.
            if case .rowids(let ids) = path, ids.count <= 1 {
                for rowid in ids where try load(table, rowid, columns: columns, into: &context.row) {
                    context.rowid = rowid
                    _ = try body()
                }
                return
            }
            let loader = RowLoader(database: self, table: table, columns: columns, context: context)
            try scan(table, path) { rowid in
                guard try loader.load(rowid) else { return true }
                return try body()
            }
            return
        }
        // Index ranges: each chunk's run of entries is walked here, not through a closure
        // called per entry, which retained and released every reference it captured around
        // each call (atomic operations: `perf` put about half of an indexed range's time in
        // them). The loops are written out: a `for` over a stride of the run's indices brought
        // the covering scan's retains back (447 to 975 a statement under callgrind).
        guard let covering = CoveringIndex(table, path, reading: columns) else {
            try scanIndexRuns(table.indexes[number], ranges, reverse: reverse) { run in
                var i = reverse ? run.to - 1 : run.from
                while reverse ? i >= run.from : i < run.to {
                    let rowid = IndexKeyCodec.rowid(ofEntry: run.entry(i))
                    i += reverse ? -1 : 1
                    guard try load(table, rowid, columns: columns, into: &context.row) else { continue }
                    context.rowid = rowid
                    if try !body() { return false }
                }
                return true
            }
            return
        }
        let width = table.definition.columns.count
        if context.row.count != width { context.row = [SQLValue].filled(.null, count: width) }
        let alias = covering.rowidColumn
        // The index's arrays are entered once for the scan.
        try covering.columns.withUnsafeBufferPointer { held in
            try covering.descending.withUnsafeBufferPointer { descending in
                try covering.affinities.withUnsafeBufferPointer { affinities in
                    try scanIndexRuns(table.indexes[number], ranges, reverse: reverse) { run in
                        var i = reverse ? run.to - 1 : run.from
                        while reverse ? i >= run.from : i < run.to {
                            let entry = run.entry(i)
                            i += reverse ? -1 : 1
                            let rowid = IndexKeyCodec.rowid(ofEntry: entry)
                            let decoded = IndexKeyCodec.decodeKey(entry, descending: descending, affinities: affinities) { position, value in
                                context.row[held[position]] = value
                            }
                            if decoded {
                                rowsVisited += 1
                                if let alias { context.row[alias] = .integer(rowid) }
                            } else {
                                guard try load(table, rowid, columns: columns, into: &context.row) else { continue }
                            }
                            context.rowid = rowid
                            if try !body() { return false }
                        }
                        return true
                    }
                }
            }
        }
    }
}

/// Loads the rows of one scan into its context: `SQLDatabase.load` with the references it needs
/// held by one object. A scan's row closure that captured them separately retained and
/// released each of the four twice for every row.
final class RowLoader {
    let database: SQLDatabase
    let table: TableState
    let columns: [Int]?
    let context: RowContext

    init(database: SQLDatabase, table: TableState, columns: [Int]?, context: RowContext) {
        self.database = database
        self.table = table
        self.columns = columns
        self.context = context
    }

    /// Reads row `rowid` into the context's row and rowid; false when there is no such row.
    @inline(__always)
    func load(_ rowid: Int64) throws -> Bool {
        guard try database.load(table, rowid, columns: columns, into: &context.row) else { return false }
        context.rowid = rowid
        return true
    }
}
