import Dispatch
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Lets concurrent writers that each need their write on stable storage share one fsync.
///
/// Writers number their writes (generations) as they append. A writer that needs generation
/// `g` durable waits until `synced >= g`; if no sync is running it becomes the leader: it notes
/// the newest generation written so far, syncs once, and wakes everyone that sync covered.
///
/// **Gathering.** The writers a sync wakes append their next writes a few microseconds later,
/// one after another as the scheduler runs them; a leader that synced at once would cover only
/// itself and the few already back, and the rest would wait a whole fsync more (issue 16's
/// 8-writer run: 3.9 writes per fsync, counted with strace). So a leader first waits, yielding
/// its CPU, until as many writers are waiting as were waiting when the last sync ended, for at
/// most half the last sync's duration (and never more than 0.5 ms). A writer that stopped
/// writing only costs that bound once: the expected count then drops to the writers that came
/// back.
final class SyncCoordinator: @unchecked Sendable {
    private let mutex = Mutex()
    private let condition = Condition()
    private var written: UInt64 = 0
    private var synced: UInt64 = 0
    private var syncing = false
    /// Writers inside `waitUntilDurable` (appended, waiting or leading).
    private var waiting = 0
    /// How many writers a leader waits for before it syncs: those waiting when the last sync
    /// ended (they are the ones likely to be back with another write).
    private var expected = 1
    /// How long the last sync took, in nanoseconds: bounds a leader's gathering.
    private var lastSyncNanos: UInt64 = 0

    /// Records that generation `generation` has been appended. Returns it.
    func noteWritten(_ generation: UInt64) {
        mutex.withLock { if generation > written { written = generation } }
    }

    var hasUnsyncedWrites: Bool { mutex.withLock { written > synced } }

    /// Returns once generation `generation` is durable, running `sync` as leader if needed.
    /// `gather` lets a leader wait for the other writers' next writes first (see the type's
    /// doc); explicit syncs pass false.
    func waitUntilDurable(_ generation: UInt64, gather: Bool = true, sync: () throws -> Void) throws {
        mutex.lock()
        waiting += 1
        defer {
            waiting -= 1
            mutex.unlock()
        }
        while synced < generation {
            if syncing {
                mutex.wait(condition)
                continue
            }
            syncing = true
            if gather && waiting < expected { gatherWriters() }
            let target = written
            mutex.unlock()
            let started = DispatchTime.now().uptimeNanoseconds
            var failure: Error?
            do { try sync() } catch { failure = error }
            let took = DispatchTime.now().uptimeNanoseconds &- started
            mutex.lock()
            syncing = false
            lastSyncNanos = took
            expected = max(1, waiting)
            if failure == nil && target > synced { synced = target }
            condition.broadcast()
            if let failure { throw failure }
        }
    }

    /// A leader's wait for `expected` writers, yielding its CPU to them, bounded by half the
    /// last sync's time (at most 0.5 ms). Lowers `expected` when they do not all come. Caller
    /// holds `mutex` (released while yielding).
    private func gatherWriters() {
        let bound = min(lastSyncNanos / 2, 500_000)
        guard bound > 0 else { return }
        let deadline = DispatchTime.now().uptimeNanoseconds &+ bound
        while waiting < expected {
            mutex.unlock()
            sched_yield()
            let now = DispatchTime.now().uptimeNanoseconds
            mutex.lock()
            if now >= deadline {
                expected = max(1, waiting)
                return
            }
        }
    }

    /// Syncs everything written so far (used by `sync()` and the group-commit timer).
    func syncAll(_ sync: () throws -> Void) throws {
        let target = mutex.withLock { written }
        try waitUntilDurable(target, gather: false, sync: sync)
    }
}
