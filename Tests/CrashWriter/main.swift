// The child process of the crash tests (Tests/LogStoreTests/CrashTests.swift).
//
// Usage: logstore-crash-writer <store directory> <seed> <crash|group|fsync> <segment size> <first op id>
//        logstore-crash-writer rekey ...   (RekeyChild.swift)    logstore-crash-writer dao ...   (DAOChild.swift)
//        logstore-crash-writer migrate ... (MigrationChild.swift)
//        logstore-crash-writer prefs ...   (PreferencesChild.swift)   logstore-crash-writer files ...  (FilesChild.swift)
//
// Opens the store and runs a mixed workload until it is killed: puts of new keys, overwrites and
// deletes of existing keys, puts that are already expired, atomic batches, and now and then an
// explicit compaction (background compactions run too). Every operation gets an id, counting up
// from <first op id>; the parent passes a fresh range each run so keys and versions never repeat.
//
// Before each operation it prints one line describing it, and after the call returns one line
// acknowledging it, each with a single write(2) to stdout (unbuffered), so when the parent kills
// it the output says exactly which operations were acknowledged and which one may be in flight:
//
//   B <id> P <space> <key>            put of value(key, version: id)
//   B <id> X <space> <key>            put of value(key, version: id) that is already expired
//   B <id> D <space> <key>            delete
//   B <id> T <n> <op> ... <op>        batch; each op is P:<space>:<key> (version id), X:..., or D:<space>:<key>
//   B <id> C                          compact()
//   A <id>                            the call returned
//
// Values are derived from key and version (see `crashValue`, duplicated in the test), so the
// parent can check every byte. Errors are printed to stderr and end the process with status 1.

import Foundation
import LogStore

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The value written for `key` at `version`. Must match `CrashTests.crashValue`.
func crashValue(key: String, version: Int) -> [UInt8] {
    var bytes = Array("\(key)=\(version);".utf8)
    let length = version % 50 == 7 ? 5000 + version % 1000 : (version &* 37 &+ key.utf8.count &* 11) % 400
    bytes.reserveCapacity(bytes.count + length)
    for i in 0..<length { bytes.append(UInt8(truncatingIfNeeded: i &* 131 &+ version)) }
    return bytes
}

func emit(_ line: String) {
    let bytes = Array((line + "\n").utf8)
    var done = 0
    while done < bytes.count {
        let n = bytes.withUnsafeBytes { write(STDOUT_FILENO, $0.baseAddress! + done, $0.count - done) }
        if n < 0 {
            if errno == EINTR { continue }
            exit(3)
        }
        done += n
    }
}

func fail(_ message: String) -> Never {
    FileHandle.standardError.write(Data("crash writer: \(message)\n".utf8))
    exit(1)
}

/// SplitMix64, as in the tests.
struct Generator: RandomNumberGenerator {
    var state: UInt64
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}

/// The live keys, for picking overwrite and delete targets in O(1).
struct KeySet {
    var items: [String] = []
    var index: [String: Int] = [:]
    mutating func insert(_ item: String) {
        guard index[item] == nil else { return }
        index[item] = items.count
        items.append(item)
    }
    mutating func remove(_ item: String) {
        guard let at = index.removeValue(forKey: item) else { return }
        let last = items.removeLast()
        if at < items.count {
            items[at] = last
            index[last] = at
        }
    }
    func random(using rng: inout Generator) -> String? { items.isEmpty ? nil : items[Int.random(in: 0..<items.count, using: &rng)] }
}

if CommandLine.arguments.count > 1 && CommandLine.arguments[1] == "dao" {
    runDAOChild(Array(CommandLine.arguments.dropFirst(2)))
}
if CommandLine.arguments.count > 1 && CommandLine.arguments[1] == "migrate" {
    runMigrationChild(Array(CommandLine.arguments.dropFirst(2)))
}
if CommandLine.arguments.count > 1 && CommandLine.arguments[1] == "prefs" {
    runPreferencesChild(Array(CommandLine.arguments.dropFirst(2)))
}
if CommandLine.arguments.count > 1 && CommandLine.arguments[1] == "files" {
    runFilesChild(Array(CommandLine.arguments.dropFirst(2)))
}
if CommandLine.arguments.count > 1 && CommandLine.arguments[1] == "rekey" {
    runRekeyChild(Array(CommandLine.arguments.dropFirst(2)))
}

let arguments = CommandLine.arguments
guard arguments.count == 6, let seed = UInt64(arguments[2]), let segmentSize = Int(arguments[4]), let firstID = Int(arguments[5]) else {
    fail("usage: logstore-crash-writer <dir> <seed> <crash|group|fsync> <segment size> <first op id>")
}
var options = LogStore.Options()
options.segmentSize = segmentSize
switch arguments[3] {
case "crash": options.durability = .processCrashSafe
case "group": options.durability = .groupCommit(interval: 0.02)
case "fsync": options.durability = .fsyncEachWrite
default: fail("unknown durability \(arguments[3])")
}

let store: LogStore
do {
    store = try LogStore(directory: URL(fileURLWithPath: arguments[1]), options: options)
} catch {
    fail("open: \(error)")
}

// Keys are "space/key" in the set; they come from whatever the store holds now.
var live = KeySet()
do {
    for space: UInt32 in 0...1 {
        for key in try store.keys(space: space) { live.insert("\(space)/\(String(decoding: key, as: UTF8.self))") }
    }
} catch {
    fail("keys: \(error)")
}
emit("O \(live.items.count)")

var rng = Generator(state: seed)
var id = firstID

func split(_ item: String) -> (UInt32, String) {
    let parts = item.split(separator: "/", maxSplits: 1)
    return (UInt32(parts[0])!, String(parts[1]))
}

/// A target key for an overwrite or delete: usually a live one, sometimes a new one.
@MainActor func pickExisting() -> (UInt32, String) {
    if let item = live.random(using: &rng), Int.random(in: 0..<10, using: &rng) > 0 { return split(item) }
    return (UInt32.random(in: 0...1, using: &rng), "n\(id)-\(Int.random(in: 0..<1000, using: &rng))")
}

@MainActor func newKey(_ suffix: Int) -> (UInt32, String) { (UInt32.random(in: 0...1, using: &rng), "u\(id)-\(suffix)") }

while true {
    let roll = Int.random(in: 0..<100, using: &rng)
    do {
        switch roll {
        case 0..<40:
            let (space, key) = newKey(0)
            emit("B \(id) P \(space) \(key)")
            try store.put(crashValue(key: key, version: id), forKey: Array(key.utf8), space: space)
            live.insert("\(space)/\(key)")
        case 40..<65:
            let (space, key) = pickExisting()
            emit("B \(id) P \(space) \(key)")
            try store.put(crashValue(key: key, version: id), forKey: Array(key.utf8), space: space)
            live.insert("\(space)/\(key)")
        case 65..<80:
            let (space, key) = pickExisting()
            emit("B \(id) D \(space) \(key)")
            try store.delete(forKey: Array(key.utf8), space: space)
            live.remove("\(space)/\(key)")
        case 80..<83:
            let (space, key) = pickExisting()
            emit("B \(id) X \(space) \(key)")
            try store.put(crashValue(key: key, version: id), forKey: Array(key.utf8), space: space,
                          expiresAt: Date(timeIntervalSinceNow: -60))
            live.remove("\(space)/\(key)")
        case 83..<99:
            var batch = LogStore.WriteBatch()
            var described: [String] = []
            var effects: [(String, Bool)] = []
            for member in 0..<Int.random(in: 2...6, using: &rng) {
                let kind = Int.random(in: 0..<3, using: &rng)
                let (space, key) = kind == 0 ? newKey(member) : pickExisting()
                if kind == 2 {
                    batch.delete(forKey: Array(key.utf8), space: space)
                    described.append("D:\(space):\(key)")
                    effects.append(("\(space)/\(key)", false))
                } else {
                    batch.put(crashValue(key: key, version: id), forKey: Array(key.utf8), space: space)
                    described.append("P:\(space):\(key)")
                    effects.append(("\(space)/\(key)", true))
                }
            }
            emit("B \(id) T \(described.count) \(described.joined(separator: " "))")
            try store.write(batch)
            for (item, isPut) in effects { if isPut { live.insert(item) } else { live.remove(item) } }
        default:
            emit("B \(id) C")
            try store.compact()
        }
    } catch {
        fail("operation \(id): \(error)")
    }
    emit("A \(id)")
    id += 1
}
