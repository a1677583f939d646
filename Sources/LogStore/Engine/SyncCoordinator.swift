/// Lets concurrent writers that each need their write on stable storage share one fsync.
///
/// Writers number their writes (generations) as they append. A writer that needs generation
/// `g` durable waits until `synced >= g`; if no sync is running it becomes the leader: it notes
/// the newest generation written so far, syncs once, and wakes everyone that sync covered.
final class SyncCoordinator: @unchecked Sendable {
    private let mutex = Mutex()
    private let condition = Condition()
    private var written: UInt64 = 0
    private var synced: UInt64 = 0
    private var syncing = false

    /// Records that generation `generation` has been appended. Returns it.
    func noteWritten(_ generation: UInt64) {
        mutex.withLock { if generation > written { written = generation } }
    }

    var hasUnsyncedWrites: Bool { mutex.withLock { written > synced } }

    /// Returns once generation `generation` is durable, running `sync` as leader if needed.
    func waitUntilDurable(_ generation: UInt64, sync: () throws -> Void) throws {
        mutex.lock()
        while synced < generation {
            if syncing {
                mutex.wait(condition)
                continue
            }
            syncing = true
            let target = written
            mutex.unlock()
            var failure: Error?
            do { try sync() } catch { failure = error }
            mutex.lock()
            syncing = false
            if failure == nil && target > synced { synced = target }
            condition.broadcast()
            if let failure {
                mutex.unlock()
                throw failure
            }
        }
        mutex.unlock()
    }

    /// Syncs everything written so far (used by `sync()` and the group-commit timer).
    func syncAll(_ sync: () throws -> Void) throws {
        let target = mutex.withLock { written }
        try waitUntilDurable(target, sync: sync)
    }
}
