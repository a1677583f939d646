/// `put`: every key once, in key order, into a fresh store.
struct PutWorkload: Workload {
    func run<E: KVEngine>(_ engine: inout E, context: BenchContext) throws -> [WorkloadResult] {
        let config = context.config
        let samples = config.recordLatency ? LatencySamples(capacity: config.keys) : nil
        context.beginPhase()
        let seconds = try putAll(&engine, count: config.keys, valueSize: config.valueSize, generation: 0, samples: samples)
        let index = engine.indexMemoryBytes
        let peak = context.endPhase("after put", indexBytes: index, keys: config.keys)
        let percentiles = samples?.percentilesMicros([0.5, 0.99])
        var result = WorkloadResult(workload: "put", engine: E.name,
                                    opsPerSecond: Double(config.keys) / seconds,
                                    p50Micros: percentiles?[0], p99Micros: percentiles?[1],
                                    peakRSSBytes: peak, seconds: seconds)
        if let stats = engine.statisticsSummary { result.details.append("after put: \(stats)") }
        if let samples { result.details.append("latency buffer \(Format.bytes(samples.memoryBytes)) (in RSS)") }
        return [result]
    }
}
