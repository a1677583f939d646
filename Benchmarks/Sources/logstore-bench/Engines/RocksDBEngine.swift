import Foundation

/// RocksDB through Debian's librocksdb (librocksdb.so.<version>, loaded at run time) and its
/// C API, default options (the run prints the compression and buffer sizes it found in the
/// OPTIONS file RocksDB writes).
enum RocksDBFlavor: LSMFlavor {
    static let name = "RocksDB"
    static let library = LazyLibrary<LSMAPI> {
        LSMAPI.load(sonames: [], globPrefix: "librocksdb.so.", fallbacks: ["librocksdb.so"], prefix: "rocksdb_")
    }
}

typealias RocksDBEngine = LSMEngine<RocksDBFlavor>

extension LSMEngine where Flavor == RocksDBFlavor {
    static var name: String { RocksDBFlavor.name }

    static func probe() -> Result<String, BenchError> {
        RocksDBFlavor.library.result.map(\.path)
    }

    static func settings(durability: Durability) -> String {
        let sync = durability == .fsync ? "WriteOptions.sync=true (WAL fsynced at every write; concurrent writers grouped)"
                                        : "WriteOptions.sync=false (WAL written, not synced)"
        return "\(sync), default options (level compaction, 64 MiB write buffer, compression as its OPTIONS file says: see put), " +
            "one call per operation, a handle shared by all threads"
    }

    /// The lines of the newest OPTIONS-* file RocksDB wrote in `directory` that name the
    /// compression and the write buffer, e.g. "compression=kSnappyCompression".
    static func optionsInUse(in directory: URL) -> String? {
        let names = (try? FileManager.default.contentsOfDirectory(atPath: directory.path)) ?? []
        guard let file = names.filter({ $0.hasPrefix("OPTIONS-") }).sorted().last,
              let text = try? String(contentsOf: directory.appendingPathComponent(file), encoding: .utf8) else { return nil }
        var wanted: [String] = []
        var inDefaultFamily = false
        for raw in text.split(separator: "\n") {
            let line = raw.trimmingCharacters(in: .whitespaces)
            if line.hasPrefix("[") { inDefaultFamily = line.contains("CFOptions \"default\"") || line.contains("TableOptions/BlockBasedTable \"default\"") }
            guard inDefaultFamily else { continue }
            for key in ["compression=", "write_buffer_size=", "block_size=", "filter_policy="] where line.hasPrefix(key) {
                wanted.append(line)
            }
        }
        return wanted.isEmpty ? nil : wanted.joined(separator: ", ")
    }
}
