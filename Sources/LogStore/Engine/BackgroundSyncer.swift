import Foundation

/// Bounds the unsynced part of the log in `.processCrashSafe` and `.groupCommit` stores, off the
/// write path.
///
/// Writers count the bytes they append (`appendedBytes`, cumulative) and take a slow path only
/// when that count crosses `slowPathAt`, which is recomputed on every slow path and sync:
/// - the first write after a sync began schedules a timed sync `interval / 2` later, so a write
///   acknowledged at `t` is on stable storage by `t + interval` as long as one fsync round takes
///   less than `interval / 2`;
/// - once half of `byteLimit` is unsynced, a sync is queued at once;
/// - only with `waitsBeyondByteLimit` (`LogStore.Options.waitsBeyondMaxUnsyncedBytes`), a write
///   that would leave more than `byteLimit` acknowledged bytes unsynced (the disk cannot keep
///   up) syncs everything itself before it returns: the only case a put waits on a sync.
///   Otherwise no write ever waits: rounds run back to back while the disk is behind.
///
/// A sync round (`StoreEngine.syncLog`) fsyncs the sealed segments not yet synced, then the
/// active segment, then the directory when segments were created; it goes through the store's
/// `SyncCoordinator`, so writers waiting for an explicit `sync()` share it.
///
/// All state is guarded by the engine's `writeMutex`.
final class BackgroundSyncer: @unchecked Sendable {
    /// The longest an acknowledged write stays unsynced (seconds; infinite: no time bound).
    let interval: TimeInterval
    /// The most acknowledged bytes (encoded records) that may be unsynced at any time
    /// (`Int.max`: no byte bound).
    let byteLimit: UInt64
    /// A write past `byteLimit` unsynced syncs before it returns (a hard byte bound).
    let waitsBeyondByteLimit: Bool
    /// Runs the sync rounds, one at a time.
    let queue = DispatchQueue(label: "UnifiedStorage.LogStore.syncer", qos: .utility)

    /// Bytes appended since the store opened.
    var appendedBytes: UInt64 = 0
    /// `appendedBytes` when the running (or last) sync round began.
    var capturedBytes: UInt64 = 0
    /// `appendedBytes` when the last completed sync round began: everything before is durable.
    var syncedBytes: UInt64 = 0
    /// A timed round is scheduled and has not begun.
    var timedScheduled = false
    /// An immediate round is queued and has not begun.
    var urgentQueued = false
    /// Segments were created or renamed since the last round began: the directory needs a sync.
    var directoryDirty = false
    /// `appendedBytes` at or past which a writer takes the slow path.
    var slowPathAt: UInt64 = 0

    init(interval: TimeInterval, byteLimit: Int, waitsBeyondByteLimit: Bool) {
        self.interval = max(0.001, interval)
        self.byteLimit = UInt64(max(1, byteLimit))
        self.waitsBeyondByteLimit = waitsBeyondByteLimit && byteLimit != Int.max
    }

    /// Recomputes `slowPathAt` from the state.
    func updateSlowPath() {
        var next = waitsBeyondByteLimit ? syncedBytes &+ byteLimit &+ 1 : UInt64.max
        if !timedScheduled { next = min(next, appendedBytes) }
        if !urgentQueued { next = min(next, capturedBytes &+ max(1, byteLimit / 2)) }
        slowPathAt = next
    }

    /// What a writer's slow path decided.
    enum Decision {
        case none
        /// Schedule a timed round, queue an immediate one, or sync before returning.
        case scheduleTimed, queueUrgent, syncNow
    }

    /// Called by a writer (with `writeMutex`) when `appendedBytes >= slowPathAt`. Marks what it
    /// decides as scheduled; the caller carries it out.
    func decide() -> [Decision] {
        var decisions: [Decision] = []
        if waitsBeyondByteLimit && appendedBytes &- syncedBytes > byteLimit { decisions.append(.syncNow) }
        if !timedScheduled {
            timedScheduled = true
            // An infinite interval (a byte bound alone) never schedules a timed round.
            if interval.isFinite { decisions.append(.scheduleTimed) }
        }
        if !urgentQueued && appendedBytes &- capturedBytes >= max(1, byteLimit / 2) {
            urgentQueued = true
            decisions.append(.queueUrgent)
        }
        updateSlowPath()
        return decisions
    }

    /// A sync round begins: everything appended so far is in it.
    func roundBegins() {
        capturedBytes = appendedBytes
        timedScheduled = false
        urgentQueued = false
        directoryDirty = false
        updateSlowPath()
    }

    /// A sync round that began at `captured` completed.
    func roundCompleted(captured: UInt64) {
        if captured > syncedBytes { syncedBytes = captured }
        updateSlowPath()
    }
}
