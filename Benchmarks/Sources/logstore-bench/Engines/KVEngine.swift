import Foundation

/// A key-value engine under test. One conforming type per engine, in a file of its own: adding
/// a peer (SQLite, LMDB, LevelDB, ...) means adding one such type and listing it in
/// `EngineRegistry`; the workloads, the table and the JSON are shared.
///
/// Every call is made from one thread. An instance is used between `init` and `close()` only;
/// the reopen workload closes it and creates a new one on the same directory.
protocol KVEngine {
    /// Name in tables and in the JSON `engine` field.
    static var name: String { get }

    /// Opens the store in `directory`, creating it when it does not exist yet, with the
    /// engine's default (process-crash-safe, or the nearest it has) durability.
    init(directory: URL) throws

    /// Stores `value` under `key`, replacing any earlier value.
    mutating func put(_ key: [UInt8], _ value: [UInt8]) throws

    /// The value of `key`, copied out of the engine; nil when absent.
    mutating func get(_ key: [UInt8]) throws -> [UInt8]?

    /// Reclaims the space of overwritten values, synchronously. Engines that do it on their own
    /// (or cannot be asked) may do nothing.
    mutating func compact() throws

    /// Flushes what the engine keeps for a clean reopen and releases the store.
    mutating func close() throws

    /// Bytes of the engine's in-memory index, when it reports them.
    var indexMemoryBytes: Int? { get }

    /// A one-line description of the engine's own counters (segments, live/dead bytes ...).
    var statisticsSummary: String? { get }

    /// Removes, in a closed store's `directory`, whatever the engine keeps only to reopen fast
    /// (LogStore's index snapshot), so the next open is a cold one. Returns a label for that
    /// cold open, or nil when the engine keeps nothing of the kind (no cold row is reported).
    static func removeReopenAccelerators(in directory: URL) throws -> String?
}

extension KVEngine {
    var indexMemoryBytes: Int? { nil }
    var statisticsSummary: String? { nil }
    mutating func compact() throws {}
    static func removeReopenAccelerators(in directory: URL) throws -> String? { nil }
}

/// The engines the harness knows. Each entry runs the whole benchmark on one concrete engine
/// type (so the workloads are specialized for it); a peer is one more line here.
enum EngineRegistry {
    static let all: [(name: String, run: @Sendable (BenchConfig) throws -> RunReport)] = [
        (LogStoreEngine.name, { try BenchmarkRunner<LogStoreEngine>(config: $0).run() }),
    ]

    static var names: [String] { all.map(\.name) }

    /// Runs the benchmark on the engine named `engine` (case-insensitive).
    static func run(engine: String, config: BenchConfig) throws -> RunReport {
        guard let entry = all.first(where: { $0.name.lowercased() == engine.lowercased() }) else {
            throw BenchError.usage("unknown engine \(engine); known: \(names.joined(separator: ", "))")
        }
        return try entry.run(config)
    }
}
