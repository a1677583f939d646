import LogStore

/// An index in memory: its definition and its entries (memcomparable bytes, `IndexKeyCodec`)
/// in index order.
struct IndexState: Sendable {
    var schema: IndexSchema
    var entries = KeyChunks()

    /// Compares two keys (or a key and a shorter probe prefix: only the common columns count),
    /// each column under its collation.
    @inline(__always)
    func compareKeys(_ a: [SQLValue], _ b: [SQLValue]) -> Int {
        guard !schema.isBinary else { return IndexState.compareKeys(a, b, schema.descending) }
        for i in 0..<min(a.count, b.count) {
            let c = schema.collations[i].compare(a[i], b[i])
            if c != 0 { return schema.descending[i] ? -c : c }
        }
        return 0
    }

    @inline(__always)
    static func compareKeys(_ a: [SQLValue], _ b: [SQLValue], _ descending: [Bool]) -> Int {
        for i in 0..<min(a.count, b.count) {
            let c = SQLValues.compare(a[i], b[i])
            if c != 0 { return descending[i] ? -c : c }
        }
        return 0
    }

    func key(of row: [SQLValue]) -> [SQLValue] { schema.columns.map { row[$0] } }

    /// The encoded probe of the leading key columns `key` (texts folded by the key columns'
    /// collations).
    func probe(_ key: [SQLValue]) -> [UInt8] {
        guard !schema.isBinary else { return IndexKeyCodec.probe(key, descending: schema.descending) }
        return IndexKeyCodec.probe(key.enumerated().map { schema.collations[$0].fold($1) }, descending: schema.descending)
    }

    func entry(rowid: Int64, row: [SQLValue]) -> [UInt8] {
        IndexKeyCodec.entry(columns: schema.columns, of: row, rowid: rowid, descending: schema.descending,
                            collations: schema.isBinary ? nil : schema.collations)
    }

    mutating func insert(rowid: Int64, row: [SQLValue]) { entries.insert(entry(rowid: rowid, row: row)) }

    mutating func remove(rowid: Int64, row: [SQLValue]) { entries.remove(entry(rowid: rowid, row: row)) }

    /// Rowids of entries whose key equals `key` on all of its columns (a prefix probe allowed).
    func rowids(matching key: [SQLValue]) -> [Int64] {
        let probe = probe(key)
        var result: [Int64] = []
        var position = entries.lowerBound(probe)
        while let rowid = entries.withEntry(at: position, { entry -> Int64? in
            probe.withUnsafeBytes { IndexKeyCodec.compare(entry, $0) == 0 } ? IndexKeyCodec.rowid(ofEntry: entry) : nil
        }), let rowid {
            result.append(rowid)
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
    /// Its triggers, in creation order (Engine/Triggers.swift).
    var triggers: [CreateTriggerStatement] = []
    /// Its CHECK expressions resolved, and the schema version they were resolved at
    /// (Engine/CheckConstraints.swift).
    var resolvedChecks: (version: Int, expressions: [Expr])?
    /// Largest rowid ever handed out by AUTOINCREMENT (SQLite's sqlite_sequence).
    var sequence: Int64 = 0
    /// Rows changed and not yet written to the store: their bytes, or a delete.
    let overlay = PendingRows()
    /// A table only in memory (a WITH table, a TEMP table): its rows are all in `overlay`,
    /// which commits never write; `space` is never read.
    @exclusivity(unchecked) var isTransient = false
    /// A WITH table: it has no rowid column to name (SQLite: "no such column: rowid").
    var hidesRowid = false

    /// The row key of the row being read (`withStoredBytes`): 8 bytes of the table's own,
    /// rewritten for each read (tables are read under the statement lock). Not an array, which
    /// the read retained and released, and not a stack buffer, whose closure retained the store.
    private let rowKey = UnsafeMutableRawPointer.allocate(byteCount: 8, alignment: 8)

    init(definition: TableDefinition, space: LogStore.KeySpace, spaceName: String) {
        self.definition = definition
        self.space = space
        self.spaceName = spaceName
        indexes = definition.indexes.map { IndexState(schema: $0) }
    }

    deinit { rowKey.deallocate() }

    var name: String { definition.name }

    /// Calls `body` with the encoded row `rowid` as the running statement sees it (its pending
    /// writes first, then the store's record, lent from the mapped segment without a copy);
    /// nil when there is no such row. O(1) expected (a keydir lookup).
    /// - Throws: `StoreError` from the store (a closed store, a record that fails its checksum).
    @inline(__always)
    func withBytes<Result>(of rowid: Int64, in store: LogStore, _ body: (UnsafeRawBufferPointer) throws -> Result) throws -> Result? {
        if !overlay.isEmpty, let slot = overlay[rowid] {
            guard slot != PendingRows.deleted else { return nil }
            return try overlay.withBytes(slot, body)
        }
        if isTransient { return nil }   // all its rows are in the overlay
        return try withStoredBytes(of: rowid, in: store, body)
    }

    /// Calls `body` with the store's record of the row `rowid`, pending writes not looked at
    /// (the version of the last commit); nil when there is none. O(1) expected.
    /// - Throws: `StoreError` from the store.
    @inline(__always)
    func withStoredBytes<Result>(of rowid: Int64, in store: LogStore, _ body: (UnsafeRawBufferPointer) throws -> Result) throws -> Result? {
        rowKey.storeBytes(of: (UInt64(bitPattern: rowid) ^ (1 << 63)).bigEndian, as: UInt64.self)
        // The non-generic read: no type-metadata lookup per row.
        var result: Result?
        guard try store.withValueBytes(forKeyBytes: UnsafeRawBufferPointer(start: rowKey, count: 8), space: space, { result = try body($0) }) else {
            return nil
        }
        return result
    }

    func contains(rowid: Int64) -> Bool {
        let position = rowids.lowerBound { $0 < rowid }
        return rowids.element(at: position) == rowid
    }

    var maxRowid: Int64? { rowids.last }

    func insertIntoIndexes(rowid: Int64, row: [SQLValue]) {
        for i in indexes.indices { indexes[i].insert(rowid: rowid, row: row) }
    }

    func removeFromIndexes(rowid: Int64, row: [SQLValue]) {
        for i in indexes.indices { indexes[i].remove(rowid: rowid, row: row) }
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

    /// Bytes of heap the table's order structures hold (rowids and index entries with their
    /// offsets; no row bytes, and nothing of what is served from a mapped index checkpoint):
    /// what a table costs the heap.
    var memoryFootprint: Int {
        rowids.ownedCount * 8 + indexes.reduce(0) { $0 + $1.entries.ownedBytes }
    }

    /// Every rowid, in order.
    var allRowids: [Int64] {
        var result: [Int64] = []
        result.reserveCapacity(rowids.count)
        for chunk in rowids.chunks { result.append(contentsOf: chunk) }
        return result
    }
}
