// swift-tools-version:6.0
import PackageDescription

let package = Package(
    name: "UnifiedStorage",
    products: [
        .library(name: "LogStore", targets: ["LogStore"]),
        .library(name: "DAO", targets: ["DAO"]),
        .library(name: "Preferences", targets: ["Preferences"]),
        .library(name: "Caches", targets: ["Caches"]),
        .library(name: "Files", targets: ["Files"]),
        .library(name: "UnifiedStorage", targets: ["UnifiedStorage"]),
        .executable(name: "ustore", targets: ["ustore"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.5.0"),
        .package(url: "https://github.com/apple/swift-log", from: "1.5.0"),
        // `swift package generate-documentation --target UnifiedStorage` (the DocC catalog in
        // Sources/UnifiedStorage/UnifiedStorage.docc); a plugin only, nothing links it.
        .package(url: "https://github.com/swiftlang/swift-docc-plugin", from: "1.5.0"),
    ],
    targets: [
        // CRC-32C (SSE4.2 when the CPU has it) and the stable 64-bit key hash.
        .target(name: "CChecksum"),
        .systemLibrary(name: "CZstd", pkgConfig: "libzstd", providers: [.apt(["libzstd-dev"])]),
        .systemLibrary(name: "COpenSSL", pkgConfig: "libcrypto", providers: [.apt(["libssl-dev"])]),
        // AES-256-GCM without EVP: VAES/VPCLMULQDQ for every length, or AES-NI with libcrypto's GHASH
        // (CRYPTO_gcm128_*) for short values.
        .target(name: "CAESGCM", dependencies: ["COpenSSL"]),
        .target(name: "LogStore", dependencies: ["CChecksum", "CZstd", "COpenSSL", "CAESGCM"]),
        // Tables as indexed record sets, the SQL subset, XML DAO configs and the typed Dao<T>.
        .target(name: "DAO", dependencies: ["LogStore", "CChecksum"]),
        // Typed key-value preferences, DataCenter, CustomStorage, user spaces, PurgeablePath.
        .target(name: "Preferences", dependencies: ["LogStore", "DAO", .product(name: "Logging", package: "swift-log")]),
        // LRU memory and disk caches, file and object arrays, the cache cleaner.
        .target(name: "Caches", dependencies: ["LogStore", "DAO", "Preferences", "CZstd", .product(name: "Logging", package: "swift-log")]),
        // File storage on real files (the Android side's ZFile/ZExternalFile), plain or segmented AES-256-GCM.
        .target(name: "Files", dependencies: ["LogStore", "Preferences"]),
        .target(name: "UnifiedStorage", dependencies: ["LogStore", "DAO", "Preferences", "Caches", "Files"]),
        // SQLite 3 for tests only (the oracle of the SQL subset). No product target depends on it.
        .systemLibrary(name: "CSQLite", pkgConfig: "sqlite3", providers: [.apt(["libsqlite3-dev"])]),
        .executableTarget(
            name: "ustore",
            dependencies: ["UnifiedStorage", .product(name: "ArgumentParser", package: "swift-argument-parser")]
        ),
        // Every layer once, on a fresh root (scripts/demo.sh runs it).
        .executableTarget(name: "unified-demo", dependencies: ["UnifiedStorage"]),
        // The child process of the crash tests: writes, prints what it acknowledged, gets killed.
        .executableTarget(name: "logstore-crash-writer", dependencies: ["LogStore", "DAO", "Preferences", "Caches", "Files"], path: "Tests/CrashWriter"),
        // What the kill -9 and fault-injection tests of every module share (tests only).
        .target(name: "CrashTestSupport", dependencies: ["LogStore"], path: "Tests/CrashTestSupport"),
        .testTarget(name: "LogStoreTests", dependencies: ["LogStore", "CChecksum", "logstore-crash-writer", "CrashTestSupport"]),
        .testTarget(name: "DAOTests", dependencies: ["DAO", "LogStore", "CSQLite", "COpenSSL", "logstore-crash-writer", "CrashTestSupport"]),
        .testTarget(name: "PreferencesTests", dependencies: ["Preferences", "LogStore", "UnifiedStorage"]),
        .testTarget(name: "CachesTests", dependencies: ["Caches", "Preferences", "LogStore", "UnifiedStorage", "logstore-crash-writer", "CrashTestSupport"]),
        .testTarget(name: "FilesTests", dependencies: ["Files", "Preferences", "LogStore", "Caches", "logstore-crash-writer", "CrashTestSupport"]),
        .testTarget(name: "UstoreTests", dependencies: ["ustore", "LogStore"]),
    ],
    swiftLanguageModes: [.v6]
)
