/// The map from a changed rowid to its pending entry (`PendingRows.Slot`), 16 bytes a row for
/// the common bulk insert.
///
/// Rowids above every earlier one (a bulk insert's ascending ids) go to two parallel sorted
/// arrays, 16 bytes a row with no load factor and no rehash; the others to a dictionary (16
/// bytes a bucket at a load of 0.375-0.75, and twice that while it grows). A rowid is in one
/// of the two, never both. A rowid taken out of the middle of the arrays (an undo, oldest last)
/// is marked `absent` there.
struct RowSlots {
    private var scattered: [Int64: PendingRows.Slot] = [:]
    private var ascending: [Int64] = []
    private var ascendingSlots: [PendingRows.Slot] = []
    private var absentCount = 0
    private static let absent = PendingRows.Slot.max - 1

    var isEmpty: Bool { scattered.isEmpty && ascending.isEmpty }
    /// Rowids with a slot.
    var count: Int { scattered.count + ascending.count - absentCount }

    /// The position of `rowid` in the ascending arrays, if there.
    @inline(__always)
    private func ascendingIndex(of rowid: Int64) -> Int? {
        guard let last = ascending.last, rowid <= last, rowid >= ascending[0] else { return nil }
        if rowid == last { return ascending.count - 1 }
        var low = 0, high = ascending.count - 1
        while low < high {
            let middle = (low + high) / 2
            if ascending[middle] < rowid { low = middle + 1 } else { high = middle }
        }
        return ascending[low] == rowid ? low : nil
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
                        ascending.removeLast()
                        ascendingSlots.removeLast()
                        absentCount -= 1
                    }
                }
            } else if let newValue {
                if ascending.last.map({ rowid > $0 }) ?? true {
                    ascending.append(rowid)
                    ascendingSlots.append(newValue)
                } else {
                    scattered[rowid] = newValue
                }
            }
        }
    }

    mutating func removeAll(keepingCapacity: Bool) {
        scattered.removeAll(keepingCapacity: keepingCapacity)
        ascending.removeAll(keepingCapacity: keepingCapacity)
        ascendingSlots.removeAll(keepingCapacity: keepingCapacity)
        absentCount = 0
    }

    /// Every rowid with a slot.
    var rowids: [Int64] {
        var result = Array(scattered.keys)
        for (rowid, slot) in zip(ascending, ascendingSlots) where slot != Self.absent { result.append(rowid) }
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
        while position.ascending < ascending.count {
            let i = position.ascending
            position.ascending += 1
            if ascendingSlots[i] == PendingRows.deleted { return ascending[i] }
        }
        return nil
    }
}
