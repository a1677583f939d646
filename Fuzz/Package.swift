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
    ],
    swiftLanguageModes: [.v6]
)
