/// Groups the records read from a segment into whole writes (FORMAT.md, "Write batches"), so
/// that recovery applies a batch completely or not at all.
///
/// A write is one record without `batchFollower` followed by records with it, the last of them
/// without `batchContinues`, sequence numbers rising by one. Anything else is a broken write and
/// is dropped whole: a batch whose end is missing (cut by corruption, a crash or the end of the
/// segment) and the trailing records of a batch whose start was lost.
struct BatchAssembler {
    typealias Member = (offset: Int, header: RecordHeader)

    /// Records of the write being assembled (all but its last).
    private(set) var pending: [Member] = []
    /// True while dropping the followers of a batch whose first record was never seen.
    private var droppingOrphans = false
    /// What was dropped and why, one line each, offsets relative to the segment.
    private(set) var dropped: [String] = []
    /// Where each dropped write began (its first record, or the first orphan), one per line
    /// of `dropped`: point-in-time recovery ends the log there when it lies past the synced part.
    private(set) var dropOffsets: [Int] = []

    /// The offset of the write being assembled, if one is open.
    var openWriteStart: Int? { pending.first?.offset }

    /// Feeds the next valid record. Returns the records of the write it completes, in order,
    /// or an empty array when the write is not complete yet (or the record was dropped).
    mutating func add(offset: Int, header: RecordHeader) -> [Member] {
        let isFollower = header.flags.contains(.batchFollower)
        if isFollower {
            guard let last = pending.last, last.header.sequence &+ 1 == header.sequence else {
                if !pending.isEmpty { dropPending("its next record is missing") }
                if !droppingOrphans {
                    dropped.append("dropped records of a batch whose start was lost, from offset \(offset)")
                    dropOffsets.append(offset)
                    droppingOrphans = true
                }
                return []
            }
        } else {
            if !pending.isEmpty { dropPending("its last record is missing") }
            droppingOrphans = false
        }
        if droppingOrphans { return [] }
        if header.flags.contains(.batchContinues) {
            pending.append((offset, header))
            return []
        }
        defer { pending.removeAll(keepingCapacity: true) }
        return pending + [(offset, header)]
    }

    /// Notes bytes that are not records: a batch open across them is broken.
    mutating func corruption() {
        if !pending.isEmpty { dropPending("corrupt bytes follow it") }
    }

    /// Ends the segment. Returns the offset of an incomplete batch left at the end (dropped), or nil.
    mutating func finish() -> Int? {
        guard let first = pending.first else { return nil }
        dropPending("the segment ends inside it")
        return first.offset
    }

    private mutating func dropPending(_ reason: String) {
        dropped.append("dropped an incomplete batch of \(pending.count) records at offset \(pending[0].offset): \(reason)")
        dropOffsets.append(pending[0].offset)
        pending.removeAll()
    }
}
