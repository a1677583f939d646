// cache-bench: the Caches layer's figures (issue 6), each beside its peer in the same run:
//   memory   LRUMemoryCache<Data> set/get vs Foundation's NSCache<NSString, NSData>
//   disk     LRUDiskCache<Data> set/get vs a SQLite-manifest disk cache in the style of YYCache
//            (WAL, synchronous=NORMAL, values over 20 KB in files), 1 KB and 100 KB objects
//   files    FileArrayService write/read of 1 MiB files vs plain file write/read (open, write or
//            read, close; no fsync on either side)
// Usage: swift run -c release cache-bench [--keys N] [--files N] [--rounds N] [--sections memory,disk,files] [--svg DIR]
//        (defaults 200000, 256, 4, all)

import BenchSupport
import Foundation
import Caches
import Preferences

func now() -> Double { Double(DispatchTime.now().uptimeNanoseconds) / 1e9 }

func rate(_ count: Int, _ seconds: Double) -> Double { Double(count) / seconds }

func formatRate(_ perSecond: Double) -> String {
    perSecond >= 1e6 ? String(format: "%.2fM/s", perSecond / 1e6) : String(format: "%.1fk/s", perSecond / 1e3)
}

func pad(_ text: String, _ width: Int, left: Bool = false) -> String {
    let fill = String(repeating: " ", count: max(0, width - text.count))
    return left ? fill + text : text + fill
}

/// The ratios printed so far, for `--svg DIR`.
final class ChartBars: @unchecked Sendable {
    private let lock = NSLock()
    private var bars: [(label: String, ratio: Double)] = []
    func append(_ label: String, _ ratio: Double) { lock.lock(); bars.append((label, ratio)); lock.unlock() }
    var all: [(label: String, ratio: Double)] { lock.lock(); defer { lock.unlock() }; return bars }
}
let chartBars = ChartBars()

func row(_ label: String, _ ours: Double, _ peer: Double, unit: (Double) -> String = formatRate, goal: Double) -> String {
    let ratio = ours / peer
    chartBars.append(label, ratio)
    return pad(label, 40) + pad(unit(ours), 12, left: true) + pad(unit(peer), 12, left: true)
        + pad(String(format: "%.2fx", ratio), 9, left: true) + String(format: "  goal >= %.1fx: ", goal) + (ratio >= goal ? "met" : "NOT met")
}

let arguments = CommandLine.arguments
func option(_ name: String, _ fallback: Int) -> Int {
    arguments.firstIndex(of: name).flatMap { $0 + 1 < arguments.count ? Int(arguments[$0 + 1]) : nil } ?? fallback
}
let keyCount = option("--keys", 200_000)
let fileCount = option("--files", 256)
let work = URL(fileURLWithPath: NSTemporaryDirectory()).appendingPathComponent("cache-bench-\(getpid())")
defer { try? FileManager.default.removeItem(at: work) }
try FileManager.default.createDirectory(at: work, withIntermediateDirectories: true)

print("cache-bench: keys \(keyCount), files \(fileCount) x 1 MiB, work folder \(work.path)")
print(pad("workload", 40) + pad("ours", 12, left: true) + pad("peer", 12, left: true) + pad("ratio", 9, left: true))
print("load average at start: " + ((try? String(contentsOfFile: "/proc/loadavg", encoding: .utf8)) ?? "?").trimmingCharacters(in: .whitespacesAndNewlines))

/// A thread-safe counter for completions.
final class Counter: @unchecked Sendable {
    private let lock = NSLock()
    private var count = 0
    func increment() { lock.lock(); count += 1; lock.unlock() }
    var value: Int { lock.lock(); defer { lock.unlock() }; return count }
}

/// Each workload runs `rounds` times, ours and the peer alternating, and keeps each side's best
/// round: on a shared machine the best round is the one least disturbed by other work.
let rounds = option("--rounds", 4)
/// `--sections memory,disk,files` runs only those (default: all).
let sections: Set<String> = arguments.firstIndex(of: "--sections").flatMap { $0 + 1 < arguments.count ? Set(arguments[$0 + 1].split(separator: ",").map(String.init)) : nil }
    ?? ["memory", "disk", "files"]

struct Rates {
    var oursA = 0.0, oursB = 0.0, peerA = 0.0, peerB = 0.0
    mutating func keepBest(_ other: Rates) {
        oursA = max(oursA, other.oursA); oursB = max(oursB, other.oursB)
        peerA = max(peerA, other.peerA); peerB = max(peerB, other.peerB)
    }
}

// MARK: Memory

if sections.contains("memory") {
    var generator = SystemRandomNumberGenerator()
    let names = (0..<keyCount).map { "key-\($0)" }
    let shuffled = names.shuffled(using: &generator)
    let nsNames = names.map { $0 as NSString }
    let nsShuffled = shuffled.map { $0 as NSString }
    let value = Data(repeating: 7, count: 100)
    let nsValue = value as NSData
    var best = Rates()
    for _ in 0..<rounds {
        var round = Rates()
        let ours = LRUMemoryCache<Data>(capacity: keyCount)
        var start = now()
        for name in names { ours.setObject(value, forKey: name) }
        round.oursA = rate(keyCount, now() - start)
        start = now()
        var hits = 0
        for name in shuffled where ours.object(forKey: name) != nil { hits += 1 }
        round.oursB = rate(keyCount, now() - start)
        guard hits == keyCount else { throw BenchError.verification("LRUMemoryCache hits \(hits)") }

        let peer = NSCache<NSString, NSData>()
        start = now()
        for name in nsNames { peer.setObject(nsValue, forKey: name) }
        round.peerA = rate(keyCount, now() - start)
        start = now()
        hits = 0
        for name in nsShuffled where peer.object(forKey: name) != nil { hits += 1 }
        round.peerB = rate(keyCount, now() - start)
        guard hits == keyCount else { throw BenchError.verification("NSCache hits \(hits)") }
        best.keepBest(round)
    }
    print(row("memory set (100 B values)", best.oursA, best.peerA, goal: 3))
    print(row("memory get (random order)", best.oursB, best.peerB, goal: 3))
}

// MARK: Disk

try DataCenter.configure(root: work.appendingPathComponent("root"), appKey: "bench", appVersion: "1")
let (sqlite, sqliteVersion) = try SQLiteManifestCache.loadAPI()
if sections.contains("disk") { print("peer disk cache: \(sqliteVersion)") }

for (size, count) in [(1_000, keyCount / 4), (100_000, max(1, keyCount / 200))] where sections.contains("disk") {
    let names = (0..<count).map { "object-\($0)" }
    var generator = SystemRandomNumberGenerator()
    let shuffled = names.shuffled(using: &generator)
    let value = Data((0..<size).map { UInt8(truncatingIfNeeded: $0 &* 131) })
    var best = Rates()
    for round in 0..<rounds {
        var rates = Rates()
        let ours = try LRUDiskCache<Data>(name: "bench-\(size)-\(round)", capacity: count * 2, userDependent: false, crypted: false)
        var start = now()
        for name in names { ours.setObject(value, forKey: name) }
        rates.oursA = rate(count, now() - start)
        start = now()
        var bytes = 0
        for name in shuffled { bytes += ours.object(forKey: name)?.count ?? 0 }
        rates.oursB = rate(count, now() - start)
        guard bytes == count * size else { throw BenchError.verification("LRUDiskCache read \(bytes) bytes") }
        ours.removeAllObjects()

        let folder = work.appendingPathComponent("sqlite-\(size)-\(round)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        let peer = try SQLiteManifestCache(api: sqlite, directory: folder)
        start = now()
        for name in names { try peer.set(value, forKey: name) }
        rates.peerA = rate(count, now() - start)
        start = now()
        bytes = 0
        for name in shuffled { bytes += try peer.object(forKey: name)?.count ?? 0 }
        rates.peerB = rate(count, now() - start)
        guard bytes == count * size else { throw BenchError.verification("SQLite cache read \(bytes) bytes") }
        best.keepBest(rates)
    }
    let label = size >= 100_000 ? "100 KB" : "1 KB"
    print(row("disk set \(label) x \(count)", best.oursA, best.peerA, goal: size >= 100_000 ? 1 : 5))
    print(row("disk get \(label) (random order)", best.oursB, best.peerB, goal: size >= 100_000 ? 1 : 3))
}

// MARK: File array vs plain files

if sections.contains("files") {
    let size = 1 << 20
    var content = Data(count: size)
    content.withUnsafeMutableBytes { raw in
        for i in stride(from: 0, to: size, by: 8) { raw.storeBytes(of: UInt64(i) &* 0x9E37_79B9_7F4A_7C15, toByteOffset: i, as: UInt64.self) }
    }
    let names = (0..<fileCount).map { "file-\($0).bin" }
    let storage = try CustomStorage.named("bench")
    func mibPerSecond(_ seconds: Double) -> Double { Double(fileCount) / seconds }
    func mib(_ value: Double) -> String { String(format: "%.0f MiB/s", value) }
    let folder = work.appendingPathComponent("plain")
    try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
    let paths = names.map { folder.appendingPathComponent($0).path }
    var best = Rates()
    func plainWrite(_ path: String) throws {
        let fd = open(path, O_CREAT | O_WRONLY | O_TRUNC, 0o644)
        guard fd >= 0 else { throw BenchError.engine("open \(path)") }
        let written = content.withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
        close(fd)
        guard written == size else { throw BenchError.engine("write \(path)") }
    }
    func plainRead(_ path: String) throws -> Int {
        let fd = open(path, O_RDONLY)
        guard fd >= 0 else { throw BenchError.engine("open \(path)") }
        defer { close(fd) }
        var info = stat()
        fstat(fd, &info)
        var data = Data(count: Int(info.st_size))
        return data.withUnsafeMutableBytes { Glibc.read(fd, $0.baseAddress, $0.count) }
    }
    // File by file, ours and plain alternate (which goes first alternates too), each side's time
    // summed: both see the same moments of a shared machine. Ours uses the synchronous calls
    // (`writeFileSync`, `readFileSync`); the queued async write is timed separately below.
    for round in 0..<rounds {
        var rates = Rates()
        let files = try storage.fileArrayService(name: "bench-\(round)", userDependent: false, capacity: 0, crypted: false)
        var oursSeconds = 0.0, plainSeconds = 0.0
        for (i, name) in names.enumerated() {
            let oursFirst = (i + round) % 2 == 0
            for side in oursFirst ? [0, 1] : [1, 0] {
                let start = now()
                if side == 0 {
                    guard files.writeFileSync(content, name: name) else { throw BenchError.engine("writeFileSync") }
                    oursSeconds += now() - start
                } else {
                    try plainWrite(paths[i])
                    plainSeconds += now() - start
                }
            }
        }
        rates.oursA = Double(fileCount) / oursSeconds
        rates.peerA = Double(fileCount) / plainSeconds
        oursSeconds = 0
        plainSeconds = 0
        var oursTotal = 0, plainTotal = 0
        for (i, name) in names.enumerated() {
            let oursFirst = (i + round) % 2 == 0
            for side in oursFirst ? [0, 1] : [1, 0] {
                let start = now()
                if side == 0 {
                    oursTotal += files.readFileSync(name)?.count ?? 0
                    oursSeconds += now() - start
                } else {
                    plainTotal += try plainRead(paths[i])
                    plainSeconds += now() - start
                }
            }
        }
        guard oursTotal == fileCount * size, plainTotal == fileCount * size else {
            throw BenchError.verification("read \(oursTotal) and \(plainTotal) bytes")
        }
        rates.oursB = Double(fileCount) / oursSeconds
        rates.peerB = Double(fileCount) / plainSeconds
        files.removeAllFiles()
        for path in paths { unlink(path) }
        best.keepBest(rates)
    }
    // The async form: every write queued at once (completion form) and waited for together,
    // against a run of plain writes in the same round (order alternating): written data piles
    // up as dirty pages, and the kernel slows whichever writer comes later, so only sides timed
    // in the same round compare.
    var queued = Rates()
    for round in 0..<rounds {
        var rates = Rates()
        let files = try storage.fileArrayService(name: "queued-\(round)", userDependent: false, capacity: 0, crypted: false)
        func runQueued() throws {
            let group = DispatchGroup()
            let failures = Counter()
            let start = now()
            for name in names {
                group.enter()
                files.writeFile(content, name: name) { ok in
                    if !ok { failures.increment() }
                    group.leave()
                }
            }
            group.wait()
            rates.oursA = mibPerSecond(now() - start)
            guard failures.value == 0 else { throw BenchError.engine("writeFile failed \(failures.value) times") }
        }
        func runPlain() throws {
            let start = now()
            for path in paths { try plainWrite(path) }
            rates.peerA = mibPerSecond(now() - start)
        }
        if round % 2 == 0 { try runQueued(); try runPlain() } else { try runPlain(); try runQueued() }
        files.removeAllFiles()
        for path in paths { unlink(path) }
        queued.keepBest(rates)
    }
    print(row("file array writeFileSync 1 MiB x \(fileCount)", best.oursA, best.peerA, unit: mib, goal: 0.8))
    print(row("file array read 1 MiB (readFileSync)", best.oursB, best.peerB, unit: mib, goal: 0.8))
    print(row("file array writeFile queued (async form)", queued.oursA, queued.peerA, unit: mib, goal: 0.8))
}

print("load average at end: " + ((try? String(contentsOfFile: "/proc/loadavg", encoding: .utf8)) ?? "?").trimmingCharacters(in: .whitespacesAndNewlines))
if let index = arguments.firstIndex(of: "--svg"), index + 1 < arguments.count {
    let chart = RatioChart(title: "cache-bench: each cache vs its peer (> 1x: UnifiedStorage faster)", peer: "the peer", bars: chartBars.all)
    print("chart: " + (try chart.write(to: URL(fileURLWithPath: arguments[index + 1]), name: "cache-bench")).path)
}
