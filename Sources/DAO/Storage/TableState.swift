import LogStore

/// An index in memory: its definition and its entries in index order.
struct IndexState: Sendable {
    var schema: IndexSchema
    var entries = SortedChunks<IndexEntry>()

    /// Entry order: key columns in their directions, then rowid.
    @inline(__always)
    func less(_ a: IndexEntry, _ b: IndexEntry) -> Bool { IndexState.less(a, b, schema.descending) }

    @inline(__always)
    static func less(_ a: IndexEntry, _ b: IndexEntry, _ descending: [Bool]) -> Bool {
        let c = compareKeys(a.key, b.key, descending)
        if c != 0 { return c < 0 }
        return a.rowid < b.rowid
    }

    /// Compares two keys (or a key and a shorter probe prefix: only the common columns count).
    @inline(__always)
    func compareKeys(_ a: [DAOValue], _ b: [DAOValue]) -> Int { IndexState.compareKeys(a, b, schema.descending) }

    @inline(__always)
    static func compareKeys(_ a: [DAOValue], _ b: [DAOValue], _ descending: [Bool]) -> Int {
        for i in 0..<min(a.count, b.count) {
            let c = SQLValues.compare(a[i], b[i])
            if c != 0 { return descending[i] ? -c : c }
        }
        return 0
    }

    func key(of row: [DAOValue]) -> [DAOValue] { schema.columns.map { row[$0] } }

    mutating func insert(_ entry: IndexEntry) {
        let descending = schema.descending
        entries.insert(entry) { IndexState.less($0, entry, descending) }
    }

    mutating func remove(_ entry: IndexEntry) {
        let position = entries.lowerBound { less($0, entry) }
        if let found = entries.element(at: position), found.rowid == entry.rowid { entries.remove(at: position) }
    }

    /// Rowids of entries whose key equals `key` on all of its columns (a prefix probe allowed).
    func rowids(matching key: [DAOValue]) -> [Int64] {
        var result: [Int64] = []
        var position = entries.lowerBound { compareKeys($0.key, key) < 0 }
        while let entry = entries.element(at: position), compareKeys(entry.key, key) == 0 {
            result.append(entry.rowid)
            position = entries.next(position)
        }
        return result
    }
}

/// One table in memory: definition, key space, rowids in order, indexes. Rows themselves stay
/// in the store; those written by the open transaction (or statement) are in `overlay`.
final class TableState: @unchecked Sendable {
    var definition: TableDefinition
    var space: LogStore.KeySpace
    var spaceName: String
    var rowids = SortedChunks<Int64>()
    var indexes: [IndexState]
    /// Largest rowid ever handed out by AUTOINCREMENT (SQLite's sqlite_sequence).
    var sequence: Int64 = 0
    /// Rows changed and not yet written to the store: a row, or nil for a deleted one.
    var overlay: [Int64: [DAOValue]?] = [:]

    init(definition: TableDefinition, space: LogStore.KeySpace, spaceName: String) {
        self.definition = definition
        self.space = space
        self.spaceName = spaceName
        indexes = definition.indexes.map { IndexState(schema: $0) }
    }

    var name: String { definition.name }

    func contains(rowid: Int64) -> Bool {
        let position = rowids.lowerBound { $0 < rowid }
        return rowids.element(at: position) == rowid
    }

    var maxRowid: Int64? { rowids.last }

    func insertIntoIndexes(rowid: Int64, row: [DAOValue]) {
        for i in indexes.indices { indexes[i].insert(IndexEntry(key: indexes[i].key(of: row), rowid: rowid)) }
    }

    func removeFromIndexes(rowid: Int64, row: [DAOValue]) {
        for i in indexes.indices { indexes[i].remove(IndexEntry(key: indexes[i].key(of: row), rowid: rowid)) }
    }

    func insertRowid(_ rowid: Int64) {
        if let last = rowids.last, last >= rowid {
            rowids.insert(rowid) { $0 < rowid }
        } else {
            rowids.append(rowid)
        }
    }

    func removeRowid(_ rowid: Int64) {
        let position = rowids.lowerBound { $0 < rowid }
        if rowids.element(at: position) == rowid { rowids.remove(at: position) }
    }
}
