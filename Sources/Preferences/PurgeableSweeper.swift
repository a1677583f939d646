import Foundation

/// Cleans one purgeable folder: files older than the folder's age limit go, then, while the
/// folder is over its size limit, the oldest files until it is at half the limit; directories
/// left empty go too. The registered folder itself always stays. Files age by modification time
/// (API.md); over the size limit the oldest by creation time go first, as the source says
/// (modification time where the file system records no creation time).
struct PurgeableSweeper: Sendable {
    /// The registered folder.
    let folder: URL
    /// Files modified before this go; nil keeps files of any age.
    let cutoff: Date?
    /// The size limit in bytes; 0 for none.
    let sizeLimit: Int

    private struct File {
        let url: URL
        let modified: Date
        let created: Date
        let size: Int
    }

    /// Sweeps the folder. Returns the bytes freed.
    @discardableResult
    func run() -> Int {
        var files = listFiles()
        var freed = 0
        if let cutoff {
            files.removeAll { file in
                guard file.modified < cutoff else { return false }
                if remove(file.url) { freed += file.size }
                return true
            }
        }
        if sizeLimit > 0 {
            var total = files.reduce(0) { $0 + $1.size }
            if total > sizeLimit {
                for file in files.sorted(by: { ($0.created, $0.url.path) < ($1.created, $1.url.path) }) where total > sizeLimit / 2 {
                    if remove(file.url) {
                        total -= file.size
                        freed += file.size
                    }
                }
            }
        }
        removeEmptyDirectories()
        return freed
    }

    /// Deletes everything inside the folder, keeping the folder. Returns the bytes freed.
    @discardableResult
    func empty() -> Int {
        let freed = listFiles().reduce(0) { $0 + $1.size }
        let children = (try? FileManager.default.contentsOfDirectory(at: folder, includingPropertiesForKeys: nil)) ?? []
        for child in children { _ = remove(child) }
        return freed
    }

    private func listFiles() -> [File] {
        let keys: [URLResourceKey] = [.isRegularFileKey, .contentModificationDateKey, .creationDateKey, .fileSizeKey]
        guard let enumerator = FileManager.default.enumerator(at: folder, includingPropertiesForKeys: keys) else { return [] }
        var files: [File] = []
        for case let url as URL in enumerator {
            guard let values = try? url.resourceValues(forKeys: Set(keys)), values.isRegularFile == true else { continue }
            let modified = values.contentModificationDate ?? .distantPast
            files.append(File(url: url, modified: modified, created: values.creationDate ?? modified, size: values.fileSize ?? 0))
        }
        return files
    }

    private func remove(_ url: URL) -> Bool {
        do {
            try FileManager.default.removeItem(at: url)
            return true
        } catch {
            PreferencesLog.info("purgeable sweep: removing \(url.path): \(error)")
            return false
        }
    }

    /// Removes directories under the folder that hold nothing, deepest first.
    private func removeEmptyDirectories() {
        guard let enumerator = FileManager.default.enumerator(at: folder, includingPropertiesForKeys: [.isDirectoryKey]) else { return }
        var directories: [URL] = []
        for case let url as URL in enumerator where (try? url.resourceValues(forKeys: [.isDirectoryKey]))?.isDirectory == true {
            directories.append(url)
        }
        for directory in directories.sorted(by: { $0.path.count > $1.path.count }) {
            if (try? FileManager.default.contentsOfDirectory(atPath: directory.path))?.isEmpty == true {
                _ = remove(directory)
            }
        }
    }
}
