import Synchronization

/// The meeting point of an observation's commit observer (any thread) and its iterator (a
/// task): commits that touch the watched tables set one pending flag, so any number of them
/// before the iterator looks again count once (coalescing); a waiting iterator is woken, and
/// cancelling its task wakes it too.
final class CommitSignal: Sendable {
    private struct State {
        var pending = false
        var waiter: CheckedContinuation<Void, Never>?
    }

    private let tables: Set<String>
    private let state = Mutex(State())

    /// A signal for commits touching any of `tables` (lower-cased names).
    init(tables: Set<String>) {
        self.tables = tables
    }

    /// Whether a relevant commit is waiting to be delivered (for tests).
    var isPending: Bool { state.withLock { $0.pending } }

    /// The commit observer's side: notes a commit of `changed` when it touches the tables.
    func committed(_ changed: Set<String>) {
        guard !changed.isDisjoint(with: tables) else { return }
        let waiter = state.withLock { state in
            state.pending = true
            defer { state.waiter = nil }
            return state.waiter
        }
        waiter?.resume()
    }

    /// Waits until a relevant commit happened since the last call (at once when one already
    /// has) and clears it; returns false when the task was cancelled.
    func wait() async -> Bool {
        await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                let resumeNow = state.withLock { state in
                    if state.pending || Task.isCancelled { return true }
                    state.waiter = continuation
                    return false
                }
                if resumeNow { continuation.resume() }
            }
            return state.withLock { state in
                guard !Task.isCancelled else { return false }
                state.pending = false
                return true
            }
        } onCancel: {
            let waiter = state.withLock { state in
                defer { state.waiter = nil }
                return state.waiter
            }
            waiter?.resume()
        }
    }
}
