#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Collects the entries of an index being built (at attach or CREATE INDEX) in one flat byte
/// arena, then sorts them into a `KeyChunks`: a permutation sorted on each entry's first 8
/// bytes as an integer, with memcmp of the whole entries only on ties.
struct IndexBuilder {
    let descending: [Bool]
    private var bytes: [UInt8] = []
    /// Each entry's end offset in `bytes`, its low 32 bits: 4 bytes an entry (a million-row
    /// table's rebuild held 8 MB of 8-byte offsets per index).
    private var ends: [UInt32] = []
    /// The entries at which the offsets passed another multiple of 4 GiB, in order (one per
    /// crossing; empty below 4 GiB of entries, which is every index a phone holds).
    private var wraps: [Int] = []
    /// Per entry: whether a key column is NULL (NULLs never clash in a unique index).
    private var hasNull: [Bool] = []

    /// Each key column's collation: texts are folded by it before they are encoded.
    let collations: [Collation]

    init(descending: [Bool], collations: [Collation]? = nil) {
        self.descending = descending
        self.collations = collations ?? Array(repeating: .binary, count: descending.count)
    }

    var count: Int { ends.count }

    /// Bytes of entries collected so far.
    var entryBytes: Int { bytes.count }

    /// Makes room for `total` entries as long, on average, as those collected so far (plus a
    /// tenth), so that a big build does not grow its arrays by doubling: each doubling held the
    /// old and the new copy at once (+16 MB at the end of a million-row rebuild).
    mutating func reserve(entries total: Int) {
        guard total > ends.count else { return }
        ends.reserveCapacity(total)
        hasNull.reserveCapacity(total)
        guard !ends.isEmpty else { return }
        let perEntry = Double(bytes.count) / Double(ends.count)
        bytes.reserveCapacity(Int(perEntry * Double(total) * 1.1) + 64)
    }

    /// Entry `i`'s end offset in `bytes`.
    @inline(__always)
    private func end(_ i: Int) -> Int {
        guard !wraps.isEmpty else { return Int(ends[i]) }
        var high = 0
        for wrap in wraps where wrap <= i { high += 1 }
        return high << 32 | Int(ends[i])
    }

    /// Records the end of the entry just appended to `bytes`.
    @inline(__always)
    private mutating func endEntry() {
        while bytes.count >> 32 > wraps.count { wraps.append(ends.count) }
        ends.append(UInt32(truncatingIfNeeded: bytes.count))
    }

    /// Adds the entry of a row whose key columns are `key`.
    mutating func add(_ key: [SQLValue], rowid: Int64) {
        var null = false
        for (i, value) in key.enumerated() {
            if case .null = value { null = true }
            IndexKeyCodec.append(collations[i].fold(value), descending: descending[i], to: &bytes)
        }
        IndexKeyCodec.appendRowid(rowid, to: &bytes)
        endEntry()
        hasNull.append(null)
    }

    /// Adds the entry of a row: its `columns` of `values` (one slot per table column).
    mutating func add(columns: [Int], of values: [SQLValue], rowid: Int64) {
        var null = false
        for (i, column) in columns.enumerated() {
            if case .null = values[column] { null = true }
            IndexKeyCodec.append(collations[i].fold(values[column]), descending: descending[i], to: &bytes)
        }
        IndexKeyCodec.appendRowid(rowid, to: &bytes)
        endEntry()
        hasNull.append(null)
    }

    /// The entries' positions in index order.
    func sortedOrder() -> [Int32] {
        var order = Array(0..<Int32(ends.count))
        let prefixes: [UInt64] = bytes.withUnsafeBytes { b in
            (0..<ends.count).map { i in
                let start = i == 0 ? 0 : end(i - 1), stop = end(i)
                var prefix: UInt64 = 0
                for k in 0..<8 { prefix = prefix << 8 | UInt64(start + k < stop ? b[start + k] : 0) }
                return prefix
            }
        }
        bytes.withUnsafeBytes { b in
            prefixes.withUnsafeBufferPointer { prefix in
                order.sort { x, y in
                    let px = prefix[Int(x)], py = prefix[Int(y)]
                    if px != py { return px < py }
                    return IndexKeyCodec.compare(entry(Int(x), b), entry(Int(y), b)) < 0
                }
            }
        }
        return order
    }

    /// Whether two entries in `order` have equal keys without a NULL (a UNIQUE violation).
    func hasDuplicateKey(_ order: [Int32]) -> Bool {
        bytes.withUnsafeBytes { b in
            for k in order.indices.dropFirst() {
                let x = Int(order[k - 1]), y = Int(order[k])
                if hasNull[x] { continue }
                let ex = entry(x, b), ey = entry(y, b)
                let kx = UnsafeRawBufferPointer(rebasing: ex[0..<(ex.count - 8)])
                let ky = UnsafeRawBufferPointer(rebasing: ey[0..<(ey.count - 8)])
                if kx.count == ky.count && IndexKeyCodec.compare(kx, ky) == 0 { return true }
            }
            return false
        }
    }

    /// The entries in `order` as index chunks.
    func chunks(_ order: [Int32]) -> KeyChunks {
        KeyChunks(bytes: bytes, order: order) { i in (i == 0 ? 0 : end(i - 1))..<end(i) }
    }

    @inline(__always)
    private func entry(_ i: Int, _ b: UnsafeRawBufferPointer) -> UnsafeRawBufferPointer {
        UnsafeRawBufferPointer(rebasing: b[(i == 0 ? 0 : end(i - 1))..<end(i)])
    }
}
