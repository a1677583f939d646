import Foundation

/// Number formatting for the table.
enum Format {
    static func bytes(_ count: Int) -> String {
        let value = Double(count)
        if count >= 1 << 30 { return String(format: "%.2f GiB", value / Double(1 << 30)) }
        if count >= 1 << 20 { return String(format: "%.1f MiB", value / Double(1 << 20)) }
        if count >= 1 << 10 { return String(format: "%.1f KiB", value / Double(1 << 10)) }
        return "\(count) B"
    }

    /// 1234567 -> "1.23M", 87654 -> "87.7k".
    static func rate(_ value: Double) -> String {
        if value >= 1e6 { return String(format: "%.2fM", value / 1e6) }
        if value >= 1e3 { return String(format: "%.1fk", value / 1e3) }
        return String(format: "%.0f", value)
    }

    static func fixed(_ value: Double, _ digits: Int) -> String { String(format: "%.\(digits)f", value) }

    static func optional<T>(_ value: T?, _ body: (T) -> String) -> String { value.map(body) ?? "-" }
}

enum BenchError: Error, CustomStringConvertible {
    case usage(String)
    case verification(String)

    var description: String {
        switch self {
        case .usage(let message): return "usage: \(message)"
        case .verification(let message): return "verification failed: \(message)"
        }
    }
}
