import Foundation

/// Sync marks (FORMAT.md, "The sync mark file"): after a sync completes, the engine records in
/// `SYNCMARK` how far the write-path log is on stable storage. Recovery
/// (`StoreEngine.replayPointInTime`) trusts the log up to that mark and ends it at the first
/// hole after it, so a power cut leaves a prefix of the writes.
///
/// A mark is written only after what it claims is durable, so it is true whether or not the
/// mark itself reaches the disk (a lost mark only makes recovery trust less). It is fsynced
/// right after, outside `writeMutex`. So writing one is best effort: an I/O error on
/// `SYNCMARK` fails no write, sync or close (a torn slot fails its checksum and the other slot
/// is read), except at open after a cut, where a stale slot must not survive.
extension StoreEngine {
    /// Bytes of log synced between two marks in `.fsyncEachWrite`, whose every write syncs.
    static let syncMarkSpacing = 64 << 10

    /// The mark for everything appended so far, to be recorded once that is on stable
    /// storage. Nil without an active segment. Caller holds `writeMutex`.
    func captureSyncMarkLocked() -> SyncMark? {
        guard let segment = active else { return nil }
        return SyncMark(position: LogPosition(segment: segment.id, offset: segment.length), nextSequence: nextSequence)
    }

    /// Whether `mark` is far enough past the last one to be worth writing (`.fsyncEachWrite`).
    /// Caller holds `writeMutex`.
    func syncMarkIsDue(_ mark: SyncMark) -> Bool {
        guard let last = lastSyncMark else { return true }
        return mark.position.segment != last.position.segment || mark.position.offset - last.position.offset >= Self.syncMarkSpacing
    }

    /// Writes `mark` into the slot of `SYNCMARK` not holding the newest mark, unless it claims
    /// nothing newer than the last one. Returns the file to fsync, or nil when nothing was
    /// written (or the write failed: best effort). Caller holds `writeMutex`.
    func writeSyncMarkLocked(_ mark: SyncMark) -> SystemFile? {
        guard let file = syncMarkFile, !isClosed else { return nil }
        if let last = lastSyncMark, mark.position <= last.position { return nil }
        do {
            try file.write(SyncMarkFile.encode(mark), at: SyncMarkFile.slotOffsets[syncMarkNextSlot])
        } catch {
            return nil
        }
        syncMarkNextSlot = 1 - syncMarkNextSlot
        lastSyncMark = mark
        return file
    }

    /// Records `mark` (what a sync just made durable) and fsyncs it, best effort. Takes
    /// `writeMutex`. Returns whether a mark claiming at least `mark` is on disk now (written and
    /// fsynced here, or an earlier one already claimed as much): attachments dropped before the
    /// sync may be unlinked only then (`AttachmentRegistry`).
    @discardableResult
    func recordSyncMark(_ mark: SyncMark?) -> Bool {
        guard let mark else { return false }
        let (file, covered) = writeMutex.withLockSpinning { () -> (SystemFile?, Bool) in
            let file = writeSyncMarkLocked(mark)
            return (file, file == nil && markCoversLocked(mark))
        }
        guard let file else { return covered }
        return (try? file.syncData()) != nil
    }

    /// `recordSyncMark` with `writeMutex` held throughout (its fsync too).
    func recordSyncMarkLocked(_ mark: SyncMark) -> Bool {
        guard let file = writeSyncMarkLocked(mark) else { return markCoversLocked(mark) }
        return (try? file.syncData()) != nil
    }

    /// Whether the last mark written claims at least `mark`. Caller holds `writeMutex`.
    private func markCoversLocked(_ mark: SyncMark) -> Bool {
        lastSyncMark.map { $0.position >= mark.position } ?? false
    }

    /// Makes everything appended so far durable, then a mark saying so: when this returns, a
    /// power cut can no longer lose or cut any write made before the call. Compaction calls it
    /// before its commit (the records that made its inputs' records dead, newer values and
    /// deletes, must survive any power cut the commit survives). Writers are not held during
    /// the fsyncs.
    func syncLogWithDurableMark() throws {
        let (sealed, current, mark, removals): ([Segment], Segment?, SyncMark?, [String]) = try writeMutex.withLock {
            guard !isClosed else { throw StoreError.closed }
            return (unsyncedSegments, active, captureSyncMarkLocked(), attachments.takeRemovals())
        }
        do {
            try syncFailure.sync {
                try attachments.syncWritten()
                for segment in sealed { try segment.file.syncData() }
                try current?.file.syncData()
                try Directory.sync(directory)
            }
        } catch {
            attachments.restoreRemovals(removals)
            throw error
        }
        writeMutex.withLock { unsyncedSegments.removeAll { segment in sealed.contains { $0 === segment } } }
        attachments.finish(removals, markDurable: recordSyncMark(mark))
    }

    /// `syncAllLocked`, then a durable mark of everything appended (close, and open after a
    /// cut). With `replacing`, the mark goes into both slots whatever they held: after recovery
    /// cut the log before a place a mark claimed (damage in the last segment; FORMAT.md,
    /// "Recovery"), no slot may keep claiming it. Caller holds `writeMutex`.
    func syncAllWithDurableMarkLocked(replacing: Bool = false) throws {
        let mark = captureSyncMarkLocked()
        let removals = attachments.takeRemovals()
        do {
            try syncAllLocked()
        } catch {
            attachments.restoreRemovals(removals)
            throw error
        }
        guard let mark else {
            attachments.restoreRemovals(removals)
            return
        }
        if replacing, let file = syncMarkFile {
            // Both slots, and an error fails the open: a slot claiming a place the cut removed
            // must not survive.
            let bytes = SyncMarkFile.encode(mark)
            do {
                for offset in SyncMarkFile.slotOffsets { try file.write(bytes, at: offset) }
                lastSyncMark = mark
                syncMarkNextSlot = 0
                try syncFailure.sync { try file.syncData() }
            } catch {
                attachments.restoreRemovals(removals)
                throw error
            }
            attachments.finish(removals, markDurable: true)
        } else {
            attachments.finish(removals, markDurable: recordSyncMarkLocked(mark))
        }
    }

    /// Opens `SYNCMARK` (creating it, with its name synced, unless read-only) and returns the
    /// newest valid mark in it. A missing or unreadable file is no mark.
    func openSyncMarkFile() throws -> SyncMark? {
        let path = path(of: SyncMarkFile.name)
        if options.readOnly {
            guard Directory.exists(path), let bytes = try? SystemFile(path: path, flags: O_RDONLY).readAll() else { return nil }
            return SyncMarkFile.newest(in: bytes)?.mark
        }
        // Opened without O_CREAT first (one system call when it exists, as it does after the
        // first open); a new file's name is synced.
        let file: SystemFile
        do {
            file = try SystemFile(path: path, flags: O_RDWR)
        } catch StoreError.io(_, ENOENT) {
            file = try SystemFile(path: path, flags: O_RDWR | O_CREAT)
            try Directory.sync(directory)
        }
        syncMarkFile = file
        guard let newest = SyncMarkFile.newest(in: try file.readAll()) else { return nil }
        lastSyncMark = newest.mark
        syncMarkNextSlot = 1 - newest.slot
        return newest.mark
    }
}
