import LogStore

/// One entry of a transaction's undo log (`SQLDatabase.undoLog`), as `UndoLog` hands it back.
///
/// Row changes are by far the most numerous (a transaction of a million inserts): the log keeps
/// them in 16 bytes each, and the row's values are decoded again when the change is undone
/// (from the transaction's pending bytes, or the store's record of a deleted row) instead of
/// being held, which cost about 200 bytes a row as a closure capturing the `[SQLValue]`.
enum UndoEntry {
    /// Anything else (schema changes, TEMP tables, AUTOINCREMENT's sequence): run to undo it.
    case action(() -> Void)
    /// A row inserted: its pending state before the insert (absent, or deleted earlier in the
    /// transaction).
    case insertedRow(TableState, rowid: Int64, previous: PendingRows.Slot?)
    /// A row deleted: its pending state before the delete (absent: the row is the store's).
    case deletedRow(TableState, rowid: Int64, previous: PendingRows.Slot?)
}

/// The undo log of the open transaction (or statement), newest last: 16 bytes a row change,
/// and one entry for a run of inserts of consecutive new rowids (a bulk load's).
///
/// A row entry packs, beside its rowid, its kind (2 bits), its previous pending state (2 bits:
/// none, deleted, a slot, or 3 for a run), the table as an index into `tables` (20 bits) and the
/// previous slot (40 bits: an arena of up to 1 TiB). A run is an insert entry whose rowid is the
/// run's first and whose slot field holds its length minus one: rows `rowid ..< rowid + length`
/// of that table inserted one after another, none with a pending state before. Actions are kept
/// in `actions`, in order; an entry out of those bounds is kept whole in `wide`.
///
/// `count` counts the changes, a run's rows one by one, so that a statement's mark (a count)
/// stays valid when the statement's inserts extend a run begun before it.
struct UndoLog {
    private struct Packed {
        /// The rowid, or the index into `actions` or `wide`.
        let value: Int64
        let bits: UInt64
    }

    private static let actionKind: UInt64 = 0, insertedKind: UInt64 = 1, deletedKind: UInt64 = 2, wideKind: UInt64 = 3
    private static let slotBits: UInt64 = 40, tableBits: UInt64 = 20
    /// The previous-state value that marks a run of inserts.
    private static let runState: UInt64 = 3
    private static let slotMask: UInt64 = 1 << slotBits - 1

    private var entries: [Packed] = []
    private var actions: [() -> Void] = []
    private var wide: [UndoEntry] = []
    /// The tables the entries name (a transaction touches a few: found by identity).
    private var tables: [TableState] = []
    private var lastTable: (id: ObjectIdentifier, number: UInt64)?

    /// The changes logged (a run counts each of its rows).
    private(set) var count = 0
    var isEmpty: Bool { entries.isEmpty }

    mutating func append(_ entry: UndoEntry) {
        count += 1
        switch entry {
        case .action(let action):
            entries.append(Packed(value: Int64(actions.count), bits: Self.actionKind << 62))
            actions.append(action)
        case .insertedRow(let table, let rowid, let previous):
            appendRow(Self.insertedKind, entry, table, rowid, previous)
        case .deletedRow(let table, let rowid, let previous):
            appendRow(Self.deletedKind, entry, table, rowid, previous)
        }
    }

    private mutating func appendRow(_ kind: UInt64, _ entry: UndoEntry, _ table: TableState, _ rowid: Int64, _ previous: PendingRows.Slot?) {
        let number = number(of: table)
        let (previousKind, slot): (UInt64, UInt64) = switch previous {
        case nil: (0, 0)
        case PendingRows.deleted?: (1, 0)
        case let slot?: (2, slot)
        }
        guard slot < 1 << Self.slotBits, number < 1 << Self.tableBits else {
            entries.append(Packed(value: Int64(wide.count), bits: Self.wideKind << 62))
            wide.append(entry)
            return
        }
        // The next rowid of the same table, inserted with no pending state before: the last
        // entry (a lone insert or a run) grows by one row.
        if kind == Self.insertedKind, previousKind == 0, let last = entries.last, last.bits >> 62 == Self.insertedKind,
           last.bits >> Self.slotBits & (1 << Self.tableBits - 1) == number {
            let state = last.bits >> 60 & 3
            let length: UInt64 = state == Self.runState ? (last.bits & Self.slotMask) + 1 : 1
            if state == 0 || state == Self.runState, length < Self.slotMask,
               last.value < Int64.max - Int64(length), rowid == last.value + Int64(length) {
                entries[entries.count - 1] = Packed(value: last.value,
                                                    bits: kind << 62 | Self.runState << 60 | number << Self.slotBits | length)
                return
            }
        }
        entries.append(Packed(value: rowid, bits: kind << 62 | previousKind << 60 | number << Self.slotBits | slot))
    }

    /// The table's number in `tables` (the last one is remembered: a statement changes one table).
    private mutating func number(of table: TableState) -> UInt64 {
        let id = ObjectIdentifier(table)
        if let lastTable, lastTable.id == id { return lastTable.number }
        let number: UInt64
        if let known = tables.firstIndex(where: { $0 === table }) {
            number = UInt64(known)
        } else {
            number = UInt64(tables.count)
            tables.append(table)
        }
        lastTable = (id, number)
        return number
    }

    /// Takes the newest entry off the log.
    mutating func removeLast() -> UndoEntry? {
        guard let last = entries.last else { return nil }
        count -= 1
        if last.bits >> 62 == Self.insertedKind, last.bits >> 60 & 3 == Self.runState {
            // A run gives back its newest row; a run of one row becomes a lone insert.
            let rows = last.bits & Self.slotMask + 1
            let number = Int(last.bits >> Self.slotBits & (1 << Self.tableBits - 1))
            guard tables.indices.contains(number) else { return nil }
            let kept = rows - 1
            entries[entries.count - 1] = Packed(value: last.value, bits: last.bits & ~(3 << 60 | Self.slotMask)
                                                | (kept > 1 ? Self.runState << 60 | (kept - 1) : 0))
            return .insertedRow(tables[number], rowid: last.value + Int64(rows - 1), previous: nil)
        }
        entries.removeLast()
        switch last.bits >> 62 {
        case Self.actionKind:
            return actions.popLast().map(UndoEntry.action)
        case Self.wideKind:
            return wide.popLast()
        case let kind:
            let number = Int(last.bits >> Self.slotBits & (1 << Self.tableBits - 1))
            guard tables.indices.contains(number) else { return nil }
            let slot = last.bits & (1 << Self.slotBits - 1)
            let previous: PendingRows.Slot? = switch last.bits >> 60 & 3 {
            case 0: nil
            case 1: PendingRows.deleted
            default: slot
            }
            let table = tables[number]
            return kind == Self.insertedKind ? .insertedRow(table, rowid: last.value, previous: previous)
                                             : .deletedRow(table, rowid: last.value, previous: previous)
        }
    }

    /// Forgets every entry (a commit, or a rollback of everything); a large log's storage is
    /// freed rather than kept for the next statement.
    mutating func removeAll(keepingCapacity: Bool) {
        // Every statement's commit comes here, most of them (SELECTs) with nothing logged.
        if entries.isEmpty && tables.isEmpty { return }
        count = 0
        entries.removeAll(keepingCapacity: keepingCapacity)
        if !actions.isEmpty { actions.removeAll(keepingCapacity: keepingCapacity) }
        if !wide.isEmpty { wide.removeAll() }
        tables.removeAll(keepingCapacity: true)
        lastTable = nil
    }
}

extension SQLDatabase {
    /// Undoes one entry. A row whose values cannot be read back (the store failed to read a
    /// deleted row's record) leaves its table's order and indexes to be rebuilt from the store
    /// and the pending rows, which `rollback(to:)` does after the last entry.
    func undo(_ entry: UndoEntry, failed: inout [TableState]) {
        switch entry {
        case .action(let action):
            action()
        case .insertedRow(let table, let rowid, let previous):
            // The pending bytes are the inserted row's: its index entries are made from them.
            if let row = undoneRow(table, rowid) {
                table.removeFromIndexes(rowid: rowid, row: row)
            } else {
                failed.append(table)
            }
            table.removeRowid(rowid)
            table.overlay[rowid] = previous
        case .deletedRow(let table, let rowid, let previous):
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
