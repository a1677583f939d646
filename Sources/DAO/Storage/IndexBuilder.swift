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
    private var ends: [Int] = []
    /// Per entry: whether a key column is NULL (NULLs never clash in a unique index).
    private var hasNull: [Bool] = []

    init(descending: [Bool]) { self.descending = descending }

    var count: Int { ends.count }

    /// Adds the entry of a row whose key columns are `key`.
    mutating func add(_ key: [SQLValue], rowid: Int64) {
        var null = false
        for (i, value) in key.enumerated() {
            if case .null = value { null = true }
            IndexKeyCodec.append(value, descending: descending[i], to: &bytes)
        }
        IndexKeyCodec.appendRowid(rowid, to: &bytes)
        ends.append(bytes.count)
        hasNull.append(null)
    }

    /// Adds the entry of a row: its `columns` of `values` (one slot per table column).
    mutating func add(columns: [Int], of values: [SQLValue], rowid: Int64) {
        var null = false
        for (i, column) in columns.enumerated() {
            if case .null = values[column] { null = true }
            IndexKeyCodec.append(values[column], descending: descending[i], to: &bytes)
        }
        IndexKeyCodec.appendRowid(rowid, to: &bytes)
        ends.append(bytes.count)
        hasNull.append(null)
    }

    /// The entries' positions in index order.
    func sortedOrder() -> [Int32] {
        var order = Array(0..<Int32(ends.count))
        let ends = self.ends
        let prefixes: [UInt64] = bytes.withUnsafeBytes { b in
            (0..<ends.count).map { i in
                let start = i == 0 ? 0 : ends[i - 1]
                var prefix: UInt64 = 0
                for k in 0..<8 { prefix = prefix << 8 | UInt64(start + k < ends[i] ? b[start + k] : 0) }
                return prefix
            }
        }
        bytes.withUnsafeBytes { b in
            prefixes.withUnsafeBufferPointer { prefix in
                order.sort { x, y in
                    let px = prefix[Int(x)], py = prefix[Int(y)]
                    if px != py { return px < py }
                    return IndexKeyCodec.compare(entry(Int(x), b, ends), entry(Int(y), b, ends)) < 0
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
                let ex = entry(x, b, ends), ey = entry(y, b, ends)
                let kx = UnsafeRawBufferPointer(rebasing: ex[0..<(ex.count - 8)])
                let ky = UnsafeRawBufferPointer(rebasing: ey[0..<(ey.count - 8)])
                if kx.count == ky.count && IndexKeyCodec.compare(kx, ky) == 0 { return true }
            }
            return false
        }
    }

    /// The entries in `order` as index chunks.
    func chunks(_ order: [Int32]) -> KeyChunks { KeyChunks(bytes: bytes, ends: ends, order: order) }

    @inline(__always)
    private func entry(_ i: Int, _ b: UnsafeRawBufferPointer, _ ends: [Int]) -> UnsafeRawBufferPointer {
        UnsafeRawBufferPointer(rebasing: b[(i == 0 ? 0 : ends[i - 1])..<ends[i]])
    }
}
