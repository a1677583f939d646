import Foundation
import LogStore

/// Builds one table's in-memory order structures at attach from its rows as the store's record
/// pass meets them (in no particular order): the rowid order and every index. Row bytes are
/// decoded (only the indexed columns) and dropped as they come; none are kept.
final class TableLoader {
    let table: TableState
    private var rowids: [Int64] = []
    private var builders: [IndexBuilder]
    private var failedRowid: Int64?
    private var columns: IndexedColumns
    private let columnsOf: [[Int]]

    /// Entry bytes of all indexes above which they are built one at a time.
    static let concurrentBuildLimit = 16 << 20

    init(table: TableState) {
        self.table = table
        builders = table.indexes.map { IndexBuilder(descending: $0.schema.descending, collations: $0.schema.collations) }
        columns = IndexedColumns(table: table)
        columnsOf = table.indexes.map(\.schema.columns)
    }

    /// Rows the store holds for the table (its keydir's count), when known: the arrays are
    /// made that large at once (after a sample of rows for the index entries' length).
    var expectedRows = 0
    /// Rows after which the index builders reserve room for `expectedRows`.
    private static let sampleRows = 1024

    /// Adds the row `rowid` with its stored bytes.
    func add(rowid: Int64, bytes: UnsafeRawBufferPointer) {
        if rowids.isEmpty, expectedRows > 0 { rowids.reserveCapacity(expectedRows) }
        if rowids.count == Self.sampleRows, expectedRows > Self.sampleRows {
            for i in builders.indices { builders[i].reserve(entries: expectedRows) }
        }
        rowids.append(rowid)
        guard !builders.isEmpty, failedRowid == nil else { return }
        guard columns.decode(bytes, rowid: rowid) else {
            failedRowid = rowid
            return
        }
        for i in builders.indices {
            builders[i].add(columns: columnsOf[i], of: columns.values, rowid: rowid)
        }
    }

    /// Sorts what was added into the table (indexes sorted one per thread).
    /// - Throws: `StoreError.corrupt` naming the first row that did not decode.
    func finish() throws {
        if let failedRowid {
            throw StoreError.corrupt("DAO table \(table.name): row \(failedRowid) does not decode")
        }
        rowids.sort()
        table.rowids = SortedChunks(sorted: rowids)
        rowids = []
        // Each index is built by its own worker, which then drops its builder: the entries of
        // an index that is done leave memory while a slower one is still sorted (attach of a
        // big table without its checkpoint peaked with every builder and index alive at once).
        // Big ones are built one after another: two sorts at once held both sorts' prefixes
        // and order (12 bytes an entry each) and both new indexes half made. A million-row
        // table with two indexes attaches no slower this way (1.0-1.1 s; BENCHMARKS.md).
        let slots = builders.map(BuildSlot.init)
        let oneAtATime = builders.reduce(0) { $0 + $1.entryBytes } > Self.concurrentBuildLimit
        builders = []
        if oneAtATime {
            for slot in slots { slot.build() }
        } else {
            DispatchQueue.concurrentPerform(iterations: slots.count) { i in
                slots[i].build()
            }
        }
        for i in slots.indices { table.indexes[i].entries = slots[i].built }
    }
}

/// One index being built by `TableLoader.finish`: its builder until the entries are made,
/// then the entries. Each is touched by one worker only, then read after they all finish.
private final class BuildSlot: @unchecked Sendable {
    private var builder: IndexBuilder?
    private(set) var built = KeyChunks()

    init(_ builder: IndexBuilder) { self.builder = builder }

    func build() {
        guard let builder else { return }
        self.builder = nil
        built = builder.chunks(builder.sortedOrder())
    }
}
