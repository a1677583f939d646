import Foundation

/// Sizes and settings of a run, handed to every child process as JSON.
struct BenchConfig: Codable, Sendable {
    var quick = false
    /// Keys of the 16 B and 100 B workloads, `reopen`, `compaction`, `mixed` and the 100 B
    /// encrypted ones (the issue's 1M).
    var keys = 1_000_000
    /// Keys of the 4 KiB workloads (the issue's 100k).
    var keys4KiB = 100_000
    /// Keys of the JSON-like compression workload (values ~1 KiB).
    var keysJSON = 200_000
    /// Operations of `mixed`, over all threads.
    var mixedOps = 1_000_000
    var mixedThreads = 4
    /// Percent of `mixed` operations that are gets.
    var mixedReadPercent = 90
    /// Puts of `fsync-put` with one writer, and with eight (over all of them).
    var fsyncOpsSingle = 10_000
    var fsyncOpsMulti = 20_000
    var fsyncWriters = 8
    /// A timed workload stops after this many seconds even if it has operations left (its row
    /// then says how many it did; what a later workload needs is written untimed with the batch
    /// API). Keeps the slow peers (SQLite one transaction per op ...) from dominating the run.
    var timeCapSeconds = 3.0
    var reopenRuns = 5
    var coldReopenRuns = 3
    /// Runs of LogStore and its variants in the comparisons between them (alternating).
    var repetitions = 3
    var recordLatency = true
    var seed: UInt64 = 20_240_601
    /// Parent of the temporary store directories.
    var workRoot = "/tmp"
    var keepDirectories = false

    static let quickSizes: BenchConfig = {
        var config = BenchConfig()
        config.quick = true
        config.keys = 20_000
        config.keys4KiB = 2_000
        config.keysJSON = 5_000
        config.mixedOps = 20_000
        config.fsyncOpsSingle = 300
        config.fsyncOpsMulti = 800
        config.timeCapSeconds = 3
        config.reopenRuns = 3
        config.coldReopenRuns = 1
        config.repetitions = 1
        return config
    }()
}

/// A chain of workloads that share one store, run in one child process per engine.
enum WorkloadGroup: String, Codable, CaseIterable, Sendable {
    case small = "16B"
    case medium = "100B"
    case large = "4KiB"
    case fsync
    case encrypted100 = "encrypted-100B"
    case encrypted4KiB = "encrypted-4KiB"
    case json
    case incompressible

    /// Its workloads, in the order they run.
    var workloads: [String] {
        switch self {
        case .small: return ["put/16B", "get/16B", "overwrite/16B", "delete/16B"]
        case .medium: return ["put/100B", "get/100B", "overwrite/100B", "compaction", "reopen", "reopen-full-scan", "list-space", "mixed", "delete/100B"]
        case .large: return ["put/4KiB", "get/4KiB", "overwrite/4KiB", "delete/4KiB"]
        case .fsync: return ["fsync-put/1w", "fsync-put/8w"]
        case .encrypted100: return ["encrypted-put/100B", "encrypted-get/100B"]
        case .encrypted4KiB: return ["encrypted-put/4KiB", "encrypted-get/4KiB"]
        case .json: return ["compressed-put/json", "compressed-get/json"]
        case .incompressible: return [WorkloadCatalog.incompressiblePut]
        }
    }

    var values: ValueKind {
        switch self {
        case .small: return .random(16)
        case .medium, .fsync, .encrypted100: return .random(100)
        case .large, .encrypted4KiB, .incompressible: return .random(4096)
        case .json: return .json
        }
    }

    func keys(_ config: BenchConfig) -> Int {
        switch self {
        case .small, .medium, .encrypted100: return config.keys
        case .large, .encrypted4KiB, .incompressible: return config.keys4KiB
        case .json: return config.keysJSON
        case .fsync: return config.fsyncOpsSingle + config.fsyncOpsMulti
        }
    }

    /// Groups that compare LogStore with its own variants: run `repetitions` times, alternating.
    var isVariantComparison: Bool {
        switch self {
        case .encrypted100, .encrypted4KiB, .json, .incompressible: return true
        default: return false
        }
    }
}

enum WorkloadCatalog {
    static let incompressiblePut = "compressed-put/4KiB-incompressible"

    static var all: [String] { WorkloadGroup.allCases.flatMap(\.workloads) }

    /// `put/100B` -> `put`; names without a slash are their own base.
    static func base(of workload: String) -> String {
        workload.split(separator: "/", maxSplits: 1).first.map(String.init) ?? workload
    }

    static func group(of workload: String) -> WorkloadGroup? {
        WorkloadGroup.allCases.first { $0.workloads.contains(workload) }
    }

    /// The workloads a `--workloads` list selects: each item is a full name (`put/4KiB`), a
    /// base name (`put`: every size), or a group (`100B`, `fsync`, `encrypted-4KiB` ...).
    static func select(_ list: String) throws -> [String] {
        let items = list.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces).lowercased() }.filter { !$0.isEmpty }
        var selected = Set<String>()
        for item in items {
            let matches = all.filter { $0.lowercased() == item || base(of: $0).lowercased() == item } +
                (WorkloadGroup.allCases.first { $0.rawValue.lowercased() == item }?.workloads ?? [])
            guard !matches.isEmpty else {
                throw BenchError.usage("unknown workload \(item); known: \(all.joined(separator: ", ")) or a group: " +
                                       WorkloadGroup.allCases.map(\.rawValue).joined(separator: ", "))
            }
            selected.formUnion(matches)
        }
        return all.filter(selected.contains)
    }

    /// What a workload does, for the heading of its table.
    static func describe(_ workload: String, _ config: BenchConfig) -> String {
        let n = Format.count(config.keys)
        let n4 = Format.count(config.keys4KiB)
        switch workload {
        case "put/16B", "put/100B", "put/4KiB":
            return "every key once, random order, into a fresh store; one thread"
        case "get/16B", "get/100B", "get/4KiB":
            return "every key once, another random order, right after the puts; every value checked (size, key and version stamp); one thread"
        case "overwrite/16B", "overwrite/100B", "overwrite/4KiB":
            return "every key once more with a new value, random order; one thread"
        case "delete/16B", "delete/100B", "delete/4KiB":
            return "every key deleted, random order (after the workloads above); 1,000 random keys checked absent after; one thread"
        case "compaction":
            return "\(n) keys x 100 B written 3 times (put + 2 overwrites), then the engine's compaction, timed; ops/s = keys / its time; bytes after it and close"
        case "reopen":
            return "close, then open + one get of a random key, same process (files in the page cache), \(n) keys x 100 B; median of \(config.reopenRuns)"
        case "reopen-full-scan":
            return "as reopen, without LogStore's index snapshot (a full scan); median of \(config.coldReopenRuns)"
        case "list-space":
            return "LogStore only: 100 keys written into key space 1 of the \(n)-key store (its keys are in space 0), then keys(space: 1) listed " +
                "1,000 times and checked; ops/s = listings per second"
        case "mixed":
            return "\(config.mixedThreads) threads on one store of \(n) keys x 100 B, \(config.mixedReadPercent)% gets / \(100 - config.mixedReadPercent)% puts of random keys, " +
                "\(Format.count(config.mixedOps)) ops in all, a handle per thread; every get checked; ops/s and latency over all threads"
        case "fsync-put/1w":
            return "fsync class: \(Format.count(config.fsyncOpsSingle)) puts x 100 B of new keys into a fresh store, one writer"
        case "fsync-put/8w":
            return "fsync class: \(Format.count(config.fsyncOpsMulti)) puts x 100 B of new keys over \(config.fsyncWriters) writer threads, a handle each"
        case "encrypted-put/100B", "encrypted-put/4KiB":
            return "as put, \(workload.hasSuffix("100B") ? n : n4) keys; LogStore plain vs AES-256-GCM, alternating, median of \(config.repetitions)"
        case "encrypted-get/100B", "encrypted-get/4KiB":
            return "as get, \(workload.hasSuffix("100B") ? n : n4) keys; LogStore plain vs AES-256-GCM, alternating, median of \(config.repetitions)"
        case "compressed-put/json":
            return "\(Format.count(config.keysJSON)) JSON-like values (~1 KiB, 512 distinct documents, each with its id), random order, fresh store; " +
                "bytes on disk after the puts and close; LogStore runs median of \(config.repetitions)"
        case "compressed-get/json":
            return "every JSON-like value read back (store reopened after the puts), random order; LogStore runs median of \(config.repetitions)"
        case incompressiblePut:
            return "\(n4) random (incompressible) 4 KiB values, fresh store; bytes after close; LogStore plain vs zstd, alternating, median of \(config.repetitions)"
        default:
            return ""
        }
    }
}

/// Which values a group writes.
enum ValueKind: Codable, Sendable, Equatable {
    /// Pseudo-random bytes (incompressible) of a fixed size, different for every key.
    case random(Int)
    /// JSON-like documents of ~1 KiB.
    case json
}

/// One child process's work: one group of workloads on one engine.
struct GroupJob: Codable, Sendable {
    var group: WorkloadGroup
    var engine: String
    /// The workloads of the group this engine runs, in order.
    var workloads: [String]
    var config: BenchConfig
    /// Which repetition this is (0 for the first).
    var repetition: Int
    /// Where the child writes its `ChildReport` as JSON.
    var outputPath: String?
}

/// The result of one workload on one engine: one row of a table and one object of the JSON.
struct WorkloadResult: Codable {
    var workload: String
    var engine: String
    /// Keys (or operations) the workload ran with.
    var keys: Int? = nil
    /// Operations it would have done without the time cap, when the cap stopped it.
    var cappedFrom: Int? = nil
    var opsPerSecond: Double? = nil
    var p50Micros: Double? = nil
    var p99Micros: Double? = nil
    var bytesOnDisk: Int? = nil
    var peakRSSBytes: Int? = nil
    var reopenMillis: Double? = nil
    /// Wall time of the measured part.
    var seconds: Double? = nil
    /// Key + value bytes as the caller wrote them (the denominator of disk ratios).
    var rawBytes: Int? = nil
    /// Further figures, printed under the table.
    var details: [String] = []
    var repetition = 0
}

/// A memory reading at the end of a phase.
struct MemoryCheckpoint: Codable {
    var label: String
    var engine: String
    var memory: ProcessMemory
    /// The engine's index memory at that moment, when the store was open and it reports one.
    var indexBytes: Int?
    /// Keys in the store then.
    var keys: Int
    /// Bytes of the harness's own buffers alive then (key orders, latency samples).
    var harnessBytes: Int
}

/// What one child process sends back.
struct ChildReport: Codable {
    var results: [WorkloadResult] = []
    var memory: [MemoryCheckpoint] = []
    var notes: [String] = []
    var loadAverage: String = ""
}

/// Per-phase memory accounting of one child.
final class BenchContext {
    let engineName: String
    private(set) var checkpoints: [MemoryCheckpoint] = []
    /// Whether VmHWM can be reset per phase (else every peak is the process's so far).
    let peakResets: Bool
    /// Bytes of harness buffers currently alive, for the memory table.
    var harnessBytes = 0

    init(engineName: String) {
        self.engineName = engineName
        peakResets = ProcessMemory.resetPeak()
    }

    /// Starts a phase: the peak RSS read at its end is the phase's own.
    func beginPhase() {
        if peakResets { ProcessMemory.resetPeak() }
    }

    /// Records a memory reading (the phase's peak so far included).
    func checkpoint(_ label: String, indexBytes: Int?, keys: Int) {
        guard let memory = ProcessMemory.current() else { return }
        checkpoints.append(MemoryCheckpoint(label: label, engine: engineName, memory: memory, indexBytes: indexBytes,
                                            keys: keys, harnessBytes: harnessBytes))
    }

    /// The peak RSS of the phase so far.
    func phasePeak() -> Int? { ProcessMemory.current()?.peakRSS }
}
