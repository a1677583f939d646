import Foundation

/// Foundation's `UserDefaults` with a suite named by an absolute path, so its plist lives in
/// the store directory (`prefs.plist`): `set(Data, forKey: String)`, `data(forKey:)`,
/// `removeObject(forKey:)`, `synchronize()` at close.
///
/// A preferences store, not a database: each `set` costs time growing with the number of keys
/// (here ~8k sets/s at 500 keys, ~0.9k/s at 8,000), so it runs with at most `keyCap` keys. On
/// Linux nothing reaches the disk before `synchronize()`: writes since the last one are lost
/// if the process dies, so it is not in the process-crash-safe class (calling `synchronize()`
/// per set would rewrite the whole plist every time).
final class UserDefaultsEngine: KVEngine {
    static let name = "UserDefaults"
    static let keyCap = 5_000
    static let quickKeyCap = 1_000
    static let suiteFile = "prefs"
    static let settings = "suite at <store>/\(suiteFile).plist, Data values under String keys, synchronize() at close only " +
        "(NOT process-crash-safe: unsynchronized sets die with the process), at most \(keyCap) keys (\(quickKeyCap) with --quick): " +
        "every set costs time proportional to the keys already there; " +
        "a key removed after a reopen still reads back until synchronize() (swift-corelibs-foundation), so the delete check synchronizes first"

    private let defaults: UserDefaults
    private let owner: Bool
    private var closed = false

    init(directory: URL, config: EngineConfig) throws {
        let suite = directory.appendingPathComponent(Self.suiteFile).path
        guard let defaults = UserDefaults(suiteName: suite) else { throw BenchError.engine("UserDefaults(suiteName: \(suite)) is nil") }
        self.defaults = defaults
        owner = true
    }

    init(sharing other: UserDefaultsEngine) throws {
        defaults = other.defaults
        owner = false
    }

    @inline(__always)
    private func name(_ key: [UInt8]) -> String { String(decoding: key, as: UTF8.self) }

    func put(_ key: [UInt8], _ value: [UInt8]) throws {
        defaults.set(Data(value), forKey: name(key))
    }

    func get(_ key: [UInt8]) throws -> [UInt8]? {
        defaults.data(forKey: name(key)).map { [UInt8]($0) }
    }

    func delete(_ key: [UInt8]) throws {
        defaults.removeObject(forKey: name(key))
    }

    /// swift-corelibs-foundation: after `removeObject(forKey:)` on an instance whose values were
    /// loaded from the plist (after a reopen), `data(forKey:)` still returns the old value until
    /// `synchronize()`. The delete workload's absence check calls this first (untimed).
    func settle() throws {
        _ = defaults.synchronize()
    }

    func close() throws {
        guard !closed else { return }
        closed = true
        if owner { _ = defaults.synchronize() }
    }
}
