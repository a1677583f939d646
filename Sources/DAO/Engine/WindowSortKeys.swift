/// A window's PARTITION BY and ORDER BY values for each row, copied out of the rows once and
/// laid flat (row after row), so that sorting the rows and finding their partitions and peer
/// groups compares values in place. Reaching into each row instead retained and released its
/// array on every comparison: half the time of a window query (perf, sql-bench `window`).
struct WindowSortKeys {
    /// One key: its column in the rows, and how it compares.
    struct Key {
        let column: Int
        let collation: Collation
        let descending: Bool
        let nullsFirst: Bool
        /// A PARTITION BY key (compared by its collation alone: NULLs first, ascending).
        let partition: Bool
    }

    let keys: [Key]
    let partitionCount: Int
    /// The rows (their indexes) in the keys' order once `sort()` ran.
    private(set) var order: [Int]
    /// `values[i * keys.count + j]`: key `j` of the row at position `i` of `order`.
    private var values: [SQLValue]

    /// The keys of `call` for the rows of `order`, in that order.
    init(_ call: WindowCall, firstLifted: Int, collations: [Collation], rows: [[SQLValue]], order: [Int]) {
        func collation(_ column: Int) -> Collation { column < collations.count ? collations[column] : .binary }
        var keys: [Key] = call.partition.map {
            Key(column: firstLifted + $0, collation: collation(firstLifted + $0), descending: false, nullsFirst: true, partition: true)
        }
        for term in call.order {
            let column = firstLifted + term.operand
            keys.append(Key(column: column, collation: collation(column), descending: term.descending, nullsFirst: term.nullsFirst,
                            partition: false))
        }
        self.keys = keys
        partitionCount = call.partition.count
        self.order = order
        var values: [SQLValue] = []
        values.reserveCapacity(order.count * keys.count)
        for r in order {
            for key in keys { values.append(rows[r][key.column]) }
        }
        self.values = values
    }

    /// Two values as `key` orders them.
    static func compare(_ a: SQLValue, _ b: SQLValue, _ key: Key) -> Int {
        if key.partition { return key.collation.compare(a, b) }
        switch (a, b) {
        case (.null, .null): return 0
        case (.null, _): return key.nullsFirst ? -1 : 1
        case (_, .null): return key.nullsFirst ? 1 : -1
        default:
            let c = key.collation.compare(a, b)
            return key.descending ? -c : c
        }
    }

    /// Sorts the rows by the keys; ties keep their order. O(n log n) comparisons.
    mutating func sort() {
        let width = keys.count
        guard width > 0, order.count > 1 else { return }
        var positions = Array(order.indices)
        values.withUnsafeBufferPointer { values in
            keys.withUnsafeBufferPointer { keys in
                positions.sort { a, b in
                    let x = a * width, y = b * width
                    for j in 0..<width {
                        let c = WindowSortKeys.compare(values[x + j], values[y + j], keys[j])
                        if c != 0 { return c < 0 }
                    }
                    return a < b
                }
            }
        }
        var sortedValues: [SQLValue] = []
        sortedValues.reserveCapacity(values.count)
        for p in positions { sortedValues.append(contentsOf: values[(p * width)..<(p * width + width)]) }
        values = sortedValues
        order = positions.map { order[$0] }
    }

    /// Whether the rows at positions `a` and `b` agree on the keys `range` (partition keys,
    /// or order keys).
    private func agree(_ a: Int, _ b: Int, on range: Range<Int>) -> Bool {
        let width = keys.count
        for j in range where WindowSortKeys.compare(values[a * width + j], values[b * width + j], keys[j]) != 0 { return false }
        return true
    }

    /// The partitions, as ranges of positions, in order.
    func partitions() -> [Range<Int>] {
        var result: [Range<Int>] = []
        var start = 0
        while start < order.count {
            var end = start + 1
            while end < order.count, agree(start, end, on: 0..<partitionCount) { end += 1 }
            result.append(start..<end)
            start = end
        }
        return result
    }

    /// Per position: whether the row is a peer of the one before it (same partition assumed:
    /// the caller asks within a partition).
    func peersOfPrevious() -> [Bool] {
        var result = [Bool](repeating: false, count: order.count)
        for i in order.indices.dropFirst() { result[i] = agree(i - 1, i, on: partitionCount..<keys.count) }
        return result
    }
}
