import Foundation

extension DataCenter {
    /// `<root>/Documents/Preferences`: the source keeps APDataCenter's default storage in the
    /// sandbox's `Documents/Preferences` (seed 000, 4.2), beside the custom storages of
    /// `CustomStorage.named(_:)` in `Documents/<name>`.
    static func preferencesFolder(root: URL) -> URL {
        root.appendingPathComponent("Documents", isDirectory: true).appendingPathComponent("Preferences", isDirectory: true)
    }

    /// Stores written before format 2 of the DataCenter layout kept the preferences folder at
    /// `<root>/Preferences`. When that folder exists and the new one does not, it is renamed
    /// into place (one rename, atomic: a crash leaves one of the two) before any store opens.
    /// A failure is logged; the DataCenter then starts with an empty preferences folder and the
    /// old one stays where it was.
    static func moveLegacyPreferencesFolder(root: URL, to folder: URL) {
        let legacy = root.appendingPathComponent("Preferences", isDirectory: true)
        let files = FileManager.default
        var isDirectory: ObjCBool = false
        guard files.fileExists(atPath: legacy.path, isDirectory: &isDirectory), isDirectory.boolValue,
              !files.fileExists(atPath: folder.path) else { return }
        do {
            try files.createDirectory(at: folder.deletingLastPathComponent(), withIntermediateDirectories: true)
            try files.moveItem(at: legacy, to: folder)
        } catch {
            PreferencesLog.warning("moving \(legacy.path) to \(folder.path): \(error)")
        }
    }
}
