import LogStore

/// One entry of a transaction's undo log (`SQLDatabase.undoLog`), newest last.
///
/// Row changes are by far the most numerous (a transaction of a million inserts) and are kept
/// in about 32 bytes each: the row's values are decoded again when the change is undone (from
/// the transaction's pending bytes, or the store's record of a deleted row) instead of being
/// held, which cost about 200 bytes a row as a closure capturing the `[SQLValue]`.
enum UndoEntry {
    /// Anything else (schema changes, TEMP tables, AUTOINCREMENT's sequence): run to undo it.
    case action(() -> Void)
    /// A row inserted: its pending state before the insert (absent, or deleted earlier in the
    /// transaction).
    case insertedRow(TableReference, rowid: Int64, previous: PendingRows.Slot?)
    /// A row deleted: its pending state before the delete (absent: the row is the store's).
    case deletedRow(TableReference, rowid: Int64, previous: PendingRows.Slot?)
}

/// A table named by an undo entry; the database keeps its tables alive through the undo of
/// their changes (a dropped table is held by the undo action that restores it).
struct TableReference {
    unowned let table: TableState
}

extension SQLDatabase {
    /// Undoes one entry. A row whose values cannot be read back (the store failed to read a
    /// deleted row's record) leaves its table's order and indexes to be rebuilt from the store
    /// and the pending rows, which `rollback(to:)` does after the last entry.
    func undo(_ entry: UndoEntry, failed: inout [TableState]) {
        switch entry {
        case .action(let action):
            action()
        case .insertedRow(let reference, let rowid, let previous):
            let table = reference.table
            // The pending bytes are the inserted row's: its index entries are made from them.
            if let row = undoneRow(table, rowid) {
                table.removeFromIndexes(rowid: rowid, row: row)
            } else {
                failed.append(table)
            }
            table.removeRowid(rowid)
            table.overlay[rowid] = previous
        case .deletedRow(let reference, let rowid, let previous):
            let table = reference.table
            table.overlay[rowid] = previous
            table.insertRowid(rowid)
            if let row = undoneRow(table, rowid) {
                table.insertIntoIndexes(rowid: rowid, row: row)
            } else {
                failed.append(table)
            }
        }
    }

    /// The values of row `rowid` as the transaction sees it, not counted as a row visited.
    private func undoneRow(_ table: TableState, _ rowid: Int64) -> [SQLValue]? {
        let visited = rowsVisited
        defer { rowsVisited = visited }
        return (try? row(table, rowid)) ?? nil
    }

    /// Rebuilds the order and indexes of tables whose undo could not read a row back.
    func rebuildAfterFailedUndo(_ failed: [TableState]) {
        var loaders: [LogStore.KeySpace: TableLoader] = [:]
        for table in failed where !table.isTransient { loaders[table.space] = TableLoader(table: table) }
        do {
            try loadRows(into: loaders)
        } catch {
            indexReport.append("rollback: \(failed.map(\.name).joined(separator: ", ")) could not be read back (\(error)); reopen the database")
        }
    }
}
