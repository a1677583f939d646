import Foundation
import Logging
import LogStore
import Preferences

/// Where a cache or file array keeps its records: the common store or the current user's, of
/// a CustomStorage or of a DataCenter (`DataCenter.default` when none is given, looked up on
/// every call so a later `configure` is followed).
struct StoreSource: Sendable {
    let storage: CustomStorage?
    let userDependent: Bool

    /// The store to use now. A userDependent source gives the current user's store, so a user
    /// switch shows up as another store object.
    /// - Throws: `StoreError.noCurrentUser` when userDependent and no user is set; open errors.
    func store() throws -> LogStore {
        if let storage { return try storage.logStore(userDependent: userDependent) }
        return try DataCenter.default.logStore(userDependent: userDependent)
    }

    /// The store with its folder and whether it compresses values.
    func location() throws -> (store: LogStore, directory: URL, compresses: Bool) {
        if let storage { return try storage.logStoreLocation(userDependent: userDependent) }
        return try DataCenter.default.logStoreLocation(userDependent: userDependent)
    }
}

/// Logging of errors that non-throwing cache calls swallow (the source's calls do not throw).
/// Label "UnifiedStorage.Caches"; silenced with `DataCenter.loggingEnabled = false`.
enum CacheLog {
    private static let logger = Logger(label: "UnifiedStorage.Caches")

    static func warning(_ message: @autoclosure () -> String) {
        guard DataCenter.loggingEnabled else { return }
        logger.warning("\(message())")
    }
}
