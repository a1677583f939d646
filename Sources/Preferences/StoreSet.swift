import Foundation
import LogStore

/// The stores of one storage folder (a DataCenter's `Preferences` folder or a CustomStorage's
/// path): `common/` for data that belongs to no user and `user-<hash>/` per user, where
/// `<hash>` is `StableHash.hex(userId)`. Stores open on first use; each open store has exactly
/// one `SharedPreferences`, so every handle of a store shares its change streams.
final class StoreSet: Sendable {
    private struct State {
        var common: SharedPreferences?
        var users: [String: SharedPreferences] = [:]
        /// Set by `shutdown()`: every later request gets a handle that throws `closed`.
        var shutDown = false
    }

    /// The folder holding the stores.
    let base: URL
    let options: LogStore.Options
    /// The compression the stores open with (its engine option is in `options`), for training
    /// their dictionaries at open; nil: none.
    let compression: StorageCompression?
    private let state = Locked(State())

    init(base: URL, options: LogStore.Options, compression: StorageCompression? = nil) {
        self.base = base
        var options = options
        options.compression = compression?.engineOption
        self.options = options
        self.compression = compression
    }

    /// Trains the missing dictionaries of every open store (see `StorageCompression`).
    /// - Returns: the number trained; 0 without compression.
    /// - Throws: store errors (dictionaries trained before the error are kept).
    func trainDictionaries() throws -> Int {
        guard let compression else { return 0 }
        let open = state.withLock { state in (state.common.map { [$0] } ?? []) + Array(state.users.values) }
        return try open.reduce(0) { $0 + (try compression.trainDictionaries(in: try $1.store())) }
    }

    /// The folder of `userId`'s store.
    static func folderName(forUser userId: String) -> String { "user-" + StableHash.hex(userId) }

    /// The common store's preferences, opened if needed. A store that cannot be opened gives
    /// preferences whose writes throw the reason (and that are not kept, so a later call retries).
    func common() -> SharedPreferences {
        state.withLock { state in
            if let common = state.common { return common }
            let preferences = open(base.appendingPathComponent("common", isDirectory: true), shutDown: state.shutDown)
            if case .open = preferences.backend { state.common = preferences }
            return preferences
        }
    }

    /// `userId`'s preferences, opened if needed (failures as in `common()`).
    func user(_ userId: String) -> SharedPreferences {
        state.withLock { state in
            if let preferences = state.users[userId] { return preferences }
            let folder = base.appendingPathComponent(Self.folderName(forUser: userId), isDirectory: true)
            let preferences = open(folder, shutDown: state.shutDown)
            if case .open = preferences.backend { state.users[userId] = preferences }
            return preferences
        }
    }

    /// Closes `userId`'s store if it is open.
    func closeUser(_ userId: String) {
        let preferences = state.withLock { $0.users.removeValue(forKey: userId) }
        preferences?.close()
    }

    /// Closes every store; later requests open them again.
    func closeAll() {
        let all = state.withLock { state -> [SharedPreferences] in
            let all = (state.common.map { [$0] } ?? []) + Array(state.users.values)
            state.common = nil
            state.users = [:]
            return all
        }
        for preferences in all { preferences.close() }
    }

    /// Closes every store for good: later requests get handles that throw `StoreError.closed`.
    func shutdown() {
        state.withLock { $0.shutDown = true }
        closeAll()
    }

    private func open(_ folder: URL, shutDown: Bool) -> SharedPreferences {
        guard !shutDown else { return SharedPreferences(backend: .failed(StoreError.closed), directory: folder) }
        do {
            try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
            let store = try LogStore(directory: folder, options: options)
            if let compression, !options.readOnly {
                // A failed training costs compression only, never the store.
                do { _ = try compression.trainDictionaries(in: store) } catch {
                    PreferencesLog.warning("training compression dictionaries in \(folder.path): \(error)")
                }
            }
            return SharedPreferences(backend: .open(store), directory: folder)
        } catch {
            PreferencesLog.warning("opening \(folder.path): \(error)")
            return SharedPreferences(backend: .failed(error), directory: folder)
        }
    }
}
