#if canImport(Glibc)
import Glibc
#endif

/// The memory counters of this process, from /proc/self/status (Linux).
struct ProcessMemory: Codable {
    /// Peak resident set (VmHWM) since the process started or since `resetPeak()`.
    var peakRSS: Int
    /// Resident set now (VmRSS) = RssAnon + RssFile + RssShmem.
    var rss: Int
    /// Anonymous resident memory: heap (the keydir, the harness's buffers), stacks.
    var rssAnon: Int
    /// File-backed resident memory: the binary and libraries, and the pages of mmapped segment
    /// files this process has touched (they are page-cache pages shared with the kernel).
    var rssFile: Int
    var rssShmem: Int

    /// Reads the counters; nil where /proc is not available.
    static func current() -> ProcessMemory? {
        guard let text = readProcFile("/proc/self/status") else { return nil }
        var fields: [String: Int] = [:]
        for line in text.split(separator: "\n") {
            guard let colon = line.firstIndex(of: ":") else { continue }
            let name = String(line[..<colon])
            guard ["VmHWM", "VmRSS", "RssAnon", "RssFile", "RssShmem"].contains(name) else { continue }
            let number = line[line.index(after: colon)...].split(whereSeparator: { $0 == " " || $0 == "\t" }).first.flatMap { Int($0) } ?? 0
            fields[name] = number * 1024  // the values are in kB
        }
        guard let peak = fields["VmHWM"], let rss = fields["VmRSS"] else { return nil }
        return ProcessMemory(peakRSS: peak, rss: rss, rssAnon: fields["RssAnon"] ?? 0,
                             rssFile: fields["RssFile"] ?? 0, rssShmem: fields["RssShmem"] ?? 0)
    }

    /// Resets VmHWM to the current RSS (writes 5 to /proc/self/clear_refs, Linux 4.0+), so the
    /// peak of one workload can be read on its own. Returns false when that is not possible.
    @discardableResult
    static func resetPeak() -> Bool {
        let fd = open("/proc/self/clear_refs", O_WRONLY)
        guard fd >= 0 else { return false }
        defer { close(fd) }
        let written = "5".utf8CString.withUnsafeBufferPointer { write(fd, $0.baseAddress, 1) }
        return written == 1
    }
}

/// The whole content of a (proc) file, read until EOF; nil when it cannot be opened.
func readProcFile(_ path: String) -> String? {
    let fd = open(path, O_RDONLY)
    guard fd >= 0 else { return nil }
    defer { close(fd) }
    var bytes: [UInt8] = []
    var chunk = [UInt8](repeating: 0, count: 4096)
    while true {
        let n = chunk.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
        if n <= 0 { break }
        bytes += chunk[0..<n]
    }
    return String(decoding: bytes, as: UTF8.self)
}
