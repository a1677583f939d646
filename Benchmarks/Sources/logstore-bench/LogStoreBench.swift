import ArgumentParser
import Foundation

@main
struct LogStoreBench: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "logstore-bench",
        abstract: "Measures a key-value engine: puts/s, gets/s, reopen time, memory, bytes on disk after compaction.",
        discussion: """
            Keys are key%08d, values a fixed size; one thread; the engine's default durability.
            Workloads, in order, on one store in a temporary directory (removed afterwards):
              put         every key once, in order, into a fresh store (p50/p99 per put)
              get         every key once, random order, same process (p50/p99 per get)
              reopen      close, then open + one get (median of --reopen-runs); and
              reopen_full_scan  the same without LogStore's index.snapshot (a full scan)
              compaction  overwrite every key, compact(), close; bytes of the files vs raw key+value bytes
            Build and run in release: swift run -c release logstore-bench
            """
    )

    @Option(help: "Number of keys (default 1000000; 100000 with --quick).")
    var keys: Int?

    @Option(name: .customLong("value-size"), help: "Bytes per value.")
    var valueSize: Int = 100

    @Flag(help: "100,000 keys (unless --keys is given).")
    var quick = false

    @Option(help: "Write the results as JSON to this file.")
    var json: String?

    @Option(help: "Engine to measure: \(EngineRegistry.names.joined(separator: ", ")).")
    var engine: String = "LogStore"

    @Option(name: .customLong("reopen-runs"), help: "Timed reopens with the index snapshot (the median is reported).")
    var reopenRuns: Int = 5

    @Option(name: .customLong("cold-reopen-runs"), help: "Timed reopens without it (full scans); 0 skips them.")
    var coldReopenRuns: Int = 3

    @Flag(name: .customLong("no-latency"), help: "Do not time each operation (no p50/p99).")
    var noLatency = false

    @Option(help: "Seed of the random get order.")
    var seed: UInt64 = 20_240_601

    @Option(name: .customLong("work-dir"), help: "Where the temporary store directory is made.")
    var workDir: String = "/tmp"

    @Option(help: "Comma-separated workloads: put,get,reopen,compaction (put always runs: it loads the store).")
    var workloads: String = "put,get,reopen,compaction"

    @Flag(help: "Keep the store directory instead of removing it.")
    var keep = false

    @Flag(help: "Print the tables as Markdown.")
    var markdown = false

    func validate() throws {
        let count = keys ?? (quick ? 100_000 : 1_000_000)
        guard count > 0, count <= KeyBuffer.maxKeys else {
            throw ValidationError("--keys must be in 1...\(KeyBuffer.maxKeys) (keys are key%08d)")
        }
        guard valueSize >= 0 else { throw ValidationError("--value-size must be >= 0") }
        let unknown = selectedWorkloads.subtracting(BenchConfig.allWorkloads)
        guard unknown.isEmpty else { throw ValidationError("unknown workload(s): \(unknown.sorted().joined(separator: ", "))") }
        guard reopenRuns >= 1, coldReopenRuns >= 0 else { throw ValidationError("--reopen-runs >= 1, --cold-reopen-runs >= 0") }
    }

    var selectedWorkloads: Set<String> {
        Set(workloads.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces).lowercased() }.filter { !$0.isEmpty })
    }

    func run() throws {
        let config = BenchConfig(keys: keys ?? (quick ? 100_000 : 1_000_000), valueSize: valueSize,
                                 recordLatency: !noLatency, reopenRuns: reopenRuns, coldReopenRuns: coldReopenRuns,
                                 seed: seed, workRoot: workDir, keepDirectory: keep,
                                 workloads: selectedWorkloads.union(["put"]))
        let report = try EngineRegistry.run(engine: engine, config: config)
        print(RunSummary.render(report, markdown: markdown))
        if let json {
            try JSONWriter.write(report.results, to: json)
            progress("wrote \(json)")
        }
    }
}
