import Foundation
import LogStore

/// APCustomStorage: a storage folder of its own, with the same common and per-user preferences
/// as the DataCenter (stores `common/` and `user-<hash>/` inside it, keyed with the
/// DataCenter's default key). Its preferences take no `business:` argument; they use the
/// business "default" of their stores.
///
/// `userPreferences` follows the current user of the DataCenter it was made under
/// (`DataCenter.default` for `named(_:)` and `init(path:)`): on first use after a switch the
/// previous user's store is closed and the new one's opened.
///
/// One live instance per folder in a process: a second `init(path:)` on the same folder throws
/// `StoreError.alreadyOpen` until the first is closed (or released).
public final class CustomStorage: Sendable, LiveStorage {
    private struct State {
        var closed = false
        /// The user whose store `userPreferences` last returned.
        var followedUser: String?
    }

    /// The business of the storage's preferences.
    static let business = "default"

    /// The storage folder.
    public let path: URL
    let stores: StoreSet
    let center: WeakRef<DataCenter>
    private let state = Locked(State())

    /// `<DataCenter.default root>/Documents/<name>`. Returns the live storage of that folder if
    /// there is one, else opens it; the folder exists when this returns.
    /// - Throws: `StoreError.io` (EINVAL) for an empty name or one with "/" or ".."; `StoreError.io`
    ///   (EIO) when the folder cannot be created.
    public static func named(_ name: String) throws -> CustomStorage {
        try named(name, compression: .followingDataCenter)
    }

    /// `named(_:)` with the storage's stores compressing as `compression` says (nil: not at
    /// all), whatever `DataCenter.default` does. A live storage of that folder is returned as
    /// it is, with the compression it was opened with.
    /// - Throws: as `named(_:)`.
    public static func named(_ name: String, compression: StorageCompression?) throws -> CustomStorage {
        try named(name, compression: .given(compression))
    }

    /// Where a storage's compression comes from.
    enum CompressionChoice {
        /// The DataCenter's (the storages of the API.md calls).
        case followingDataCenter
        case given(StorageCompression?)

        func resolved(for center: DataCenter) -> StorageCompression? {
            switch self {
            case .followingDataCenter: return center.compression
            case .given(let compression): return compression
            }
        }
    }

    private static func named(_ name: String, compression: CompressionChoice) throws -> CustomStorage {
        guard !name.isEmpty, !name.contains("/"), name != "..", name != "." else {
            throw StoreError.io(operation: "CustomStorage.named(\"\(name)\"): not a folder name", errno: EINVAL)
        }
        let center = DataCenter.default
        let path = center.root.appendingPathComponent("Documents", isDirectory: true).appendingPathComponent(name, isDirectory: true)
        if let live = LivePaths.owner(of: path) as? CustomStorage { return live }
        try createFolder(path)
        let storage = CustomStorage(path: path, center: center, compression: compression.resolved(for: center))
        try LivePaths.claim(path, for: storage)
        return storage
    }

    /// A storage at any `path` (created if needed), keyed and following users as
    /// `DataCenter.default`. Hold on to it; `close()` it to give the folder up.
    /// - Throws: `StoreError.alreadyOpen` when a live CustomStorage (or DataCenter) owns `path`;
    ///   `StoreError.io` when the folder cannot be created.
    public convenience init(path: URL) throws {
        let center = DataCenter.default
        try self.init(path: path, center: center, claiming: center.compression)
    }

    /// `init(path:)` with the storage's stores compressing values with zstd and trained
    /// dictionaries as `compression` says (nil: not at all), whatever `DataCenter.default`
    /// does. An addition of this project (FORMAT.md, "Compressed DataCenter stores").
    /// - Throws: as `init(path:)`.
    public convenience init(path: URL, compression: StorageCompression?) throws {
        try self.init(path: path, center: DataCenter.default, claiming: compression)
    }

    private convenience init(path: URL, center: DataCenter, claiming compression: StorageCompression?) throws {
        if LivePaths.owner(of: path) != nil { throw StoreError.alreadyOpen(path) }
        try Self.createFolder(path)
        self.init(path: path, center: center, compression: compression)
        try LivePaths.claim(path, for: self)
    }

    /// Creates the storage folder at once, as custom_storage/summary.md says
    /// storageInDocumentsWithName: does ("This will create a 'Documents/Contact' directory").
    /// - Throws: `StoreError.io` when the folder cannot be created.
    private static func createFolder(_ path: URL) throws {
        do { try FileManager.default.createDirectory(at: path, withIntermediateDirectories: true) } catch {
            throw StoreError.io(operation: "creating \(path.path): \(error.localizedDescription)", errno: EIO)
        }
    }

    /// The core, registering nothing (callers claim the path).
    init(path: URL, center: DataCenter, compression: StorageCompression?) {
        self.path = path
        self.center = WeakRef(center)
        self.compression = compression
        self.stores = StoreSet(base: path, options: center.storeOptions, compression: compression)
    }

    /// How this storage's stores compress (nil: not at all).
    public let compression: StorageCompression?

    /// Trains a dictionary for every preferences space, disk cache and object array of the
    /// storage's open stores that holds enough values and has none yet (see
    /// `StorageCompression`); stores also do this when they open. Without compression, or with
    /// `trainsDictionaries` off, it does nothing.
    /// - Returns: the number of dictionaries trained.
    /// - Throws: store errors (`StoreError.closed` after `close()`).
    @discardableResult
    public func trainCompressionDictionaries() throws -> Int {
        try stores.trainDictionaries()
    }

    deinit {
        LivePaths.release(path, by: self)
    }

    /// Closes every store and gives the folder up: handles obtained before throw
    /// `StoreError.closed`, and another `CustomStorage(path:)` may open it. Closing twice is
    /// not an error.
    public func close() throws {
        invalidate()
    }

    /// Closes the stores, deletes everything in the folder and starts empty; handles obtained
    /// before throw `StoreError.closed`.
    /// - Throws: `StoreError.closed` after `close()`; `StoreError.io` when the folder cannot be
    ///   removed.
    public func reset() throws {
        guard !state.withLock({ $0.closed }) else { throw StoreError.closed }
        stores.closeAll()
        state.withLock { $0.followedUser = nil }
        do {
            if FileManager.default.fileExists(atPath: path.path) { try FileManager.default.removeItem(at: path) }
            try FileManager.default.createDirectory(at: path, withIntermediateDirectories: true)
        } catch {
            throw StoreError.io(operation: "reset \(path.path): \(error.localizedDescription)", errno: EIO)
        }
    }

    func invalidate() {
        state.withLock { $0.closed = true }
        stores.shutdown()
        LivePaths.release(path, by: self)
    }

    /// The preferences that belong to no user (throwing `StoreError.closed` after `close()`).
    public var commonPreferences: BusinessPreferences {
        BusinessPreferences(preferences: stores.common(), business: Self.business)
    }

    /// The current user's preferences; nil while no user is set.
    public var userPreferences: BusinessPreferences? {
        let userId = center.value?.currentUserId
        // Follow the switch under the lock, so two readers never reopen a store being closed.
        let preferences = state.withLock { state -> SharedPreferences? in
            if let previous = state.followedUser, previous != userId { stores.closeUser(previous) }
            state.followedUser = userId
            return userId.map { stores.user($0) }
        }
        guard let preferences else { return nil }
        return BusinessPreferences(preferences: preferences, business: Self.business)
    }
}
