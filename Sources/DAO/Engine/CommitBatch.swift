import LogStore

/// The records of a commit, in the order it writes them: the row deletes of dropped tables,
/// the catalog's records (`head`), then each changed table's pending rows. Walked a chunk at a
/// time for `LogStore.write(streaming:)`, so a transaction of a million rows is written
/// without a second copy of its rows in a `WriteBatch`; small commits are added whole.
struct CommitBatch {
    /// The database committing (it outlives the commit; unowned(unsafe): no reference counting
    /// on the path of every one-row statement).
    unowned(unsafe) let database: SQLDatabase
    let clears: [(space: LogStore.KeySpace, rowids: [Int64])]
    let tables: [TableState]

    /// Rows and deletes in the batch, the head's records not counted.
    var rowCount: Int {
        tables.reduce(clears.reduce(0) { $0 + $1.rowids.count }) { $0 + $1.overlay.count }
    }

    /// Adds every record to `batch`, in the order `fill` gives them (a small commit: no
    /// cursor, the pending rows walked with `PendingRows.forEachChange`).
    func addAll(to batch: inout LogStore.WriteBatch) throws {
        for clear in clears {
            for rowid in clear.rowids { batch.delete(forKey: RowCodec.key(rowid: rowid), space: clear.space) }
        }
        try database.addCatalogRecords(to: &batch)
        for table in tables {
            try table.overlay.forEachChange { rowid, bytes in Self.add(rowid, bytes, of: table, to: &batch) }
        }
    }

    /// Adds the put of a pending row (`bytes`) or its delete (nil).
    @inline(__always)
    private static func add(_ rowid: Int64, _ bytes: UnsafeRawBufferPointer?, of table: TableState, to batch: inout LogStore.WriteBatch) {
        if let bytes {
            batch.put(Array(bytes), forKey: RowCodec.key(rowid: rowid), space: table.space)
        } else {
            batch.delete(forKey: RowCodec.key(rowid: rowid), space: table.space)
        }
    }

    /// Where a chunked walk is: the phase, then the position inside it.
    struct Cursor {
        var clear = 0
        var clearRow = 0
        var headDone = false
        var table = 0
        var rows: PendingRows.Cursor?
    }

    /// Adds up to about `limit` records after `cursor` to `batch`; false when none were left.
    func fill(_ batch: inout LogStore.WriteBatch, cursor: inout Cursor, limit: Int) throws -> Bool {
        let start = batch.count
        while cursor.clear < clears.count, batch.count - start < limit {
            let clear = clears[cursor.clear]
            while cursor.clearRow < clear.rowids.count, batch.count - start < limit {
                batch.delete(forKey: RowCodec.key(rowid: clear.rowids[cursor.clearRow]), space: clear.space)
                cursor.clearRow += 1
            }
            if cursor.clearRow == clear.rowids.count { cursor.clear += 1; cursor.clearRow = 0 }
        }
        if !cursor.headDone, batch.count - start < limit {
            try database.addCatalogRecords(to: &batch)
            cursor.headDone = true
        }
        while cursor.table < tables.count, batch.count - start < limit {
            let table = tables[cursor.table]
            var rows = cursor.rows ?? PendingRows.Cursor()
            cursor.rows = nil   // one owner of its read-ahead buffer: no copy on write
            while batch.count - start < limit {
                let more = try table.overlay.next(&rows) { rowid, bytes in Self.add(rowid, bytes, of: table, to: &batch) }
                if !more {
                    cursor.table += 1
                    break
                }
            }
            cursor.rows = cursor.table < tables.count && tables[cursor.table] === table ? rows : nil
        }
        return batch.count > start
    }
}
