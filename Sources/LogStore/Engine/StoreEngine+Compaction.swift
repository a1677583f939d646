import Foundation

extension StoreEngine {
    /// Bytes of an input segment scanned between two drops of its pages from the process.
    static let compactionDropStep = 256 << 10

    /// Rewrites every sealed segment (after sealing the active one when `sealActive`), keeping
    /// only records the keydir points at that have not expired. Crash-safe at every step:
    /// outputs are written as `*.seg.tmp` and fsynced; the `COMPACTION` commit file is the commit
    /// point; then outputs are renamed in, the keydir switched, and inputs deleted. Recovery
    /// finishes a committed compaction and discards an uncommitted one.
    ///
    /// Tombstones are all dropped: every older record of their key lies in a sealed segment, so
    /// in the input set, and is dropped with them in the same commit.
    func compact(sealActive: Bool) throws {
        try compactionMutex.withLock {
            let inputs: [Segment] = try writeMutex.withLock {
                guard !isClosed else { throw StoreError.closed }
                guard !options.readOnly else { throw StoreError.readOnly }
                guard !compactionNeedsReopen else { return [] }
                if sealActive, let current = active, current.length > SegmentHeader.size {
                    try roll(minimumCapacity: 0)
                }
                let sealed = segments.all.filter { $0 !== active }
                // A background run with nothing dead to drop would only copy bytes around.
                if !sealActive && !sealed.contains(where: { $0.deadBytes > 0 }) { return [] }
                return sealed
            }
            guard !inputs.isEmpty else { return }
            try compact(inputs)
        }
    }

    private func compact(_ inputs: [Segment]) throws {
        // Liveness is the keydir's word: a damaged one would drop live records.
        try rw.withReadLock { guard keydir.verifyAll() else { throw indexDamagedError() } }
        let now = Clock.nowMillis()
        var output = CompactionOutput(directory: directory, segmentSize: options.segmentSize) { [self] in
            writeMutex.withLock {
                defer { nextSegmentID += 1 }
                return nextSegmentID
            }
        }
        // Spilled to an unlinked file in the store's directory: a million records would
        // otherwise hold about 8 MiB of memory until the switch (issue 16).
        var relocations = CompactionRelocations(spillPath: path(of: StoreFileName.relocationSpill))
        var expired: [(tag: UInt32, space: UInt32, location: RecordLocation)] = []
        // Set when an input holds bytes that are not valid records: a keydir entry pointing there
        // (loaded from a snapshot) cannot be copied and must not outlive its segment.
        var damaged = false
        let produced: [CompactionOutput.Produced]
        do {
            for segment in inputs {
                var scanner = SegmentScanner(base: segment.base, limit: segment.length)
                defer { if !scanner.tailIsClean { damaged = true } }
                var droppedUpTo = 0
                while true {
                    // Everything before the scanner's position is done with: its pages leave our
                    // resident set as the scan goes (they stay in the page cache), so RSS holds
                    // about `compactionDropStep` of the input, not a whole segment (issue 16).
                    if scanner.offset - droppedUpTo >= Self.compactionDropStep {
                        let upTo = scanner.offset / Segment.pageSize * Segment.pageSize
                        segment.region.dropResidentPages(offset: droppedUpTo, count: upTo - droppedUpTo)
                        droppedUpTo = upTo
                    }
                    guard let event = scanner.next() else { break }
                    guard case .record(let offset, let header) = event else {
                        damaged = true
                        continue
                    }
                    guard !header.flags.contains(.tombstone) else { continue }
                    let key = UnsafeRawBufferPointer(start: segment.base + offset + header.keyOffset, count: header.keyLength)
                    let tag = KeyDir.tag(of: KeyDir.hash(space: header.space, key: key))
                    let location = RecordLocation(segment: segment.id, offset: UInt32(offset))
                    let isLive = rw.withReadLock { findEntry(tag: tag, space: header.space, location: location) != nil }
                    guard isLive else { continue }
                    if header.isExpired(nowMillis: now) {
                        expired.append((tag, header.space, location))
                        continue
                    }
                    let flags = header.flags.subtracting(RecordFlags.batchFlags)
                    let new = try output.append(segment.base + offset, length: header.totalLength,
                                                flags: flags == header.flags ? nil : flags)
                    try relocations.append(CompactionRelocations.Relocation(tag: tag, space: header.space, old: location, new: new,
                                                                        length: header.totalLength))
                }
                // Scanned: its pages need not stay in our resident set (they stay in the page
                // cache), so compacting a big store does not need its whole size in RSS.
                segment.region.dropResidentPages(offset: 0, count: segment.length)
            }
            produced = try output.finish()
            // The relocation log decodes whole before anything is committed, so the switch
            // below cannot stop half way on it.
            try relocations.forEach { _ in }
            // Every record written so far on stable storage, and a durable mark saying so,
            // before the commit: the records that made the inputs' dropped records dead (newer
            // values, deletes) must survive a power cut that the commit survives, and recovery
            // must not cut the log before them (issue 21).
            try syncLogWithDurableMark()
            try writeFileAtomically(CompactionCommit(newSegments: produced.map(\.id), oldSegments: inputs.map(\.id)).encoded(),
                                    directory: directory, name: StoreFileName.compactionCommit)
        } catch {
            output.discard()
            throw error
        }
        // Committed: from here on a failure leaves the commit file for the next open to finish.
        do {
            for file in produced { try Directory.rename(file.temporaryPath, file.finalPath) }
            try Directory.sync(directory)
            var outputs: [UInt32: Segment] = [:]
            for file in produced {
                let segment = try Segment.open(path: file.finalPath, writable: false, capacity: 0)
                segment.recordCount = file.recordCount
                outputs[file.id] = segment
            }
            try writeMutex.withLock {
                try rw.withWriteLock {
                    for segment in outputs.values { segments.add(segment) }
                    try relocations.forEach { relocation in
                        guard let found = findEntry(tag: relocation.tag, space: relocation.space, location: relocation.old) else { return }
                        found.table.setLocation(relocation.new, at: found.slot)
                        outputs[relocation.new.segment]?.liveBytes += relocation.length
                    }
                    for item in expired {
                        if let found = findEntry(tag: item.tag, space: item.space, location: item.location) {
                            found.table.remove(at: found.slot)
                        }
                    }
                    if damaged {
                        let inputIDs = Set(inputs.map(\.id))
                        keydir.removeAll { inputIDs.contains($0.segment) }
                    }
                    for segment in inputs { segments.remove(segment.id) }
                }
                unsyncedSegments.removeAll { segment in inputs.contains { $0 === segment } }
                compactionCount += 1
            }
            relocations = CompactionRelocations()
            // The snapshot names the inputs: it must go before they do.
            try Directory.remove(path(of: StoreFileName.snapshot))
            for segment in inputs { try Directory.remove(segment.path) }
            try Directory.sync(directory)
            try Directory.remove(path(of: StoreFileName.compactionCommit))
            try Directory.sync(directory)
        } catch {
            writeMutex.withLock { compactionNeedsReopen = true }
            throw error
        }
        // A fresh snapshot, so the next open need not scan the new segments.
        try writeMutex.withLock {
            guard !isClosed else { return }
            try syncAllLocked()
            try writeSnapshotLocked()
            serveWrittenSnapshotLocked()
        }
    }

    /// Schedules a background compaction when sealed segments hold enough dead bytes.
    /// Caller holds `writeMutex`.
    func scheduleCompactionIfNeeded() {
        guard !backgroundCompactionScheduled, !compactionNeedsReopen, !options.readOnly,
              options.compactionTrigger <= 1 else { return }
        var dead = 0
        var total = 0
        for segment in segments.byID.values where segment !== active {
            dead += segment.deadBytes
            total += segment.length - SegmentHeader.size
        }
        guard total > 0, dead >= min(options.segmentSize, 1 << 20),
              Double(dead) / Double(total) >= options.compactionTrigger else { return }
        backgroundCompactionScheduled = true
        DispatchQueue.global(qos: .utility).async { [self] in
            defer { writeMutex.withLock { backgroundCompactionScheduled = false } }
            do {
                try compact(sealActive: false)
            } catch StoreError.closed {
            } catch {
                writeMutex.withLock { backgroundErrors.append("\(error)") }
            }
        }
    }
}
