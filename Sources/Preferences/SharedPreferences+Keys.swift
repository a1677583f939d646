import DAO
import Foundation
import LogStore

extension SharedPreferences {
    /// The keys of `business`, sorted by their UTF-8 bytes. Empty when the business holds none
    /// or the store is closed.
    public func allKeys(business: String) -> [String] {
        do { return try keys(business: business) } catch {
            PreferencesLog.info("listing \(business): \(error)")
            return []
        }
    }

    func keys(business: String) throws -> [String] {
        guard let space = try existingSpace(business) else { return [] }
        return try store().keys(space: space).compactMap { String(validating: $0, as: UTF8.self) }
    }

    /// Every key of `business` with its value as `object(forKey:)` returns it; values that need
    /// a custom crypt, or do not decode, are left out.
    public func dictionary(business: String) -> [String: Any] {
        var result: [String: Any] = [:]
        for key in allKeys(business: business) {
            if let value = object(forKey: key, business: business) { result[key] = value }
        }
        return result
    }

    /// Deletes `key` from `business`. Deleting an absent key is not an error.
    public func removeObject(forKey key: String, business: String) throws {
        guard let space = try existingSpace(business) else {
            _ = try store()   // a closed or failed store still throws
            return
        }
        try store().delete(forKey: Array(key.utf8), space: space)
        broadcaster.publish(key, business: business)
    }

    /// Deletes, in one atomic batch, every key of `business` that matches the SQLite LIKE
    /// `pattern` (`%`, `_`, ASCII case-insensitive; see `LikePattern`).
    public func removeObjects(like pattern: String, business: String) throws {
        let like = LikePattern(pattern)
        try removeKeys(business: business) { like.matches($0) }
    }

    /// Deletes every key of `business` in one atomic batch; `changes` yields each.
    public func removeAll(business: String) throws {
        try removeKeys(business: business) { _ in true }
    }

    private func removeKeys(business: String, where shouldRemove: (String) -> Bool) throws {
        let store = try store()
        // Refused even when nothing is listed: after a failed fsync a put that threw may still
        // be on disk, and this removal must not be acknowledged without deleting it.
        try store.checkNoFailedSync()
        guard let space = try existingSpace(business) else { return }
        var batch = LogStore.WriteBatch()
        var removed: [String] = []
        for rawKey in try store.keys(space: space) {
            guard let key = String(validating: rawKey, as: UTF8.self) else { continue }
            guard shouldRemove(key) else { continue }
            batch.delete(forKey: rawKey, space: space)
            removed.append(key)
        }
        guard batch.count > 0 else { return }
        try store.write(batch)
        for key in removed { broadcaster.publish(key, business: business) }
    }

    /// True when `business` holds `key` (whatever its crypt).
    public func contains(_ key: String, business: String) -> Bool {
        do {
            return try rawValue(forKey: key, business: business, crypt: nil) != nil
        } catch StoreError.cryptRequired {
            return true
        } catch {
            return false
        }
    }

    /// Forces every write so far onto stable storage.
    public func sync() throws {
        try store().sync()
    }

    /// The keys set or removed in `business` from now on (through this object or any other
    /// handle of the same store obtained from the same DataCenter or CustomStorage).
    /// `removeAll` and `removeObjects(like:)` yield each removed key. The stream ends when the
    /// store is closed (user switch, `reset()`).
    public func changes(business: String) -> AsyncStream<String> {
        broadcaster.stream(business: business)
    }
}
