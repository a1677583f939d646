/// The map from a changed rowid to its pending entry (`PendingRows.Slot`), 8 bytes a row for
/// the common bulk insert.
///
/// Rowids above every earlier one (a bulk insert's ascending ids) go to a sorted array of
/// slots, with their rowids beside them, or, while they are consecutive (each one more than the
/// last, as a bulk load's ids are), only the first of them: 8 bytes a row with no load factor
/// and no rehash (16 once a gap comes). The others go to a dictionary (16 bytes a bucket at a
/// load of 0.375-0.75, and twice that while it grows). A rowid is in one of the two, never
/// both. A rowid taken out of the middle of the ascending ones (an undo, oldest last) is
/// marked `absent` there.
struct RowSlots {
    private var scattered: [Int64: PendingRows.Slot] = [:]
    /// The ascending rowids, one per slot, once they are not consecutive; empty while they are.
    private var ascending: [Int64] = []
    /// The first ascending rowid while they are consecutive (then `ascending` is empty).
    private var consecutiveFrom: Int64?
    private var ascendingSlots: [PendingRows.Slot] = []
    private var absentCount = 0
    private static let absent = PendingRows.Slot.max - 1

    var isEmpty: Bool { scattered.isEmpty && ascendingSlots.isEmpty }
    /// Rowids with a slot.
    var count: Int { scattered.count + ascendingSlots.count - absentCount }

    /// The ascending rowid at position `index`.
    @inline(__always)
    private func ascendingRowid(_ index: Int) -> Int64 {
        if let consecutiveFrom { return consecutiveFrom &+ Int64(index) }
        return ascending[index]
    }

    /// The largest ascending rowid, if any.
    @inline(__always)
    private var lastAscending: Int64? { ascendingSlots.isEmpty ? nil : ascendingRowid(ascendingSlots.count - 1) }

    /// The position of `rowid` in the ascending arrays, if there.
    @inline(__always)
    private func ascendingIndex(of rowid: Int64) -> Int? {
        guard let last = lastAscending, rowid <= last else { return nil }
        if let consecutiveFrom {
            guard rowid >= consecutiveFrom else { return nil }
            return Int(rowid &- consecutiveFrom)
        }
        guard rowid >= ascending[0] else { return nil }
        if rowid == last { return ascending.count - 1 }
        var low = 0, high = ascending.count - 1
        while low < high {
            let middle = (low + high) / 2
            if ascending[middle] < rowid { low = middle + 1 } else { high = middle }
        }
        return ascending[low] == rowid ? low : nil
    }

    /// Adds `rowid`, above every ascending one, with `slot`.
    private mutating func appendAscending(_ rowid: Int64, _ slot: PendingRows.Slot) {
        if let last = lastAscending, let first = consecutiveFrom, rowid != last &+ 1 {
            // The first gap: the rowids so far are written out, and kept one by one from now.
            ascending.reserveCapacity(ascendingSlots.count + 1)
            for index in 0..<ascendingSlots.count { ascending.append(first &+ Int64(index)) }
            consecutiveFrom = nil
        }
        if ascendingSlots.isEmpty {
            consecutiveFrom = rowid
        } else if consecutiveFrom == nil {
            ascending.append(rowid)
        }
        ascendingSlots.append(slot)
    }

    /// Takes the last ascending rowid off.
    private mutating func removeLastAscending() {
        ascendingSlots.removeLast()
        if consecutiveFrom == nil { ascending.removeLast() }
        if ascendingSlots.isEmpty {
            consecutiveFrom = nil
            ascending.removeAll()
        }
    }

    subscript(rowid: Int64) -> PendingRows.Slot? {
        get {
            if !scattered.isEmpty, let slot = scattered[rowid] { return slot }
            guard let index = ascendingIndex(of: rowid) else { return nil }
            let slot = ascendingSlots[index]
            return slot == Self.absent ? nil : slot
        }
        set {
            if !scattered.isEmpty, scattered[rowid] != nil {
                scattered[rowid] = newValue
            } else if let index = ascendingIndex(of: rowid) {
                let old = ascendingSlots[index]
                if let newValue {
                    if old == Self.absent { absentCount -= 1 }
                    ascendingSlots[index] = newValue
                } else if old != Self.absent {
                    ascendingSlots[index] = Self.absent
                    absentCount += 1
                    // Trailing absent ones go (an undo of the last inserts takes them newest first).
                    while ascendingSlots.last == Self.absent {
                        removeLastAscending()
                        absentCount -= 1
                    }
                }
            } else if let newValue {
                if lastAscending.map({ rowid > $0 }) ?? true {
                    appendAscending(rowid, newValue)
                } else {
                    scattered[rowid] = newValue
                }
            }
        }
    }

    mutating func removeAll(keepingCapacity: Bool) {
        scattered.removeAll(keepingCapacity: keepingCapacity)
        ascending.removeAll(keepingCapacity: keepingCapacity)
        consecutiveFrom = nil
        ascendingSlots.removeAll(keepingCapacity: keepingCapacity)
        absentCount = 0
    }

    /// Every rowid with a slot.
    var rowids: [Int64] {
        var result = Array(scattered.keys)
        for (index, slot) in ascendingSlots.enumerated() where slot != Self.absent { result.append(ascendingRowid(index)) }
        return result
    }

    /// Where a walk over the deleted rowids is.
    struct Position {
        var scattered: Dictionary<Int64, PendingRows.Slot>.Index?
        var ascending = 0
    }

    /// The next deleted rowid after `position`, or nil.
    func nextDeleted(after position: inout Position) -> Int64? {
        var index = position.scattered ?? scattered.startIndex
        while index != scattered.endIndex {
            let (rowid, slot) = scattered[index]
            index = scattered.index(after: index)
            if slot == PendingRows.deleted {
                position.scattered = index
                return rowid
            }
        }
        position.scattered = index
        while position.ascending < ascendingSlots.count {
            let i = position.ascending
            position.ascending += 1
            if ascendingSlots[i] == PendingRows.deleted { return ascendingRowid(i) }
        }
        return nil
    }
}
