import BenchSupport
import Foundation

/// Runs one group of workloads on one engine type, in a fresh temporary directory that is
/// removed afterwards. Workloads of a group share the store in order (the `get` reads what
/// `put` wrote ...); a workload not asked for that a later one needs is replaced by an
/// untimed batched load.
final class GroupRunner<E: KVEngine> {
    let job: GroupJob
    let spec: EngineSpec
    let config: BenchConfig
    let context: BenchContext
    private var report = ChildReport()
    private var directory: URL!
    private var engine: E!
    private var values: ValueSource
    /// Keys in the store: `0 ..< keys`.
    private var keys = 0
    /// The generation every key's newest value has.
    private var generation: UInt8 = 0
    private var overwrites = 0
    private var durability = Durability.processCrashSafe

    init(job: GroupJob) throws {
        guard let spec = EngineRegistry.spec(named: job.engine) else { throw BenchError.usage("unknown engine \(job.engine)") }
        self.job = job
        self.spec = spec
        config = job.config
        context = BenchContext(engineName: spec.name)
        values = ValueSource(kind: job.group.values, seed: job.config.seed)
    }

    private func wants(_ workload: String) -> Bool { job.workloads.contains(workload) }

    private var engineConfig: EngineConfig { EngineConfig(name: spec.name, durability: durability) }

    private func open() throws { engine = try E(directory: directory, config: engineConfig) }

    func run() throws -> ChildReport {
        directory = try makeTemporaryDirectory(under: config.workRoot, engine: spec.name)
        defer {
            if config.keepDirectories {
                progress("kept \(directory.path)")
            } else {
                try? FileManager.default.removeItem(at: directory)
            }
        }
        switch job.group {
        case .small, .medium, .large: try keyValueChain()
        case .fsync: try fsyncChain()
        case .encrypted100, .encrypted4KiB, .json, .incompressible: try putGetChain()
        }
        if let engine { try engine.close() }
        engine = nil
        report.memory = context.checkpoints
        report.loadAverage = MachineInfo.loadAverage
        return report
    }

    // MARK: - Chains

    /// put, get, overwrite, [compaction, reopen, reopen-full-scan, mixed], delete.
    private func keyValueChain() throws {
        keys = spec.keyCount(job.group.keys(config), quick: config.quick)
        if keys < job.group.keys(config) {
            report.notes.append("\(spec.name) ran the \(job.group.rawValue) workloads with \(Format.count(keys)) keys, not \(Format.count(job.group.keys(config)))")
        }
        let suffix = job.group.rawValue
        context.checkpoint("before open", indexBytes: nil, keys: 0)
        try open()
        try put("put/\(suffix)", seed: 1)
        if wants("get/\(suffix)") { try get("get/\(suffix)", seed: 2) }
        if wants("overwrite/\(suffix)") { try overwrite("overwrite/\(suffix)") }
        if wants("compaction") { try compaction() }
        if wants("reopen") || wants("reopen-full-scan") { try reopen() }
        if wants("list-space") { try listSpace() }
        if wants("mixed") { try mixed() }
        if wants("delete/\(suffix)") { try delete("delete/\(suffix)") }
    }

    /// fsync-put with one writer, then with several, on a fresh store in the fsync class.
    private func fsyncChain() throws {
        durability = .fsync
        try open()
        if wants("fsync-put/1w") { try fsyncPut("fsync-put/1w", writers: 1, ops: config.fsyncOpsSingle, firstKey: 0) }
        if wants("fsync-put/8w") {
            try fsyncPut("fsync-put/8w", writers: config.fsyncWriters, ops: config.fsyncOpsMulti, firstKey: config.fsyncOpsSingle)
        }
    }

    /// The put and get of the variant comparisons and of the JSON-like values. For the JSON-like
    /// and incompressible values, whose point is the bytes on disk, the store is closed after
    /// the puts and its files measured then (LogStore's active segment is preallocated while
    /// open), and reopened for the gets.
    private func putGetChain() throws {
        keys = job.group.keys(config)
        try open()
        let names = job.group.workloads
        try put(names[0], seed: 1)
        let measureClosed = job.group == .json || job.group == .incompressible
        if measureClosed {
            try engine.close()
            engine = nil
            let disk = try diskUsage()
            if let index = report.results.lastIndex(where: { $0.workload == names[0] }) {
                let raw = values.rawBytes(keys: keys)
                report.results[index].bytesOnDisk = disk.files.isEmpty ? nil : disk.totalBytes
                report.results[index].rawBytes = raw
                report.results[index].details.removeAll { $0.hasPrefix("files after it") }
                report.results[index].details.append("files after it and close: \(disk.summary); " +
                                                      "\(Format.ratio(Double(disk.totalBytes) / Double(raw))) raw key+value bytes " +
                                                      "(\(Format.count(raw)) B, values \(values.averageSize) B on average)")
            }
            try open()
        }
        if names.count > 1, wants(names[1]) { try get(names[1], seed: 2) }
    }

    // MARK: - Workloads

    private func result(_ workload: String, ops: Int? = nil, of planned: Int? = nil, seconds: Double? = nil,
                        samples: LatencySamples? = nil) -> WorkloadResult {
        let percentiles = samples?.percentilesMicros([0.5, 0.99])
        let count = ops ?? keys
        var row = WorkloadResult(workload: workload, engine: spec.name, keys: count,
                                 opsPerSecond: seconds.map { Double(count) / $0 },
                                 p50Micros: percentiles?[0], p99Micros: percentiles?[1],
                                 peakRSSBytes: context.phasePeak(), seconds: seconds, repetition: job.repetition)
        if let planned, count < planned {
            row.cappedFrom = planned
            row.details.append("time cap: \(Format.count(count)) of \(Format.count(planned)) operations timed in \(Format.fixed(seconds ?? 0, 1)) s " +
                               "(--time-cap \(Format.fixed(config.timeCapSeconds, 0)))")
        }
        return row
    }

    private var deadline: UInt64 {
        config.timeCapSeconds > 0 ? MonotonicClock.now() &+ UInt64(config.timeCapSeconds * 1e9) : .max
    }

    private func samples(_ count: Int) -> LatencySamples? {
        config.recordLatency ? LatencySamples(capacity: count) : nil
    }

    private func diskUsage() throws -> DiskUsage { try DiskUsage.of(directory: directory) }

    /// `bytesOnDisk` and a details line for the files now, store open; nothing when there are
    /// no files (memory caches, UserDefaults before it synchronizes).
    private func addFiles(to row: inout WorkloadResult, raw: Int? = nil) throws {
        let disk = try diskUsage()
        guard !disk.files.isEmpty else {
            row.details.append("no files in the store directory yet")
            return
        }
        row.bytesOnDisk = disk.totalBytes
        row.rawBytes = raw
        row.details.append("files after it (store open): \(disk.summary)" +
                           (raw.map { "; \(Format.ratio(Double(disk.totalBytes) / Double($0))) raw key+value bytes" } ?? ""))
    }

    /// Loads every key in a fresh store: timed per put when `workload` is asked for, else with
    /// the batch API (and with it the keys the time cap left).
    private func put(_ workload: String, seed: UInt64) throws {
        let order = randomPermutation(count: keys, seed: config.seed ^ seed)
        let samples = wants(workload) ? self.samples(keys) : nil
        context.harnessBytes = order.count * 4 + (samples?.memoryBytes ?? 0)
        context.beginPhase()
        guard wants(workload) else {
            let seconds = try loadBatched(engine, order: order[...], values: &values, generation: 0)
            progress("    loaded \(Format.count(keys)) keys with batches in \(Format.fixed(seconds, 2)) s (\(workload) not asked for)")
            return
        }
        let (seconds, done) = try putAll(engine, order: order, values: &values, generation: 0, samples: samples, deadline: deadline)
        var row = result(workload, ops: done, of: keys, seconds: seconds, samples: samples)
        try addFiles(to: &row, raw: values.rawBytes(keys: done))
        if let stats = engine.statisticsSummary { row.details.append(stats) }
        if spec.name == RocksDBEngine.name, let options = RocksDBEngine.optionsInUse(in: directory) { row.details.append("options in use: \(options)") }
        if done < keys {
            let rest = try loadBatched(engine, order: order[done...], values: &values, generation: 0)
            row.details.append("the other \(Format.count(keys - done)) keys then loaded untimed with batches (\(Format.fixed(rest, 1)) s)")
        }
        // With every key in the store (the memory table compares engines at the same load).
        context.checkpoint("after \(workload)", indexBytes: engine.indexMemoryBytes, keys: keys)
        report.results.append(row)
    }

    private func get(_ workload: String, seed: UInt64) throws {
        let order = randomPermutation(count: keys, seed: config.seed ^ seed)
        let samples = self.samples(keys)
        context.harnessBytes = order.count * 4 + (samples?.memoryBytes ?? 0)
        context.beginPhase()
        let (seconds, mismatches, first, done) = try getAll(engine, order: order, values: values, generation: generation,
                                                            samples: samples, deadline: deadline)
        guard mismatches == 0 else {
            throw BenchError.verification("\(spec.name) \(workload): \(mismatches) gets returned a missing or wrong value (first: key \(first))")
        }
        report.results.append(result(workload, ops: done, of: keys, seconds: seconds, samples: samples))
        context.checkpoint("after \(workload)", indexBytes: engine.indexMemoryBytes, keys: keys)
    }

    private func overwrite(_ workload: String) throws {
        let order = randomPermutation(count: keys, seed: config.seed ^ (3 + UInt64(overwrites)))
        let samples = self.samples(keys)
        context.beginPhase()
        let (seconds, done) = try putAll(engine, order: order, values: &values, generation: generation + 1, samples: samples,
                                         deadline: deadline)
        var row = result(workload, ops: done, of: keys, seconds: seconds, samples: samples)
        if done < keys {
            let rest = try loadBatched(engine, order: order[done...], values: &values, generation: generation + 1)
            row.details.append("the other \(Format.count(keys - done)) keys then overwritten untimed with batches (\(Format.fixed(rest, 1)) s)")
        }
        generation += 1
        overwrites += 1
        try addFiles(to: &row)
        report.results.append(row)
    }

    /// Overwrites until every key has been overwritten twice, then compacts (timed), closes,
    /// and measures the files; reopens and checks a sample of keys.
    private func compaction() throws {
        context.beginPhase()
        var loads: [String] = []
        while overwrites < 2 {
            let order = randomPermutation(count: keys, seed: config.seed ^ (3 + UInt64(overwrites)))
            let seconds = try loadBatched(engine, order: order[...], values: &values, generation: generation + 1)
            generation += 1
            overwrites += 1
            loads.append("\(Format.rate(Double(keys) / seconds)) puts/s")
        }
        let before = try diskUsage()
        let statsBefore = engine.statisticsSummary
        var row = WorkloadResult(workload: "compaction", engine: spec.name, keys: keys, repetition: job.repetition)
        row.rawBytes = values.rawBytes(keys: keys)
        if !loads.isEmpty { row.details.append("overwrites before it, untimed: batches of 1000 in key order: \(loads.joined(separator: ", "))") }
        row.details.append("before (3 versions of every key, store open): \(before.summary) = \(Format.ratio(Double(before.totalBytes) / Double(row.rawBytes!))) raw" +
                           (statsBefore.map { "; \($0)" } ?? ""))
        if let method = spec.compaction {
            let start = MonotonicClock.now()
            try engine.compact()
            let seconds = MonotonicClock.seconds(from: start, to: MonotonicClock.now())
            row.seconds = seconds
            row.opsPerSecond = Double(keys) / seconds
            row.details.append("\(method): \(Format.fixed(seconds, 2)) s, \(Format.bytes(Int(Double(before.totalBytes) / seconds)))/s of files before it" +
                               (engine.statisticsSummary.map { "; then \($0)" } ?? ""))
        } else {
            row.details.append("no compaction to call: the engine reuses freed space in place; the figures are after close")
        }
        try engine.close()
        engine = nil
        let after = try diskUsage()
        row.bytesOnDisk = after.totalBytes
        row.peakRSSBytes = context.phasePeak()
        row.details.append("after it and close: \(after.summary) = \(Format.ratio(Double(after.totalBytes) / Double(row.rawBytes!))) raw " +
                           "(\(Format.count(keys)) x (\(KeyBuffer.length) + \(values.averageSize)) B = \(row.rawBytes!) B); " +
                           "\(Format.fixed(Double(after.totalBytes) / Double(keys), 1)) B/key")
        context.checkpoint("after compaction (closed)", indexBytes: nil, keys: keys)
        try open()
        var rng = SplitMix64(seed: config.seed ^ 0xC0FFEE)
        let checked = min(10_000, keys)
        for _ in 0..<checked { try getAndCheck(engine, index: Int(rng.next() % UInt64(keys)), values: values, generation: generation) }
        row.details.append("reopened: \(checked) random keys hold their newest values")
        report.results.append(row)
    }

    /// Close, then open + one get, `reopenRuns` times (median); for LogStore also without the
    /// index snapshot.
    private func reopen() throws {
        var rng = SplitMix64(seed: config.seed ^ 0x5EED)
        func timedOpen() throws -> Double {
            let index = Int(rng.next() % UInt64(keys))
            let start = MonotonicClock.now()
            try open()
            try getAndCheck(engine, index: index, values: values, generation: generation)
            return MonotonicClock.millis(from: start, to: MonotonicClock.now())
        }
        func summary(_ runs: [Double]) -> String {
            "open + first get, ms, \(runs.count) runs: median \(Format.fixed(median(runs), 2)), min \(Format.fixed(runs.min()!, 2)), " +
                "max \(Format.fixed(runs.max()!, 2)) [\(runs.map { Format.fixed($0, 1) }.joined(separator: ", "))]"
        }
        if wants("reopen") {
            let closeStart = MonotonicClock.now()
            try engine.close()
            engine = nil
            let closeMillis = MonotonicClock.millis(from: closeStart, to: MonotonicClock.now())
            let disk = try diskUsage()
            context.beginPhase()
            var runs: [Double] = []
            for run in 0..<config.reopenRuns {
                if run > 0 { try engine.close(); engine = nil }
                runs.append(try timedOpen())
            }
            var row = result("reopen")
            row.reopenMillis = median(runs)
            row.details.append(summary(runs))
            row.details.append("close before it: \(Format.fixed(closeMillis, 1)) ms; files: \(disk.summary)")
            report.results.append(row)
            context.checkpoint("after reopen", indexBytes: engine.indexMemoryBytes, keys: keys)
        }
        if wants("reopen-full-scan"), config.coldReopenRuns > 0 {
            var runs: [Double] = []
            var label: String?
            context.beginPhase()
            for _ in 0..<config.coldReopenRuns {
                try engine.close()
                engine = nil
                label = try E.removeReopenAccelerators(in: directory)
                runs.append(try timedOpen())
            }
            if let label {
                var row = result("reopen-full-scan")
                row.reopenMillis = median(runs)
                row.details.append("\(label): \(summary(runs))")
                report.results.append(row)
                context.checkpoint("after reopen-full-scan", indexBytes: engine.indexMemoryBytes, keys: keys)
            }
        }
    }

    /// A 100-key space listed 1,000 times in the big store (engines with key spaces only).
    private func listSpace() throws {
        let small = (0..<100).map { Array("small\($0)".utf8) }
        let repetitions = 1000
        context.beginPhase()
        guard let seconds = try engine.listSmallSpace(small, repetitions: repetitions) else { return }
        var row = result("list-space", ops: repetitions, seconds: seconds)
        row.details.append("\(Format.fixed(seconds / Double(repetitions) * 1e6, 1)) us per listing of 100 keys in a store of \(Format.count(keys + 100)) keys")
        report.results.append(row)
    }

    /// `mixedThreads` threads, each with its own handle, `mixedReadPercent`% gets of random
    /// keys, the rest puts of random keys (a new generation; gets accept any).
    private func mixed() throws {
        let threads = config.mixedThreads
        let perThread = config.mixedOps / threads
        let handles = try (0..<threads).map { _ in UncheckedBox(try E(sharing: engine)) }
        let parts = (0..<threads).map { _ in self.samples(perThread) }
        let mismatches = Slots<Int>(count: threads, initial: 0)
        let keys = self.keys
        let readPercent = UInt64(config.mixedReadPercent)
        let seed = config.seed
        let source = values
        let writeGeneration = min(9, generation + 1)
        let done = Slots<Int>(count: threads, initial: 0)
        let deadline = self.deadline
        context.beginPhase()
        let seconds = try runThreads(threads) { thread in
            let engine = handles[thread].value
            let samples = parts[thread]
            var values = source
            var key = KeyBuffer()
            var rng = SplitMix64(seed: seed ^ (0x3131 + UInt64(thread)))
            var bad = 0
            var last = MonotonicClock.now()
            var count = 0
            for _ in 0..<perThread {
                if count & 63 == 63, MonotonicClock.now() > deadline { break }
                count += 1
                let r = rng.next()
                let i = Int((r >> 8) % UInt64(keys))
                key.set(i)
                if r % 100 < readPercent {
                    if let value = try engine.get(key.bytes), values.check(value, index: i, generation: nil) {} else { bad += 1 }
                } else {
                    values.make(index: i, generation: writeGeneration)
                    try engine.put(key.bytes, values.bytes)
                }
                if let samples {
                    let now = MonotonicClock.now()
                    samples.record(now &- last)
                    last = now
                }
            }
            mismatches[thread] = bad
            done[thread] = count
        }
        for handle in handles { try handle.value.close() }
        let bad = mismatches.values.reduce(0, +)
        guard bad == 0 else { throw BenchError.verification("\(spec.name) mixed: \(bad) gets returned a missing or wrong value") }
        let merged = config.recordLatency ? LatencySamples.merged(parts.compactMap { $0 }) : nil
        report.results.append(result("mixed", ops: done.values.reduce(0, +), of: perThread * threads, seconds: seconds, samples: merged))
        // Keys now hold `generation` or `writeGeneration`; only `delete` follows, which checks absence.
    }

    private func delete(_ workload: String) throws {
        let order = randomPermutation(count: keys, seed: config.seed ^ 4)
        let samples = self.samples(keys)
        context.beginPhase()
        let (seconds, done) = try deleteAll(engine, order: order, samples: samples, deadline: deadline)
        var row = result(workload, ops: done, of: keys, seconds: seconds, samples: samples)
        try engine.settle()
        var key = KeyBuffer()
        for n in 0..<min(1000, done) {
            let i = Int(order[n * done / min(1000, done)])
            key.set(i)
            if try engine.get(key.bytes) != nil { throw BenchError.verification("\(spec.name) \(workload): key \(i) still there") }
        }
        try addFiles(to: &row)
        report.results.append(row)
    }

    /// `ops` puts of distinct keys over `writers` threads in the fsync class, each writer
    /// stopping at the time cap.
    private func fsyncPut(_ workload: String, writers: Int, ops: Int, firstKey: Int) throws {
        let perWriter = max(1, ops / writers)
        let handles = try (0..<writers).map { _ in UncheckedBox(writers == 1 ? engine! : try E(sharing: engine)) }
        let parts = (0..<writers).map { _ in self.samples(perWriter) }
        let done = Slots<Int>(count: writers, initial: 0)
        let source = values
        let deadline = self.deadline
        let seed = config.seed
        context.beginPhase()
        let seconds = try runThreads(writers) { thread in
            let engine = handles[thread].value
            let samples = parts[thread]
            var values = source
            var key = KeyBuffer()
            let order = randomPermutation(count: perWriter, seed: seed ^ UInt64(thread))
            var last = MonotonicClock.now()
            var count = 0
            for next in order {
                let i = firstKey + thread * perWriter + Int(next)
                key.set(i)
                values.make(index: i, generation: 0)
                try engine.put(key.bytes, values.bytes)
                count += 1
                let now = MonotonicClock.now()
                samples?.record(now &- last)
                last = now
                if now > deadline { break }
            }
            done[thread] = count
        }
        if writers > 1 { for handle in handles { try handle.value.close() } }
        let total = done.values.reduce(0, +)
        let merged = config.recordLatency ? LatencySamples.merged(parts.compactMap { $0 }) : nil
        report.results.append(result(workload, ops: total, of: perWriter * writers, seconds: seconds, samples: merged))
    }
}

/// A new empty directory `<root>/<engine>-bench.XXXXXX`.
func makeTemporaryDirectory(under root: String, engine: String) throws -> URL {
    let name = engine.lowercased().replacingOccurrences(of: "+", with: "-")
    var template = Array("\(root)/\(name)-bench.XXXXXX".utf8CString)
    let made = template.withUnsafeMutableBufferPointer { mkdtemp($0.baseAddress!) }
    guard made != nil else { throw BenchError.usage("cannot create a directory under \(root): errno \(errno)") }
    let path = template.withUnsafeBufferPointer { String(cString: $0.baseAddress!) }
    return URL(fileURLWithPath: path, isDirectory: true)
}

/// A progress line on standard error (the tables go to standard output).
func progress(_ line: String) {
    FileHandle.standardError.write(Data((line + "\n").utf8))
}

func median(_ values: [Double]) -> Double {
    let sorted = values.sorted()
    guard !sorted.isEmpty else { return .nan }
    return sorted.count % 2 == 1 ? sorted[sorted.count / 2] : (sorted[sorted.count / 2 - 1] + sorted[sorted.count / 2]) / 2
}
