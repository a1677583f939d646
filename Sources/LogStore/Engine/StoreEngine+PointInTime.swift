import Foundation

/// Point-in-time recovery (FORMAT.md, "Recovery"; issue 21): after a power cut the store holds
/// a prefix of its writes, never a later write without an earlier one.
///
/// The write-path log is the segments the write path appended to (not compaction outputs), in
/// id order, each from its header on. The newest sync mark (`SYNCMARK`), or the index
/// snapshot's coverage when that is later, says up to where it was on stable storage: the
/// *watermark*. Before it, recovery works as it always did (a corrupt record is skipped and
/// reported; an incomplete batch is dropped). From it on, the writes must follow each other: a
/// write whose first sequence number is not one more than the last one of the write before it,
/// corrupt bytes, a hole, or an incomplete batch ends the log, and everything after it, in that
/// segment and in every later write-path segment, is dropped. A read-write opener then zeroes
/// the dropped tail, removes the later segments and syncs, so new writes never interleave with
/// stale bytes.
extension StoreEngine {
    /// Where point-in-time recovery ended the write-path log.
    struct LogCut {
        /// The write-path segment the log now ends in, and the offset of its end.
        var segment: Segment
        var offset: Int
        /// Write-path segments after it: every record in them is dropped.
        var dropped: [Segment]
        /// The end is a torn tail or an incomplete batch at the end of the last segment: no
        /// record after it is applied anyway, and a read-only opener leaves the segment's length
        /// alone so `verify()` still reports the garbage, as before.
        var atTail = false
    }

    /// What `replayPointInTime` found.
    struct PointInTimeReplay {
        /// Set when the log ended before its last byte (including a torn tail or incomplete
        /// batch at the end of the last segment).
        var cut: LogCut?
        /// The sequence number the next write must carry to continue the log (nil: unknown).
        var chainNext: UInt64?
    }

    /// Scans `work` (segments in id order, each from an offset) and applies every record the
    /// rule keeps; returns where the log ends. Changes no file: `finishPointInTimeRecovery`
    /// does. `initial` is the watermark known before the scan (the snapshot's coverage, or the
    /// start of the log).
    func replayPointInTime(_ work: [(segment: Segment, from: Int)], watermark initial: SyncMark) -> PointInTimeReplay {
        var tombstones: [(tag: UInt32, space: UInt32, location: RecordLocation)] = []
        var maxSequence = nextSequence - 1
        let watermark = initial
        // Whether the scan has reached the watermark, and the sequence number the next write
        // must have once it has.
        var crossed = false
        var expected: UInt64?
        let writePathIDs = Set(segments.all.lazy.filter { !$0.header.isCompactionOutput }.map(\.id))
        let lastWritePath = work.last { !$0.segment.header.isCompactionOutput }?.segment

        /// Whether a problem at `position` ends the log (past the synced part) or is skipped.
        func endsLog(at position: LogPosition) -> Bool { position >= watermark.position }

        var end: (segment: Segment, offset: Int, atTail: Bool)?
        var dropped: [Segment] = []
        for item in work {
            let segment = item.segment
            let fileLength = segment.length
            segments.setLimit(fileLength, of: segment.id)
            var scanner = SegmentScanner(base: segment.base, limit: fileLength, from: item.from)
            if segment.header.isCompactionOutput {
                // Synced before their commit, never in the write path: read as always.
                while let event = scanner.next() {
                    switch event {
                    case .record(let offset, let header):
                        segment.recordCount += 1
                        maxSequence = max(maxSequence, header.sequence)
                        applyRecovered(segment: segment, offset: offset, header: header, tombstones: &tombstones)
                    case .corrupt(let range):
                        recoveryReport.append("\(segment.path): skipped corrupt bytes \(range.lowerBound)..<\(range.upperBound)")
                    }
                }
                if !scanner.tailIsClean {
                    recoveryReport.append("\(segment.path): \(fileLength - scanner.validEnd) bytes of garbage after the last record at offset \(scanner.validEnd)")
                }
                continue
            }
            if end != nil {
                dropped.append(segment)
                continue
            }
            var batches = BatchAssembler()
            var seenDrops = 0
            var cutAt: Int?
            var atTail = false
            scan: while let event = scanner.next() {
                switch event {
                case .record(let offset, let header):
                    segment.recordCount += 1
                    maxSequence = max(maxSequence, header.sequence)
                    let write = batches.add(offset: offset, header: header)
                    if batches.dropOffsets.count > seenDrops {
                        let at = batches.dropOffsets[seenDrops]
                        seenDrops = batches.dropOffsets.count
                        if endsLog(at: LogPosition(segment: segment.id, offset: at)) {
                            cutAt = at
                            break scan
                        }
                    }
                    guard let first = write.first, let last = write.last else { continue }
                    let position = LogPosition(segment: segment.id, offset: first.offset)
                    if !crossed && position >= watermark.position {
                        crossed = true
                        // The mark's segment gone (compacted, or unreadable): its tail's
                        // sequence numbers are unknown; the chain starts at this write.
                        let known = watermark.position.segment == 0 || writePathIDs.contains(watermark.position.segment)
                        expected = known ? watermark.nextSequence : nil
                    }
                    if crossed, let expected, first.header.sequence != expected, endsLog(at: position) {
                        recoveryReport.append("\(segment.path): the write at offset \(first.offset) has sequence number \(first.header.sequence), not \(expected): a write before it was lost")
                        cutAt = first.offset
                        break scan
                    }
                    if endsLog(at: position), let check = write.first(where: { !attachmentCheckHolds(segment, $0.offset, $0.header) }) {
                        let key = UnsafeRawBufferPointer(start: segment.base + check.offset + check.header.keyOffset, count: check.header.keyLength)
                        recoveryReport.append("\(segment.path): the write at offset \(first.offset) names an attachment not on disk whole (\(String(decoding: key, as: UTF8.self))): a power cut lost it, the log ends there")
                        cutAt = first.offset
                        break scan
                    }
                    expected = last.header.sequence &+ 1
                    for member in write {
                        applyRecovered(segment: segment, offset: member.offset, header: member.header, tombstones: &tombstones)
                    }
                case .corrupt(let range):
                    let at = batches.openWriteStart ?? range.lowerBound
                    if endsLog(at: LogPosition(segment: segment.id, offset: at)) {
                        recoveryReport.append("\(segment.path): the log ends at offset \(at): bytes \(range.lowerBound)..<\(range.upperBound) after the synced part are not records (a lost write)")
                        cutAt = at
                        break scan
                    }
                    if segment === lastWritePath && PowerLossHole.isLostWrite(segment.base, range) {
                        // As before marks: lost sectors in the last segment end it even where a
                        // mark says it was synced (a disk that did not keep what it synced).
                        recoveryReport.append("\(segment.path): cut at a lost write \(range.lowerBound)..<\(range.upperBound) and the records after it")
                        cutAt = at
                        break scan
                    }
                    recoveryReport.append("\(segment.path): skipped corrupt bytes \(range.lowerBound)..<\(range.upperBound)")
                    batches.corruption()
                    seenDrops = batches.dropOffsets.count
                }
            }
            if cutAt == nil {
                let openStart = batches.finish()
                seenDrops = batches.dropOffsets.count
                let contentEnd = openStart ?? scanner.validEnd
                if openStart != nil || !scanner.tailIsClean {
                    if segment === lastWritePath || endsLog(at: LogPosition(segment: segment.id, offset: contentEnd)) {
                        if !scanner.tailIsClean {
                            recoveryReport.append("\(segment.path): cut a torn tail at offset \(contentEnd) (\(fileLength - contentEnd) bytes)")
                        }
                        cutAt = contentEnd
                        atTail = segment === lastWritePath
                    } else if !scanner.tailIsClean {
                        recoveryReport.append("\(segment.path): \(fileLength - scanner.validEnd) bytes of garbage after the last record at offset \(scanner.validEnd)")
                    }
                } else if segment === active {
                    // The reserved, all-zero rest of the active segment.
                    segment.length = scanner.validEnd
                    segments.setLimit(segment.length, of: segment.id)
                }
            }
            for line in batches.dropped { recoveryReport.append("\(segment.path): \(line)") }
            if let cutAt {
                end = (segment, cutAt, atTail)
                // Nothing after the cut is read; the segment's length changes when it is made so.
                segments.setLimit(cutAt, of: segment.id)
            }
        }
        removeRecoveredTombstones(tombstones)
        nextSequence = maxSequence + 1
        var result = PointInTimeReplay(chainNext: crossed ? expected : watermark.nextSequence)
        if let end { result.cut = LogCut(segment: end.segment, offset: end.offset, dropped: dropped, atTail: end.atTail && dropped.isEmpty) }
        return result
    }

    /// False only for an attachment check (FORMAT.md, "Attachments") whose file is not on disk
    /// whole: a record in the engine's space, a tombstone, key `attach/...`.
    func attachmentCheckHolds(_ segment: Segment, _ offset: Int, _ header: RecordHeader) -> Bool {
        guard header.space == LogStore.engineSpace, header.flags.contains(.tombstone),
              header.keyLength > Self.attachmentCheckPrefix.count else { return true }
        let key = UnsafeRawBufferPointer(start: segment.base + offset + header.keyOffset, count: header.keyLength)
        guard key.starts(with: Self.attachmentCheckPrefix) else { return true }
        return attachmentIsIntact(key: key)
    }

    /// Makes the end `replayPointInTime` found so on disk (read-write): removes the write-path
    /// segments after it, makes the segment it lies in the active one with its tail zeroed,
    /// and syncs all that, then a sync mark (also written when the next write would not
    /// continue the sequence numbers of the log, after an incomplete batch was dropped). A
    /// read-only opener only stops reading there.
    func finishPointInTimeRecovery(_ replay: PointInTimeReplay) throws {
        guard let cut = replay.cut else {
            if !options.readOnly, active != nil, replay.chainNext != nextSequence { try syncAllWithDurableMarkLocked(replacing: true) }
            return
        }
        for segment in cut.dropped {
            rw.withWriteLock { segments.remove(segment.id) }
            if segment === active { active = nil }
            if options.readOnly {
                recoveryReport.append("\(segment.path): not read: it follows the end of the log")
            } else {
                try Directory.remove(segment.path)
                recoveryReport.append("\(segment.path): removed: it follows the end of the log (its writes came after one a power cut lost)")
            }
        }
        unsyncedSegments.removeAll { segment in segment === cut.segment || cut.dropped.contains { $0 === segment } }
        var holder = cut.segment
        if !options.readOnly && holder !== active {
            let writable = try Segment.open(path: holder.path, writable: true, capacity: options.segmentSize)
            writable.liveBytes = holder.liveBytes
            writable.recordCount = holder.recordCount
            rw.withWriteLock { segments.add(writable) }
            holder = writable
            active = writable
        }
        if options.readOnly && cut.atTail { return }
        if !options.readOnly { holder.zeroTail(from: cut.offset) }
        holder.length = cut.offset
        rw.withWriteLock { segments.setLimit(cut.offset, of: holder.id) }
        if !options.readOnly { try syncAllWithDurableMarkLocked(replacing: true) }
    }
}
