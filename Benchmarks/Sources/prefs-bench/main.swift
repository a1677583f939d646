// prefs-bench: the Preferences layer's figures (issue 5), same machine and run as its peers:
//   prefs-set   typed Int sets through SharedPreferences, vs Foundation's UserDefaults
//   prefs-get   typed Int gets, vs a raw LogStore get of the same bytes
//   user-switch setCurrentUserId from one user to another whose store holds 100k keys
//   prefs-zstd  ~120-byte JSON strings through setString, with and without StorageCompression
//               (issue 22): sets, reopen (dictionary training), rewrites, gets, bytes on disk
// Usage: swift run -c release prefs-bench [--keys N] [--zstd-keys N] [--only-zstd] [--svg DIR]
//   (default 200000 / 100000; UserDefaults capped at 20000)

import BenchSupport
import Foundation
import LogStore
import Preferences

func now() -> Double { Double(DispatchTime.now().uptimeNanoseconds) / 1e9 }

func rate(_ count: Int, _ seconds: Double) -> String {
    let perSecond = Double(count) / seconds
    return perSecond >= 1e6 ? String(format: "%.2fM/s", perSecond / 1e6) : String(format: "%.1fk/s", perSecond / 1e3)
}

let arguments = CommandLine.arguments
let keys = arguments.firstIndex(of: "--keys").flatMap { Int(arguments[$0 + 1]) } ?? 200_000
let work = URL(fileURLWithPath: NSTemporaryDirectory()).appendingPathComponent("prefs-bench-\(getpid())")
defer { try? FileManager.default.removeItem(at: work) }
let names = (0..<keys).map { "key\($0)" }
let zstdKeys = arguments.firstIndex(of: "--zstd-keys").flatMap { Int(arguments[$0 + 1]) } ?? 100_000

/// Bytes of the files under `url` (st_size), recursively.
func bytesOnDisk(_ url: URL) -> Int {
    guard let files = FileManager.default.enumerator(at: url, includingPropertiesForKeys: [.fileSizeKey]) else { return 0 }
    var total = 0
    for case let file as URL in files { total += (try? file.resourceValues(forKeys: [.fileSizeKey]).fileSize) ?? 0 }
    return total
}

/// A settings-like JSON value of ~120 bytes; `round` changes a few fields.
func jsonValue(_ i: Int, round: Int) -> String {
    "{\"user\":\"user-\(i)\",\"theme\":\"\(round % 2 == 0 ? "dark" : "light")\",\"fontSize\":\(12 + (i + round) % 5),\"lang\":\"en-US\",\"notifications\":{\"email\":true,\"push\":\(i % 2 == 0)}}"
}

/// prefs-zstd for one setting: write every key, reopen, rewrite every key, read every key,
/// compact and close; bytes on disk after that.
func zstdRow(_ label: String, compression: StorageCompression?) throws -> String {
    let root = work.appendingPathComponent("zstd-\(label)")
    let zNames = (0..<zstdKeys).map { "key\($0)" }
    var center: DataCenter? = try DataCenter(root: root, appKey: "bench", appVersion: "1", compression: compression)
    var start = now()
    for (i, name) in zNames.enumerated() { try center?.commonPreferences.setString(jsonValue(i, round: 0), forKey: name, business: "bench") }
    let firstSeconds = now() - start
    center = nil
    start = now()
    center = try DataCenter(root: root, appKey: "bench", appVersion: "1", compression: compression)
    let preferences = try XUnwrap(center?.commonPreferences)
    let openSeconds = now() - start
    start = now()
    for (i, name) in zNames.enumerated() { try preferences.setString(jsonValue(i, round: 1), forKey: name, business: "bench") }
    let rewriteSeconds = now() - start
    start = now()
    var length = 0
    for name in zNames { length &+= preferences.string(forKey: name, business: "bench")?.utf8.count ?? 0 }
    let getSeconds = now() - start
    precondition(length == zNames.indices.reduce(0) { $0 + jsonValue($1, round: 1).utf8.count }, "prefs-zstd read wrong values")
    let store = try XUnwrap(center).logStore(userDependent: false)
    try store.compact()
    center = nil
    let bytes = bytesOnDisk(root)
    return "prefs-zstd   \(label.padding(toLength: 5, withPad: " ", startingAt: 0)) set \(rate(zstdKeys, firstSeconds))  reopen \(String(format: "%.1f", openSeconds * 1000)) ms  rewrite \(rate(zstdKeys, rewriteSeconds))  get \(rate(zstdKeys, getSeconds))  on disk after compaction \(String(format: "%.2f", Double(bytes) / 1048576)) MiB (\(String(format: "%.1f", Double(bytes) / Double(zstdKeys))) B/key)"
}

if arguments.contains("--only-zstd") {
    do {
        print("prefs-bench: prefs-zstd, \(zstdKeys) keys, one thread, release build")
        print(try zstdRow("off", compression: nil))
        print(try zstdRow("zstd", compression: StorageCompression()))
    } catch {
        print("prefs-bench failed: \(error)")
        try? FileManager.default.removeItem(at: work)
        exit(1)
    }
    try? FileManager.default.removeItem(at: work)
    exit(0)
}

do {
    let center = try DataCenter(root: work.appendingPathComponent("root"), appKey: "bench", appVersion: "1")
    let preferences = center.commonPreferences

    var start = now()
    for (i, name) in names.enumerated() { try preferences.set(i, forKey: name, business: "bench") }
    let setSeconds = now() - start
    start = now()
    var checksum = 0
    for name in names { checksum &+= preferences.integer(forKey: name, business: "bench") }
    let getSeconds = now() - start
    precondition(checksum == (keys - 1) * keys / 2, "prefs-get read wrong values")

    // Raw LogStore gets of the same number of 9-byte values (tag + Int), for the ratio.
    var options = LogStore.Options()
    options.segmentSize = 64 << 20
    let raw = try LogStore(directory: work.appendingPathComponent("raw"), options: options)
    let rawKeys = names.map { Array($0.utf8) }
    for key in rawKeys { try raw.put([1, 2, 3, 4, 5, 6, 7, 8, 9], forKey: key) }
    start = now()
    var rawBytes = 0
    for key in rawKeys { rawBytes &+= try raw.get(forKey: key)?.count ?? 0 }
    let rawGetSeconds = now() - start
    precondition(rawBytes == keys * 9)
    try raw.close()

    // UserDefaults, capped: it is three orders of magnitude slower here.
    let defaultsCount = min(keys, 20_000)
    let suite = "prefs-bench-\(getpid())"
    let defaults = UserDefaults(suiteName: suite)!
    start = now()
    for i in 0..<defaultsCount { defaults.set(i, forKey: names[i]) }
    defaults.synchronize()
    let defaultsSeconds = now() - start
    defaults.removePersistentDomain(forName: suite)

    // User switch: u1 -> u2 where u2's store holds 100k keys (written, then closed by switching away).
    try center.setCurrentUserId("u2")
    let userPreferences = try XUnwrap(center.userPreferences)
    for i in 0..<100_000 { try userPreferences.set(i, forKey: "k\(i)", business: "bench") }
    try center.setCurrentUserId("u1")
    var switches: [Double] = []
    for _ in 0..<5 {
        start = now()
        try center.setCurrentUserId("u2")
        _ = center.userPreferences?.integer(forKey: "k99999", business: "bench")
        switches.append((now() - start) * 1000)
        try center.setCurrentUserId("u1")
    }
    switches.sort()

    print("prefs-bench: \(keys) keys, one thread, release build")
    print("prefs-set    SharedPreferences.set(Int)  \(rate(keys, setSeconds))   UserDefaults.set(Int) \(rate(defaultsCount, defaultsSeconds)) (\(defaultsCount) keys)   ratio \(String(format: "%.0fx", (Double(keys) / setSeconds) / (Double(defaultsCount) / defaultsSeconds)))")
    print("prefs-get    SharedPreferences.integer   \(rate(keys, getSeconds))   raw LogStore.get \(rate(keys, rawGetSeconds))   prefs/raw time \(String(format: "%.2fx", getSeconds / rawGetSeconds))")
    print(try zstdRow("off", compression: nil))
    print(try zstdRow("zstd", compression: StorageCompression()))
    if let index = arguments.firstIndex(of: "--svg"), index + 1 < arguments.count {
        let chart = RatioChart(title: "prefs-bench: Preferences vs its peers (> 1x: UnifiedStorage faster)", peer: "the peer", bars: [
            ("set Int: SharedPreferences vs UserDefaults", (Double(keys) / setSeconds) / (Double(defaultsCount) / defaultsSeconds)),
            ("get Int: SharedPreferences vs raw LogStore.get", rawGetSeconds / getSeconds),
        ])
        print("chart: " + (try chart.write(to: URL(fileURLWithPath: arguments[index + 1]), name: "prefs-bench")).path)
    }
    print("user-switch  u1 -> u2 (100k keys) + first get: median \(String(format: "%.1f", switches[2])) ms, min \(String(format: "%.1f", switches[0])), max \(String(format: "%.1f", switches[4]))")
} catch {
    print("prefs-bench failed: \(error)")
    exit(1)
}

func XUnwrap<T>(_ value: T?) throws -> T {
    guard let value else { throw StoreError.noCurrentUser }
    return value
}
