import Foundation
import LogStore

/// Something that owns a storage folder in this process (a DataCenter root or a CustomStorage
/// path) and can be closed when a `DataCenter.reset()` wipes the folder under it.
protocol LiveStorage: AnyObject, Sendable {
    /// Closes every store of the folder: handles obtained before throw `StoreError.closed`.
    func invalidate()
}

/// The folders owned by live DataCenters and CustomStorages in this process, so a second owner
/// of the same folder gets `StoreError.alreadyOpen` instead of a lock error from a store.
enum LivePaths {
    private final class Entry: @unchecked Sendable {
        weak var owner: (any LiveStorage)?
        init(_ owner: any LiveStorage) { self.owner = owner }
    }

    private static let entries = Locked<[String: Entry]>([:])

    /// The canonical spelling of `url` used as the registry's key.
    static func key(_ url: URL) -> String {
        url.standardizedFileURL.resolvingSymlinksInPath().path
    }

    /// Records `owner` as the owner of `url`.
    /// - Throws: `StoreError.alreadyOpen` when another live owner holds it.
    static func claim(_ url: URL, for owner: any LiveStorage) throws {
        let key = key(url)
        try entries.withLock { entries in
            if let existing = entries[key]?.owner, existing !== owner { throw StoreError.alreadyOpen(url) }
            entries[key] = Entry(owner)
        }
    }

    /// The live owner of `url`, if any.
    static func owner(of url: URL) -> (any LiveStorage)? {
        entries.withLock { $0[key(url)]?.owner }
    }

    /// Forgets `url` if `owner` holds it.
    static func release(_ url: URL, by owner: AnyObject) {
        let key = key(url)
        entries.withLock { entries in
            if let entry = entries[key], entry.owner == nil || entry.owner === owner { entries.removeValue(forKey: key) }
        }
    }

    /// The live owners of `root` itself and of every folder inside it.
    static func owners(under root: URL) -> [any LiveStorage] {
        let prefix = key(root)
        return entries.withLock { entries in
            entries.compactMap { path, entry in
                (path == prefix || path.hasPrefix(prefix + "/")) ? entry.owner : nil
            }
        }
    }
}
