import Foundation
import LogStore

// Hooks for the Files layer (module Files sits on Preferences): the options a storage's files
// are written with (its default key and durability) and the user its per-user files follow.

extension DataCenter {
    /// The options this DataCenter's stores open with: the files of its file storage use the
    /// same default key and durability.
    package var storageOptions: LogStore.Options { storeOptions }

    /// The folder name of `userId`'s data (`user-<FNV-1a 64 hex>`), as the preference stores use.
    package static func userFolderName(_ userId: String) -> String { StoreSet.folderName(forUser: userId) }
}

extension CustomStorage {
    /// The options this storage's stores open with (the DataCenter's key and durability).
    package var storageOptions: LogStore.Options { stores.options }

    /// The current user of the DataCenter this storage follows; nil when none is set (or the
    /// DataCenter is gone).
    package var followedUserId: String? { center.value?.currentUserId }
}
