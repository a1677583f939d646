/// Fans changed keys out to every `changes(business:)` stream of one business.
final class ChangeBroadcaster: Sendable {
    private struct State {
        var nextID = 0
        var subscribers: [String: [Int: AsyncStream<String>.Continuation]] = [:]
        var finished = false
    }

    private let state = Locked(State())

    /// A new stream of the keys set or removed in `business` from now on. It ends when the
    /// preferences' store is closed.
    func stream(business: String) -> AsyncStream<String> {
        let (stream, continuation) = AsyncStream<String>.makeStream(bufferingPolicy: .unbounded)
        let id: Int? = state.withLock { state in
            guard !state.finished else { return nil }
            let id = state.nextID
            state.nextID += 1
            state.subscribers[business, default: [:]][id] = continuation
            return id
        }
        guard let id else {
            continuation.finish()
            return stream
        }
        continuation.onTermination = { [weak self] _ in
            self?.state.withLock { state in _ = state.subscribers[business]?.removeValue(forKey: id) }
        }
        return stream
    }

    /// Yields `key` to every stream of `business`.
    func publish(_ key: String, business: String) {
        let continuations = state.withLock { state in state.subscribers[business].map { Array($0.values) } ?? [] }
        for continuation in continuations { continuation.yield(key) }
    }

    /// Ends every stream; later streams end at once.
    func finishAll() {
        let all = state.withLock { state -> [AsyncStream<String>.Continuation] in
            state.finished = true
            let all = state.subscribers.values.flatMap { $0.values }
            state.subscribers = [:]
            return all
        }
        for continuation in all { continuation.finish() }
    }
}
