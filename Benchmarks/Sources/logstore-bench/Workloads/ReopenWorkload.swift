import Foundation

/// `reopen`: close the store, then time opening it again plus one get, in the same process
/// (so the files are in the page cache). Repeated `reopenRuns` times; the median is reported.
/// When the engine has a reopen accelerator (LogStore's index snapshot), also a cold reopen
/// without it: a full scan of the data.
struct ReopenWorkload: Workload {
    func run<E: KVEngine>(_ engine: inout E, context: BenchContext) throws -> [WorkloadResult] {
        let config = context.config
        var rng = SplitMix64(seed: config.seed ^ 0x5EED)
        let closeStart = MonotonicClock.now()
        try engine.close()
        let closeMillis = MonotonicClock.millis(from: closeStart, to: MonotonicClock.now())
        let disk = try DiskUsage.of(directory: context.directory)

        context.beginPhase()
        let warm = try timedReopens(&engine, runs: config.reopenRuns, context: context, rng: &rng)
        let warmPeak = context.endPhase("after reopen (index loaded)", indexBytes: engine.indexMemoryBytes, keys: config.keys)
        var warmResult = WorkloadResult(workload: "reopen", engine: E.name, bytesOnDisk: nil, peakRSSBytes: warmPeak,
                                        reopenMillis: median(warm), seconds: nil)
        warmResult.details.append("open + first get, ms, \(warm.count) runs: median \(Format.fixed(median(warm), 2)), " +
                                  "min \(Format.fixed(warm.min()!, 2)), max \(Format.fixed(warm.max()!, 2)) " +
                                  "[\(warm.map { Format.fixed($0, 1) }.joined(separator: ", "))]")
        warmResult.details.append("close before it (sync + index snapshot): \(Format.fixed(closeMillis, 1)) ms; " +
                                  "files then: \(Format.bytes(disk.totalBytes)) (" +
                                  disk.byKind.map { "\($0.count) \($0.kind) \(Format.bytes($0.bytes))" }.joined(separator: ", ") + ")")
        var results = [warmResult]

        try engine.close()
        if config.coldReopenRuns > 0, let label = try E.removeReopenAccelerators(in: context.directory) {
            context.beginPhase()
            var cold: [Double] = []
            for run in 0..<config.coldReopenRuns {
                if run > 0 {
                    try engine.close()
                    _ = try E.removeReopenAccelerators(in: context.directory)
                }
                cold.append(try timedReopen(&engine, context: context, rng: &rng))
            }
            let coldPeak = context.endPhase("after cold reopen (full scan)", indexBytes: engine.indexMemoryBytes, keys: config.keys)
            var coldResult = WorkloadResult(workload: "reopen_full_scan", engine: E.name, peakRSSBytes: coldPeak,
                                            reopenMillis: median(cold))
            coldResult.details.append("\(label): open + first get, ms, \(cold.count) runs: median \(Format.fixed(median(cold), 1)), " +
                                      "min \(Format.fixed(cold.min()!, 1)), max \(Format.fixed(cold.max()!, 1))")
            results.append(coldResult)
        } else {
            engine = try E(directory: context.directory)
        }
        return results
    }

    /// `runs` reopens; the engine is left open after the last.
    private func timedReopens<E: KVEngine>(_ engine: inout E, runs: Int, context: BenchContext,
                                           rng: inout SplitMix64) throws -> [Double] {
        var millis: [Double] = []
        for run in 0..<max(1, runs) {
            if run > 0 { try engine.close() }
            millis.append(try timedReopen(&engine, context: context, rng: &rng))
        }
        return millis
    }

    /// Opens the (closed) store again and reads one random key; returns the milliseconds.
    private func timedReopen<E: KVEngine>(_ engine: inout E, context: BenchContext,
                                          rng: inout SplitMix64) throws -> Double {
        let index = Int(rng.next() % UInt64(context.config.keys))
        let start = MonotonicClock.now()
        engine = try E(directory: context.directory)
        try getAndCheck(&engine, index: index, valueSize: context.config.valueSize, generation: 0)
        return MonotonicClock.millis(from: start, to: MonotonicClock.now())
    }
}

func median(_ values: [Double]) -> Double {
    let sorted = values.sorted()
    guard !sorted.isEmpty else { return .nan }
    return sorted.count % 2 == 1 ? sorted[sorted.count / 2] : (sorted[sorted.count / 2 - 1] + sorted[sorted.count / 2]) / 2
}
