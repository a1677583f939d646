/// `get`: every key once, in a seeded random order, right after the puts in the same process;
/// each value is checked.
struct GetWorkload: Workload {
    func run<E: KVEngine>(_ engine: inout E, context: BenchContext) throws -> [WorkloadResult] {
        let config = context.config
        let order = randomPermutation(count: config.keys, seed: config.seed)
        let samples = config.recordLatency ? LatencySamples(capacity: config.keys) : nil
        context.beginPhase()
        let (seconds, mismatches, firstMismatch) = try getAll(&engine, order: order, valueSize: config.valueSize, samples: samples)
        guard mismatches == 0 else {
            throw BenchError.verification("\(mismatches) gets returned a missing or wrong value (first: key \(firstMismatch))")
        }
        let peak = context.endPhase("after get", indexBytes: engine.indexMemoryBytes, keys: config.keys)
        let percentiles = samples?.percentilesMicros([0.5, 0.99])
        var result = WorkloadResult(workload: "get", engine: E.name,
                                    opsPerSecond: Double(config.keys) / seconds,
                                    p50Micros: percentiles?[0], p99Micros: percentiles?[1],
                                    peakRSSBytes: peak, seconds: seconds)
        result.details.append("random order (seed \(config.seed)), every value checked; order array \(Format.bytes(order.count * 4))" +
                              (samples.map { " + latency buffer \(Format.bytes($0.memoryBytes))" } ?? "") + " in RSS")
        return [result]
    }
}

/// Gets every key of `order`, timing each get when `samples` is given, and checks the values.
/// Returns the elapsed seconds, the number of missing or wrong values and the first of them.
/// Kept out of line (like `putAll`) so a profiler can single out the timed loop.
@inline(never)
func getAll<E: KVEngine>(_ engine: inout E, order: [UInt32], valueSize: Int,
                         samples: LatencySamples?) throws -> (seconds: Double, mismatches: Int, first: Int) {
    var key = KeyBuffer()
    var mismatches = 0
    var firstMismatch = -1
    let start = MonotonicClock.now()
    var last = start
    for next in order {
        let i = Int(next)
        key.set(i)
        let value = try engine.get(key.bytes)
        if let samples {
            let now = MonotonicClock.now()
            samples.record(now &- last)
            last = now
        }
        if let value, ValueBuffer.check(value, size: valueSize, index: i, generation: 0) { continue }
        mismatches += 1
        if firstMismatch < 0 { firstMismatch = i }
    }
    return (MonotonicClock.seconds(from: start, to: MonotonicClock.now()), mismatches, firstMismatch)
}
