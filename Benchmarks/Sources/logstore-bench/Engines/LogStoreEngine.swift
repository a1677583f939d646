import Foundation
import LogStore

/// UnifiedStorage's `LogStore` with its default options (process-crash-safe durability,
/// 64 MiB segments, background compaction at 50% dead bytes).
struct LogStoreEngine: KVEngine {
    static let name = "LogStore"
    /// The index snapshot written at close; without it an open scans every segment.
    static let snapshotFileName = "index.snapshot"

    private let store: LogStore

    init(directory: URL) throws {
        store = try LogStore(directory: directory)
    }

    @inline(__always)
    mutating func put(_ key: [UInt8], _ value: [UInt8]) throws {
        try store.put(value, forKey: key)
    }

    @inline(__always)
    mutating func get(_ key: [UInt8]) throws -> [UInt8]? {
        try store.get(forKey: key)
    }

    mutating func compact() throws {
        try store.compact()
    }

    mutating func close() throws {
        try store.close()
    }

    var indexMemoryBytes: Int? { store.statistics.keydirBytes }

    var statisticsSummary: String? {
        let s = store.statistics
        return "keys \(s.liveKeys), segments \(s.segmentCount) (\(Format.bytes(s.segmentBytes))), " +
            "live \(Format.bytes(s.liveBytes)), dead \(Format.bytes(s.deadBytes)), " +
            "keydir \(Format.bytes(s.keydirBytes)), compactions \(s.compactions)"
    }

    static func removeReopenAccelerators(in directory: URL) throws -> String? {
        let path = directory.appendingPathComponent(snapshotFileName).path
        if FileManager.default.fileExists(atPath: path) {
            try FileManager.default.removeItem(atPath: path)
        }
        return "reopen (cold: \(snapshotFileName) removed, full scan)"
    }
}
