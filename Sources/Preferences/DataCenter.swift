import Foundation
import LogStore

/// APDataCenter: the entry point of the storage. It owns a root folder:
///
/// ```
/// <root>/Documents/Preferences/common/       commonPreferences (a LogStore store)
/// <root>/Documents/Preferences/user-<hash>/  each user's store; <hash> = FNV-1a 64 of the user id, hex
/// <root>/CurrentVersion/            currentVersionStorage, wiped when appVersion changes
/// <root>/Documents/<name>/          CustomStorage.named(name)
/// <root>/<relative>/                 PurgeablePath.path(relative), swept when the DataCenter starts
/// ```
///
/// Every store is opened with the DataCenter's default key (the 32-byte `defaultKey`, else one
/// derived from `appKey` with HKDF-SHA256), but values are stored plain unless a call passes a
/// crypt: `DataCrypt.default` encrypts with that key.
///
/// Thread-safe; user switching is serialized and posts its events in the order API.md gives.
public final class DataCenter: Sendable, LiveStorage {
    private struct State {
        var currentUserId: String?
        var versionStorage: CustomStorage?
        /// Set when `configure` replaced this default: every handle throws `closed` for good.
        var retired = false
    }

    /// The storage root.
    let root: URL
    /// The application version `currentVersionStorage` is kept for.
    let appVersion: String
    /// The options every store of this DataCenter (and of CustomStorages following it) opens with.
    let storeOptions: LogStore.Options
    /// How those stores compress (nil: not at all).
    public let compression: StorageCompression?
    let stores: StoreSet
    private let state = Locked(State())
    /// Serializes user switches and resets, so their events never interleave. Recursive, so an
    /// observer of an event may switch again.
    private let switchLock = NSRecursiveLock()
    private let broadcaster = EventBroadcaster()

    // MARK: The default DataCenter

    private static let shared = Locked<DataCenter?>(nil)

    /// Sets up `DataCenter.default` (closing the stores of an earlier default).
    /// - Throws: as `init(root:appKey:defaultKey:appVersion:)`.
    public static func configure(root: URL, appKey: String, defaultKey: [UInt8]? = nil, appVersion: String) throws {
        try configure(root: root, appKey: appKey, defaultKey: defaultKey, appVersion: appVersion, compression: nil)
    }

    /// `configure` with the stores compressing as `compression` says (see
    /// `init(root:appKey:defaultKey:appVersion:compression:)`).
    /// - Throws: as `init(root:appKey:defaultKey:appVersion:)`.
    public static func configure(root: URL, appKey: String, defaultKey: [UInt8]? = nil, appVersion: String,
                                 compression: StorageCompression?) throws {
        let previous = shared.withLock { shared -> DataCenter? in
            let previous = shared
            shared = nil
            return previous
        }
        previous?.retire()
        let center = try DataCenter(root: root, appKey: appKey, defaultKey: defaultKey, appVersion: appVersion,
                                    compression: compression)
        shared.withLock { $0 = center }
    }

    /// The DataCenter set up by `configure`. Used before `configure`, it is one rooted at the
    /// user's Application Support folder ("UnifiedStorage"), keyed from an empty application key
    /// and version "0" (and a warning is logged): configure it first.
    public static var `default`: DataCenter {
        shared.withLock { shared in
            if let center = shared { return center }
            PreferencesLog.warning("DataCenter.default used before DataCenter.configure")
            let base = FileManager.default.urls(for: .applicationSupportDirectory, in: .userDomainMask).first
                ?? FileManager.default.temporaryDirectory
            let root = base.appendingPathComponent("UnifiedStorage", isDirectory: true)
            var options = LogStore.Options()
            options.encryption = try? LogStore.Options.Encryption(deriving: "")
            let center = DataCenter(root: root, options: options, appVersion: "0")
            try? LivePaths.claim(root, for: center)
            shared = center
            return center
        }
    }

    /// APDataCenterLogSwitch: whether the layer logs through swift-log (label
    /// "UnifiedStorage.Preferences"). On by default.
    public static var loggingEnabled: Bool {
        get { PreferencesLog.isEnabled }
        set { PreferencesLog.isEnabled = newValue }
    }

    // MARK: Opening

    /// A DataCenter rooted at `root` (created if needed). `defaultKey` is the 32-byte default
    /// key (appDataCenterDefaultCryptKey); without it the key is derived from `appKey` with
    /// HKDF-SHA256. When `appVersion` differs from the one seen last, `currentVersionStorage`
    /// starts empty.
    /// - Throws: `StoreError.alreadyOpen` when another live DataCenter owns `root`;
    ///   `StoreError.wrongKey` when `defaultKey` is not 32 bytes or does not match the stores;
    ///   `StoreError.locked` / `.io` when the common store cannot be opened.
    public convenience init(root: URL, appKey: String, defaultKey: [UInt8]? = nil, appVersion: String) throws {
        try self.init(root: root, appKey: appKey, defaultKey: defaultKey, appVersion: appVersion, compression: nil)
    }

    /// The same, with every store of this DataCenter (and of the CustomStorages made under it,
    /// `currentVersionStorage` included) compressing values with zstd and trained dictionaries
    /// as `compression` says; nil (the default of the other initializer) stores values as they
    /// are. An addition of this project (FORMAT.md, "Compressed DataCenter stores").
    /// - Throws: as `init(root:appKey:defaultKey:appVersion:)`.
    public convenience init(root: URL, appKey: String, defaultKey: [UInt8]? = nil, appVersion: String,
                            compression: StorageCompression?) throws {
        var options = LogStore.Options()
        if let defaultKey {
            guard defaultKey.count == 32 else { throw StoreError.wrongKey(keyID: 1) }
            options.encryption = LogStore.Options.Encryption(key: defaultKey, keyID: 1)
        } else {
            options.encryption = try LogStore.Options.Encryption(deriving: appKey, keyID: 1)
        }
        if LivePaths.owner(of: root) != nil { throw StoreError.alreadyOpen(root) }
        self.init(root: root, options: options, appVersion: appVersion, compression: compression)
        try LivePaths.claim(root, for: self)
        _ = try stores.common().store()
    }

    /// The non-throwing core: problems opening stores are logged and surface as handles that
    /// throw them.
    init(root: URL, options: LogStore.Options, appVersion: String, compression: StorageCompression? = nil) {
        self.root = root
        self.appVersion = appVersion
        var options = options
        options.compression = compression?.engineOption
        self.storeOptions = options
        self.compression = compression
        let preferences = DataCenter.preferencesFolder(root: root)
        self.stores = StoreSet(base: preferences, options: options, compression: compression)
        do { try FileManager.default.createDirectory(at: root, withIntermediateDirectories: true) } catch {
            PreferencesLog.warning("creating \(root.path): \(error)")
        }
        DataCenter.moveLegacyPreferencesFolder(root: root, to: preferences)
        // A CustomStorage.named("Preferences") would open these very stores: it is refused.
        try? LivePaths.claim(preferences, for: self)
        openVersionStorage()
        startBackgroundSweep()
    }

    deinit {
        LivePaths.release(root, by: self)
        LivePaths.release(stores.base, by: self)
    }

    /// The folder of `currentVersionStorage`.
    var versionStoragePath: URL { root.appendingPathComponent("CurrentVersion", isDirectory: true) }

    /// Compares `appVersion` with the one recorded in the common store, wipes the version
    /// storage's folder when they differ, records the new one, and opens the storage.
    private func openVersionStorage() {
        do {
            let store = try stores.common().store()
            let space = try store.space(named: "datacenter:meta")
            let key = Array("appVersion".utf8)
            let last = try store.get(forKey: key, space: space, crypt: nil).flatMap { String(validating: $0, as: UTF8.self) }
            if last != appVersion {
                if last != nil, FileManager.default.fileExists(atPath: versionStoragePath.path) {
                    PreferencesLog.info("app version \(last ?? "") -> \(appVersion): wiping current version storage")
                    try FileManager.default.removeItem(at: versionStoragePath)
                }
                try store.put(Array(appVersion.utf8), forKey: key, space: space, crypt: .plain)
            }
        } catch {
            PreferencesLog.warning("checking the app version: \(error)")
        }
        let storage = CustomStorage(path: versionStoragePath, center: self, compression: compression)
        do { try LivePaths.claim(versionStoragePath, for: storage) } catch {
            PreferencesLog.warning("current version storage: \(error)")
        }
        state.withLock { $0.versionStorage = storage }
    }

    // MARK: Users

    /// The user set by `setCurrentUserId`, or nil.
    public var currentUserId: String? { state.withLock { $0.currentUserId } }

    /// Sets the logged-in user (the login module's job). Events, in order:
    /// - nil -> u1: opens u1's store, `didUserUpdate(switched: true)`;
    /// - u1 -> u1: `didUserRenew`;
    /// - u1 -> u2: `willLastUserResign(u1)`, closes u1's store, opens u2's, `didUserUpdate(switched: true)`;
    /// - u1 -> nil: `willLastUserResign(u1)`, closes u1's store, `didUserUpdate(switched: true)`.
    /// Not calling it at logout keeps the last user's store open, as the source does.
    /// - Throws: the error that kept the new user's store from opening (the user is set anyway,
    ///   and the events are posted; `userPreferences` retries the open).
    public func setCurrentUserId(_ userId: String?) throws {
        switchLock.lock()
        defer { switchLock.unlock() }
        let previous = currentUserId
        if previous == userId {
            if userId != nil { post(.didUserRenew) }
            return
        }
        if let previous { post(.willLastUserResign(userId: previous)) }
        // Close, open and publish the new id in one step, so a reader of `userPreferences` on
        // another thread never reopens the store being closed.
        let openError: (any Error)? = state.withLock { state in
            if let previous { stores.closeUser(previous) }
            state.currentUserId = userId
            guard let userId else { return nil }
            do {
                _ = try stores.user(userId).store()
                return nil
            } catch {
                return error
            }
        }
        PreferencesLog.info("current user \(previous == nil ? "none" : "set") -> \(userId == nil ? "none" : "set")")
        post(.didUserUpdate(switched: true))
        if let openError { throw openError }
    }

    private func post(_ event: DataCenterEvent) {
        broadcaster.publish(event)
        NotificationCenter.default.post(name: event.notificationName, object: self, userInfo: event.userInfo)
    }

    /// A new stream of this DataCenter's user events from now on (one stream per access).
    public var events: AsyncStream<DataCenterEvent> { broadcaster.stream() }

    // MARK: Preferences

    /// The folder holding the common and user stores (`<root>/Documents/Preferences`, where the
    /// source keeps APDataCenter's default storage: the sandbox's `Documents/Preferences`).
    public var preferencesRootPath: URL { stores.base }

    /// The preferences that belong to no user.
    public var commonPreferences: SharedPreferences { stores.common() }

    /// The current user's preferences; nil while no user is set. After a switch it is another
    /// object: one obtained before keeps pointing at the previous user's (closed) store.
    public var userPreferences: SharedPreferences? {
        state.withLock { state in state.currentUserId.map { stores.user($0) } }
    }

    /// `userId`'s preferences whoever is logged in (for asynchronous work that must not write
    /// into the next user's store). The current user's are the same object as `userPreferences`.
    /// - Throws: the error that kept the store from opening.
    public func preferences(forUser userId: String) throws -> SharedPreferences {
        let preferences = stores.user(userId)
        _ = try preferences.store()
        return preferences
    }

    /// An accessor whose preferences take no `business:` argument.
    public func accessor(forBusiness business: String) -> PreferencesAccessor {
        PreferencesAccessor(center: self, business: business)
    }

    /// A CustomStorage kept for the current application version: wiped whenever `appVersion`
    /// differs from the one seen last (up or down).
    public var currentVersionStorage: CustomStorage {
        if let storage = state.withLock({ $0.versionStorage }) { return storage }
        if !state.withLock({ $0.retired }) { openVersionStorage() }
        return state.withLock { $0.versionStorage } ?? CustomStorage(path: versionStoragePath, center: self, compression: compression)
    }

    /// Trains a dictionary for every preferences space, disk cache and object array of the
    /// DataCenter's open stores (common, and users' still open) that holds enough values and
    /// has none yet (see `StorageCompression`); stores also do this when they open. Without
    /// compression, or with `trainsDictionaries` off, it does nothing.
    /// - Returns: the number of dictionaries trained.
    /// - Throws: store errors.
    @discardableResult
    public func trainCompressionDictionaries() throws -> Int {
        try stores.trainDictionaries()
    }

    // MARK: Reset

    /// Wipes the whole storage root, then works again (the current user stays set). Every
    /// handle obtained before (preferences, CustomStorages under the root, the version storage)
    /// is closed: its writes throw `StoreError.closed`.
    /// - Throws: `StoreError.io` when the root cannot be removed or recreated; `StoreError.closed`
    ///   for a default that `configure` has replaced.
    public func reset() throws {
        switchLock.lock()
        defer { switchLock.unlock() }
        guard !state.withLock({ $0.retired }) else { throw StoreError.closed }
        invalidate()
        for owner in LivePaths.owners(under: root) where owner !== self { owner.invalidate() }
        do {
            if FileManager.default.fileExists(atPath: root.path) { try FileManager.default.removeItem(at: root) }
            try FileManager.default.createDirectory(at: root, withIntermediateDirectories: true)
        } catch {
            throw StoreError.io(operation: "reset \(root.path): \(error.localizedDescription)", errno: EIO)
        }
        openVersionStorage()
        PreferencesLog.info("reset \(root.path)")
    }

    /// Closes every store for good and gives the root up (when `configure` replaces the
    /// default): every handle, and every later one, throws `StoreError.closed`.
    func retire() {
        state.withLock { $0.retired = true }
        stores.shutdown()
        invalidate()
        LivePaths.release(root, by: self)
        LivePaths.release(stores.base, by: self)
    }

    /// Closes every store this DataCenter opened (they reopen on next use).
    func invalidate() {
        stores.closeAll()
        let storage = state.withLock { state -> CustomStorage? in
            let storage = state.versionStorage
            state.versionStorage = nil
            return storage
        }
        storage?.invalidate()
    }
}
