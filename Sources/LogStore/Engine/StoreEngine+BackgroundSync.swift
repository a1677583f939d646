import Foundation

extension StoreEngine {
    /// Starts the background syncer of a `.groupCommit` store, or of a `.processCrashSafe` one
    /// with `maxUnsyncedInterval` or `maxUnsyncedBytes` set, as by default (never of a read-only
    /// store): its
    /// window is `groupCommit`'s interval or `options.maxUnsyncedInterval` (none when nil), its
    /// byte bound `options.maxUnsyncedBytes` (none when nil). Segments found at open are synced
    /// by its first round (a killed process may have left them in the page cache only). Called
    /// once, at the end of open.
    func startBackgroundSyncer() {
        guard !options.readOnly else { return }
        let interval: TimeInterval
        switch options.durability {
        case .fsyncEachWrite: return
        case .groupCommit(let groupInterval): interval = groupInterval
        case .processCrashSafe:
            guard options.maxUnsyncedInterval != nil || options.maxUnsyncedBytes != nil else { return }
            interval = options.maxUnsyncedInterval ?? .infinity
        }
        let syncer = BackgroundSyncer(interval: interval, byteLimit: options.maxUnsyncedBytes ?? Int.max,
                                      waitsBeyondByteLimit: options.waitsBeyondMaxUnsyncedBytes)
        writeMutex.withLock {
            for segment in segments.all where segment !== active && !unsyncedSegments.contains(where: { $0 === segment }) {
                unsyncedSegments.append(segment)
            }
            syncer.directoryDirty = true
            syncer.urgentQueued = true
            syncer.updateSlowPath()
            backgroundSyncer = syncer
        }
        syncer.queue.async { [weak self] in self?.backgroundRound() }
    }

    /// The writer's slow path, taken when `appendedBytes` crossed `slowPathAt`: schedules or
    /// queues a round, or, when more than `maxUnsyncedBytes` would be unsynced, syncs before the
    /// write returns. Caller holds `writeMutex`.
    func backgroundSyncSlowPath(_ syncer: BackgroundSyncer) throws {
        for decision in syncer.decide() {
            switch decision {
            case .none:
                break
            case .scheduleTimed:
                let delay = Int((syncer.interval * 1e9 / 2).rounded())
                syncer.queue.asyncAfter(deadline: .now() + .nanoseconds(max(1, delay))) { [weak self] in self?.backgroundRound() }
            case .queueUrgent:
                syncer.queue.async { [weak self] in self?.backgroundRound() }
            case .syncNow:
                try syncLogLocked(syncer)
            }
        }
    }

    /// One round on the syncer's queue; a failure is remembered by `syncFailure` (later writes
    /// and syncs throw it).
    private func backgroundRound() {
        try? syncLog()
    }

    /// Fsyncs everything appended so far without holding `writeMutex` during the fsyncs: the
    /// sealed segments not yet synced, then the active segment, then the directory when
    /// segments were created. Writers go on meanwhile.
    func syncLog() throws {
        try syncRoundMutex.withLock { try syncRound() }
    }

    /// One round of `syncLog`. Caller holds `syncRoundMutex`.
    private func syncRound() throws {
        typealias Round = (sealed: [Segment], active: Segment?, directory: Bool, captured: UInt64, written: Range<Int>, mark: SyncMark?,
                           removals: [String])
        let round: Round? = try writeMutex.withLockSpinning {
            guard !isClosed else { throw StoreError.closed }
            guard let syncer = backgroundSyncer else { return nil }
            let directoryDirty = syncer.directoryDirty
            syncer.roundBegins()
            return (unsyncedSegments, active, directoryDirty, syncer.capturedBytes, active?.takeWrittenSinceLastSync() ?? 0..<0,
                    captureSyncMarkLocked(), attachments.takeRemovals())
        }
        guard let round else { return }
        // Out of the writer's page tables before the writeback cleans them (see
        // `Segment.takeWrittenSinceLastSync`); the pages stay in the page cache.
        round.active?.region.dropResidentPages(offset: round.written.lowerBound, count: round.written.count)
        do {
            try syncFailure.sync {
                // The files records in this round name, before the records (AttachmentRegistry).
                try attachments.syncWritten()
                for segment in round.sealed {
                    segment.dropPagesWrittenSinceLastSync(lock: writeMutex)
                    try segment.file.syncData()
                }
                // The writer went on during the syncs above: what it wrote since the round
                // began is written back by this fsync too, so it leaves the mapping as well.
                round.active?.dropPagesWrittenSinceLastSync(lock: writeMutex)
                try round.active?.file.syncData()
                if round.directory { try Directory.sync(directory) }
            }
        } catch {
            attachments.restoreRemovals(round.removals)
            throw error
        }
        writeMutex.withLockSpinning {
            unsyncedSegments.removeAll { segment in round.sealed.contains { $0 === segment } }
            backgroundSyncer?.roundCompleted(captured: round.captured)
        }
        // What the round made durable, for recovery; then the attachments it made unnamed.
        attachments.finish(round.removals, markDurable: recordSyncMark(round.mark))
    }

    /// `syncLog` with `writeMutex` held throughout (a writer past `maxUnsyncedBytes`).
    private func syncLogLocked(_ syncer: BackgroundSyncer) throws {
        let directoryDirty = syncer.directoryDirty
        syncer.roundBegins()
        let captured = syncer.capturedBytes
        let mark = captureSyncMarkLocked()
        let removals = attachments.takeRemovals()
        if let written = active?.takeWrittenSinceLastSync() {
            active?.region.dropResidentPages(offset: written.lowerBound, count: written.count)
        }
        do {
            try syncFailure.sync {
                try attachments.syncWritten()
                for segment in unsyncedSegments {
                    let written = segment.takeWrittenSinceLastSync()
                    segment.region.dropResidentPages(offset: written.lowerBound, count: written.count)
                    try segment.file.syncData()
                }
                try active?.file.syncData()
                if directoryDirty { try Directory.sync(directory) }
            }
        } catch {
            attachments.restoreRemovals(removals)
            throw error
        }
        unsyncedSegments.removeAll()
        syncer.roundCompleted(captured: captured)
        attachments.finish(removals, markDurable: mark.map(recordSyncMarkLocked) ?? false)
    }
}
