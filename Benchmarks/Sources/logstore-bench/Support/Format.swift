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

    /// 1000000 -> "1,000,000".
    static func count(_ value: Int) -> String {
        let digits = String(value)
        var out = ""
        for (i, c) in digits.enumerated() {
            if i > 0, (digits.count - i) % 3 == 0 { out.append(",") }
            out.append(c)
        }
        return out
    }

    /// 0.3123 -> "0.31x".
    static func ratio(_ value: Double) -> String {
        guard value.isFinite else { return "-" }
        if value >= 10 { return String(format: "%.1fx", value) }
        return value >= 0.1 ? String(format: "%.2fx", value) : String(format: "%.3fx", value)
    }

    static func fixed(_ value: Double, _ digits: Int) -> String { String(format: "%.\(digits)f", value) }

    static func optional<T>(_ value: T?, _ body: (T) -> String) -> String { value.map(body) ?? "-" }
}
