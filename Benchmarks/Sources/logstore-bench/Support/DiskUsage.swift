#if canImport(Glibc)
import Glibc
#endif
import Foundation

/// The regular files of a directory (not recursive) with their sizes.
struct DiskUsage {
    struct File {
        var name: String
        /// Apparent size (st_size).
        var bytes: Int
        /// Blocks allocated (st_blocks * 512), which fallocate'd space counts in.
        var allocatedBytes: Int
    }

    var files: [File]

    var totalBytes: Int { files.reduce(0) { $0 + $1.bytes } }
    var totalAllocatedBytes: Int { files.reduce(0) { $0 + $1.allocatedBytes } }

    static func of(directory: URL) throws -> DiskUsage {
        var files: [File] = []
        for name in try FileManager.default.contentsOfDirectory(atPath: directory.path).sorted() {
            var info = stat()
            let path = directory.appendingPathComponent(name).path
            guard stat(path, &info) == 0, (info.st_mode & S_IFMT) == S_IFREG else { continue }
            files.append(File(name: name, bytes: Int(info.st_size), allocatedBytes: Int(info.st_blocks) * 512))
        }
        return DiskUsage(files: files)
    }

    /// Sizes summed per kind: by extension (`.seg`) or whole name for files without one.
    var byKind: [(kind: String, count: Int, bytes: Int)] {
        var kinds: [String: (count: Int, bytes: Int)] = [:]
        for file in files {
            let kind = file.name.contains(".") ? "*." + file.name.split(separator: ".").last! : file.name
            kinds[kind, default: (0, 0)].count += 1
            kinds[kind, default: (0, 0)].bytes += file.bytes
        }
        return kinds.sorted { $0.key < $1.key }.map { ($0.key, $0.value.count, $0.value.bytes) }
    }
}
