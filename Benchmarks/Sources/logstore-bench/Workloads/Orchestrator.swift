import Foundation

/// What a run is made of: the engines that can run here, those skipped and why, the workloads.
struct RunPlan {
    var config: BenchConfig
    /// Engines to run, in registry order, with what their probe loaded.
    var engines: [(spec: EngineSpec, library: String)]
    /// Engines asked for that cannot run here, with the reason.
    var skipped: [(name: String, reason: String)]
    var workloads: [String]
    var commandLine: String
}

/// Everything a run measured.
struct RunOutcome {
    var plan: RunPlan
    /// One result per workload and engine (the median run where there were several).
    var results: [WorkloadResult]
    var memory: [MemoryCheckpoint]
    var notes: [String]
    /// Engine runs that failed (verification, engine error, crash, timeout).
    var failures: [String]
    var loadBefore: String
    var loadAfter: String
    var started: Date
    var seconds: Double
    var clockOverheadNanos: Double
}

/// Runs the plan: for each group of workloads, each engine in a child process of its own
/// (`--child-job`), so every engine starts from a fresh process (its peak RSS is its own, a
/// crash or leak of one cannot touch the others, only its own library is loaded), and the
/// engines of one group run close together in time.
struct Orchestrator {
    let plan: RunPlan
    /// Run every job in this process instead (for profilers and debugging).
    let inProcess: Bool
    /// Run the engines of each group in the reverse of registry order (the tables keep it), so
    /// two runs, one each way, show whether going first or second favours an engine.
    var reversed = false

    func run() -> RunOutcome {
        let started = Date()
        let startTime = MonotonicClock.now()
        let loadBefore = MachineInfo.loadAverage
        let overhead = MonotonicClock.overheadNanos()
        var runs: [WorkloadResult] = []
        var memory: [MemoryCheckpoint] = []
        var notes: [String] = []
        var failures: [String] = []

        var jobs: [(GroupJob, EngineSpec)] = []
        for group in WorkloadGroup.allCases {
            let selected = group.workloads.filter(plan.workloads.contains)
            guard !selected.isEmpty else { continue }
            var participants = plan.engines.map(\.spec).filter { spec in selected.contains(where: spec.takesPart) }
            if reversed { participants.reverse() }
            let repetitions = group.isVariantComparison ? max(1, plan.config.repetitions) : 1
            for repetition in 0..<repetitions {
                for spec in participants where repetition == 0 || spec.isLogStoreFamily {
                    jobs.append((GroupJob(group: group, engine: spec.name, workloads: selected.filter(spec.takesPart),
                                          config: plan.config, repetition: repetition), spec))
                }
            }
        }

        for (number, (job, spec)) in jobs.enumerated() {
            let label = "[\(number + 1)/\(jobs.count)] \(spec.name), \(job.group.rawValue)" +
                (job.repetition > 0 || job.group.isVariantComparison && spec.isLogStoreFamily ? " (run \(job.repetition + 1))" : "") +
                ": \(job.workloads.joined(separator: ", "))"
            progress(label + " ...")
            // Untimed: the dirty pages the previous engines left (their stores are deleted,
            // but not every page is dropped before writeback starts) reach the disk now, not
            // during this engine's timed loop. Without it the first engine of a group ran ~10%
            // slower at put/100B whichever engine it was (BENCHMARKS.md, issue 21).
            sync()
            let jobStart = MonotonicClock.now()
            switch execute(job, spec) {
            case .success(let report):
                runs += report.results
                memory += report.memory
                for note in report.notes where !notes.contains(note) { notes.append(note) }
                progress("    done in \(Format.fixed(MonotonicClock.seconds(from: jobStart, to: MonotonicClock.now()), 1)) s (load \(report.loadAverage))")
            case .failure(let error):
                let message = error.description
                failures.append("\(spec.name), \(job.group.rawValue) workloads: \(message)")
                progress("    FAILED: \(message)")
            }
        }
        return RunOutcome(plan: plan, results: Self.merge(runs), memory: memory, notes: notes, failures: failures,
                          loadBefore: loadBefore, loadAfter: MachineInfo.loadAverage, started: started,
                          seconds: MonotonicClock.seconds(from: startTime, to: MonotonicClock.now()), clockOverheadNanos: overhead)
    }

    /// Runs one job in a child process (or here), returning its report or what went wrong.
    private func execute(_ job: GroupJob, _ spec: EngineSpec) -> Result<ChildReport, BenchError> {
        if inProcess {
            do { return .success(try spec.runGroup(job)) } catch { return .failure(.engine("\(error)")) }
        }
        let output = "\(plan.config.workRoot)/logstore-bench-\(getpid())-\(job.engine.lowercased())-\(job.group.rawValue).json"
        defer { try? FileManager.default.removeItem(atPath: output) }
        var childJob = job
        childJob.outputPath = output
        do {
            let encoded = try JSONEncoder().encode(childJob)
            let process = Process()
            process.executableURL = URL(fileURLWithPath: Self.executablePath)
            process.arguments = ["--child-job", String(decoding: encoded, as: UTF8.self)]
            try process.run()
            let limit = plan.config.quick ? 240.0 : 1800.0
            let start = MonotonicClock.now()
            while process.isRunning {
                if MonotonicClock.seconds(from: start, to: MonotonicClock.now()) > limit {
                    process.terminate()
                    process.waitUntilExit()
                    return .failure(.engine("timed out after \(Int(limit)) s"))
                }
                usleep(20_000)
            }
            guard process.terminationReason == .exit, process.terminationStatus == 0 else {
                let how = process.terminationReason == .exit ? "exit status \(process.terminationStatus)" : "signal \(process.terminationStatus)"
                return .failure(.engine("child process ended with \(how)"))
            }
            let data = try Data(contentsOf: URL(fileURLWithPath: output))
            return .success(try JSONDecoder().decode(ChildReport.self, from: data))
        } catch {
            return .failure(.engine("\(error)"))
        }
    }

    /// This executable, for the child processes.
    static var executablePath: String {
        (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")) ?? CommandLine.arguments[0]
    }

    /// Runs a job handed over by the parent and writes its report (the child's whole work).
    static func runChild(_ encodedJob: String) throws {
        let job = try JSONDecoder().decode(GroupJob.self, from: Data(encodedJob.utf8))
        guard let spec = EngineRegistry.spec(named: job.engine) else { throw BenchError.usage("unknown engine \(job.engine)") }
        let report = try spec.runGroup(job)
        let data = try JSONEncoder().encode(report)
        try data.write(to: URL(fileURLWithPath: job.outputPath ?? "/dev/stdout"))
    }

    /// One result per (workload, engine): where there are several runs, the median by ops/s
    /// (or by reopen time), with every run's figure added to its details.
    static func merge(_ runs: [WorkloadResult]) -> [WorkloadResult] {
        var order: [String] = []
        var byKey: [String: [WorkloadResult]] = [:]
        for run in runs {
            let key = run.workload + "\u{0}" + run.engine
            if byKey[key] == nil { order.append(key) }
            byKey[key, default: []].append(run)
        }
        let workloadOrder = Dictionary(uniqueKeysWithValues: WorkloadCatalog.all.enumerated().map { ($1, $0) })
        let engineOrder = Dictionary(uniqueKeysWithValues: EngineRegistry.names.enumerated().map { ($1, $0) })
        return order.map { key -> WorkloadResult in
            let all = byKey[key]!
            guard all.count > 1 else { return all[0] }
            let sorted = all.sorted { ($0.opsPerSecond ?? -($0.reopenMillis ?? 0)) < ($1.opsPerSecond ?? -($1.reopenMillis ?? 0)) }
            var chosen = sorted[(sorted.count - 1) / 2]
            let figures = all.map { run in
                run.opsPerSecond.map { Format.rate($0) + "/s" } ?? run.reopenMillis.map { Format.fixed($0, 2) + " ms" } ?? "-"
            }
            chosen.details.insert("median of \(all.count) runs, alternating with the other LogStore variant(s): \(figures.joined(separator: ", "))", at: 0)
            return chosen
        }.sorted {
            (workloadOrder[$0.workload] ?? 0, engineOrder[$0.engine] ?? 0) < (workloadOrder[$1.workload] ?? 0, engineOrder[$1.engine] ?? 0)
        }
    }
}
