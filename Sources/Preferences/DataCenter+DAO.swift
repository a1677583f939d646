import DAO
import Foundation
import LogStore

extension DataCenter {
    /// `daoWithPath:userDependent:`: loads the XML DAO config at `configPath` (API.md "DAO" 1).
    /// Its tables live in the common store, or, when `userDependent`, in the current user's:
    /// every call goes to the store of the user current at that moment, so the proxy follows
    /// user switches without being recreated; while no user is set its calls throw
    /// `StoreError.noCurrentUser`.
    /// - Throws: `DAOError.config` with line and column for a malformed config; the file
    ///   system's error when it cannot be read.
    public func dao(configPath: URL, userDependent: Bool) throws -> DAOProxy {
        let stores = self.stores
        let center = WeakRef(self)
        if userDependent {
            return try DAOProxy(contentsOf: configPath, storeProvider: {
                guard let userId = center.value?.currentUserId else { throw StoreError.noCurrentUser }
                return try stores.user(userId).store()
            })
        }
        return try DAOProxy(contentsOf: configPath, storeProvider: { try stores.common().store() })
    }

    /// `daoWithPath:databasePath:`: loads the config at `configPath` with its tables in a store
    /// of their own at `databasePath` (a store folder; a relative path such as
    /// "Documents/x.db" resolves against the root). Proxies given the same path share one store.
    /// - Throws: as `dao(configPath:userDependent:)`; `StoreError` when the store cannot be
    ///   opened (`locked` when another process holds it).
    public func dao(configPath: URL, databasePath: URL) throws -> DAOProxy {
        let path = databasePath.relativePath.hasPrefix("/")
            ? databasePath.standardizedFileURL
            : root.appendingPathComponent(databasePath.relativePath, isDirectory: true).standardizedFileURL
        let options = storeOptions
        let store = try DAODatabases.shared.store(at: path, options: options)
        return try DAOProxy(contentsOf: configPath, store: store)
    }
}

extension CustomStorage {
    /// `daoWithPath:userDependent:` of a custom storage: as `DataCenter.dao(configPath:userDependent:)`
    /// with the storage's common store or the store of its current user (that of the DataCenter
    /// it was made under).
    /// - Throws: as `DataCenter.dao(configPath:userDependent:)`.
    public func dao(configPath: URL, userDependent: Bool) throws -> DAOProxy {
        let storage = WeakRef(self)
        if userDependent {
            return try DAOProxy(contentsOf: configPath, storeProvider: {
                guard let storage = storage.value else { throw StoreError.closed }
                guard let preferences = storage.userPreferences else { throw StoreError.noCurrentUser }
                return try preferences.preferences.store()
            })
        }
        let stores = self.stores
        return try DAOProxy(contentsOf: configPath, storeProvider: { try stores.common().store() })
    }
}

/// The stores opened by `dao(configPath:databasePath:)`, one per folder in the process, so
/// proxies given the same path share it (a store can be opened once). Each folder is registered
/// with `LivePaths`, so a `DataCenter.reset()` of a root holding it closes the store (proxies made
/// before then throw `StoreError.closed`) and the next `dao(...)` opens it again.
final class DAODatabases: Sendable {
    static let shared = DAODatabases()
    private let folders = Locked<[String: DatabaseFolder]>([:])

    /// One database folder's store.
    final class DatabaseFolder: LiveStorage {
        let path: URL
        let store: LogStore
        private let registry: DAODatabases

        init(path: URL, store: LogStore, registry: DAODatabases) {
            self.path = path
            self.store = store
            self.registry = registry
        }

        func invalidate() {
            try? store.close()
            registry.forget(self)
        }
    }

    func store(at path: URL, options: LogStore.Options) throws -> LogStore {
        let key = LivePaths.key(path)
        return try folders.withLock { folders in
            if let folder = folders[key] { return folder.store }
            try FileManager.default.createDirectory(at: path, withIntermediateDirectories: true)
            let store = try LogStore(directory: path, options: options)
            let folder = DatabaseFolder(path: path, store: store, registry: self)
            do {
                try LivePaths.claim(path, for: folder)
            } catch {
                try? store.close()
                throw error
            }
            folders[key] = folder
            return store
        }
    }

    private func forget(_ folder: DatabaseFolder) {
        folders.withLock { folders in
            let key = LivePaths.key(folder.path)
            if folders[key] === folder { folders.removeValue(forKey: key) }
        }
        LivePaths.release(folder.path, by: folder)
    }
}
