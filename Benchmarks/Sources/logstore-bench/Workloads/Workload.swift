import Foundation

/// What the command line asked for.
struct BenchConfig: Sendable {
    var keys: Int
    var valueSize: Int
    /// Time every operation (two clock reads' worth of work per op) for p50/p99.
    var recordLatency: Bool
    var reopenRuns: Int
    var coldReopenRuns: Int
    var seed: UInt64
    /// Parent of the temporary store directory.
    var workRoot: String
    var keepDirectory: Bool
    /// Workloads to run besides `put` (which always runs: it loads the store).
    var workloads: Set<String> = BenchConfig.allWorkloads

    static let allWorkloads: Set<String> = ["put", "get", "reopen", "compaction"]

    /// Bytes of keys and values as the caller sees them: the denominator of the disk ratio.
    var rawBytes: Int { keys * (KeyBuffer.length + valueSize) }
}

/// The result of one workload, one row of the table and one object of the JSON.
struct WorkloadResult {
    var workload: String
    var engine: String
    var opsPerSecond: Double? = nil
    var p50Micros: Double? = nil
    var p99Micros: Double? = nil
    var bytesOnDisk: Int? = nil
    var peakRSSBytes: Int? = nil
    var reopenMillis: Double? = nil
    /// Wall time of the measured part, for the table only.
    var seconds: Double? = nil
    /// Further figures, printed under the table.
    var details: [String] = []
}

/// A memory reading at the end of a phase.
struct MemoryCheckpoint {
    var label: String
    var memory: ProcessMemory
    /// The engine's index memory at that moment, when the store was open.
    var indexBytes: Int?
    /// Keys in the store then (for bytes per key).
    var keys: Int
}

/// State shared by the workloads of one run, in order: put, get, reopen, compaction.
final class BenchContext {
    let config: BenchConfig
    let directory: URL
    let engineName: String
    private(set) var checkpoints: [MemoryCheckpoint] = []
    /// Whether VmHWM can be reset per phase (else every peak is the process's so far).
    let peakResets: Bool
    /// The highest VmHWM seen over all phases.
    private(set) var processPeakRSS = 0

    init(config: BenchConfig, directory: URL, engineName: String) {
        self.config = config
        self.directory = directory
        self.engineName = engineName
        processPeakRSS = ProcessMemory.current()?.peakRSS ?? 0
        peakResets = ProcessMemory.resetPeak()
    }

    /// Starts a phase: the peak RSS read at its end is the phase's own.
    func beginPhase() {
        if let now = ProcessMemory.current() { processPeakRSS = max(processPeakRSS, now.peakRSS) }
        if peakResets { ProcessMemory.resetPeak() }
    }

    /// Records a memory reading inside a phase (its peak so far included).
    func checkpoint(_ label: String, indexBytes: Int?, keys: Int) {
        guard let memory = ProcessMemory.current() else { return }
        checkpoints.append(MemoryCheckpoint(label: label, memory: memory, indexBytes: indexBytes, keys: keys))
    }

    /// Ends a phase: records a memory checkpoint and returns the phase's peak RSS.
    @discardableResult
    func endPhase(_ label: String, indexBytes: Int?, keys: Int) -> Int? {
        guard let memory = ProcessMemory.current() else { return nil }
        processPeakRSS = max(processPeakRSS, memory.peakRSS)
        checkpoints.append(MemoryCheckpoint(label: label, memory: memory, indexBytes: indexBytes, keys: keys))
        return memory.peakRSS
    }
}

/// One workload: runs against an open engine and leaves it open (it may replace it).
protocol Workload {
    func run<E: KVEngine>(_ engine: inout E, context: BenchContext) throws -> [WorkloadResult]
}

/// Puts keys `0 ..< count` (in `order` when given) with values of `generation`, timing each
/// put when `samples` is given. Returns the elapsed seconds. Kept out of line so a profiler
/// can single out the timed loop.
@inline(never)
func putAll<E: KVEngine>(_ engine: inout E, count: Int, valueSize: Int, generation: UInt8,
                         samples: LatencySamples?) throws -> Double {
    var key = KeyBuffer()
    var value = ValueBuffer(size: valueSize)
    let start = MonotonicClock.now()
    var last = start
    for i in 0..<count {
        key.set(i)
        value.stamp(index: i, generation: generation)
        try engine.put(key.bytes, value.bytes)
        if let samples {
            let now = MonotonicClock.now()
            samples.record(now &- last)
            last = now
        }
    }
    return MonotonicClock.seconds(from: start, to: MonotonicClock.now())
}

/// Reads key `index` once and checks it holds the value of `generation`.
func getAndCheck<E: KVEngine>(_ engine: inout E, index: Int, valueSize: Int, generation: UInt8) throws {
    var key = KeyBuffer()
    key.set(index)
    guard let value = try engine.get(key.bytes) else {
        throw BenchError.verification("key \(index) not found")
    }
    guard ValueBuffer.check(value, size: valueSize, index: index, generation: generation) else {
        throw BenchError.verification("key \(index) has a wrong value (\(value.count) bytes)")
    }
}
