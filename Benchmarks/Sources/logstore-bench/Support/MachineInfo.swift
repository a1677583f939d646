import Foundation

/// What the run was made on, printed with the results.
enum MachineInfo {
    static var cpuModel: String {
        guard let text = readProcFile("/proc/cpuinfo") else { return "unknown" }
        for line in text.split(separator: "\n") where line.hasPrefix("model name") {
            if let colon = line.firstIndex(of: ":") {
                return line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces)
            }
        }
        return "unknown"
    }

    static var processorCount: Int { ProcessInfo.processInfo.activeProcessorCount }

    static var memoryBytes: UInt64 { ProcessInfo.processInfo.physicalMemory }

    /// The 1-, 5- and 15-minute load averages, as /proc/loadavg has them.
    static var loadAverage: String {
        guard let text = readProcFile("/proc/loadavg") else { return "unknown" }
        return text.split(separator: " ").prefix(3).joined(separator: " ")
    }

    static var kernel: String {
        readProcFile("/proc/sys/kernel/osrelease")?.trimmingCharacters(in: .whitespacesAndNewlines) ?? "unknown"
    }
}
