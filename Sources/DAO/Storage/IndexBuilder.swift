#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Sorts the entries of an index being built (at attach or CREATE INDEX) into index order.
///
/// Comparing entries through their `[DAOValue]` keys costs retains and releases on every
/// comparison; for the common one-column indexes whose keys are all integers, or all text,
/// the sort runs on flat (key, rowid) pairs instead: integers directly, text by an 8-byte
/// big-endian prefix with the full bytes compared only on ties.
enum IndexBuilder {
    static func sort(_ entries: inout [IndexEntry], descending: [Bool]) {
        guard descending.count == 1, !entries.isEmpty else {
            entries.sort { IndexState.less($0, $1, descending) }
            return
        }
        let reverse = descending[0]
        if entries.allSatisfy({ if case .integer = $0.key[0] { return true }; return false }) {
            var pairs = entries.map { entry -> (Int64, Int64) in
                if case .integer(let k) = entry.key[0] { return (k, entry.rowid) }
                return (0, entry.rowid)
            }
            pairs.sort { a, b in
                if a.0 != b.0 { return reverse ? a.0 > b.0 : a.0 < b.0 }
                return a.1 < b.1
            }
            entries = pairs.map { IndexEntry(key: [.integer($0.0)], rowid: $0.1) }
            return
        }
        if entries.allSatisfy({ if case .text = $0.key[0] { return true }; return false }) {
            var texts: [String] = []
            texts.reserveCapacity(entries.count)
            for entry in entries { if case .text(let t) = entry.key[0] { texts.append(t) } }
            var prefixes: [UInt64] = texts.map { text in
                var prefix: UInt64 = 0
                var count = 0
                for byte in text.utf8.prefix(8) { prefix = prefix << 8 | UInt64(byte); count += 1 }
                return prefix << (8 * UInt64(8 - count))
            }
            var order = Array(0..<Int32(entries.count))
            let rowids = entries.map(\.rowid)
            prefixes.withUnsafeMutableBufferPointer { prefix in
                order.sort { a, b in
                    let pa = prefix[Int(a)], pb = prefix[Int(b)]
                    var c = pa < pb ? -1 : (pa > pb ? 1 : 0)
                    if c == 0 { c = SQLValues.compareText(texts[Int(a)], texts[Int(b)]) }
                    if c != 0 { return reverse ? c > 0 : c < 0 }
                    return rowids[Int(a)] < rowids[Int(b)]
                }
            }
            entries = order.map { entries[Int($0)] }
            return
        }
        entries.sort { IndexState.less($0, $1, descending) }
    }
}
