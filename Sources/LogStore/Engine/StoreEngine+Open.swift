import Foundation

extension StoreEngine {
    /// Opens (and if needed creates) the store and recovers it. See `LogStore.init`.
    convenience init(directory url: URL, options: LogStore.Options) throws {
        self.init(url: url, options: options)
        let readOnly = options.readOnly
        if readOnly {
            guard Directory.exists(directory) else { throw StoreError.io(operation: "open \(directory)", errno: ENOENT) }
        } else {
            try Directory.create(directory)
        }
        // A read-only opener writes nothing, not even the lock file: with no LOCK there is no
        // writer to exclude (every writer creates it first).
        let lockPath = path(of: StoreFileName.lock)
        if !readOnly || Directory.exists(lockPath) {
            let lock = try SystemFile(path: lockPath, flags: readOnly ? O_RDONLY : O_RDWR | O_CREAT)
            guard try lock.tryLock(exclusive: !readOnly) else { throw StoreError.locked(url) }
            lockFile = lock
        }

        let (pendingCommit, names) = try finishInterruptedCompaction()
        let opened = try openSegments(names: names, pendingCommit: pendingCommit)
        // Version 2 segments: the store follows the point-in-time rule (FORMAT.md, "Recovery").
        let pointInTime = opened.segments.contains { $0.header.version >= 2 }
        let markedDurable = try openSyncMarkFile() ?? SyncMark(position: .start, nextSequence: 1)
        var recovered: PointInTimeReplay?
        let snapshotUsed = loadSnapshot(opened: opened, pointInTime: pointInTime, marked: markedDurable, recovered: &recovered)
        if !snapshotUsed {
            keydir = SpaceKeyDirs()
            nextSequence = 1
            for segment in opened.segments { segment.liveBytes = 0; segment.recordCount = 0 }
            let work = opened.segments.map { ($0, SegmentHeader.size) }
            if pointInTime {
                recovered = replayPointInTime(work, watermark: markedDurable)
            } else {
                replay(work)
            }
        }
        if !readOnly {
            // Sealed segments found at open may be in the page cache only (a killed process):
            // the next sync, and so the next sync mark, covers them.
            unsyncedSegments = segments.all.filter { $0 !== active && !$0.header.isCompactionOutput }
        }
        if let recovered { try finishPointInTimeRecovery(recovered) }
        if active == nil && !readOnly { try roll(minimumCapacity: 0) }
        if !pointInTime && !readOnly && !opened.segments.isEmpty {
            // A store written before sync marks (version 1 segments only): from now on it
            // follows the point-in-time rule. A version 2 segment and a durable mark first.
            try roll(minimumCapacity: 0)
            try syncAllWithDurableMarkLocked()
            recoveryReport.append("began sync marks (segment format version 2) in a store written without them")
        }
        try loadDictionaries()
        if let encryption = options.encryption {
            let unfinishedRekey = try installDefaultKey(encryption)
            if let from = unfinishedRekey, !readOnly {
                try finishRekey(oldKeyID: from, progress: nil)
                recoveryReport.append("finished an interrupted rekey from key id \(from)")
            }
        }
        startBackgroundSyncer()
    }

    // MARK: Keys

    /// Makes `encryption` the key new records are sealed with, after checking it against the
    /// check value the store keeps for its id (recording one for a new id). When a rekey was
    /// interrupted, also unwraps the other key of that rekey and returns the old key id (the
    /// caller finishes the rekey).
    /// - Throws: `wrongKey(keyID:)` when the key is not 32 bytes, its check value differs, or a
    ///   finished rekey retired it.
    private func installDefaultKey(_ encryption: LogStore.Options.Encryption) throws -> UInt32? {
        guard encryption.key.count == AESGCM.keySize else { throw StoreError.wrongKey(keyID: encryption.keyID) }
        let check = try KeyCheck.value(of: encryption.key)
        let recordKey = KeyCheck.recordKey(for: encryption.keyID)
        if let stored = try get(key: recordKey, space: LogStore.engineSpace, crypt: nil) {
            guard stored == check else { throw StoreError.wrongKey(keyID: encryption.keyID) }
        } else if !options.readOnly {
            try write(PendingRecord(flags: [], space: LogStore.engineSpace, key: recordKey, value: check,
                                    expiresAtMillis: nil, crypt: .plain))
        }
        if try get(key: RekeyState.retiredRecordKey(encryption.keyID), space: LogStore.engineSpace, crypt: nil) != nil {
            throw StoreError.wrongKey(keyID: encryption.keyID)
        }
        try install(encryption)
        guard let bytes = try get(key: RekeyState.recordKey, space: LogStore.engineSpace, crypt: nil) else { return nil }
        do {
            let state = try RekeyState(decoding: bytes)
            guard let other = try state.otherKey(keyID: encryption.keyID, key: encryption.key) else { return nil }
            if other.keyID == state.newKeyID {
                try install(.init(key: other.key, keyID: other.keyID))   // finish toward the new key
            } else {
                let cipher = try AESGCM(key: other.key)
                rw.withWriteLock { ciphers[other.keyID] = cipher }
            }
            return state.oldKeyID
        } catch {
            recoveryReport.append("unreadable rekey record ignored: \(error)")
            return nil
        }
    }

    // MARK: Compaction commit

    /// Completes a compaction whose commit file exists (renames its outputs into place and
    /// deletes its inputs), and removes temporary files of one that never committed. Returns the
    /// commit when the store is read-only and so could not finish it, and the names in the
    /// directory after all that (listed once: `openSegments` takes them).
    private func finishInterruptedCompaction() throws -> (CompactionCommit?, [String]) {
        let commitPath = path(of: StoreFileName.compactionCommit)
        var commit: CompactionCommit?
        let commitExisted = Directory.exists(commitPath)
        if commitExisted {
            do {
                commit = try CompactionCommit.decode(try SystemFile(path: commitPath, flags: O_RDONLY).readAll(), path: commitPath)
            } catch {
                // Inputs are only deleted after every output is renamed, so ignoring an unreadable
                // commit keeps either the inputs or the finished outputs: nothing is lost.
                recoveryReport.append("ignored unreadable compaction commit: \(error)")
            }
        }
        if options.readOnly { return (commit, try Directory.list(directory)) }
        if let commit, let missing = commit.newSegments.first(where: { id in
            !Directory.exists(segmentPath(id)) && !Directory.exists(segmentPath(id) + StoreFileName.temporarySuffix)
        }) {
            // Cannot happen unless a file was removed by hand; keeping the inputs loses nothing.
            recoveryReport.append("compaction commit names missing output segment \(missing): kept its input segments")
            for id in commit.newSegments where Directory.exists(segmentPath(id) + StoreFileName.temporarySuffix) {
                try Directory.rename(segmentPath(id) + StoreFileName.temporarySuffix, segmentPath(id))
            }
        } else if let commit {
            for id in commit.newSegments {
                let final = segmentPath(id)
                if Directory.exists(final + StoreFileName.temporarySuffix) {
                    try Directory.rename(final + StoreFileName.temporarySuffix, final)
                }
            }
            try Directory.sync(directory)
            for id in commit.oldSegments { try Directory.remove(segmentPath(id)) }
            try Directory.remove(path(of: StoreFileName.snapshot))
            try Directory.sync(directory)
            recoveryReport.append("finished an interrupted compaction: \(commit.newSegments.count) new, \(commit.oldSegments.count) old segments")
        }
        if commitExisted { try Directory.remove(commitPath) }
        var names = try Directory.list(directory)
        for name in names where name.hasSuffix(StoreFileName.temporarySuffix) {
            try Directory.remove(path(of: name))
        }
        names.removeAll { $0.hasSuffix(StoreFileName.temporarySuffix) }
        return (nil, names)
    }

    // MARK: Segments

    private struct OpenedSegments {
        var segments: [Segment]
        /// Every segment id seen on disk, readable or not, so new ids never collide.
        var highestID: UInt32
    }

    /// Opens every segment file, choosing the newest written (not compacted) one as the active
    /// segment. Unreadable segment files are reported and left alone.
    private func openSegments(names: [String], pendingCommit: CompactionCommit?) throws -> OpenedSegments {
        var files: [(id: UInt32, path: String)] = []
        for name in names {
            if let id = StoreFileName.segmentID(of: name) {
                if pendingCommit?.oldSegments.contains(id) == true { continue }
                files.append((id, path(of: name)))
            }
        }
        // A read-only opener sees a committed-but-unfinished compaction as finished.
        for id in pendingCommit?.newSegments ?? [] where !names.contains(StoreFileName.segment(id)) {
            files.append((id, segmentPath(id) + StoreFileName.temporarySuffix))
        }
        files.sort { $0.id < $1.id }
        var opened: [Segment] = []
        var highest: UInt32 = 0
        for file in files {
            highest = max(highest, file.id)
            do {
                // The newest file is nearly always the active segment: opened writable at once
                // (one open and one mapping instead of two of each; reopen time, issue 16). A
                // compaction output there is opened again read-only.
                var segment = try Segment.open(path: file.path, writable: !options.readOnly && file.id == files.last?.id,
                                               capacity: options.segmentSize)
                if segment.writable && segment.header.isCompactionOutput {
                    segment = try Segment.open(path: file.path, writable: false, capacity: 0)
                }
                guard segment.id == file.id else {
                    recoveryReport.append("\(file.path): header names segment \(segment.id); file skipped")
                    continue
                }
                opened.append(segment)
            } catch StoreError.io(let operation, let code) {
                // The file is there but the system would not let us read it (EIO, EMFILE, ...):
                // opening without it would hide its records, and newer writes would get lower
                // sequence numbers than them, so they would win later. The open fails instead.
                throw StoreError.io(operation: operation, errno: code)
            } catch {
                if !options.readOnly, holdsNoRecords(file.path) {
                    // A crash (or an I/O error) between creating a segment and finishing its
                    // header: records are appended only after the header is written, so a bad
                    // header over an all-zero body means the segment never held anything.
                    try Directory.remove(file.path)
                    recoveryReport.append("\(file.path): removed a segment file whose creation never finished")
                } else {
                    recoveryReport.append("\(file.path): unreadable segment skipped: \(error)")
                }
            }
        }
        // The active segment is the newest one the write path made (compaction outputs are
        // never appended to). Reopen it writable with room to grow, whatever its file size: a
        // new segment's file is reserved up front (up to a whole segment), and replay can cut a
        // torn tail only in the active segment. When it is full the next write rolls.
        if !options.readOnly, let index = opened.lastIndex(where: { !$0.header.isCompactionOutput }) {
            if !opened[index].writable {
                opened[index] = try Segment.open(path: opened[index].path, writable: true, capacity: options.segmentSize)
            }
            active = opened[index]
        }
        for segment in opened { segments.add(segment) }
        nextSegmentID = highest &+ 1
        return OpenedSegments(segments: opened, highestID: highest)
    }

    /// Whether every byte after the segment header's place is zero (or there are none).
    private func holdsNoRecords(_ path: String) -> Bool {
        guard let bytes = try? SystemFile(path: path, flags: O_RDONLY).readAll() else { return false }
        return bytes.dropFirst(SegmentHeader.size).allSatisfy { $0 == 0 }
    }

    // MARK: Snapshot

    /// Loads the index snapshot when it matches the segments on disk, then replays what was
    /// written after it. Returns false (leaving the keydir to be rebuilt) when it cannot be used.
    private func loadSnapshot(opened: OpenedSegments, pointInTime: Bool, marked: SyncMark,
                              recovered: inout PointInTimeReplay?) -> Bool {
        let table: SpaceKeyDirs
        let snapshot: IndexSnapshot
        do {
            // Mapped copy-on-write: a version 3 snapshot's tables are served in place (the
            // keydir's base; changes land in private pages), an older one is decoded.
            (snapshot, table) = try mapSnapshot()
        } catch StoreError.io(_, ENOENT) {
            return false
        } catch {
            recoveryReport.append("index snapshot not used: \(error)")
            return false
        }
        var listed = Set<UInt32>()
        for info in snapshot.segments {
            listed.insert(info.id)
            guard let segment = segments[info.id] else {
                recoveryReport.append("index snapshot not used: segment \(info.id) is missing")
                return false
            }
            // Nothing has written to the segments since they were opened (replay comes after):
            // their lengths are the file sizes read then.
            let fileLength = segment.length
            let matches = info.id == snapshot.activeSegmentID ? fileLength >= Int(info.length) : fileLength == Int(info.length)
            guard matches else {
                recoveryReport.append("index snapshot not used: segment \(info.id) is \(fileLength) bytes, snapshot says \(info.length)")
                return false
            }
        }
        var toReplay: [(Segment, Int)] = []
        for segment in opened.segments where !listed.contains(segment.id) {
            guard segment.id >= snapshot.nextSegmentID else {
                recoveryReport.append("index snapshot not used: segment \(segment.id) is not in it")
                return false
            }
            toReplay.append((segment, SegmentHeader.size))
        }
        for info in snapshot.segments {
            guard let segment = segments[info.id] else { continue }
            segment.liveBytes = Int(info.liveBytes)
            segment.recordCount = Int(info.recordCount)
            if info.id == snapshot.activeSegmentID {
                toReplay.append((segment, Int(info.length)))
            } else {
                segment.length = Int(info.length)
            }
        }
        keydir = table
        snapshotOnDisk = snapshot
        nextSequence = snapshot.maxSequence + 1
        nextSegmentID = max(nextSegmentID, snapshot.nextSegmentID)
        let work = toReplay.sorted { $0.0.id < $1.0.id }
        if pointInTime {
            // Everything the snapshot covers was on stable storage before it was written.
            let coverage = snapshot.activeSegmentID == IndexSnapshot.noActiveSegment
                ? LogPosition(segment: snapshot.nextSegmentID, offset: 0)
                : LogPosition(segment: snapshot.activeSegmentID, offset: Int(snapshot.activeLength))
            let covered = SyncMark(position: coverage, nextSequence: snapshot.maxSequence + 1)
            recovered = replayPointInTime(work, watermark: marked.position > covered.position ? marked : covered)
        } else {
            replay(work)
        }
        // The engine's own records (keys, dictionaries, rekey state) are read during open:
        // their small table is checked whole now.
        keydir.table(for: LogStore.engineSpace)?.verifyAll()
        if keydir.isDamaged {
            // A block the replay touched failed its checksum: read the segments instead.
            recoveryReport.append("index snapshot not used: a block of \(path(of: StoreFileName.snapshot)) failed its checksum")
            snapshotOnDisk = nil
            return false
        }
        return true
    }

    // MARK: Replay

    /// Scans segments from the given offsets and applies every valid record, the highest
    /// sequence number of a key winning; skips corrupt ranges and incomplete batches, and cuts
    /// the active segment's torn tail.
    private func replay(_ work: [(segment: Segment, from: Int)]) {
        var tombstones: [(tag: UInt32, space: UInt32, location: RecordLocation)] = []
        var maxSequence = nextSequence - 1
        // The segment the write path appended to last: the active one, or for a read-only
        // opener (which has none) the one that would be.
        let lastWritten = active?.id ?? segments.all.last(where: { !$0.header.isCompactionOutput })?.id
        for (segment, start) in work {
            let fileLength = segment.length
            segments.setLimit(fileLength, of: segment.id)
            var scanner = SegmentScanner(base: segment.base, limit: fileLength, from: start)
            // Compaction outputs hold only committed records and never form batches.
            var batches = segment.header.isCompactionOutput ? nil : BatchAssembler()
            var cutAtLostWrite = false
            scan: while let event = scanner.next() {
                switch event {
                case .record(let offset, let header):
                    segment.recordCount += 1
                    maxSequence = max(maxSequence, header.sequence)
                    let write = batches?.add(offset: offset, header: header) ?? [(offset, header)]
                    for member in write {
                        applyRecovered(segment: segment, offset: member.offset, header: member.header, tombstones: &tombstones)
                    }
                case .corrupt(let range) where segment.id == lastWritten && PowerLossHole.isLostWrite(segment.base, range):
                    // Unsynced writes that landed out of order (a power loss): the records after
                    // the hole were never synced either; keeping them would show later writes
                    // without earlier ones. Cut here, like a torn tail.
                    recoveryReport.append("\(segment.path): cut at a lost write \(range.lowerBound)..<\(range.upperBound) and the records after it")
                    cutAtLostWrite = true
                    break scan
                case .corrupt(let range):
                    recoveryReport.append("\(segment.path): skipped corrupt bytes \(range.lowerBound)..<\(range.upperBound)")
                    batches?.corruption()
                }
            }
            var validEnd = scanner.validEnd
            let incompleteBatchStart = batches?.finish()
            if let start = incompleteBatchStart { validEnd = start }
            for line in batches?.dropped ?? [] { recoveryReport.append("\(segment.path): \(line)") }
            if segment === active {
                if !scanner.tailIsClean || incompleteBatchStart != nil || cutAtLostWrite {
                    if scanner.tailIsClean == false {
                        recoveryReport.append("\(segment.path): cut a torn tail at offset \(validEnd) (\(fileLength - validEnd) bytes)")
                    }
                    segment.zeroTail(from: validEnd)
                }
                segment.length = validEnd
            } else if cutAtLostWrite {
                // Read-only: nothing is zeroed, but nothing after the cut is read either.
                segment.length = validEnd
            } else if !scanner.tailIsClean {
                // Sealed segments keep their file length (the snapshot checks it); the garbage
                // counts as dead bytes until compaction drops it.
                recoveryReport.append("\(segment.path): \(fileLength - validEnd) bytes of garbage after the last record at offset \(validEnd)")
            }
            segments.setLimit(segment === active || cutAtLostWrite ? segment.length : fileLength, of: segment.id)
        }
        removeRecoveredTombstones(tombstones)
        nextSequence = maxSequence + 1
    }

    /// Drops from the keydir the tombstones that recovery left as their keys' entries (a
    /// delete is the newest record of its key: the key is absent), counting their bytes dead.
    func removeRecoveredTombstones(_ tombstones: [(tag: UInt32, space: UInt32, location: RecordLocation)]) {
        for tombstone in tombstones {
            if let found = findEntry(tag: tombstone.tag, space: tombstone.space, location: tombstone.location),
               let header = header(at: tombstone.location) {
                segments[tombstone.location.segment]?.liveBytes -= header.totalLength
                found.table.remove(at: found.slot)
            }
        }
    }

    /// Applies one record found on disk: it becomes the key's entry unless the entry already
    /// points at a record with a higher sequence number. Tombstones enter the keydir too, so
    /// that older records of their key met later lose to them; `replay` removes them at the end.
    func applyRecovered(segment: Segment, offset: Int, header: RecordHeader,
                                tombstones: inout [(tag: UInt32, space: UInt32, location: RecordLocation)]) {
        let key = UnsafeRawBufferPointer(start: segment.base + offset + header.keyOffset, count: header.keyLength)
        let tag = KeyDir.tag(of: KeyDir.hash(space: header.space, key: key))
        let location = RecordLocation(segment: segment.id, offset: UInt32(offset))
        if let hit = lookup(tag: tag, space: header.space, key: key) {
            if hit.header.sequence >= header.sequence { return }
            segments[hit.entry.segment]?.liveBytes -= hit.header.totalLength
            hit.table.setLocation(location, at: hit.slot)
        } else {
            keydir.tableCreating(for: header.space).insert(tag: tag, location: location)
        }
        segment.liveBytes += header.totalLength
        if header.flags.contains(.tombstone) { tombstones.append((tag, header.space, location)) }
    }
}
