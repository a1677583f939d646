import Foundation

/// `compaction`: overwrite every key once more, compact, close, and sum the sizes of the files
/// in the directory; compared with the raw key + value bytes. Then reopens and checks a sample
/// of keys holds the new values.
struct CompactionWorkload: Workload {
    /// Keys checked after compaction.
    static let checkedKeys = 10_000

    func run<E: KVEngine>(_ engine: inout E, context: BenchContext) throws -> [WorkloadResult] {
        let config = context.config
        context.beginPhase()
        let overwriteSeconds = try putAll(&engine, count: config.keys, valueSize: config.valueSize, generation: 1, samples: nil)
        let before = engine.statisticsSummary
        context.checkpoint("after overwrite (2 versions of every key)", indexBytes: engine.indexMemoryBytes, keys: config.keys)
        let diskBefore = try DiskUsage.of(directory: context.directory)
        let compactStart = MonotonicClock.now()
        try engine.compact()
        let compactSeconds = MonotonicClock.seconds(from: compactStart, to: MonotonicClock.now())
        let after = engine.statisticsSummary
        context.checkpoint("after compact() (store open)", indexBytes: engine.indexMemoryBytes, keys: config.keys)
        try engine.close()
        let disk = try DiskUsage.of(directory: context.directory)
        let peak = context.endPhase("after compaction (store closed)", indexBytes: nil, keys: config.keys)

        // Correctness: the newest values survived compaction.
        engine = try E(directory: context.directory)
        var rng = SplitMix64(seed: config.seed ^ 0xC0FFEE)
        for _ in 0..<min(Self.checkedKeys, config.keys) {
            try getAndCheck(&engine, index: Int(rng.next() % UInt64(config.keys)), valueSize: config.valueSize, generation: 1)
        }

        let ratio = Double(disk.totalBytes) / Double(config.rawBytes)
        var result = WorkloadResult(workload: "compaction", engine: E.name, bytesOnDisk: disk.totalBytes,
                                    peakRSSBytes: peak, seconds: compactSeconds)
        result.details.append("overwrite of every key: \(Format.rate(Double(config.keys) / overwriteSeconds)) puts/s " +
                              "(\(Format.fixed(overwriteSeconds, 2)) s, background compaction may run meanwhile)")
        if let before { result.details.append("before compact(): \(before); files \(Format.bytes(diskBefore.totalBytes))") }
        if let after { result.details.append("after compact():  \(after)") }
        result.details.append("compact() took \(Format.fixed(compactSeconds, 2)) s; after close: \(disk.totalBytes) bytes (" +
                              disk.byKind.map { "\($0.count) \($0.kind) \($0.bytes)" }.joined(separator: ", ") +
                              "), allocated \(disk.totalAllocatedBytes)")
        result.details.append("raw key+value bytes \(config.rawBytes) (\(config.keys) x (\(KeyBuffer.length)+\(config.valueSize))): " +
                              "ratio \(Format.fixed(ratio, 3))x; \(Format.fixed(Double(disk.totalBytes) / Double(config.keys), 1)) bytes/key on disk")
        result.details.append("reopened and checked \(min(Self.checkedKeys, config.keys)) random keys hold the overwritten values")
        return [result]
    }
}
