// swift-tools-version:6.0
import PackageDescription

// libFuzzer targets, a package of their own: each executable is built only with
// `-sanitize=fuzzer` (libFuzzer supplies `main`). Run them with scripts/fuzz.sh.
let package = Package(
    name: "Fuzz",
    dependencies: [
        .package(name: "UnifiedStorage", path: ".."),
    ],
    targets: [
        // The record reader over arbitrary segment bytes (scanner, resync, batches, zstd).
        .executableTarget(name: "fuzz-records", dependencies: [.product(name: "LogStore", package: "UnifiedStorage")]),
        // Index snapshot, segment header and compaction commit decoding.
        .executableTarget(name: "fuzz-snapshot", dependencies: [.product(name: "LogStore", package: "UnifiedStorage")]),
        // The SQL parser.
        .executableTarget(name: "fuzz-sql", dependencies: [.product(name: "DAO", package: "UnifiedStorage")]),
        // SQL statements executed on a small database (evaluator, planner, indexes, constraints).
        .executableTarget(name: "fuzz-sql-exec", dependencies: [.product(name: "DAO", package: "UnifiedStorage"),
                                                                 .product(name: "LogStore", package: "UnifiedStorage")]),
        // The XML DAO config loader.
        .executableTarget(name: "fuzz-config", dependencies: [.product(name: "DAO", package: "UnifiedStorage")]),
        // The expression language of `<if>`.
        .executableTarget(name: "fuzz-expression", dependencies: [.product(name: "DAO", package: "UnifiedStorage")]),
    ],
    swiftLanguageModes: [.v6]
)
