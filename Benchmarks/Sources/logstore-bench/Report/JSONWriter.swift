import Foundation

/// Writes results as a JSON list of objects with the keys `workload`, `engine`, `ops_per_s`,
/// `p50_us`, `p99_us`, `bytes_on_disk`, `peak_rss_bytes`, `reopen_ms` (null where a figure does
/// not apply), in that order.
enum JSONWriter {
    static func encode(_ results: [WorkloadResult]) -> String {
        let objects = results.map { result -> String in
            let fields: [(String, String)] = [
                ("workload", string(result.workload)),
                ("engine", string(result.engine)),
                ("ops_per_s", number(result.opsPerSecond, digits: 1)),
                ("p50_us", number(result.p50Micros, digits: 3)),
                ("p99_us", number(result.p99Micros, digits: 3)),
                ("bytes_on_disk", result.bytesOnDisk.map(String.init) ?? "null"),
                ("peak_rss_bytes", result.peakRSSBytes.map(String.init) ?? "null"),
                ("reopen_ms", number(result.reopenMillis, digits: 3)),
            ]
            return "  {" + fields.map { "\(string($0.0)): \($0.1)" }.joined(separator: ", ") + "}"
        }
        return "[\n" + objects.joined(separator: ",\n") + "\n]\n"
    }

    static func write(_ results: [WorkloadResult], to path: String) throws {
        try encode(results).write(toFile: path, atomically: true, encoding: .utf8)
    }

    private static func number(_ value: Double?, digits: Int) -> String {
        guard let value, value.isFinite else { return "null" }
        return String(format: "%.\(digits)f", value)
    }

    private static func string(_ text: String) -> String {
        var out = "\""
        for scalar in text.unicodeScalars {
            switch scalar {
            case "\"": out += "\\\""
            case "\\": out += "\\\\"
            case "\n": out += "\\n"
            case _ where scalar.value < 0x20: out += String(format: "\\u%04x", scalar.value)
            default: out.unicodeScalars.append(scalar)
            }
        }
        return out + "\""
    }
}
