/// Computes the window functions of a rewritten SELECT (SQL/WindowRewrite.swift) over the
/// rows of its subquery, as SQLite 3.40's window.c does (windowfunctions.html).
///
/// Calls of the same window form a group (`WindowCall.group`); the groups are taken from the
/// last to the first. Each sorts the rows by its PARTITION BY and ORDER BY, keeping the order
/// the later group left among ties, and its calls walk the partitions and their peer groups
/// and write one value per row. The rows come out in the first group's order, which is the
/// order SQLite hands them out in when the SELECT has no ORDER BY (it nests one subquery per
/// group, the first group outermost).
///
/// Cost: a sort per group, O(n log n); ranking functions O(n); frame functions O(n) when each
/// row's frame starts where the last one did (running and whole-partition frames, the
/// default) and O(n × frame) otherwise.
struct WindowRunner {
    let stage: WindowStage
    /// Where the lifted columns start in a subquery row.
    let firstLifted: Int
    /// Each subquery column's collation (partition and order keys compare under it).
    let collations: [Collation]

    /// `rows` with one value per call appended to each, in the first call's order.
    /// - Throws: `SQLExecutionError` worded as SQLite's for a bad frame offset or ntile() or
    ///   nth_value() argument, "integer overflow" from sum().
    func run(over rows: [[SQLValue]], _ context: RowContext) throws -> [[SQLValue]] {
        guard !rows.isEmpty else { return [] }
        var values: [[SQLValue]] = Array(repeating: [], count: stage.calls.count)
        var order = Array(rows.indices)
        let groups = Set(stage.calls.map(\.group)).sorted(by: >)
        for group in groups {
            let members = stage.calls.indices.filter { stage.calls[$0].group == group }
            var keys = WindowSortKeys(stage.calls[members[0]], firstLifted: firstLifted, collations: collations, rows: rows, order: order)
            keys.sort()
            order = keys.order
            let partitions = keys.partitions()
            let peers = keys.peersOfPrevious()
            for k in members { values[k] = try compute(stage.calls[k], rows, order, partitions, peers, context) }
        }
        return order.map { r in
            var row = rows[r]
            row.reserveCapacity(row.count + values.count)
            for column in values { row.append(column[r]) }
            return row
        }
    }

    // MARK: Order

    private func column(_ lifted: Int) -> Int { firstLifted + lifted }

    private func collation(_ lifted: Int) -> Collation {
        let c = column(lifted)
        return c < collations.count ? collations[c] : .binary
    }

    // MARK: Values

    /// The call's value for each row (indexed as `rows`), the rows in window order (`order`),
    /// its partitions (ranges of `order`) and whether each position is a peer of the one before.
    private func compute(_ call: WindowCall, _ rows: [[SQLValue]], _ order: [Int], _ partitions: [Range<Int>], _ peers: [Bool],
                         _ context: RowContext) throws -> [SQLValue] {
        var result = [SQLValue](repeating: .null, count: rows.count)
        let offsets = try frameOffsets(call, rows[order[0]])
        for range in partitions {
            var partition = Partition(members: Array(order[range]))
            partition.findPeers { position in peers[range.lowerBound + position] }
            try computePartition(call, partition, rows, offsets, context, into: &result)
        }
        return result
    }

    /// One partition's rows in window order, and their peer groups.
    private struct Partition {
        let members: [Int]
        /// Per position: the first position of its peer group, the position after the group,
        /// the group's number.
        var groupStart: [Int] = []
        var groupEnd: [Int] = []
        var groupNumber: [Int] = []
        /// The first position of each peer group.
        var groupFirst: [Int] = []

        init(members: [Int]) { self.members = members }

        var count: Int { members.count }

        /// Finds the peer groups from whether each position is a peer of the one before it.
        mutating func findPeers(_ isPeerOfPrevious: (Int) -> Bool) {
            let n = members.count
            groupStart = .init(repeating: 0, count: n)
            groupEnd = .init(repeating: 0, count: n)
            groupNumber = .init(repeating: 0, count: n)
            var i = 0
            while i < n {
                var j = i + 1
                while j < n, isPeerOfPrevious(j) { j += 1 }
                for p in i..<j {
                    groupStart[p] = i
                    groupEnd[p] = j
                    groupNumber[p] = groupFirst.count
                }
                groupFirst.append(i)
                i = j
            }
        }

        /// The position after peer group `g`.
        func end(ofGroup g: Int) -> Int { g + 1 < groupFirst.count ? groupFirst[g + 1] : members.count }
    }

    private func computePartition(_ call: WindowCall, _ partition: Partition, _ rows: [[SQLValue]], _ offsets: (SQLValue?, SQLValue?),
                                  _ context: RowContext, into result: inout [SQLValue]) throws {
        let n = partition.count
        let members = partition.members
        func argument(_ a: Int, at position: Int) -> SQLValue { rows[members[position]][column(call.arguments[a])] }
        switch call.function {
        case .rowNumber:
            for i in 0..<n { result[members[i]] = .integer(Int64(i + 1)) }
        case .rank:
            for i in 0..<n { result[members[i]] = .integer(Int64(partition.groupStart[i] + 1)) }
        case .denseRank:
            for i in 0..<n { result[members[i]] = .integer(Int64(partition.groupNumber[i] + 1)) }
        case .percentRank:
            for i in 0..<n { result[members[i]] = .real(n > 1 ? Double(partition.groupStart[i]) / Double(n - 1) : 0) }
        case .cumeDist:
            for i in 0..<n { result[members[i]] = .real(Double(partition.groupEnd[i]) / Double(n)) }
        case .ntile:
            // SQLite reads the bucket count from the partition's first row.
            let buckets = PrintfFormatter.int64(argument(0, at: 0))
            guard buckets > 0 else { throw SQLExecutionError("argument of ntile must be a positive integer") }
            let total = Int64(n)
            let size = total / buckets
            for i in 0..<n {
                let row = Int64(i)
                if size == 0 {
                    result[members[i]] = .integer(row + 1)
                } else {
                    let large = total - buckets * size
                    let small = large * (size + 1)
                    result[members[i]] = .integer(row < small ? 1 + row / (size + 1) : 1 + large + (row - small) / size)
                }
            }
        case .lag, .lead:
            for i in 0..<n {
                let offset = call.arguments.count > 1 ? argument(1, at: i) : .integer(1)
                // SQLite adds the offset to the row's number as SQL arithmetic and seeks that
                // row: a NULL, fractional or out-of-partition target gives the default.
                let target = SQLValues.arithmetic(call.function == .lag ? .subtract : .add, .integer(Int64(i + 1)), offset)
                var position: Int?
                switch target {
                case .integer(let t) where t >= 1 && t <= Int64(n): position = Int(t) - 1
                case .real(let t) where t >= 1 && t <= Double(n) && t == t.rounded(.towardZero): position = Int(t) - 1
                default: position = nil
                }
                if let position {
                    result[members[i]] = argument(0, at: position)
                } else {
                    result[members[i]] = call.arguments.count > 2 ? argument(2, at: i) : .null
                }
            }
        case .firstValue, .lastValue, .nthValue:
            for i in 0..<n {
                let frame = try bounds(call, partition, rows, offsets, at: i)
                var position: Int?
                switch call.function {
                case .firstValue: position = frame.first
                case .lastValue: position = frame.last
                default:
                    guard let wanted = Self.positiveInteger(argument(1, at: i)) else {
                        throw SQLExecutionError("second argument to nth_value must be a positive integer")
                    }
                    position = frame.nth(wanted)
                }
                result[members[i]] = position.map { argument(0, at: $0) } ?? .null
            }
        case .aggregate(let name):
            let scratch = RowContext(parameters: context.parameters)
            scratch.database = context.database
            scratch.outer = context.outer
            scratch.subqueries = context.subqueries
            let aggregate = AggregateCall(name: name, args: call.arguments.map { .slot(column($0), .blob) }, distinct: false,
                                          star: call.star || call.arguments.isEmpty,
                                          collation: call.arguments.first.map(collation) ?? .binary)
            var accumulator = Accumulator(aggregate)
            func add(_ position: Int) throws {
                scratch.row = rows[members[position]]
                _ = try accumulator.add(scratch)
            }
            if !call.frame.exclusionWritten, name == "min" || name == "max" {
                try slidingExtreme(call, partition, rows, offsets, largest: name == "max", into: &result)
                return
            }
            if !call.frame.exclusionWritten, ["count", "sum", "total", "avg"].contains(name) {
                // As SQLite: rows join the sum as the frame's end passes them and leave it as its
                // start does (those leaving before those joining, but for a frame that starts
                // after its row), so a sum keeps SQLite's rounding, turns real and overflows
                // where SQLite's does.
                var added = 0, removed = 0
                func remove(_ position: Int) throws {
                    scratch.row = rows[members[position]]
                    try accumulator.remove(scratch)
                }
                for i in 0..<n {
                    let frame = try bounds(call, partition, rows, offsets, at: i)
                    let (low, high) = (frame.range.lowerBound, frame.range.upperBound)
                    if low < removed || high < added {   // never for frames SQL can write: both ends only advance
                        accumulator = Accumulator(aggregate)
                        (added, removed) = (low, low)
                    }
                    while removed < min(low, added) { try remove(removed); removed += 1 }
                    while added < high { try add(added); added += 1 }
                    while removed < low { try remove(removed); removed += 1 }
                    result[members[i]] = try accumulator.result()
                }
                return
            }
            // Others (and any frame with an EXCLUDE clause, as SQLite) are computed over each
            // frame, from its rows in order, but for a frame that only grew at its end.
            var added: Range<Int>?
            for i in 0..<n {
                let frame = try bounds(call, partition, rows, offsets, at: i)
                if !call.frame.exclusionWritten, let last = added, last.lowerBound == frame.range.lowerBound, last.upperBound <= frame.range.upperBound {
                    for position in last.upperBound..<frame.range.upperBound { try add(position) }
                    added = frame.range
                } else {
                    accumulator = Accumulator(aggregate)
                    for position in frame.range where !frame.excludes(position) { try add(position) }
                    added = call.frame.exclusionWritten ? nil : frame.range
                }
                result[members[i]] = try accumulator.result()
            }
        }
    }

    /// min() or max() over frames whose ends only advance, in O(n) for the partition: the
    /// positions that can still be the answer are kept in a queue whose values run from the
    /// best down, the front dropped as the frame's start passes it. Among values equal under
    /// the collation ('a' and 'A' under NOCASE) the answer is SQLite's: the earliest when the
    /// frame starts at the partition's start (its min()/max() step keeps the first), otherwise
    /// (SQLite keeps such a frame's values in an index) the latest for max() and the earliest
    /// for min().
    private func slidingExtreme(_ call: WindowCall, _ partition: Partition, _ rows: [[SQLValue]], _ offsets: (SQLValue?, SQLValue?),
                                largest: Bool, into result: inout [SQLValue]) throws {
        let members = partition.members
        let argument = column(call.arguments[0])
        let order = collation(call.arguments[0])
        func value(_ position: Int) -> SQLValue { rows[members[position]][argument] }
        var latestAmongEqual = false
        if largest, case .unboundedPreceding = call.frame.start {} else if largest { latestAmongEqual = true }
        var queue: [Int] = []
        var head = 0
        var added = 0
        for i in 0..<members.count {
            let frame = try bounds(call, partition, rows, offsets, at: i)
            if frame.range.upperBound < added { // never for frames SQL can write
                queue.removeAll()
                head = 0
                added = frame.range.lowerBound
            }
            while added < frame.range.upperBound {
                let candidate = value(added)
                if case .null = candidate {} else {
                    while queue.count > head {
                        let c = order.compare(candidate, value(queue[queue.count - 1]))
                        guard (largest ? c > 0 : c < 0) || (c == 0 && latestAmongEqual) else { break }
                        queue.removeLast()
                    }
                    queue.append(added)
                }
                added += 1
            }
            while head < queue.count, queue[head] < frame.range.lowerBound { head += 1 }
            if head > 4096 && head * 2 > queue.count {   // keep the queue's dead front bounded
                queue.removeFirst(head)
                head = 0
            }
            result[members[i]] = head < queue.count ? value(queue[head]) : .null
        }
    }

    // MARK: Frames

    /// A row's frame: positions in its partition, less the ones EXCLUDE leaves out.
    private struct Frame {
        let range: Range<Int>
        /// The excluded positions, and a position kept among them (EXCLUDE TIES keeps the row).
        let excluded: Range<Int>?
        let kept: Int?

        func excludes(_ position: Int) -> Bool {
            guard let excluded, excluded.contains(position) else { return false }
            return position != kept
        }

        var first: Int? { nth(1) }

        var last: Int? {
            var position = range.upperBound - 1
            while position >= range.lowerBound {
                if !excludes(position) { return position }
                position -= 1
            }
            return nil
        }

        /// The `k`th position (from 1) in the frame.
        func nth(_ k: Int64) -> Int? {
            var seen: Int64 = 0
            for position in range where !excludes(position) {
                seen += 1
                if seen == k { return position }
            }
            return nil
        }
    }

    /// The frame offsets' values (start, end), checked as SQLite checks them.
    private func frameOffsets(_ call: WindowCall, _ row: [SQLValue]) throws -> (SQLValue?, SQLValue?) {
        guard call.function.usesFrame else { return (nil, nil) }
        func value(_ bound: WindowFrameBound<Int>, _ which: String) throws -> SQLValue? {
            guard let offset = bound.offset else { return nil }
            let written = row[column(offset)]
            if call.frame.unit == .range {
                guard let number = Self.number(written), SQLValues.compare(number, .integer(0)) >= 0 else {
                    throw SQLExecutionError("frame \(which) offset must be a non-negative number")
                }
                return number
            }
            guard let integer = Self.exactInteger(written), integer >= 0 else {
                throw SQLExecutionError("frame \(which) offset must be a non-negative integer")
            }
            return .integer(integer)
        }
        return (try value(call.frame.start, "starting"), try value(call.frame.end, "ending"))
    }

    private func bounds(_ call: WindowCall, _ partition: Partition, _ rows: [[SQLValue]], _ offsets: (SQLValue?, SQLValue?),
                        at i: Int) throws -> Frame {
        let n = partition.count
        let frame = call.frame
        let low: Int, high: Int
        switch frame.unit {
        case .rows:
            low = Self.rowBound(frame.start, offsets.0, i, n, isEnd: false)
            high = Self.rowBound(frame.end, offsets.1, i, n, isEnd: true)
        case .groups:
            low = groupBound(frame.start, offsets.0, partition, i, isEnd: false)
            high = groupBound(frame.end, offsets.1, partition, i, isEnd: true)
        case .range:
            low = rangeBound(call, frame.start, offsets.0, partition, rows, i, isEnd: false)
            high = rangeBound(call, frame.end, offsets.1, partition, rows, i, isEnd: true)
        }
        let range = low < high ? low..<high : low..<low
        switch frame.exclusion {
        case .noOthers: return Frame(range: range, excluded: nil, kept: nil)
        case .currentRow: return Frame(range: range, excluded: i..<(i + 1), kept: nil)
        case .group: return Frame(range: range, excluded: partition.groupStart[i]..<partition.groupEnd[i], kept: nil)
        case .ties: return Frame(range: range, excluded: partition.groupStart[i]..<partition.groupEnd[i], kept: i)
        }
    }

    /// A ROWS boundary: a position, clamped to the partition (an end is exclusive).
    private static func rowBound(_ bound: WindowFrameBound<Int>, _ offset: SQLValue?, _ i: Int, _ n: Int, isEnd: Bool) -> Int {
        let k: Int64
        if case .integer(let value)? = offset { k = value } else { k = 0 }
        let row = Int64(i) + (isEnd ? 1 : 0)
        let position: Int64
        switch bound {
        case .unboundedPreceding: return 0
        case .unboundedFollowing: return n
        case .currentRow: position = row
        case .preceding: position = row - k
        case .following:
            let (sum, overflow) = row.addingReportingOverflow(k)
            position = overflow ? Int64(n) : sum
        }
        return Int(min(max(position, 0), Int64(n)))
    }

    /// A GROUPS boundary: the first position of a peer group (a start) or the one after it (an
    /// end), counted in groups from the row's.
    private func groupBound(_ bound: WindowFrameBound<Int>, _ offset: SQLValue?, _ partition: Partition, _ i: Int, isEnd: Bool) -> Int {
        let n = partition.count
        let groups = Int64(partition.groupFirst.count)
        let k: Int64
        if case .integer(let value)? = offset { k = value } else { k = 0 }
        let own = Int64(partition.groupNumber[i])
        let group: Int64
        switch bound {
        case .unboundedPreceding: return 0
        case .unboundedFollowing: return n
        case .currentRow: return isEnd ? partition.groupEnd[i] : partition.groupStart[i]
        case .preceding:
            group = own - k
            if group < 0 { return 0 }
        case .following:
            let (sum, overflow) = own.addingReportingOverflow(k)
            if overflow || sum >= groups { return n }
            group = sum
        }
        return isEnd ? partition.end(ofGroup: Int(group)) : partition.groupFirst[Int(group)]
    }

    /// A RANGE boundary: the first position whose key reaches the row's key less or plus the
    /// offset (a start), or the first one past it (an end). A NULL, text or blob key is its own
    /// boundary (SQLite adds the offset to numbers only), so such a row's frame is its peers.
    private func rangeBound(_ call: WindowCall, _ bound: WindowFrameBound<Int>, _ offset: SQLValue?, _ partition: Partition,
                            _ rows: [[SQLValue]], _ i: Int, isEnd: Bool) -> Int {
        switch bound {
        case .unboundedPreceding: return 0
        case .unboundedFollowing: return partition.count
        case .currentRow: return isEnd ? partition.groupEnd[i] : partition.groupStart[i]
        case .preceding, .following:
            guard let term = call.order.first, let offset else { return isEnd ? partition.groupEnd[i] : partition.groupStart[i] }
            let value = rows[partition.members[i]][column(term.operand)]
            var target = value
            switch value {
            case .integer, .real:
                // PRECEDING goes toward the start of the order: down when ascending.
                let preceding: Bool
                if case .preceding = bound { preceding = true } else { preceding = false }
                target = SQLValues.arithmetic(preceding != term.descending ? .subtract : .add, value, offset)
            default: break
            }
            // Binary search: keys ascend in the term's order through the partition.
            let key = WindowSortKeys.Key(column: column(term.operand), collation: collation(term.operand), descending: term.descending,
                                         nullsFirst: term.nullsFirst, partition: false)
            var low = 0, high = partition.count
            while low < high {
                let middle = (low + high) / 2
                let c = WindowSortKeys.compare(rows[partition.members[middle]][key.column], target, key)
                if isEnd ? c <= 0 : c < 0 { low = middle + 1 } else { high = middle }
            }
            return low
        }
    }

    // MARK: Argument checks

    /// A value read as an integer the way SQLite's frame checks take it: an integer, a real
    /// without a fraction, a text spelling one; nil otherwise.
    private static func exactInteger(_ value: SQLValue) -> Int64? {
        switch Self.number(value) {
        case .integer(let i)?: return i
        case .real(let r)? where r == r.rounded(.towardZero) && abs(r) < 9.2e18: return Int64(r)
        default: return nil
        }
    }

    /// A number, or a text spelling one wholly; nil for anything else.
    private static func number(_ value: SQLValue) -> SQLValue? {
        switch value {
        case .integer, .real: return value
        case .text(let text):
            let parsed = SQLValues.parseNumber(text)
            return parsed.form == .integer || parsed.form == .real ? parsed.value : nil
        default: return nil
        }
    }

    /// nth_value()'s N: a positive integer (a real without a fraction, a text spelling one).
    private static func positiveInteger(_ value: SQLValue) -> Int64? {
        guard let n = exactInteger(value), n > 0 else { return nil }
        return n
    }
}
