import Foundation

/// LevelDB through Debian's libleveldb (libleveldb.so.1d, loaded at run time) and its C API,
/// default options: 4 MiB write buffer, 8 MiB block cache, 4 KiB blocks, Snappy compression
/// when the library has it, no Bloom filter.
enum LevelDBFlavor: LSMFlavor {
    static let name = "LevelDB"
    static let library = LazyLibrary<LSMAPI> {
        LSMAPI.load(sonames: ["libleveldb.so.1d", "libleveldb.so.1", "libleveldb.so"], globPrefix: "libleveldb.so.", prefix: "leveldb_")
    }
}

typealias LevelDBEngine = LSMEngine<LevelDBFlavor>

extension LSMEngine where Flavor == LevelDBFlavor {
    static var name: String { LevelDBFlavor.name }

    static func probe() -> Result<String, BenchError> {
        LevelDBFlavor.library.result.map { api in
            typealias Version = @convention(c) () -> Int32
            let major: Version? = api.library.optionalFunction("leveldb_major_version")
            let minor: Version? = api.library.optionalFunction("leveldb_minor_version")
            let version = major.flatMap { major in minor.map { "\(major()).\($0())" } } ?? "?"
            return "\(api.path), LevelDB \(version)"
        }
    }

    static func settings(durability: Durability) -> String {
        let sync = durability == .fsync ? "WriteOptions.sync=true (log fsynced at every write; concurrent writers grouped)"
                                        : "WriteOptions.sync=false (log written, not synced)"
        return "\(sync), default options (write buffer 4 MiB, block cache 8 MiB, 4 KiB blocks, Snappy, no Bloom filter), " +
            "one call per operation, a handle shared by all threads"
    }
}
