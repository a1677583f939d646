/// Decodes the indexed columns of a table's stored rows into one reused buffer of column
/// values, as attach (`TableLoader`) and the checkpoint journal need them: columns a row does
/// not store (added after it was written) read as their defaults, the rowid alias as the rowid.
/// No allocation per row.
struct IndexedColumns {
    /// The columns any index of the table uses, ascending.
    let wanted: [Int]
    private let defaults: [SQLValue]
    private let rowidColumn: Int?
    /// The last decoded row's values (only `wanted` columns are meaningful).
    private(set) var values: [SQLValue] = []

    init(table: TableState) {
        wanted = Array(Set(table.indexes.flatMap(\.schema.columns))).sorted()
        rowidColumn = table.definition.rowidColumn
        defaults = table.definition.columns.map(\.addedColumnValue)
    }

    /// Decodes the row `rowid` from its stored bytes into `values`; false when the bytes are
    /// not a row.
    mutating func decode(_ bytes: UnsafeRawBufferPointer, rowid: Int64) -> Bool {
        if values.count != defaults.count { values = defaults }
        guard let stored = RowCodec.decode(bytes, columns: wanted, into: &values) else { return false }
        if stored < defaults.count {
            for column in wanted where column >= stored { values[column] = defaults[column] }
        }
        if let rowidColumn { values[rowidColumn] = .integer(rowid) }
        return true
    }

    /// The last decoded row's entry in each index of `table` (catalog order).
    func entries(rowid: Int64, in table: TableState) -> [[UInt8]] {
        table.indexes.map { $0.entry(rowid: rowid, row: values) }
    }
}
