import Foundation

/// `--svg DIR`: one chart per workload group, each bar an engine in a workload, drawn as
/// LogStore's speed relative to that engine's (ops/s ratio; for reopen, the engine's time /
/// LogStore's), so a bar right of 1x means LogStore was faster.
enum ChartWriter {
    /// Writes `logstore-bench-GROUP.svg` files into `directory`; returns their URLs.
    static func write(_ outcome: RunOutcome, to directory: URL) throws -> [URL] {
        var urls: [URL] = []
        for group in WorkloadGroup.allCases {
            var bars: [(label: String, ratio: Double)] = []
            for workload in group.workloads where outcome.plan.workloads.contains(workload) {
                let rows = outcome.results.filter { $0.workload == workload }
                guard let reference = rows.first(where: { $0.engine == LogStoreEngine.plainName }) else { continue }
                for row in rows where row.engine != LogStoreEngine.plainName {
                    if let ops = row.opsPerSecond, let base = reference.opsPerSecond, ops > 0 {
                        bars.append(("\(workload) · \(row.engine)", base / ops))
                    } else if let ms = row.reopenMillis, let base = reference.reopenMillis, base > 0 {
                        bars.append(("\(workload) · \(row.engine)", ms / base))
                    }
                }
            }
            guard !bars.isEmpty else { continue }
            let chart = RatioChart(title: "logstore-bench \(group.rawValue): LogStore vs each engine (> 1x: LogStore faster)",
                                   peer: "the engine", bars: bars)
            urls.append(try chart.write(to: directory, name: "logstore-bench-\(group.rawValue)"))
        }
        return urls
    }
}
