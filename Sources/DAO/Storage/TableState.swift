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

/// A row as stored: its rowid and its encoded bytes (FORMAT.md "DAO tables" row value).
struct StoredRow: Sendable {
    var rowid: Int64
    var bytes: [UInt8]
}

/// One table in memory: definition, key space, its rows in rowid order (encoded, as stored,
/// decoded when read), indexes. The store holds the same rows durably; rows changed since the
/// last commit are listed in `overlay` for the next write batch.
final class TableState: @unchecked Sendable {
    // Exclusivity unchecked on what every statement reads: tables are only touched under the
    // database's statement lock, and the dynamic checks cost on every row lookup.
    @exclusivity(unchecked) var definition: TableDefinition
    var space: LogStore.KeySpace
    var spaceName: String
    @exclusivity(unchecked) var rows = SortedChunks<StoredRow>()
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

    /// The encoded row `rowid`, or nil. O(log n).
    func bytes(of rowid: Int64) -> [UInt8]? {
        let position = rows.lowerBound { $0.rowid < rowid }
        guard let row = rows.element(at: position), row.rowid == rowid else { return nil }
        return row.bytes
    }

    func contains(rowid: Int64) -> Bool {
        let position = rows.lowerBound { $0.rowid < rowid }
        return rows.element(at: position)?.rowid == rowid
    }

    var maxRowid: Int64? { rows.last?.rowid }

    func insertIntoIndexes(rowid: Int64, row: [DAOValue]) {
        for i in indexes.indices { indexes[i].insert(IndexEntry(key: indexes[i].key(of: row), rowid: rowid)) }
    }

    func removeFromIndexes(rowid: Int64, row: [DAOValue]) {
        for i in indexes.indices { indexes[i].remove(IndexEntry(key: indexes[i].key(of: row), rowid: rowid)) }
    }

    func insertStored(_ row: StoredRow) {
        if let last = rows.last, last.rowid >= row.rowid {
            let rowid = row.rowid
            rows.insert(row) { $0.rowid < rowid }
        } else {
            rows.append(row)
        }
    }

    /// Removes the row and returns its bytes.
    @discardableResult
    func removeStored(_ rowid: Int64) -> [UInt8]? {
        let position = rows.lowerBound { $0.rowid < rowid }
        guard let row = rows.element(at: position), row.rowid == rowid else { return nil }
        rows.remove(at: position)
        return row.bytes
    }

    /// Every rowid, in order.
    var allRowids: [Int64] {
        var result: [Int64] = []
        result.reserveCapacity(rows.count)
        for chunk in rows.chunks { for row in chunk { result.append(row.rowid) } }
        return result
    }
}
