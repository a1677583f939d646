#if canImport(Glibc)
import Glibc
#endif
import Foundation

/// The regular files under a directory (recursively) with their sizes.
struct DiskUsage {
    struct File {
        /// Path relative to the directory.
        var name: String
        /// Apparent size (st_size): what `bytes_on_disk` reports.
        var bytes: Int
        /// Blocks allocated (st_blocks * 512).
        var allocatedBytes: Int
    }

    var files: [File]

    var totalBytes: Int { files.reduce(0) { $0 + $1.bytes } }
    var totalAllocatedBytes: Int { files.reduce(0) { $0 + $1.allocatedBytes } }

    static func of(directory: URL) throws -> DiskUsage {
        var files: [File] = []
        func scan(_ path: String, _ prefix: String) throws {
            for name in try FileManager.default.contentsOfDirectory(atPath: path).sorted() {
                var info = stat()
                let full = path + "/" + name
                guard lstat(full, &info) == 0 else { continue }
                if (info.st_mode & S_IFMT) == S_IFDIR {
                    try scan(full, prefix + name + "/")
                } else if (info.st_mode & S_IFMT) == S_IFREG {
                    files.append(File(name: prefix + name, bytes: Int(info.st_size), allocatedBytes: Int(info.st_blocks) * 512))
                }
            }
        }
        try scan(directory.path, "")
        return DiskUsage(files: files)
    }

    /// Sizes summed per kind: by extension (`*.seg`), by name without its digits for files
    /// without one (`MANIFEST-000005` -> `MANIFEST-*`).
    var byKind: [(kind: String, count: Int, bytes: Int)] {
        var kinds: [String: (count: Int, bytes: Int)] = [:]
        for file in files {
            let base = file.name.split(separator: "/").last.map(String.init) ?? file.name
            let kind: String
            if let dot = base.lastIndex(of: "."), dot != base.startIndex, !base[base.index(after: dot)...].allSatisfy(\.isNumber) {
                kind = "*" + base[dot...]
            } else {
                var collapsed = ""
                for c in base where !(c.isNumber && collapsed.last == "*") { collapsed.append(c.isNumber ? "*" : c) }
                kind = collapsed
            }
            kinds[kind, default: (0, 0)].count += 1
            kinds[kind, default: (0, 0)].bytes += file.bytes
        }
        return kinds.sorted { $0.key < $1.key }.map { ($0.key, $0.value.count, $0.value.bytes) }
    }

    /// "123.4 MiB in 5 files (2 *.seg 120.0 MiB, ...)".
    var summary: String {
        "\(Format.bytes(totalBytes)) in \(files.count) files (" +
            byKind.map { "\($0.count) \($0.kind) \(Format.bytes($0.bytes))" }.joined(separator: ", ") + ")"
    }
}
