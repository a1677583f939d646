// swift-tools-version:6.0
import PackageDescription

let package = Package(
    name: "UnifiedStorage",
    products: [
        .library(name: "LogStore", targets: ["LogStore"]),
        .library(name: "Preferences", targets: ["Preferences"]),
        .library(name: "UnifiedStorage", targets: ["UnifiedStorage"]),
        .executable(name: "ustore", targets: ["ustore"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.5.0"),
        .package(url: "https://github.com/apple/swift-log", from: "1.5.0"),
    ],
    targets: [
        // CRC-32C (SSE4.2 when the CPU has it) and the stable 64-bit key hash.
        .target(name: "CChecksum"),
        .systemLibrary(name: "CZstd", pkgConfig: "libzstd", providers: [.apt(["libzstd-dev"])]),
        .systemLibrary(name: "COpenSSL", pkgConfig: "libcrypto", providers: [.apt(["libssl-dev"])]),
        .target(name: "LogStore", dependencies: ["CChecksum", "CZstd", "COpenSSL"]),
        // Typed key-value preferences, DataCenter, CustomStorage and user spaces. DESIGN puts it on
        // DAO; until DAO lands it sits on LogStore directly.
        .target(name: "Preferences", dependencies: ["LogStore", .product(name: "Logging", package: "swift-log")]),
        .target(name: "UnifiedStorage", dependencies: ["LogStore", "Preferences"]),
        .executableTarget(
            name: "ustore",
            dependencies: ["UnifiedStorage", .product(name: "ArgumentParser", package: "swift-argument-parser")]
        ),
        // The child process of the crash tests: writes, prints what it acknowledged, gets killed.
        .executableTarget(name: "logstore-crash-writer", dependencies: ["LogStore"], path: "Tests/CrashWriter"),
        .testTarget(name: "LogStoreTests", dependencies: ["LogStore", "CChecksum", "logstore-crash-writer"]),
        .testTarget(name: "PreferencesTests", dependencies: ["Preferences", "LogStore", "UnifiedStorage"]),
        .testTarget(name: "UstoreTests", dependencies: ["ustore", "LogStore"]),
    ],
    swiftLanguageModes: [.v6]
)
