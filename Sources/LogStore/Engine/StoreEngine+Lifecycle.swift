import Foundation

extension StoreEngine {
    // MARK: Snapshot and close

    /// Fsyncs every segment not yet on stable storage. Caller holds `writeMutex`.
    ///
    /// Nothing is done when nothing can have changed since the last call that completed: the
    /// same active segment with the same length and reserved size (appends only ever add at
    /// the length, a roll changes the active segment, a cut or a reserve changes its size) and
    /// no other segment waiting (attachments noted since are still synced). So a close right
    /// after an explicit snapshot (the DAO's checkpoint) does not fsync the log again.
    func syncAllLocked() throws {
        let state = active.map { FullySynced(segment: $0.id, length: $0.length, allocated: $0.allocated) }
        if unsyncedSegments.isEmpty, let state, state == fullySynced {
            // The log is as the last full sync left it; files of the layers above written since
            // (attachments) are still synced (nothing is done when there are none).
            try syncFailure.sync { try attachments.syncWritten() }
            return
        }
        fullySynced = nil
        try syncFailure.sync {
            try attachments.syncWritten()
            for segment in unsyncedSegments { try segment.file.syncData() }
            unsyncedSegments.removeAll()
            try active?.file.syncData()
            try Directory.sync(directory)
        }
        fullySynced = state
        if let backgroundSyncer {
            backgroundSyncer.roundBegins()
            backgroundSyncer.roundCompleted(captured: backgroundSyncer.capturedBytes)
        }
    }

    /// What `syncAllLocked` last made durable: the active segment, its length and its size.
    struct FullySynced: Equatable {
        var segment: UInt32
        var length: Int
        var allocated: Int
    }

    /// Writes the index snapshot of the current keydir. Every segment must already be on
    /// stable storage (`syncAllLocked`). Caller holds `writeMutex`.
    ///
    /// A keydir served from a mapped snapshot is checked first (every block not checked yet);
    /// a damaged one is not written: the old snapshot is removed instead, so the next open
    /// rebuilds the keydir from the segments.
    func writeSnapshotLocked() throws {
        let infos = segments.all.map { segment in
            IndexSnapshot.SegmentInfo(id: segment.id, length: UInt32(segment.length),
                                      liveBytes: UInt64(max(0, segment.liveBytes)), recordCount: UInt32(segment.recordCount))
        }
        let snapshot = IndexSnapshot(maxSequence: nextSequence - 1, nextSegmentID: nextSegmentID,
                                     activeSegmentID: active?.id ?? IndexSnapshot.noActiveSegment,
                                     activeLength: UInt32(active?.length ?? 0), segments: infos)
        // Nothing written since the snapshot on disk was loaded or written: it is still exact
        // (every change to the keydir is a new record, so a new highest sequence number).
        if snapshot == snapshotOnDisk, !keydir.isDamaged, Directory.exists(path(of: StoreFileName.snapshot)) { return }
        snapshotOnDisk = nil
        guard keydir.verifyAll() else {
            try Directory.remove(path(of: StoreFileName.snapshot))
            try Directory.sync(directory)
            return
        }
        try writeFileAtomically(directory: directory, name: StoreFileName.snapshot) { file in
            try snapshot.write(keydir: keydir, to: file)
        }
        snapshotOnDisk = snapshot
    }

    /// Serves the keydir from the snapshot just written (`writeSnapshotLocked`), dropping the
    /// private copies of pages changed since the previous one: the overlay is merged. Best
    /// effort: on any failure the keydir in memory stays. Caller holds `writeMutex`.
    func serveWrittenSnapshotLocked() {
        guard let (_, served) = try? mapSnapshot(), served.count == keydir.count else { return }
        rw.withWriteLock { keydir = served }
    }

    /// Cuts the active segment to its content, syncs every segment and writes the index
    /// snapshot now (what `close()` would do), then
    /// serves the keydir from it, so a `close()` with no write after it has nothing left to
    /// write. Nothing happens on a read-only store; a snapshot that is still exact is not
    /// rewritten (`writeSnapshotLocked`).
    func writeSnapshotNow() throws {
        try compactionMutex.withLock {
            try writeMutex.withLock {
                guard !isClosed else { throw StoreError.closed }
                guard !options.readOnly else { return }
                // As close does: the active segment cut to its content (the next append
                // reserves room again), so the close after this has nothing to cut or sync.
                try active?.trimToLength()
                try syncAllWithDurableMarkLocked()
                let before = snapshotOnDisk
                try writeSnapshotLocked()
                if snapshotOnDisk != before { serveWrittenSnapshotLocked() }
            }
        }
    }

    /// Maps the index snapshot copy-on-write and decodes it (version 3: served in place).
    func mapSnapshot() throws -> (IndexSnapshot, SpaceKeyDirs) {
        let snapshotPath = path(of: StoreFileName.snapshot)
        let file = try SystemFile(path: snapshotPath, flags: O_RDONLY)
        let region = try file.map(length: try file.size(), writable: false, copyOnWrite: true)
        return try IndexSnapshot.decode(UnsafeRawBufferPointer(start: region.base, count: region.length), path: snapshotPath,
                                        region: region)
    }

    /// The error every answer from a damaged keydir gives (`SpaceKeyDirs.isDamaged`). Removes
    /// the snapshot (unless read-only) so the next open rebuilds the keydir from the segments.
    func indexDamagedError() -> StoreError {
        let snapshotPath = path(of: StoreFileName.snapshot)
        if !options.readOnly { try? Directory.remove(snapshotPath) }
        return StoreError.corrupt("\(keydir.snapshotDamage?.path ?? snapshotPath): a block of the mapped index snapshot failed its checksum; reopen the store to rebuild the index from the segments")
    }

    func close() throws {
        try compactionMutex.withLock {
            try writeMutex.withLock {
                guard !isClosed else { return }
                var failure: Error?
                if !options.readOnly {
                    do {
                        try active?.trimToLength()
                        // Everything synced, then a mark saying so: an opener without the
                        // snapshot trusts the whole log too.
                        try syncAllWithDurableMarkLocked()
                        try writeSnapshotLocked()
                    } catch {
                        failure = error
                    }
                }
                rw.withWriteLock {
                    isClosed = true
                    segments.removeAll()
                    keydir = SpaceKeyDirs()
                }
                active = nil
                syncMarkFile = nil
                unsyncedSegments.removeAll()
                lockFile = nil
                if let failure { throw failure }
            }
        }
    }

    // MARK: Inspection

    /// Walks every record of every segment. Caller holds `writeMutex`.
    /// Bytes of a segment a full walk keeps mapped behind its position.
    static let walkResidentWindow = 4 << 20

    private func walkSegments(_ body: (Segment, SegmentScanner.Event) throws -> Void) rethrows -> [String] {
        var tails: [String] = []
        for segment in segments.all {
            var scanner = SegmentScanner(base: segment.base, limit: segment.length)
            // What was scanned leaves the process as the walk goes (the pages stay in the page
            // cache): a walk of a big store would otherwise end with every segment resident.
            var dropped = 0
            while let event = scanner.next() {
                try body(segment, event)
                if case .record(let offset, _) = event, offset - dropped >= Self.walkResidentWindow {
                    segment.region.dropResidentPages(offset: dropped, count: offset - dropped)
                    dropped = offset
                }
            }
            segment.region.dropResidentPages(offset: dropped, count: segment.length - dropped)
            if !scanner.tailIsClean {
                tails.append("\(segment.path): \(segment.length - scanner.validEnd) bytes of garbage after the last record at offset \(scanner.validEnd)")
            }
        }
        return tails
    }

    func verify() throws -> LogStore.VerifyReport {
        try writeMutex.withLock {
            guard !isClosed else { throw StoreError.closed }
            var problems: [String] = []
            var checked = 0
            let tails = rw.withReadLock {
                walkSegments { segment, event in
                    switch event {
                    case .record:
                        checked += 1
                    case .corrupt(let range):
                        problems.append("\(segment.path): corrupt bytes \(range.lowerBound)..<\(range.upperBound)")
                    }
                }
            }
            problems += tails
            rw.withReadLock {
                keydir.forEach { space, entry in
                    guard let base = segments.base(of: entry.segment) else {
                        problems.append("keydir entry points at missing segment \(entry.segment)")
                        return
                    }
                    let offset = Int(entry.offset)
                    guard let header = RecordCodec.validRecord(base, at: offset, limit: segments.limit(of: entry.segment)) else {
                        problems.append("\(segmentPath(entry.segment)): keydir entry points at an invalid record at offset \(offset)")
                        return
                    }
                    let key = UnsafeRawBufferPointer(start: base + offset + header.keyOffset, count: header.keyLength)
                    if KeyDir.tag(of: KeyDir.hash(space: header.space, key: key)) != entry.tag || header.space != space
                        || header.flags.contains(.tombstone) {
                        problems.append("\(segmentPath(entry.segment)): keydir entry does not match the record at offset \(offset)")
                    }
                    // A checksum is no defence against a deliberate change: authenticate what we can.
                    if header.flags.contains(.encrypted), ciphers[header.keyID] != nil {
                        do {
                            _ = try storedValue(base: base, offset: offset, header: header, segment: entry.segment)
                        } catch {
                            problems.append("\(error)")
                        }
                    }
                }
                if keydir.isDamaged { problems.append("\(keydir.snapshotDamage?.path ?? "index snapshot"): a block of the mapped keydir failed its checksum") }
            }
            for line in recoveryReport where line.contains("unreadable") { problems.append(line) }
            return LogStore.VerifyReport(problems: problems, recordsChecked: checked)
        }
    }

    func forEachRecord(_ body: (LogStore.RecordInfo) throws -> Void) throws {
        try writeMutex.withLock {
            guard !isClosed else { throw StoreError.closed }
            try rw.withReadLock {
                _ = try walkSegments { segment, event in
                    guard case .record(let offset, let header) = event else { return }
                    let base = UnsafeRawPointer(segment.base)
                    let key = [UInt8](UnsafeRawBufferPointer(start: base + offset + header.keyOffset, count: header.keyLength))
                    let tag = key.withUnsafeBytes { KeyDir.tag(of: KeyDir.hash(space: header.space, key: $0)) }
                    let location = RecordLocation(segment: segment.id, offset: UInt32(offset))
                    try body(LogStore.RecordInfo(
                        space: header.space, key: key,
                        value: [UInt8](UnsafeRawBufferPointer(start: base + offset + header.valueOffset, count: header.valueLength)),
                        sequence: header.sequence, flags: header.flags.rawValue,
                        expiresAt: header.expiresAtMillis.map { Date(timeIntervalSince1970: Double($0) / 1000) },
                        isTombstone: header.flags.contains(.tombstone),
                        isLive: findEntry(tag: tag, space: header.space, location: location) != nil,
                        segment: segment.id, offset: offset))
                }
                // Every record's liveness probed the keydir: the snapshot pages that still
                // hold only the file's bytes leave the process again (the segments' pages
                // left it as the walk went).
                keydir.releaseMappedPages()
            }
        }
    }
}
