import Foundation
import LogStore

// Hooks for the Caches layer (module Caches sits on Preferences): the stores its caches and
// file arrays live in, the storage root the cache cleaner works under, and the removal of
// purgeable preference values for its clean-preferences task.

extension DataCenter {
    /// The storage root (every path of `PurgeablePath` and the cache cleaner is inside it).
    public var storageRoot: URL { root }

    /// The store a cache or file array of this DataCenter writes to: the common store, or with
    /// `userDependent` the current user's (it changes with `setCurrentUserId`; callers that
    /// follow the user ask again on every call and compare identities).
    /// - Throws: `StoreError.noCurrentUser` when `userDependent` and no user is set; the error
    ///   that kept the store from opening; `StoreError.closed` after `configure` replaced it.
    public func logStore(userDependent: Bool) throws -> LogStore {
        try logStoreLocation(userDependent: userDependent).store
    }

    /// `logStore(userDependent:)` with the store's folder and whether it compresses values
    /// (file arrays keep large plain files beside the store when it does not).
    /// - Throws: as `logStore(userDependent:)`.
    public func logStoreLocation(userDependent: Bool) throws -> (store: LogStore, directory: URL, compresses: Bool) {
        let preferences: SharedPreferences
        if userDependent {
            guard let user = userPreferences else { throw StoreError.noCurrentUser }
            preferences = user
        } else {
            preferences = commonPreferences
        }
        return (try preferences.store(), preferences.directory, storeOptions.compression != nil)
    }

    /// Deletes every live preference value written with `DataOptions.purgeable`, in the common
    /// store and the current user's (the cache cleaner's `cleanDefaultPreferences` task).
    /// - Returns: the number of values deleted.
    /// - Throws: store errors (values deleted before the error stay deleted).
    @discardableResult
    public func removePurgeablePreferenceValues() throws -> Int {
        var preferencesList = [commonPreferences]
        if let user = userPreferences { preferencesList.append(user) }
        return try preferencesList.reduce(0) { $0 + (try $1.removePurgeableValues()) }
    }
}

extension CustomStorage {
    /// The store a cache or file array of this storage writes to: `common/`, or with
    /// `userDependent` the current user's (following switches as `userPreferences` does).
    /// - Throws: `StoreError.noCurrentUser` when `userDependent` and no user is set;
    ///   `StoreError.closed` after `close()`; the error that kept the store from opening.
    public func logStore(userDependent: Bool) throws -> LogStore {
        try logStoreLocation(userDependent: userDependent).store
    }

    /// `logStore(userDependent:)` with the store's folder and whether it compresses values.
    /// - Throws: as `logStore(userDependent:)`.
    public func logStoreLocation(userDependent: Bool) throws -> (store: LogStore, directory: URL, compresses: Bool) {
        let preferences: SharedPreferences
        if userDependent {
            guard let user = userPreferences else { throw StoreError.noCurrentUser }
            preferences = user.preferences
        } else {
            preferences = stores.common()
        }
        return (try preferences.store(), preferences.directory, stores.options.compression != nil)
    }
}

extension SharedPreferences {
    /// Deletes the live purgeable records of every preferences space ("prefs:*") of this store
    /// in one batch. Returns how many.
    func removePurgeableValues() throws -> Int {
        let store = try store()
        var businessOfSpace: [LogStore.KeySpace: String] = [:]
        for (name, space) in try store.namedSpaces() where name.hasPrefix("prefs:") {
            businessOfSpace[space] = String(name.dropFirst("prefs:".count))
        }
        guard !businessOfSpace.isEmpty else { return 0 }
        var batch = LogStore.WriteBatch()
        var keys: [(space: LogStore.KeySpace, key: [UInt8])] = []
        // The purgeable flag (FORMAT.md, "Records": 0x40) is only visible on the records.
        try store.forEachRecord { record in
            if record.isLive, !record.isTombstone, record.flags & 0x40 != 0, businessOfSpace[record.space] != nil {
                keys.append((record.space, record.key))
            }
        }
        for entry in keys { batch.delete(forKey: entry.key, space: entry.space) }
        if batch.count > 0 { try store.write(batch) }
        for (space, key) in keys {
            if let business = businessOfSpace[space], let name = String(validating: key, as: UTF8.self) {
                broadcaster.publish(name, business: business)
            }
        }
        return keys.count
    }
}
