#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import LogStore

/// A full-table scan's leading column-constant comparisons, tried on every stored row in place
/// before any row is read by key.
///
/// A full scan reads its rows in rowid order, each through the store's keydir (a hash, a probe,
/// a header, a checksum: ~500 instructions) and decodes them into values before the WHERE
/// clause can reject them. The prefilter walks the table's key space once instead
/// (`LogStore.forEachStoredValue`: slot order, no hashing), reads only the compared columns'
/// stored numbers, and keeps the rowids of the rows it cannot rule out; the scan then reads
/// those rows, in rowid order, through the usual path, which evaluates the whole WHERE clause
/// again. So the prefilter only has to be sound: it drops a row only when the usual path
/// would reject it without evaluating anything that could raise an error.
///
/// What it decides, per row, with the usual path's rules (`RowFilter.holds`: the comparison's
/// affinity, then `SQLValues.compare`): the values stored in the compared columns and the
/// rowid. What an affinity would convert (a text under a numeric affinity, a number under
/// TEXT), a column added after the row was written and a record it cannot read in place
/// (encrypted, compressed, failing its checksum) leave the row in: the usual path decides it,
/// and reports what is wrong with it.
struct ScanPrefilter {
    /// One comparison, with all but the row's value decided when the statement starts.
    struct Test {
        /// What the constant is, for the comparisons below.
        enum Constant {
            case integer(Int64)
            case real(Double)
            /// A text or a blob, as bytes at this offset of `constantBytes`.
            case text(offset: Int, count: Int)
            case blob(offset: Int, count: Int)
            /// NULL: the comparison is NULL for every row.
            case null

            var isNull: Bool {
                if case .null = self { return true }
                return false
            }
        }

        /// The position in `columns` of the compared column; -1: the rowid.
        let column: Int
        let op: BinaryOperator
        let constant: Constant
        /// The comparison's affinity turns a stored integer into a real (REAL affinity on a
        /// column that does not keep its storage class): compared as `Double(i)`.
        let integerAsReal: Bool
        /// The comparison's affinity turns a stored number into text: undecided here.
        let numbersUndecided: Bool
        /// A stored text is compared as it is (the comparison's affinity is TEXT, BLOB or
        /// none); a numeric affinity may make it a number: undecided here. (No affinity
        /// changes a blob.)
        let textKept: Bool
    }

    let tests: [Test]
    /// The bytes of the text and blob constants, one after the other (kept out of `Test` so
    /// that reading a test copies no reference-counted value).
    let constantBytes: [UInt8]
    /// The compared columns (table positions, ascending, no repeats).
    let columns: [Int]

    /// Nil when the filter starts with no comparison a stored row can decide.
    init?(_ filter: RowFilter, table: TableState) {
        var comparisons: [RowFilter.Comparison] = []
        for conjunct in filter.conjuncts {
            guard case .comparisons(let parts) = conjunct else { break }
            comparisons.append(contentsOf: parts)
        }
        guard !comparisons.isEmpty else { return nil }
        let rowidColumn = table.definition.rowidColumn
        func isRowid(_ slot: Int) -> Bool { slot < 0 || slot == rowidColumn }
        let columns = Array(Set(comparisons.map(\.slot).filter { !isRowid($0) })).sorted()
        var bytes: [UInt8] = []
        tests = comparisons.map { comparison in
            let affinity = comparison.affinity
            let constant: Test.Constant
            switch comparison.constant {
            case .integer(let value)?: constant = .integer(value)
            case .real(let value)?: constant = .real(value)
            case nil, .null?: constant = .null
            case .text(let text)?:
                constant = .text(offset: bytes.count, count: text.utf8.count)
                bytes.append(contentsOf: text.utf8)
            case .invalidText(let text)?:
                constant = .text(offset: bytes.count, count: text.count)
                bytes.append(contentsOf: text)
            case .blob(let blob)?:
                constant = .blob(offset: bytes.count, count: blob.count)
                bytes.append(contentsOf: blob)
            }
            return Test(column: isRowid(comparison.slot) ? -1 : columns.firstIndex(of: comparison.slot) ?? -1,
                        op: comparison.op, constant: constant,
                        integerAsReal: affinity == .real && !comparison.keepColumn,
                        numbersUndecided: affinity == .text && !comparison.keepColumn,
                        textKept: affinity == nil || affinity == .blob || affinity == .text)
        }
        constantBytes = bytes
        self.columns = columns
    }

    /// The rowids of `table`'s rows that the filter does not rule out, ascending; `walked`
    /// grows by the rows ruled out. The caller makes sure that the table has no pending rows
    /// (they are not in the store yet).
    /// - Throws: what `LogStore.forEachStoredValue` throws (a closed store, a damaged index).
    /// - Complexity: O(rows of the table), plus the sort of the rowids kept.
    func candidates(of table: TableState, in store: LogStore, walked: inout Int) throws -> [Int64] {
        // Each part of the walk (two on two cores for a large table: LogStore walks halves of
        // the keydir at once) keeps its own count, rows and scratch, 128 bytes or more apart so
        // that the two cores never write one cache line.
        let maxParts = 2
        let width = max(columns.count, 1)
        let countStride = 16, tagStride = max(width, 128), payloadStride = max(width, 16)
        let counts = UnsafeMutablePointer<Int>.allocate(capacity: maxParts * countStride)
        counts.initialize(repeating: 0, count: maxParts * countStride)
        let kept = UnsafeMutablePointer<[Int64]>.allocate(capacity: maxParts * countStride)
        kept.initialize(repeating: [], count: maxParts * countStride)
        let tags = UnsafeMutablePointer<UInt8>.allocate(capacity: maxParts * tagStride)
        let payloads = UnsafeMutablePointer<UInt64>.allocate(capacity: maxParts * payloadStride)
        defer {
            counts.deallocate()
            kept.deinitialize(count: maxParts * countStride)
            kept.deallocate()
            tags.deallocate()
            payloads.deallocate()
        }
        var parts = 1
        try columns.withUnsafeBufferPointer { columns in try tests.withUnsafeBufferPointer { tests in
            try constantBytes.withUnsafeBytes { constants in
                try store.forEachStoredValue(space: table.space, parts: maxParts, partsUsed: { parts = $0 }) { part, key, value in
                    guard key.count == 8 else { return }   // not a row key
                    counts[part * countStride] += 1
                    let rowid = Int64(bitPattern: UInt64(bigEndian: key.loadUnaligned(as: UInt64.self)) ^ (1 << 63))
                    let partTags = UnsafeMutableBufferPointer(start: tags + part * tagStride, count: width)
                    let partPayloads = UnsafeMutableBufferPointer(start: payloads + part * payloadStride, count: width)
                    if let value, RowCodec.peekValues(value, columns: columns, tags: partTags, payloads: partPayloads),
                       Self.rulesOut(tests, constants, rowid: rowid, row: value, tags: partTags, payloads: partPayloads) {
                        return
                    }
                    kept[part * countStride].append(rowid)
                }
            }
        } }
        var rowids = kept[0]
        var records = counts[0]
        for part in 1..<parts {
            rowids.append(contentsOf: kept[part * countStride])
            records += counts[part * countStride]
        }
        // The rows ruled out here were looked at; the scan counts the others when it reads them.
        walked += records - rowids.count
        rowids.sort()
        return Self.intersect(rowids, table.rowids)
    }

    /// Whether the row with these stored values certainly fails the filter.
    @inline(__always)
    private static func rulesOut(_ tests: UnsafeBufferPointer<Test>, _ constants: UnsafeRawBufferPointer, rowid: Int64,
                                 row: UnsafeRawBufferPointer, tags: UnsafeMutableBufferPointer<UInt8>,
                                 payloads: UnsafeMutableBufferPointer<UInt64>) -> Bool {
        for test in tests {
            let order: Int
            if test.column < 0 {
                order = Self.order(ofInteger: rowid, test)
            } else {
                switch tags[test.column] {
                case 0: return true   // NULL: the comparison is NULL, which ends the row
                case 1:
                    if test.numbersUndecided { continue }
                    order = Self.order(ofInteger: Int64(bitPattern: payloads[test.column]), test)
                case 2:
                    if test.numbersUndecided { continue }
                    order = Self.order(ofReal: Double(bitPattern: payloads[test.column]), test)
                case 3:
                    // A text: numbers sort before it and blobs after it (SQLValues.rank), texts
                    // by their bytes; a NULL constant is decided below.
                    guard test.textKept else { continue }
                    switch test.constant {
                    case .integer, .real: order = 1
                    case .text(let offset, let count): order = compare(row, payloads[test.column], constants, offset, count)
                    case .blob: order = -1
                    case .null: order = 0
                    }
                case 4:
                    // A blob, which no affinity changes: after numbers and texts, blobs by bytes.
                    switch test.constant {
                    case .integer, .real, .text: order = 1
                    case .blob(let offset, let count): order = compare(row, payloads[test.column], constants, offset, count)
                    case .null: order = 0
                    }
                default: continue   // a column added after the row: its default decides
                }
            }
            // Not true (false, or NULL against a NULL constant): the row ends here.
            let holds: Bool
            switch test.op {
            case .equal: holds = order == 0
            case .notEqual: holds = order != 0
            case .less: holds = order < 0
            case .lessEqual: holds = order <= 0
            case .greater: holds = order > 0
            case .greaterEqual: holds = order >= 0
            default: continue
            }
            if !holds || test.constant.isNull { return true }
        }
        return false
    }

    /// The stored value's order against the constant, as `SQLValues.compare` gives it after
    /// the comparison's affinity (any value for a NULL constant: the caller rejects).
    @inline(__always)
    private static func order(ofInteger value: Int64, _ test: Test) -> Int {
        if test.integerAsReal { return order(ofReal: Double(value), test) }
        switch test.constant {
        case .integer(let c): return value < c ? -1 : (value > c ? 1 : 0)
        case .real(let c): return SQLValues.compareIntReal(value, c)
        case .text, .blob: return -1
        case .null: return 0
        }
    }

    @inline(__always)
    private static func order(ofReal value: Double, _ test: Test) -> Int {
        switch test.constant {
        case .real(let c): return value < c ? -1 : (value > c ? 1 : 0)
        case .integer(let c): return -SQLValues.compareIntReal(c, value)
        case .text, .blob: return -1
        case .null: return 0
        }
    }

    /// The stored bytes `located` (`RowCodec.peekValues`: offset << 32 | count) in `row`
    /// against `count` bytes at `offset` of `constants`, as `SQLValues.compareBytes` orders them.
    @inline(__always)
    private static func compare(_ row: UnsafeRawBufferPointer, _ located: UInt64, _ constants: UnsafeRawBufferPointer,
                                _ offset: Int, _ count: Int) -> Int {
        let storedOffset = Int(located >> 32), storedCount = Int(located & 0xFFFF_FFFF)
        let common = min(storedCount, count)
        if common > 0, let stored = row.baseAddress, let constant = constants.baseAddress {
            let c = memcmp(stored + storedOffset, constant + offset, common)
            if c != 0 { return c < 0 ? -1 : 1 }
        }
        return storedCount < count ? -1 : (storedCount > count ? 1 : 0)
    }

    /// The elements of `sorted` that are rowids of `rowids` (both ascending): the store's key
    /// space and the table's rowid order agree, and this keeps the scan to the latter even if
    /// they did not.
    private static func intersect(_ sorted: [Int64], _ rowids: SortedChunks<Int64>) -> [Int64] {
        guard !sorted.isEmpty else { return [] }
        var result: [Int64] = []
        result.reserveCapacity(sorted.count)
        var next = 0
        for chunk in rowids.chunks {
            guard let last = chunk.last, last >= sorted[next] else { continue }
            for rowid in chunk {
                while next < sorted.count && sorted[next] < rowid { next += 1 }
                guard next < sorted.count else { return result }
                if sorted[next] == rowid { result.append(rowid); next += 1 }
                if next == sorted.count { return result }
            }
        }
        return result
    }
}

extension SQLDatabase {
    /// `path` with its full scan narrowed by `filter`'s prefilter to the rows it cannot rule
    /// out; `path` itself when it is not a full scan, the filter starts with nothing a stored
    /// row can decide, or the table has rows the store does not hold yet (a transient table,
    /// pending rows of the open transaction).
    /// - Throws: what `ScanPrefilter.candidates` throws.
    func prefiltered(_ path: AccessPath, _ table: TableState, _ filter: RowFilter?) throws -> AccessPath {
        guard case .fullScan(let reverse) = path, let filter, let prefilter = ScanPrefilter(filter, table: table),
              !table.isTransient, table.overlay.isEmpty else { return path }
        let kept = try prefilter.candidates(of: table, in: store, walked: &rowsVisited)
        prefilteredScans += 1
        prefilterKeptRows += kept.count
        return .rowids(reverse ? kept.reversed() : kept)
    }
}
