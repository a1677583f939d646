import ArgumentParser
import Foundation

@main
struct LogStoreBench: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "logstore-bench",
        abstract: "LogStore side by side with SQLite, LMDB, LevelDB, RocksDB, UserDefaults and NSCache: one table per workload.",
        discussion: """
            Every workload runs on every engine that takes part in it, same machine, same keys and values, same durability class
            (process-crash-safe; fsync for fsync-put). Peers are loaded at run time (dlopen): a peer whose library is not installed
            is skipped with a note. Each engine runs in a child process of its own per group of workloads.

            Workloads (names are stable; BENCHMARKS.md is keyed by them):
              put|get|overwrite|delete / 16B, 100B (1M keys), 4KiB (100k keys)
              compaction, reopen, reopen-full-scan, mixed (4 threads, 90% gets)   on the 100 B store
              fsync-put/1w, fsync-put/8w                                         fsync class
              encrypted-put|encrypted-get / 100B, 4KiB                            LogStore plain vs AES-256-GCM
              compressed-put/json, compressed-get/json                            JSON-like values, zstd vs plain vs peers
              compressed-put/4KiB-incompressible                                  LogStore plain vs zstd

            Run in release from the Benchmarks directory:
              swift run -c release logstore-bench                  # everything, default sizes (several minutes)
              swift run -c release logstore-bench --quick          # small sizes, for CI
              swift run -c release logstore-bench --engines LogStore,LevelDB --workloads put,get --json out.json
            """
    )

    @Flag(help: "Small sizes (20k keys, 2k at 4 KiB ...), for CI: well under a minute.")
    var quick = false

    @Option(help: "Also write the results as JSON to this file.")
    var json: String?

    @Option(help: "Comma-separated engines (default: all): \(EngineRegistry.names.joined(separator: ", ")).")
    var engines: String?

    @Option(help: "Comma-separated workloads, base names (put = every size) or groups (100B, fsync, json ...); default: all.")
    var workloads: String?

    @Option(help: "Keys of the 16 B and 100 B workloads (default 1,000,000; 20,000 with --quick).")
    var keys: Int?

    @Option(name: .customLong("keys-4kib"), help: "Keys of the 4 KiB workloads (default 100,000; 2,000 with --quick).")
    var keys4KiB: Int?

    @Option(name: .customLong("keys-json"), help: "Keys of the JSON-like workloads (default 200,000; 5,000 with --quick).")
    var keysJSON: Int?

    @Option(name: .customLong("mixed-ops"), help: "Operations of the mixed workload over all threads (default 1,000,000).")
    var mixedOps: Int?

    @Option(name: .customLong("fsync-ops"), help: "Puts of fsync-put with one writer (default 10,000); eight writers do twice as many.")
    var fsyncOps: Int?

    @Option(help: "Runs of LogStore and its variants in the encryption and compression comparisons (default 3; 1 with --quick).")
    var repetitions: Int?

    @Option(name: .customLong("time-cap"), help: "Seconds after which a timed workload stops (its row says how many ops it did); 0: none (default 3).")
    var timeCap: Double?

    @Option(name: .customLong("reopen-runs"), help: "Timed reopens (the median is reported).")
    var reopenRuns: Int?

    @Flag(name: .customLong("no-latency"), help: "Do not time each operation (no p50/p99).")
    var noLatency = false

    @Option(help: "Seed of the key orders and values.")
    var seed: UInt64?

    @Option(name: .customLong("work-dir"), help: "Where the temporary store directories are made (default /tmp).")
    var workDir: String?

    @Flag(help: "Keep the store directories instead of removing them.")
    var keep = false

    @Flag(help: "Print the tables as Markdown.")
    var markdown = false

    @Flag(name: .customLong("in-process"), help: "Run every engine in this process (for profilers); peak RSS figures then accumulate.")
    var inProcess = false

    @Flag(name: .customLong("reverse-order"), help: "Run the engines of each workload group in the reverse of their usual order (the tables keep the usual one), to check that going first or second does not favour an engine.")
    var reverseOrder = false

    @Flag(help: "List the engines (and whether they can run here) and the workloads, then exit.")
    var list = false

    @Option(help: ArgumentHelp("Also write one SVG chart per workload group into this directory.", valueName: "dir"))
    var svg: String?

    @Option(name: .customLong("child-job"), help: .hidden)
    var childJob: String?

    func makeConfig() throws -> BenchConfig {
        var config = quick ? BenchConfig.quickSizes : BenchConfig()
        if let keys { config.keys = keys }
        if let keys4KiB { config.keys4KiB = keys4KiB }
        if let keysJSON { config.keysJSON = keysJSON }
        if let mixedOps { config.mixedOps = mixedOps }
        if let fsyncOps {
            config.fsyncOpsSingle = fsyncOps
            config.fsyncOpsMulti = 2 * fsyncOps
        }
        if let repetitions { config.repetitions = repetitions }
        if let reopenRuns { config.reopenRuns = reopenRuns }
        if let timeCap { config.timeCapSeconds = timeCap }
        if let seed { config.seed = seed }
        if let workDir { config.workRoot = workDir }
        config.keepDirectories = keep
        config.recordLatency = !noLatency
        for (name, value) in [("--keys", config.keys), ("--keys-4kib", config.keys4KiB), ("--keys-json", config.keysJSON)] {
            guard value > 0, value <= KeyBuffer.maxKeys else { throw ValidationError("\(name) must be in 1...\(KeyBuffer.maxKeys)") }
        }
        guard config.mixedOps >= config.mixedThreads, config.fsyncOpsSingle >= 1, config.repetitions >= 1, config.reopenRuns >= 1 else {
            throw ValidationError("--mixed-ops >= 4, --fsync-ops >= 1, --repetitions >= 1, --reopen-runs >= 1")
        }
        return config
    }

    func run() throws {
        if let childJob {
            try Orchestrator.runChild(childJob)
            return
        }
        let config = try makeConfig()
        let selectedWorkloads = try workloads.map(WorkloadCatalog.select) ?? WorkloadCatalog.all
        var specs = EngineRegistry.all
        if let engines {
            let names = engines.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty }
            specs = try names.map { name in
                guard let spec = EngineRegistry.spec(named: name) else {
                    throw ValidationError("unknown engine \(name); known: \(EngineRegistry.names.joined(separator: ", "))")
                }
                return spec
            }
            specs = EngineRegistry.all.filter { spec in specs.contains { $0.name == spec.name } }
        }
        var available: [(spec: EngineSpec, library: String)] = []
        var skipped: [(name: String, reason: String)] = []
        for spec in specs {
            switch spec.probe() {
            case .success(let library): available.append((spec, library))
            case .failure(let error): skipped.append((spec.name, "\(error) (install its Debian -dev package to include it)"))
            }
        }
        if list {
            for (spec, library) in available { print("\(spec.name): \(spec.kind) [\(library)]") }
            for (name, reason) in skipped { print("\(name): SKIPPED, \(reason)") }
            print("workloads: " + WorkloadCatalog.all.joined(separator: ", "))
            return
        }
        for (name, reason) in skipped { progress("note: \(name) skipped: \(reason)") }
        let plan = RunPlan(config: config, engines: available, skipped: skipped, workloads: selectedWorkloads,
                           commandLine: (["logstore-bench"] + CommandLine.arguments.dropFirst()).joined(separator: " "))
        var orchestrator = Orchestrator(plan: plan, inProcess: inProcess)
        orchestrator.reversed = reverseOrder
        let outcome = orchestrator.run()
        print(RunSummary.render(outcome, markdown: markdown))
        if let json {
            try JSONWriter.write(outcome.results, to: json)
            progress("wrote \(json)")
        }
        if let svg {
            for url in try ChartWriter.write(outcome, to: URL(fileURLWithPath: svg)) { progress("wrote \(url.path)") }
        }
        if !outcome.failures.isEmpty {
            progress("logstore-bench: \(outcome.failures.count) engine run(s) failed")
            throw ExitCode.failure
        }
    }
}
