import Foundation
import LogStore
import Preferences

extension DataCenter {
    /// A file storage of this DataCenter (the source's `ZFile` for `.internal`, under
    /// `<root>/Files`; `ZExternalFile` for `.external(folder)`), writing encrypted files with
    /// the DataCenter's default key and syncing per its durability. With `userDependent` its
    /// names resolve in the current user's folder, following `setCurrentUserId`.
    /// Removes temporary files a crash left under the location.
    /// - Throws: `StoreError.io` when the folder cannot be created.
    public func fileStorage(_ location: FileStorage.Location = .internal, userDependent: Bool = false) throws -> FileStorage {
        try FileStorage(storageFolder: storageRoot, location: location, userDependent: userDependent, storeOptions: storageOptions,
                        currentUser: { [weak self] in self?.currentUserId })
    }
}

extension CustomStorage {
    /// A file storage of this storage: `.internal` under `<path>/Files`, `.external(folder)`
    /// under the folder; keyed, synced and following users as the DataCenter it was made under.
    /// - Throws: `StoreError.io` when the folder cannot be created.
    public func fileStorage(_ location: FileStorage.Location = .internal, userDependent: Bool = false) throws -> FileStorage {
        try FileStorage(storageFolder: path, location: location, userDependent: userDependent, storeOptions: storageOptions,
                        currentUser: { [weak self] in self?.followedUserId })
    }
}

extension FileStorage {
    /// The file storage of a DataCenter or CustomStorage whose folder is `storageFolder`:
    /// `.internal` is `<storageFolder>/Files`, `.external(folder)` the folder; the key and
    /// durability are those of the storage's stores.
    convenience init(storageFolder: URL, location: Location, userDependent: Bool, storeOptions: LogStore.Options,
                     currentUser: @escaping @Sendable () -> String?) throws {
        let base: URL
        switch location {
        case .internal: base = storageFolder.appendingPathComponent("Files", isDirectory: true)
        case .external(let folder): base = folder
        }
        let options = Options(key: storeOptions.encryption?.key, durability: storeOptions.durability)
        try self.init(base: base, location: location, userDependent: userDependent, options: options, currentUser: currentUser)
    }
}
