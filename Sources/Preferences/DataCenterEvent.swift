import Foundation

/// A user-switching event of a DataCenter, also posted on `NotificationCenter.default`.
public enum DataCenterEvent: Equatable, Sendable {
    /// The previous user's store is about to close (kAPDataCenterWillLastUserResign).
    case willLastUserResign(userId: String)
    /// The current user changed, possibly to nil (kAPDataCenterDidUserUpdated).
    case didUserUpdate(switched: Bool)
    /// The same user was set again (kAPDataCenterDidUserRenew).
    case didUserRenew

    /// The notification this event is posted as.
    var notificationName: Notification.Name {
        switch self {
        case .willLastUserResign: return .dataCenterWillLastUserResign
        case .didUserUpdate: return .dataCenterDidUserUpdate
        case .didUserRenew: return .dataCenterDidUserRenew
        }
    }

    /// The notification's userInfo: `["userId": String]` for will-resign,
    /// `["switched": Bool]` for did-update.
    var userInfo: [AnyHashable: Any]? {
        switch self {
        case .willLastUserResign(let userId): return ["userId": userId]
        case .didUserUpdate(let switched): return ["switched": switched]
        case .didUserRenew: return nil
        }
    }
}

extension Notification.Name {
    /// Posted before the previous user's store closes; userInfo["userId"] names that user.
    public static let dataCenterWillLastUserResign = Notification.Name("UnifiedStorage.DataCenterWillLastUserResign")
    /// Posted after the current user changed; userInfo["switched"] is a Bool (true).
    public static let dataCenterDidUserUpdate = Notification.Name("UnifiedStorage.DataCenterDidUserUpdate")
    /// Posted when the current user is set again unchanged.
    public static let dataCenterDidUserRenew = Notification.Name("UnifiedStorage.DataCenterDidUserRenew")
}

/// The `events` streams of one DataCenter.
final class EventBroadcaster: Sendable {
    private let subscribers = Locked<(next: Int, continuations: [Int: AsyncStream<DataCenterEvent>.Continuation])>((0, [:]))

    func stream() -> AsyncStream<DataCenterEvent> {
        let (stream, continuation) = AsyncStream<DataCenterEvent>.makeStream(bufferingPolicy: .unbounded)
        let id = subscribers.withLock { state -> Int in
            let id = state.next
            state.next += 1
            state.continuations[id] = continuation
            return id
        }
        continuation.onTermination = { [weak self] _ in
            self?.subscribers.withLock { _ = $0.continuations.removeValue(forKey: id) }
        }
        return stream
    }

    func publish(_ event: DataCenterEvent) {
        let continuations = subscribers.withLock { Array($0.continuations.values) }
        for continuation in continuations { continuation.yield(event) }
    }
}
