// files-bench: the Files module's figures (issue 23) beside plain FileHandle I/O, same run:
//   write/<size>   whole files written: FileHandle (create, write in 1 MiB pieces, close), the
//                  same into a temporary file renamed over the target ("FileHandle, temp +
//                  rename": plain I/O with the atomic replacement FileStorage gives), and
//                  FileStorage plain and encrypted writers (temporary file, rename at close)
//   read/<size>    whole files read: FileHandle.readToEnd vs FileStorage readers (readToEnd)
//   random-4KiB    4 KiB reads at random offsets in a 256 MiB file kept open: FileHandle
//                  (seek + read(upToCount:)) vs FileStorage readers (seek + read(into:))
// Sizes 4 KiB (2,000 files), 1 MiB (200 files), 256 MiB (2 files). Encrypted files with 4 KiB
// segments (the default) and 64 KiB segments. No fsync anywhere (the process-crash-safe class);
// files are in the page cache. Each figure is the median of 3 runs, kinds alternating, each run
// starting at the next kind, with a sync(2) (untimed) before each kind's writes and before its
// reads, so that no kind pays for the writeback of dirty pages written before. The encrypted
// reader opens batches of 128 KiB and more on two threads (the calling thread and one more);
// the encrypted writer seals on a helper thread while the calling thread writes. Ratios: throughput over FileHandle's and over FileStorage plain's (which pays the same
// temporary file + rename per write as the encrypted writer: on ext4 that new inode and rename,
// not AES, is most of a small file's write time). FB_TRACE=1 prints every run's figures.
// Usage: swift run -c release files-bench [--quick]   (--quick: no 256 MiB file, no random reads)
//        files-bench --profile <plain|encrypted4K|encrypted64K> [write|writes|read|reads|random|big]
//                    (no timing: writes and reads 20 files of 1 MiB (FB_BYTES bytes) of one kind, or 2,000 random
//                    4 KiB reads in one 16 MiB file, for `valgrind --tool=callgrind`; `reads`:
//                    FB_FILES files (20) written, then read 50 times over, for `perf record`,
//                    with FB_TRACE=1 each pass's MB/s; `writes`: the files written 50 times; `big`: times 4 replacements of one
//                    256 MiB file, the write and the close apart)

import Files
import Foundation

func now() -> Double { Double(DispatchTime.now().uptimeNanoseconds) / 1e9 }
func median(_ values: [Double]) -> Double { values.sorted()[values.count / 2] }

let quick = CommandLine.arguments.contains("--quick")
let work = URL(fileURLWithPath: NSTemporaryDirectory()).appendingPathComponent("files-bench-\(getpid())")
try FileManager.default.createDirectory(at: work, withIntermediateDirectories: true)
defer { try? FileManager.default.removeItem(at: work) }
let key = [UInt8](repeating: 7, count: 32)

enum Kind: CaseIterable {
    case fileHandle, fileHandleAtomic, plain, encrypted64K, encrypted4K
    var label: String {
        switch self {
        case .fileHandle: return "FileHandle"
        case .fileHandleAtomic: return "FileHandle, temp + rename"
        case .plain: return "FileStorage plain"
        case .encrypted64K: return "encrypted (64 KiB segments)"
        case .encrypted4K: return "encrypted (4 KiB segments)"
        }
    }
    var encryption: FileEncryption { self == .encrypted64K || self == .encrypted4K ? .storageKey : .none }
}

let storages: [Kind: FileStorage] = try {
    var result: [Kind: FileStorage] = [:]
    for kind in Kind.allCases where kind != .fileHandle && kind != .fileHandleAtomic {
        let folder = work.appendingPathComponent("\(kind)")
        result[kind] = try FileStorage(folder: folder, options: .init(key: key, segmentSize: kind == .encrypted4K ? 4096 : 64 << 10))
    }
    return result
}()

func handlePath(_ name: String, atomic: Bool = false) -> String {
    work.appendingPathComponent((atomic ? "atomic-" : "handle-") + name.replacingOccurrences(of: "/", with: "_")).path
}

func write(_ kind: Kind, _ name: String, _ data: Data) throws {
    if kind == .fileHandle || kind == .fileHandleAtomic {
        // FileHandle: the file truncated and written in place. Atomic: what an app that wants
        // the old or the new file after a crash does with plain I/O, as the FileStorage
        // writers do: a temporary file written, then renamed over the target.
        let target = handlePath(name, atomic: kind == .fileHandleAtomic)
        let path = kind == .fileHandleAtomic ? target + ".tmp" : target
        FileManager.default.createFile(atPath: path, contents: nil)
        let handle = try FileHandle(forWritingTo: URL(fileURLWithPath: path))
        var offset = 0
        while offset < data.count {
            let end = min(data.count, offset + (1 << 20))
            try handle.write(contentsOf: data[offset..<end])
            offset = end
        }
        try handle.close()
        if kind == .fileHandleAtomic, rename(path, target) != 0 { throw CocoaError(.fileWriteUnknown) }
        return
    }
    let writer = try storages[kind]!.writer(name, encryption: kind.encryption)
    var offset = 0
    while offset < data.count {
        let end = min(data.count, offset + (1 << 20))
        try writer.write(data[offset..<end])
        offset = end
    }
    try writer.close()
}

func read(_ kind: Kind, _ name: String) throws -> Int {
    if kind == .fileHandle || kind == .fileHandleAtomic {
        let handle = try FileHandle(forReadingFrom: URL(fileURLWithPath: handlePath(name, atomic: kind == .fileHandleAtomic)))
        defer { try? handle.close() }
        return try handle.readToEnd()?.count ?? 0
    }
    return try storages[kind]!.data(of: name, encryption: kind.encryption).count
}

func throughput(_ bytes: Int, _ seconds: Double) -> String { String(format: "%7.0f MB/s", Double(bytes) / seconds / 1e6) }

if let at = CommandLine.arguments.firstIndex(of: "--profile"), at + 1 < CommandLine.arguments.count {
    let kinds: [String: Kind] = ["plain": .plain, "encrypted4K": .encrypted4K, "encrypted64K": .encrypted64K]
    guard let kind = kinds[CommandLine.arguments[at + 1]] else { print("unknown kind"); exit(2) }
    let what = at + 2 < CommandLine.arguments.count ? CommandLine.arguments[at + 2] : "all"
    let profileFiles = Int(ProcessInfo.processInfo.environment["FB_FILES"] ?? "") ?? 20
    let payloadBytes = Int(ProcessInfo.processInfo.environment["FB_BYTES"] ?? "") ?? (1 << 20)
    let payload = Data((0..<payloadBytes).map { UInt8(truncatingIfNeeded: $0 &* 2654435761 >> 7) })
    if what == "big" {
        var big = Data(count: 256 << 20)
        big.withUnsafeMutableBytes { raw in for i in stride(from: 0, to: raw.count, by: 64) { raw[i] = UInt8(truncatingIfNeeded: i >> 6) } }
        // One 256 MiB file replaced 4 times (1 MiB pieces, a sync(2) before each), each timed.
        for round in 0..<4 {
            sync()
            let start = now()
            let writer = try storages[kind]!.writer("big", encryption: kind.encryption)
            for piece in 0..<256 { try writer.write(big[(piece << 20) ..< ((piece + 1) << 20)]) }
            let written = now()
            try writer.close()
            print(String(format: "round %d: write %.0f ms, close %.0f ms", round, (written - start) * 1e3, (now() - written) * 1e3))
        }
        try? FileManager.default.removeItem(at: work)
        exit(0)
    }
    if what == "random" {
        try write(kind, "big", Data((0..<16).flatMap { _ in payload }))
        let reader = try storages[kind]!.reader("big", encryption: kind.encryption)
        var buffer = [UInt8](repeating: 0, count: 4096)
        var state: UInt64 = 1
        for _ in 0..<2000 {
            state = state &* 6364136223846793005 &+ 1442695040888963407
            try reader.seek(to: Int64((state >> 33) % UInt64((16 << 20) - 4096)))
            _ = try buffer.withUnsafeMutableBytes { try reader.read(into: $0) }
        }
        try? FileManager.default.removeItem(at: work)
        exit(0)
    }
    // "writes": the files written 50 times over (each write replacing the last), for `perf record`.
    for _ in 0..<(what == "writes" ? 50 : 1) where what != "read" && what != "reads" {
        let start = now()
        for file in 0..<profileFiles { try write(kind, "p/\(file)", payload) }
        if what == "writes", ProcessInfo.processInfo.environment["FB_TRACE"] != nil {
            print(String(format: "%.0f MB/s", Double(profileFiles * payloadBytes) / (now() - start) / 1e6))
        }
    }
    if what == "read" || what == "reads" { for file in 0..<profileFiles { try write(kind, "p/\(file)", payload) } }
    // "reads": the 20 files read 50 times over, for `perf record` of the read path alone.
    for _ in 0..<(what == "write" || what == "writes" ? 0 : what == "reads" ? 50 : 1) {
        let start = now()
        for file in 0..<profileFiles { _ = try read(kind, "p/\(file)") }
        if ProcessInfo.processInfo.environment["FB_TRACE"] != nil { print(String(format: "%.0f MB/s", Double(profileFiles * payloadBytes) / (now() - start) / 1e6)) }
    }
    try? FileManager.default.removeItem(at: work)
    exit(0)
}

var sizes: [(label: String, bytes: Int, files: Int)] = [("4KiB", 4096, 2000), ("1MiB", 1 << 20, 200)]
if !quick { sizes.append(("256MiB", 256 << 20, 2)) }
print("files-bench: release build, one calling thread, no fsync while timed, median of 3 runs\(quick ? " (--quick)" : "")")
for size in sizes {
    var payload = Data(count: size.bytes)
    payload.withUnsafeMutableBytes { raw in
        var state: UInt64 = 0x9E37_79B9_7F4A_7C15
        for i in 0..<raw.count { state = state &* 6364136223846793005 &+ 1442695040888963407; raw[i] = UInt8(truncatingIfNeeded: state >> 33) }
    }
    var writeTimes: [Kind: [Double]] = [:], readTimes: [Kind: [Double]] = [:]
    for run in 0..<3 {
        for step in 0..<Kind.allCases.count {
            let kind = Kind.allCases[(run + step) % Kind.allCases.count]
            sync()
            var start = now()
            for file in 0..<size.files { try write(kind, "\(size.label)/\(file % 200)", payload) }
            writeTimes[kind, default: []].append(now() - start)
            // Untimed: the writeback of what was just written would otherwise run during the
            // reads, on the core that the encrypted reader's second thread needs.
            sync()
            start = now()
            var total = 0
            for file in 0..<size.files { total += try read(kind, "\(size.label)/\(file % 200)") }
            readTimes[kind, default: []].append(now() - start)
            if ProcessInfo.processInfo.environment["FB_TRACE"] != nil { print("  run \(run) \(size.label) \(kind.label): write \(throughput(size.bytes * size.files, writeTimes[kind]!.last!)) read \(throughput(size.bytes * size.files, readTimes[kind]!.last!))") }
            precondition(total == size.bytes * size.files, "short read")
        }
    }
    let bytes = size.bytes * size.files
    let baseWrite = median(writeTimes[.fileHandle]!), baseRead = median(readTimes[.fileHandle]!)
    let plainWrite = median(writeTimes[.plain]!), plainRead = median(readTimes[.plain]!)
    for kind in Kind.allCases {
        let w = median(writeTimes[kind]!), r = median(readTimes[kind]!)
        print("\(size.label.padding(toLength: 7, withPad: " ", startingAt: 0)) \(kind.label.padding(toLength: 29, withPad: " ", startingAt: 0)) "
              + "write \(throughput(bytes, w)) (\(String(format: "%.2f", baseWrite / w))x FileHandle, \(String(format: "%.2f", plainWrite / w))x plain)   "
              + "read \(throughput(bytes, r)) (\(String(format: "%.2f", baseRead / r))x FileHandle, \(String(format: "%.2f", plainRead / r))x plain)")
    }
}

if !quick {
    // Random 4 KiB reads in the 256 MiB files written above.
    let count = 20_000
    let length = 256 << 20
    var generator = SystemRandomNumberGenerator()
    for aligned in [true, false] {
        let offsets = (0..<count).map { _ in aligned ? Int.random(in: 0..<(length / 4096), using: &generator) * 4096
                                                     : Int.random(in: 0...(length - 4096), using: &generator) }
        var times: [Kind: [Double]] = [:]
        var buffer = [UInt8](repeating: 0, count: 4096)
        let randomKinds = Kind.allCases.filter { $0 != .fileHandleAtomic }
        for run in 0..<3 {
            for step in 0..<randomKinds.count {
                let kind = randomKinds[(run + step) % randomKinds.count]
                if kind == .fileHandle {
                    let handle = try FileHandle(forReadingFrom: URL(fileURLWithPath: handlePath("256MiB/0")))
                    let start = now()
                    for offset in offsets {
                        try handle.seek(toOffset: UInt64(offset))
                        let got = try handle.read(upToCount: 4096)?.count
                        precondition(got == 4096)
                    }
                    times[kind, default: []].append(now() - start)
                    try handle.close()
                } else {
                    let reader = try storages[kind]!.reader("256MiB/0", encryption: kind.encryption)
                    let start = now()
                    for offset in offsets {
                        try reader.seek(to: Int64(offset))
                        let got = try buffer.withUnsafeMutableBytes { try reader.read(into: $0) }
                        precondition(got == 4096)
                    }
                    times[kind, default: []].append(now() - start)
                    reader.close()
                }
            }
        }
        let base = median(times[.fileHandle]!)
        for kind in randomKinds {
            let t = median(times[kind]!)
            print("random-4KiB\(aligned ? " aligned  " : " unaligned") \(kind.label.padding(toLength: 29, withPad: " ", startingAt: 0)) "
                  + String(format: "%6.2f us/read  (%.2fx the FileHandle time, %.2fx the FileStorage plain time)", t / Double(count) * 1e6, t / base,
                           t / median(times[.plain]!)))
        }
    }
}
