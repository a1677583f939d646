import Synchronization

/// Remembers the first failed fsync of a store and fails every later write and sync with it.
///
/// After a failed fsync the kernel may already have dropped the dirty pages it could not write
/// (and report the next fsync as a success), so nothing written since the last good sync can be
/// trusted to be on disk, and a record lost in the middle of the active segment would make
/// recovery cut the acknowledged records after it. Like LevelDB's background error, the store
/// then refuses writes until it is reopened; recovery sorts out what reached the disk. Reads go on.
final class StickySyncFailure: Sendable {
    private let failed = Atomic<Bool>(false)
    private let error = Synchronization.Mutex<StoreError?>(nil)

    /// Throws the remembered failure, if any. One relaxed load when there is none.
    @inline(__always)
    func check() throws {
        guard failed.load(ordering: .relaxed) else { return }
        if let error = error.withLock({ $0 }) { throw error }
    }

    /// Runs a sync; a failure is remembered (the first one wins) and rethrown.
    func sync(_ body: () throws -> Void) throws {
        try check()
        do {
            try body()
        } catch {
            let remembered: StoreError
            if case StoreError.io(let operation, let code) = error {
                remembered = .io(operation: "\(operation); the store refuses writes until it is reopened", errno: code)
            } else {
                remembered = error as? StoreError ?? .io(operation: "sync: \(error)", errno: 5)
            }
            self.error.withLock { if $0 == nil { $0 = remembered } }
            failed.store(true, ordering: .releasing)
            throw error
        }
    }
}
