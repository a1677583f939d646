// swift-tools-version:6.0
import PackageDescription

// The benchmark harness, a package of its own so the engine's package stays free of it.
// Build and run in release: `swift run -c release logstore-bench --help`.
let package = Package(
    name: "Benchmarks",
    dependencies: [
        .package(name: "UnifiedStorage", path: ".."),
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.5.0"),
        // The peer of grdb-bench only: nothing else here (and nothing in the product) links it,
        // so CI's `swift run logstore-bench` does not build it.
        .package(url: "https://github.com/groue/GRDB.swift", from: "7.10.0"),
    ],
    targets: [
        // The dlopen loader of peer engines and the harness's error type, shared by the executables.
        .target(name: "BenchSupport"),
        .executableTarget(
            name: "logstore-bench",
            dependencies: [
                "BenchSupport",
                .product(name: "LogStore", package: "UnifiedStorage"),
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ]
        ),
        // The Preferences layer's figures (issue 5): typed sets/gets and user switching.
        .executableTarget(
            name: "prefs-bench",
            dependencies: ["BenchSupport", .product(name: "Preferences", package: "UnifiedStorage")]
        ),
        // The SQL engine's figures (issue 7) against SQLite: `swift run -c release sql-bench`.
        .executableTarget(
            name: "sql-bench",
            dependencies: [
                "BenchSupport",
                .product(name: "DAO", package: "UnifiedStorage"),
                .product(name: "LogStore", package: "UnifiedStorage"),
            ]
        ),
        // The Caches layer's figures (issue 6): memory and disk caches, file arrays, each beside its peer.
        .executableTarget(
            name: "cache-bench",
            dependencies: [
                "BenchSupport",
                .product(name: "Caches", package: "UnifiedStorage"),
                .product(name: "Preferences", package: "UnifiedStorage"),
            ]
        ),
        // The typed Dao and SQLDatabase beside GRDB's Codable records and SQL API (issue 18):
        // `swift run -c release grdb-bench`. Its own executable so CI's harness build skips GRDB.
        .executableTarget(
            name: "grdb-bench",
            dependencies: [
                "BenchSupport",
                .product(name: "DAO", package: "UnifiedStorage"),
                .product(name: "LogStore", package: "UnifiedStorage"),
                .product(name: "GRDB", package: "GRDB.swift"),
            ]
        ),
        // The Files module's figures (issue 23): plain and encrypted files beside FileHandle I/O.
        .executableTarget(
            name: "files-bench",
            dependencies: [.product(name: "Files", package: "UnifiedStorage")]
        ),
    ],
    swiftLanguageModes: [.v6]
)
