import Foundation

/// The readable report of one run: machine, results table, details, memory, goals.
enum RunSummary {
    static func render(_ report: RunReport, markdown: Bool = false) -> String {
        let config = report.config
        var out: [String] = []
        out.append("logstore-bench: \(report.engine), \(config.keys) keys key%08d, \(config.valueSize)-byte values, one thread, default durability")
        out.append("machine: \(MachineInfo.processorCount) cpus, \(MachineInfo.cpuModel), \(Format.bytes(Int(MachineInfo.memoryBytes))) RAM, Linux \(MachineInfo.kernel)")
        out.append("load average before/after: \(report.loadBefore) / \(report.loadAfter); clock_gettime overhead \(Format.fixed(report.clockOverheadNanos, 1)) ns" +
                   (config.recordLatency ? " (one read per op, included in ops/s)" : " (latency not recorded)"))
        out.append("")

        var table = TablePrinter(headers: ["workload", "engine", "ops/s", "p50 us", "p99 us", "time s",
                                           "peak RSS", "reopen ms", "bytes on disk"], leftAligned: [0, 1])
        for r in report.results {
            table.add([r.workload, r.engine,
                       Format.optional(r.opsPerSecond) { Format.rate($0) },
                       Format.optional(r.p50Micros) { Format.fixed($0, 2) },
                       Format.optional(r.p99Micros) { Format.fixed($0, 2) },
                       Format.optional(r.seconds) { Format.fixed($0, 2) },
                       Format.optional(r.peakRSSBytes) { Format.bytes($0) },
                       Format.optional(r.reopenMillis) { Format.fixed($0, 2) },
                       Format.optional(r.bytesOnDisk) { "\($0) (\(Format.fixed(Double($0) / Double(config.rawBytes), 3))x raw)" }])
        }
        out.append(markdown ? table.renderMarkdown() : table.render())
        out.append("")
        out.append("peak RSS is each workload's own VmHWM" + (report.peakResets ? " (reset via /proc/self/clear_refs at its start)" : " (could not be reset: cumulative)") +
                   "; process peak over the run: \(Format.bytes(report.processPeakRSS))")
        for r in report.results where !r.details.isEmpty {
            out.append("\(r.workload):")
            for line in r.details { out.append("  - \(line)") }
        }
        out.append("")

        var memory = TablePrinter(headers: ["memory at", "VmHWM (phase peak)", "VmRSS", "RssAnon", "RssFile", "index (keydir)", "index/key"],
                                  leftAligned: [0])
        for c in report.checkpoints {
            memory.add([c.label, Format.bytes(c.memory.peakRSS), Format.bytes(c.memory.rss), Format.bytes(c.memory.rssAnon),
                        Format.bytes(c.memory.rssFile), Format.optional(c.indexBytes) { Format.bytes($0) },
                        Format.optional(c.indexBytes) { Format.fixed(Double($0) / Double(max(1, c.keys)), 1) + " B" }])
        }
        out.append(markdown ? memory.renderMarkdown() : memory.render())
        out.append("RssFile counts the pages of the mmapped segment files the process has touched (page cache, shared); RssAnon is heap: keydir, harness buffers, runtime.")
        out.append("")
        out.append(contentsOf: Goals.evaluate(report))
        return out.joined(separator: "\n")
    }
}

/// The targets, checked against a run (they are stated for 1,000,000 keys, 100-byte values).
enum Goals {
    static let opsTarget = 1_500_000.0
    static let reopenTargetMillis = 20.0
    static let memoryTargetBytes = 100 << 20
    static let diskRatioTarget = 1.2

    static func evaluate(_ report: RunReport) -> [String] {
        let byName = Dictionary(report.results.map { ($0.workload, $0) }, uniquingKeysWith: { a, _ in a })
        var lines = ["goals (stated at 1,000,000 keys x 100 B" + (report.config.keys == 1_000_000 && report.config.valueSize == 100 ? ")" : "; this run differs)") + ":"]
        func verdict(_ ok: Bool?) -> String { ok.map { $0 ? "met    " : "NOT met" } ?? "n/a    " }

        let puts = byName["put"]?.opsPerSecond
        lines.append("  \(verdict(puts.map { $0 >= opsTarget })) puts >= 1.5M/s: \(Format.optional(puts) { Format.rate($0) + "/s" })")
        let gets = byName["get"]?.opsPerSecond
        lines.append("  \(verdict(gets.map { $0 >= opsTarget })) gets >= 1.5M/s: \(Format.optional(gets) { Format.rate($0) + "/s" })")
        let reopen = byName["reopen"]?.reopenMillis
        lines.append("  \(verdict(reopen.map { $0 <= reopenTargetMillis })) reopen + first get <= 20 ms: \(Format.optional(reopen) { Format.fixed($0, 2) + " ms" })" +
                     (byName["reopen_full_scan"]?.reopenMillis.map { " (full scan without the snapshot: \(Format.fixed($0, 1)) ms)" } ?? ""))
        // The keydir lives inside the process RSS: the check is on the peak RSS while the store
        // holds every key (put and get phases); the anonymous part alone is shown beside it.
        let loaded = report.checkpoints.filter { $0.label == "after put" || $0.label == "after get" }
        let peak = loaded.map(\.memory.peakRSS).max()
        let anon = loaded.map(\.memory.rssAnon).max()
        let keydir = loaded.compactMap(\.indexBytes).max()
        lines.append("  \(verdict(peak.map { $0 <= memoryTargetBytes })) keydir + process RSS <= 100 MiB: peak RSS \(Format.optional(peak) { Format.bytes($0) })" +
                     " (keydir \(Format.optional(keydir) { Format.bytes($0) }), RssAnon \(Format.optional(anon) { Format.bytes($0) }), rest is RssFile = mmapped segment pages)")
        let disk = byName["compaction"]?.bytesOnDisk.map { Double($0) / Double(report.config.rawBytes) }
        lines.append("  \(verdict(disk.map { $0 <= diskRatioTarget })) bytes on disk after compaction <= 1.2x raw: \(Format.optional(disk) { Format.fixed($0, 3) + "x" })")
        return lines
    }
}
