/// How a statement reaches the rows of its table.
enum AccessPath {
    /// Every row in rowid order (or reverse).
    case fullScan(reverse: Bool)
    /// These rowids, in this order.
    case rowids([Int64])
    /// Rowids in [lower, upper], in order (or reverse).
    case rowidRange(lower: Int64, upper: Int64, reverse: Bool)
    /// Entries of index `index` in key ranges (in index order, or reverse).
    case indexRanges(index: Int, ranges: [KeyRange], reverse: Bool)

    var description: String {
        switch self {
        case .fullScan(let reverse): return "SCAN" + (reverse ? " REVERSE" : "")
        case .rowids(let ids): return "ROWID LOOKUP (\(ids.count))"
        case .rowidRange(let lower, let upper, _): return "ROWID RANGE \(lower)...\(upper)"
        case .indexRanges(let index, let ranges, let reverse):
            return "INDEX \(index) RANGES \(ranges.count)" + (reverse ? " REVERSE" : "")
        }
    }
}

/// A range of index keys in index order: a key prefix bound at each end (nil = open).
struct KeyRange {
    var lower: [SQLValue]?
    var lowerInclusive = true
    var upper: [SQLValue]?
    var upperInclusive = true
}

/// Chooses an access path from the WHERE terms and ORDER BY (API.md: equality, IN, ranges and
/// prefix LIKE by index; ORDER BY ... LIMIT by an ordered index without sorting).
struct Planner {
    let table: TableState
    let context: RowContext
    /// The collation each ORDER BY term sorts under (empty: every one BINARY): an index
    /// gives that order only where its column folds by the same collation.
    var orderCollations: [Collation] = []

    /// A usable predicate on one column (slot) with constant operands.
    private enum Predicate {
        case equal([SQLValue])
        case lower(SQLValue, inclusive: Bool)
        case upper(SQLValue, inclusive: Bool)
        case likePrefix(String)
    }

    private func constant(_ expr: Expr) throws -> SQLValue {
        try Evaluator.evaluate(expr, context)
    }

    /// A predicate found, with the shape it came from (`PlannerTerms.shapes` index) and whether
    /// a path that applies every predicate of that shape enforces its term exactly.
    private typealias Found = (slot: Int, predicate: Predicate, shape: Int, exact: Bool)

    /// The predicates of `shapes` with their operands evaluated in this planner's context.
    private func predicates(_ shapes: PlannerTerms) throws -> [Found] {
        // Labelled as the result type: an unlabelled array would be converted element by element.
        var found: [Found] = []
        found.reserveCapacity(shapes.shapes.count + 1)
        for (number, shape) in shapes.shapes.enumerated() {
            switch shape.kind {
            case .compare(let operation, let other, let comparison):
                let raw = try constant(other)
                if case .null = raw { continue }
                let value = SQLValues.apply(comparison, to: raw)
                // replace()'s result keeps its storage class in a comparison (F19): the
                // evaluator would not convert it as the key was.
                let exact = !other.keepsStorageClass
                switch operation {
                case .equal, .isOp: found.append((shape.slot, .equal([value]), number, exact))
                case .less: found.append((shape.slot, .upper(value, inclusive: false), number, exact))
                case .lessEqual: found.append((shape.slot, .upper(value, inclusive: true), number, exact))
                case .greater: found.append((shape.slot, .lower(value, inclusive: false), number, exact))
                case .greaterEqual: found.append((shape.slot, .lower(value, inclusive: true), number, exact))
                default: break
                }
            case .inList(let items, _):
                let values = try equalityValues(shape.kind) ?? []
                found.append((shape.slot, .equal(values), number, !items.contains(where: \.keepsStorageClass)))
            case .inSelect:
                found.append((shape.slot, .equal(try equalityValues(shape.kind) ?? []), number, true))
            case .between(let low, let lowComparison, let high, let highComparison):
                let l = try constant(low), h = try constant(high)
                // With a NULL bound the term is never true, though the other bound still
                // narrows the scan: only both bounds together enforce it.
                var exact = !low.keepsStorageClass && !high.keepsStorageClass
                if case .null = l { exact = false } else if case .null = h { exact = false }
                if case .null = l {} else { found.append((shape.slot, .lower(SQLValues.apply(lowComparison, to: l), inclusive: true), number, exact)) }
                if case .null = h {} else { found.append((shape.slot, .upper(SQLValues.apply(highComparison, to: h), inclusive: true), number, exact)) }
            case .like(let pattern):
                if case .text(let text) = try constant(pattern) {
                    // ASCII only: a text matches an ASCII pattern character only with that
                    // byte, while a non-ASCII one can also be matched by other bytes (SQLite's
                    // reading of ill-formed UTF-8), which a key range would miss.
                    let prefix = String(text.unicodeScalars.prefix { $0 != "%" && $0 != "_" && $0 != "\u{0}" && $0.isASCII })
                    // The range holds more than the pattern matches: never exact.
                    if !prefix.isEmpty { found.append((shape.slot, .likePrefix(prefix), number, false)) }
                }
            }
        }
        return found
    }

    /// Whether comparing the column under `comparison` affinity leaves its stored values as they
    /// are, so the index order (of stored values) is the comparison's order. A TEXT column
    /// compared numerically, or a typeless one converted at all, is not served by its index.
    static func indexOrderHolds(column: Affinity, comparison: Affinity?) -> Bool {
        switch comparison {
        case .none: return true
        case .text?: return column == .text
        default: return column.isNumeric
        }
    }

    private func isRowidSlot(_ slot: Int) -> Bool { slot == -1 || slot == table.definition.rowidColumn }

    /// Whether index `index`'s key column `k` can serve the predicate: its comparison uses the
    /// collation the index folds that column by (a LIKE prefix counts as BINARY).
    @inline(__always)
    private func serves(_ entry: Found, _ terms: PlannerTerms, _ index: Int, column k: Int) -> Bool {
        terms.shapes[entry.shape].collation == table.indexes[index].schema.collations[k]
    }

    /// The access path, and whether it already yields rows in ORDER BY order.
    func choose(where whereClause: Expr?, orderBy: [(slot: Int, descending: Bool)]?) throws -> (AccessPath, ordered: Bool) {
        let choice = try choose(PlannerTerms(whereClause), orderBy: orderBy)
        return (choice.0, choice.ordered)
    }

    /// The access path for terms analysed once (a join's inner loop plans with the same terms
    /// for every row of the loops around it: only their operands' values change), whether it
    /// yields rows in ORDER BY order, and the terms (`PlannerTerms.conjuncts` indexes) it
    /// enforces exactly: every row it yields satisfies them, so they need not be evaluated
    /// again (SQLite's consumed terms). A LIKE prefix, a rowid range and a range bound that
    /// another bound replaced are not among them.
    func choose(_ terms: PlannerTerms, orderBy: [(slot: Int, descending: Bool)]?) throws -> (AccessPath, ordered: Bool, consumed: [Int]) {
        if let single = try singleRowidEquality(terms, orderBy: orderBy) { return single }
        let (path, ordered, shapes) = try choosePath(terms, orderBy: orderBy)
        return (path, ordered, shapes.map { terms.shapes[$0].term })
    }

    /// `WHERE rowid = x` and nothing else (`WHERE id = ?` on an INTEGER PRIMARY KEY): what
    /// `choosePath`'s first step returns for it, without building the predicate list and its
    /// arrays (about 2,000 instructions of a 14,000-instruction primary-key select). Nil for
    /// any other WHERE, and when `x` is NULL (then the general path decides).
    private func singleRowidEquality(_ terms: PlannerTerms, orderBy: [(slot: Int, descending: Bool)]?) throws -> (AccessPath, ordered: Bool, consumed: [Int])? {
        guard terms.shapes.count == 1, isRowidSlot(terms.shapes[0].slot),
              case .compare(let op, let operand, let comparison) = terms.shapes[0].kind, op == .equal || op == .isOp else { return nil }
        let raw = try constant(operand)
        if case .null = raw { return nil }
        let ids = PlannerTerms.rowid(of: raw, comparison: comparison).map { [$0] } ?? []
        let ordered = orderBy.map { $0.isEmpty || ($0.count == 1 && isRowidSlot($0[0].slot)) } ?? true
        // The term is enforced unless its operand keeps its storage class (replace(); F19).
        return (.rowids(ids), ordered, operand.keepsStorageClass ? [] : terms.firstTermOnly)
    }

    /// `choose`, with the consumed terms as shape indexes.
    private func choosePath(_ terms: PlannerTerms, orderBy: [(slot: Int, descending: Bool)]?) throws -> (AccessPath, Bool, [Int]) {
        let found = try predicates(terms)
        /// The shapes of `used` (indexes into `found`) whose every predicate is among them.
        func enforced(_ used: [Int]) -> [Int] {
            var shapes: [Int] = []
            for i in used where found[i].exact && !shapes.contains(found[i].shape) {
                let shape = found[i].shape
                if found.indices.allSatisfy({ found[$0].shape != shape || used.contains($0) }) { shapes.append(shape) }
            }
            return shapes
        }

        // 1. Rowid equality or IN.
        for (position, (slot, predicate, _, _)) in found.enumerated() where isRowidSlot(slot) {
            if case .equal(let values) = predicate {
                var ids: [Int64] = []
                for value in values {
                    if case .integer(let i) = value { ids.append(i) }
                    else if case .real(let r) = value, let i = SQLValues.exactInteger(r) { ids.append(i) }
                }
                let sorted = ids.count <= 1 ? ids : Array(Set(ids)).sorted()
                let wantsReverse = orderBy.map { $0.count == 1 && isRowidSlot($0[0].slot) && $0[0].descending } ?? false
                let ordered = orderBy.map { $0.isEmpty || ($0.count == 1 && isRowidSlot($0[0].slot)) } ?? true
                return (.rowids(wantsReverse ? sorted.reversed() : sorted), ordered && sorted.count <= 1 || ordered, enforced([position]))
            }
        }
        // 2. Index equality on a leading prefix (longest prefix wins; unique indexes first).
        var best: (index: Int, keys: [[SQLValue]], length: Int, used: [Int])?
        for number in table.indexes.indices {
            // An index whose first column has no equality is passed over before any array is
            // made for it (most indexes of most queries).
            let leading = table.indexes[number].schema.columns[0]
            guard found.contains(where: { entry in
                guard entry.slot == leading, case .equal = entry.predicate, serves(entry, terms, number, column: 0) else { return false }
                return true
            }) else { continue }
            var keys: [[SQLValue]] = [[]]
            var length = 0
            var used: [Int] = []
            for (k, column) in table.indexes[number].schema.columns.enumerated() {
                let position = found.firstIndex { entry in
                    guard entry.slot == column, case .equal = entry.predicate, serves(entry, terms, number, column: k) else { return false }
                    return true
                }
                guard let position, case .equal(let candidates) = found[position].predicate else { break }
                keys = keys.flatMap { key in candidates.map { key + [$0] } }
                length += 1
                used.append(position)
                if keys.count > 256 { break }
            }
            if length > 0, best.map({ length > $0.length || (length == $0.length && table.indexes[number].schema.unique) }) ?? true {
                best = (number, keys, length, used)
            }
        }
        if let best {
            let index = table.indexes[best.index]
            var unique = best.keys
            if unique.count > 1 {
                // In index order, without duplicates: each range is scanned once.
                let keys = unique.sorted { index.compareKeys($0, $1) < 0 }
                unique = []
                for key in keys where unique.last.map({ index.compareKeys($0, key) != 0 }) ?? true { unique.append(key) }
            }
            let ranges = unique.map { KeyRange(lower: $0, upper: $0) }
            let (ordered, reverse) = orderSatisfied(by: index, skipping: best.length, orderBy, single: unique.count == 1)
            return (.indexRanges(index: best.index, ranges: reverse ? ranges.reversed() : ranges, reverse: reverse), ordered, enforced(best.used))
        }
        // 3. Rowid range. Every bound applies (the largest lower, the smallest upper), so each
        // is enforced, except a real beyond the rowids' range, whose bound saturates.
        var lowerRowid: Int64?, upperRowid: Int64?
        var used: [Int] = []
        for (position, (slot, predicate, _, _)) in found.enumerated() where isRowidSlot(slot) {
            switch predicate {
            case .lower(let value, let inclusive):
                guard let bound = integerBound(value, lower: true, inclusive: inclusive) else { continue }
                lowerRowid = max(lowerRowid ?? Int64.min, bound)
                if Self.boundIsExact(value) { used.append(position) }
            case .upper(let value, let inclusive):
                guard let bound = integerBound(value, lower: false, inclusive: inclusive) else { continue }
                upperRowid = min(upperRowid ?? Int64.max, bound)
                if Self.boundIsExact(value) { used.append(position) }
            default: continue
            }
        }
        let rowidOrder = orderBy.map { $0.isEmpty || ($0.count == 1 && isRowidSlot($0[0].slot)) } ?? true
        let rowidReverse = orderBy.map { $0.count == 1 && $0[0].descending } ?? false
        if lowerRowid != nil || upperRowid != nil {
            return (.rowidRange(lower: lowerRowid ?? Int64.min, upper: upperRowid ?? Int64.max, reverse: rowidReverse && rowidOrder),
                    rowidOrder, enforced(used))
        }
        // 4. Index range (or LIKE prefix) on the first column of an index.
        for number in table.indexes.indices {
            let first = table.indexes[number].schema.columns[0]
            let descending = table.indexes[number].schema.descending[0]
            var range = KeyRange()
            var usable = false
            var ranges: [KeyRange]?
            // The predicates whose bounds the range ends with (a later bound replaces one).
            var lowerFrom: Int?, upperFrom: Int?
            for (position, (slot, predicate, _, _)) in found.enumerated() where slot == first && serves(found[position], terms, number, column: 0) {
                switch predicate {
                case .lower(let value, let inclusive):
                    usable = true
                    if descending { range.upper = [value]; range.upperInclusive = inclusive; upperFrom = position }
                    else { range.lower = [value]; range.lowerInclusive = inclusive; lowerFrom = position }
                case .upper(let value, let inclusive):
                    usable = true
                    if descending { range.lower = [value]; range.lowerInclusive = inclusive; lowerFrom = position }
                    else { range.upper = [value]; range.upperInclusive = inclusive; upperFrom = position }
                case .likePrefix(let prefix) where !descending:
                    ranges = Planner.likeRanges(prefix)
                default: continue
                }
            }
            if let ranges {
                return (.indexRanges(index: number, ranges: ranges, reverse: false), orderBy?.isEmpty ?? true, [])
            }
            if usable {
                // Values below every number or text: NULLs never satisfy a range.
                if range.lower == nil && !descending { range.lower = [.null]; range.lowerInclusive = false }
                if range.upper == nil && descending { range.upper = [.null]; range.upperInclusive = false }
                let (ordered, reverse) = orderSatisfied(by: table.indexes[number], skipping: 0, orderBy, single: true)
                return (.indexRanges(index: number, ranges: [range], reverse: reverse), ordered, enforced([lowerFrom, upperFrom].compactMap { $0 }))
            }
        }
        // 5. ORDER BY served by an index or the rowid order.
        if let orderBy, !orderBy.isEmpty {
            if rowidOrder { return (.fullScan(reverse: rowidReverse), true, []) }
            for number in table.indexes.indices {
                let (ordered, reverse) = orderSatisfied(by: table.indexes[number], skipping: 0, orderBy, single: true)
                if ordered { return (.indexRanges(index: number, ranges: [KeyRange()], reverse: reverse), true, []) }
            }
        }
        return (.fullScan(reverse: false), rowidOrder, [])
    }

    /// Key ranges holding every text whose bytes start with a case variant of the ASCII
    /// `prefix` (LIKE folds ASCII letters), valid UTF-8 or not, then the blobs (which LIKE also
    /// reads as text). Each range ends before the prefix's byte successor.
    static func likeRanges(_ prefix: String) -> [KeyRange] {
        func range(from lower: [UInt8], to upper: [UInt8]) -> KeyRange {
            var successor = upper
            successor[successor.count - 1] += 1   // an ASCII byte: no carry
            return KeyRange(lower: [.text(bytes: lower)], upper: [.text(bytes: successor)], upperInclusive: false)
        }
        let bytes = Array(prefix.utf8)
        let letters = bytes.filter { ($0 >= 0x41 && $0 <= 0x5A) || ($0 >= 0x61 && $0 <= 0x7A) }.count
        var ranges: [KeyRange] = []
        if letters <= 5 {
            var variants: [[UInt8]] = [[]]
            for b in bytes {
                let lower = b >= 0x41 && b <= 0x5A ? b + 0x20 : b
                let upper = b >= 0x61 && b <= 0x7A ? b - 0x20 : b
                variants = lower == upper ? variants.map { $0 + [b] } : variants.flatMap { [$0 + [upper], $0 + [lower]] }
            }
            ranges = variants.sorted { SQLValues.compareBytes($0, $1) < 0 }.map { range(from: $0, to: $0) }
        } else {
            let upperCased = bytes.map { $0 >= 0x61 && $0 <= 0x7A ? $0 - 0x20 : $0 }
            let lowerCased = bytes.map { $0 >= 0x41 && $0 <= 0x5A ? $0 + 0x20 : $0 }
            ranges = [range(from: upperCased, to: lowerCased)]
        }
        ranges.append(KeyRange(lower: [.blob([])], upper: nil))
        return ranges
    }

    /// Whether scanning `index` (after `skipping` equality columns) gives ORDER BY's order, and
    /// whether backwards.
    private func orderSatisfied(by index: IndexState, skipping: Int, _ orderBy: [(slot: Int, descending: Bool)]?, single: Bool) -> (Bool, Bool) {
        guard let orderBy, !orderBy.isEmpty else { return (true, false) }
        guard single else { return (false, false) }
        let columns = index.schema.columns
        var reverse: Bool?
        for (offset, term) in orderBy.enumerated() {
            let position = skipping + offset
            if position == columns.count {
                // The rowid breaks ties after the key.
                guard isRowidSlot(term.slot), offset == orderBy.count - 1 else { return (false, false) }
                let wantsReverse = term.descending
                if let reverse, reverse != wantsReverse { return (false, false) }
                return (true, wantsReverse)
            }
            let collation = offset < orderCollations.count ? orderCollations[offset] : .binary
            guard position < columns.count, columns[position] == term.slot, index.schema.collations[position] == collation else { return (false, false) }
            let wantsReverse = term.descending != index.schema.descending[position]
            if let reverse, reverse != wantsReverse { return (false, false) }
            reverse = wantsReverse
        }
        return (true, reverse ?? false)
    }

    /// The smallest (lower) or largest (upper) integer rowid the bound allows; nil if not numeric.
    /// Whether a rowid bound from `value` admits exactly the rowids the comparison does: an
    /// integer, or a real within the 64-bit range (beyond it `integerBound` saturates, and
    /// rowid Int64.max is not >= 1e19).
    private static func boundIsExact(_ value: SQLValue) -> Bool {
        switch value {
        case .integer: return true
        case .real(let r): return r >= -9223372036854775808.0 && r < 9223372036854775808.0
        default: return false
        }
    }

    private func integerBound(_ value: SQLValue, lower: Bool, inclusive: Bool) -> Int64? {
        switch value {
        case .integer(let i):
            if inclusive { return i }
            if lower { return i == Int64.max ? nil : i + 1 }
            return i == Int64.min ? nil : i - 1
        case .real(let r):
            if r.isNaN { return nil }
            if lower {
                let c = r.rounded(.up)
                let bound = SQLValues.saturatingInteger(c)
                return (!inclusive && Double(bound) == r) ? (bound == Int64.max ? nil : bound + 1) : bound
            } else {
                let f = r.rounded(.down)
                let bound = SQLValues.saturatingInteger(f)
                return (!inclusive && Double(bound) == r) ? (bound == Int64.min ? nil : bound - 1) : bound
            }
        default: return nil
        }
    }
}

extension SQLDatabase {
    /// Calls `body` with each rowid of `path` (stopping when it returns false). The body reads
    /// the row itself (`load`, `row`); a rowid of `.rowids` that names no row is passed on too
    /// and the read finds nothing.
    func scan(_ table: TableState, _ path: AccessPath, _ body: (Int64) throws -> Bool) throws {
        switch path {
        case .fullScan(let reverse):
            // A snapshot of the rowids: the body may not change the table (UPDATE and DELETE
            // collect their rows first).
            let chunks = table.rowids.chunks
            if reverse {
                for chunk in chunks.reversed() { for rowid in chunk.reversed() { if try !body(rowid) { return } } }
            } else {
                for chunk in chunks { for rowid in chunk { if try !body(rowid) { return } } }
            }
        case .rowids(let ids):
            for rowid in ids {
                if try !body(rowid) { return }
            }
        case .rowidRange(let lower, let upper, let reverse):
            guard lower <= upper else { return }
            let rowids = table.rowids
            if reverse {
                var position = rowids.lowerBound { $0 <= upper }
                while let previous = rowids.previous(position), let rowid = rowids.element(at: previous), rowid >= lower {
                    if try !body(rowid) { return }
                    position = previous
                }
            } else {
                var position = rowids.lowerBound { $0 < lower }
                while let rowid = rowids.element(at: position), rowid <= upper {
                    if try !body(rowid) { return }
                    position = rowids.next(position)
                }
            }
        case .indexRanges(let number, let ranges, let reverse):
            try scanIndexEntries(table.indexes[number], ranges, reverse: reverse) { rowid, _ in try body(rowid) }
        }
    }

    /// Calls `body` with the rowid and the encoded entry of each index entry in `ranges` (in
    /// index order, or reverse), stopping when it returns false. The entry's bytes are valid
    /// only during the call.
    func scanIndexEntries(_ index: IndexState, _ ranges: [KeyRange], reverse: Bool,
                          _ body: (Int64, UnsafeRawBufferPointer) throws -> Bool) throws {
        try scanIndexRuns(index, ranges, reverse: reverse) { run in
            try run.forEach(reverse: reverse) { try body(IndexKeyCodec.rowid(ofEntry: $0), $0) }
        }
    }

    /// Calls `body` with the index entries in `ranges`, one run per chunk (`KeyChunks.EntryRun`;
    /// the caller walks each run in order, or in reverse with `reverse`), stopping when it
    /// returns false. The runs' bytes are valid only during the call.
    func scanIndexRuns(_ index: IndexState, _ ranges: [KeyRange], reverse: Bool,
                       _ body: (KeyChunks.EntryRun) throws -> Bool) throws {
        // A snapshot of the entries: the body may not change the index.
        let entries = index.entries
        for range in ranges {
            // Probes compare on their own length: a probe of k columns bounds every entry
            // whose first k columns equal it.
            let start = range.lower.map { entries.lowerBound(index.probe($0), orEqual: !range.lowerInclusive) } ?? entries.startPosition
            let end = range.upper.map { entries.lowerBound(index.probe($0), orEqual: range.upperInclusive) } ?? entries.endPosition
            // A range whose upper bound lies below its lower one (`x BETWEEN 7 AND 6`) ends
            // before it starts and holds nothing (`forEachRun` visits none).
            let going = try entries.forEachRun(from: start, to: end, reverse: reverse, body)
            if !going { return }
        }
    }
}
