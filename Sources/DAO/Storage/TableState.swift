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

/// One table in memory: definition, key space, the rowids of its rows in order (8 bytes a row;
/// the rows themselves stay in the store and are read through its keydir when a statement needs
/// them), indexes. Rows changed since the last commit are in `overlay` for the next write batch,
/// and statements read them there first.
///
/// Invariant: the rowids in `rowids` are exactly the rows of `space` in the store, with
/// `overlay` applied.
final class TableState: @unchecked Sendable {
    // Exclusivity unchecked on what every statement reads: tables are only touched under the
    // database's statement lock, and the dynamic checks cost on every row lookup.
    @exclusivity(unchecked) var definition: TableDefinition
    var space: LogStore.KeySpace
    var spaceName: String
    @exclusivity(unchecked) var rowids = SortedChunks<Int64>()
    @exclusivity(unchecked) var indexes: [IndexState]
    /// Largest rowid ever handed out by AUTOINCREMENT (SQLite's sqlite_sequence).
    var sequence: Int64 = 0
    /// Rows changed and not yet written to the store: their bytes, or nil for a deleted one.
    @exclusivity(unchecked) var overlay: [Int64: [UInt8]?] = [:]

    init(definition: TableDefinition, space: LogStore.KeySpace, spaceName: String) {
        self.definition = definition
        self.space = space
        self.spaceName = spaceName
        indexes = definition.indexes.map { IndexState(schema: $0) }
    }

    var name: String { definition.name }

    /// Calls `body` with the encoded row `rowid` as the running statement sees it (its pending
    /// writes first, then the store's record, lent from the mapped segment without a copy);
    /// nil when there is no such row. O(1) expected (a keydir lookup).
    /// - Throws: `StoreError` from the store (a closed store, a record that fails its checksum).
    @inline(__always)
    func withBytes<Result>(of rowid: Int64, in store: LogStore, _ body: (UnsafeRawBufferPointer) throws -> Result) throws -> Result? {
        if !overlay.isEmpty, let pending = overlay[rowid] {
            guard let pending else { return nil }
            return try pending.withUnsafeBytes(body)
        }
        return try store.withValue(forKey: RowCodec.key(rowid: rowid), space: space, body)
    }

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

    /// Every rowid, in order.
    var allRowids: [Int64] {
        var result: [Int64] = []
        result.reserveCapacity(rowids.count)
        for chunk in rowids.chunks { result.append(contentsOf: chunk) }
        return result
    }
}
