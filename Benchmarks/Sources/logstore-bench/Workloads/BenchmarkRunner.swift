import Foundation

/// Everything one run measured.
struct RunReport {
    var engine: String
    var config: BenchConfig
    var results: [WorkloadResult]
    var checkpoints: [MemoryCheckpoint]
    var processPeakRSS: Int
    var peakResets: Bool
    var clockOverheadNanos: Double
    var loadBefore: String
    var loadAfter: String
    var directory: String
}

/// Runs the workloads in order on one engine type, in a fresh temporary directory that is
/// removed afterwards: put, get, reopen, compaction.
struct BenchmarkRunner<E: KVEngine> {
    let config: BenchConfig

    func run() throws -> RunReport {
        let loadBefore = MachineInfo.loadAverage
        let overhead = MonotonicClock.overheadNanos()
        let directory = try makeTemporaryDirectory(under: config.workRoot, engine: E.name)
        defer {
            if config.keepDirectory {
                progress("kept \(directory.path)")
            } else {
                try? FileManager.default.removeItem(at: directory)
            }
        }
        let context = BenchContext(config: config, directory: directory, engineName: E.name)
        var engine = try E(directory: directory)
        var results: [WorkloadResult] = []
        // Called one by one (not through `any Workload`) so each is specialized for E.
        progress("\(E.name): put \(config.keys) keys ...")
        results += try PutWorkload().run(&engine, context: context)
        if config.workloads.contains("get") {
            progress("\(E.name): get \(config.keys) keys in random order ...")
            results += try GetWorkload().run(&engine, context: context)
        }
        if config.workloads.contains("reopen") {
            progress("\(E.name): reopen ...")
            results += try ReopenWorkload().run(&engine, context: context)
        }
        if config.workloads.contains("compaction") {
            progress("\(E.name): overwrite + compaction ...")
            results += try CompactionWorkload().run(&engine, context: context)
        }
        try engine.close()
        return RunReport(engine: E.name, config: config, results: results, checkpoints: context.checkpoints,
                         processPeakRSS: context.processPeakRSS, peakResets: context.peakResets,
                         clockOverheadNanos: overhead, loadBefore: loadBefore, loadAfter: MachineInfo.loadAverage,
                         directory: directory.path)
    }
}

/// A new empty directory `<root>/<engine>-bench.XXXXXX`.
func makeTemporaryDirectory(under root: String, engine: String) throws -> URL {
    var template = Array("\(root)/\(engine.lowercased())-bench.XXXXXX".utf8CString)
    let made = template.withUnsafeMutableBufferPointer { mkdtemp($0.baseAddress!) }
    guard made != nil else { throw BenchError.usage("cannot create a directory under \(root): errno \(errno)") }
    let path = template.withUnsafeBufferPointer { String(cString: $0.baseAddress!) }
    return URL(fileURLWithPath: path, isDirectory: true)
}

/// A progress line on standard error (the table goes to standard output).
func progress(_ line: String) {
    FileHandle.standardError.write(Data((line + "\n").utf8))
}
