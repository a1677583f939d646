import Foundation

/// The folder a power loss could leave, built from a `PowerLossSimulator.Recording` cut before
/// one of its operations (test-only).
///
/// Everything synced before the cut is there: a file's writes, truncates and allocations before
/// its last `fdatasync`, and a directory's creates, renames and unlinks before its last `fsync`.
/// What was not synced is decided by the outcome: each unsynced write is dropped, kept, or torn
/// at 512-byte sector boundaries (each sector of it landing or not); the unsynced changes of
/// one file land in any order across sectors (within one sector, as a page cache writes it
/// back: see `landed`); each unsynced create, rename or unlink happened or not (applied in
/// order, one whose source is gone does nothing).
package enum PowerLossImage {
    /// How the unsynced changes fare.
    package enum Outcome: Sendable, CustomStringConvertible {
        /// Every unsynced change is lost: the disk as of the last syncs.
        case dropUnsynced
        /// Every unsynced change happened, in order: what a process crash leaves.
        case keepAll
        /// Each unsynced change is decided at random (seeded, so a failure can be replayed).
        case random(seed: UInt64)

        package var description: String {
            switch self {
            case .dropUnsynced: return "unsynced dropped"
            case .keepAll: return "everything kept"
            case .random(let seed): return "random outcome \(seed)"
            }
        }
    }

    /// The sector size a write tears at.
    package static let sectorSize = 512

    /// Writes into `destination` (created; it must not exist) the files and folders under the
    /// recording's root that a power loss before operation `cut` could leave, with `destination`
    /// in place of the root. Returns a count of the unsynced operations that were lost or torn.
    @discardableResult
    package static func build(_ recording: PowerLossSimulator.Recording, cut: Int, outcome: Outcome,
                              into destination: URL) throws -> Int {
        var random = SplitMix(seed: { if case .random(let seed) = outcome { return seed } else { return 0 } }())
        let operations = recording.operations.prefix(cut)
        var lost = 0
        func decide() -> Bool {
            switch outcome {
            case .dropUnsynced: return false
            case .keepAll: return true
            case .random: return random.next() & 1 == 0
            }
        }

        // The names: durable once every folder they change was synced after them.
        var lastDirectorySync: [String: Int] = [:]
        for (index, operation) in operations.enumerated() {
            if case .syncDirectory(let path) = operation { lastDirectorySync[path] = index }
        }
        func durable(_ index: Int, _ paths: [String]) -> Bool {
            paths.allSatisfy { (lastDirectorySync[parent(of: $0)] ?? -1) > index }
        }
        var names: [String: Int] = recording.baselineIDs
        var directories = recording.baselineDirectories
        for (index, operation) in operations.enumerated() {
            switch operation {
            case .create(let path, let file):
                if durable(index, [path]) || decide() { names[path] = file } else { lost += 1 }
            case .rename(let from, let to):
                if durable(index, [from, to]) || decide() {
                    if let file = names.removeValue(forKey: from) { names[to] = file }
                } else {
                    lost += 1
                }
            case .unlink(let path):
                if durable(index, [path]) || decide() { names[path] = nil } else { lost += 1 }
            case .makeDirectory(let path):
                directories.insert(path)
            default:
                break
            }
        }

        // The contents of the files that still have a name.
        var baselineContent: [Int: [UInt8]] = [:]
        for (path, file) in recording.baselineIDs { baselineContent[file] = recording.baseline[path] }
        var changes: [Int: [(index: Int, operation: PowerLossOperation)]] = [:]
        var lastSync: [Int: Int] = [:]
        let live = Set(names.values)
        for (index, operation) in operations.enumerated() {
            switch operation {
            case .write(let file, _, _), .setSize(let file, _), .extend(let file, _):
                if live.contains(file) { changes[file, default: []].append((index, operation)) }
            case .syncFile(let file):
                lastSync[file] = index
            default:
                break
            }
        }
        var contents: [Int: [UInt8]] = [:]
        for file in live.sorted() {
            var content = baselineContent[file] ?? []
            let synced = lastSync[file] ?? -1
            let all = changes[file] ?? []
            for change in all where change.index < synced { apply(change.operation, to: &content, keepSector: nil) }
            let pending = all.filter { $0.index > synced }
            switch outcome {
            case .dropUnsynced:
                lost += pending.count
            case .keepAll:
                for change in pending { apply(change.operation, to: &content, keepSector: nil) }
            case .random:
                content = landed(content, pending.map(\.operation), random: &random, lost: &lost)
            }
            contents[file] = content
        }

        // Write it all out under `destination`.
        let root = recording.root
        func mapped(_ path: String) -> String { destination.path + path.dropFirst(root.count) }
        try FileManager.default.createDirectory(at: destination, withIntermediateDirectories: true)
        for directory in directories.sorted() where directory.hasPrefix(root + "/") {
            try FileManager.default.createDirectory(atPath: mapped(directory), withIntermediateDirectories: true)
        }
        for (path, file) in names.sorted(by: { $0.key < $1.key }) where path.hasPrefix(root + "/") {
            let target = mapped(path)
            try FileManager.default.createDirectory(atPath: parent(of: target), withIntermediateDirectories: true)
            guard FileManager.default.createFile(atPath: target, contents: Data(contents[file] ?? [])) else {
                throw CocoaError(.fileWriteUnknown, userInfo: [NSFilePathErrorKey: target])
            }
        }
        return lost
    }

    /// What a random power loss leaves of a file whose unsynced changes are `pending`, the way
    /// a page cache writes back: each 512-byte sector lands as of any point of the changes that
    /// touched it (not at all, after some of them, or after all), independently of the other
    /// sectors, so one write can tear and a later write can land without an earlier one. A
    /// sector never shows a later write without the earlier writes to that same sector: it is
    /// written whole, from the page's content at the time. The file's size is its size as of any
    /// point of the changes.
    private static func landed(_ durable: [UInt8], _ pending: [PowerLossOperation], random: inout SplitMix,
                               lost: inout Int) -> [UInt8] {
        guard !pending.isEmpty else { return durable }
        var content = durable
        var sizes = [durable.count]
        var history: [Int: [[UInt8]]] = [:]     // sector -> its bytes after each change touching it
        func sector(_ index: Int) -> [UInt8] {
            let start = index * sectorSize
            guard start < content.count else { return [] }
            return Array(content[start..<min(content.count, start + sectorSize)])
        }
        for operation in pending {
            let before = content.count
            apply(operation, to: &content, keepSector: nil)
            sizes.append(content.count)
            var touched: Range<Int> = 0..<0
            switch operation {
            case .write(_, let offset, let bytes):
                touched = (offset / sectorSize)..<((offset + bytes.count + sectorSize - 1) / sectorSize)
            case .setSize, .extend:
                let low = min(before, content.count), high = max(before, content.count)
                touched = (low / sectorSize)..<((high + sectorSize - 1) / sectorSize)
            default:
                break
            }
            for index in touched {
                if history[index] == nil {
                    let start = index * sectorSize
                    history[index] = [start < durable.count ? Array(durable[start..<min(durable.count, start + sectorSize)]) : []]
                }
                history[index]?.append(sector(index))
            }
        }
        let size = sizes[Int(random.next() % UInt64(sizes.count))]
        var result = Array(durable.prefix(size))
        if result.count < size { result += [UInt8](repeating: 0, count: size - result.count) }
        for (index, states) in history {
            let choice = Int(random.next() % UInt64(states.count))
            if choice != states.count - 1 { lost += 1 }
            let start = index * sectorSize
            guard start < size else { continue }
            var bytes = states[choice]
            let end = min(size, start + sectorSize)
            if bytes.count < end - start { bytes += [UInt8](repeating: 0, count: end - start - bytes.count) }
            result.replaceSubrange(start..<end, with: bytes[0..<(end - start)])
        }
        return result
    }

    /// Applies one content change; with `keepSector`, a write keeps only the 512-byte sectors
    /// (aligned in the file) it says yes to.
    private static func apply(_ operation: PowerLossOperation, to content: inout [UInt8], keepSector: (() -> Bool)?) {
        switch operation {
        case .write(_, let offset, let bytes):
            var start = offset
            while start < offset + bytes.count {
                let end = min(offset + bytes.count, (start / sectorSize + 1) * sectorSize)
                if keepSector?() ?? true {
                    if content.count < end { content += [UInt8](repeating: 0, count: end - content.count) }
                    content.replaceSubrange(start..<end, with: bytes[(start - offset)..<(end - offset)])
                }
                start = end
            }
        case .setSize(_, let size):
            if content.count > size { content.removeLast(content.count - size) } else { content += [UInt8](repeating: 0, count: size - content.count) }
        case .extend(_, let size):
            if content.count < size { content += [UInt8](repeating: 0, count: size - content.count) }
        default:
            break
        }
    }

    static func parent(of path: String) -> String {
        guard let slash = path.lastIndex(of: "/"), slash != path.startIndex else { return "/" }
        return String(path[..<slash])
    }

    /// A small seeded generator (SplitMix64), so every outcome can be replayed from its seed.
    package struct SplitMix: RandomNumberGenerator {
        private var state: UInt64
        package init(seed: UInt64) { state = seed }
        package mutating func next() -> UInt64 {
            state &+= 0x9E37_79B9_7F4A_7C15
            var z = state
            z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
            z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
            return z ^ (z >> 31)
        }
    }
}
