#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Synchronization

/// One change to the file system a workload made through the I/O door, as the power-loss
/// simulator records it. Files are named by the simulator's own ids, which follow a file across
/// renames; paths are absolute.
package enum PowerLossOperation: Sendable, Equatable {
    /// Bytes written at an offset (by `pwrite`, or through a writable mapping, found by diffing).
    case write(file: Int, offset: Int, bytes: [UInt8])
    /// `ftruncate`: the file's size becomes `size`.
    case setSize(file: Int, size: Int)
    /// `fallocate`: the file's size becomes at least `size`.
    case extend(file: Int, size: Int)
    /// `fdatasync`: every earlier change to this file's data and size is durable.
    case syncFile(file: Int)
    /// A new directory entry for a new file (`open` with `O_CREAT`).
    case create(path: String, file: Int)
    /// `rename(2)`.
    case rename(from: String, to: String)
    /// `unlink(2)`.
    case unlink(path: String)
    /// `fsync` of a directory: every earlier create, rename and unlink in it is durable.
    case syncDirectory(path: String)
    /// `mkdir`.
    case makeDirectory(path: String)
    /// A note of the workload's (an acknowledgment, say); changes nothing on disk.
    case marker(String)

    /// True for `fdatasync` and directory `fsync`: the points a power loss is most interesting at.
    package var isSync: Bool {
        switch self {
        case .syncFile, .syncDirectory: return true
        default: return false
        }
    }
}

/// Test-only power-loss simulation at the engine's I/O door (`SystemFile`, `Directory`,
/// `MappedRegion`), in the spirit of SQLite's crash-simulating VFS: while recording, every
/// write, truncate, allocate, create, rename, unlink and sync under one root folder is logged
/// in order, with the bytes written. Writes through a writable mapping are found by comparing
/// the mapping with the simulator's copy of the file at every recorded call and at `mark`, so
/// they are logged before the sync that makes them durable. `PowerLossImage` then builds, for a
/// cut point in that log, a folder a power loss there could leave.
///
/// The workload's files are real: the engine runs as usual, the simulator only watches. Files
/// changed outside the door (Foundation's `FileManager`) are not seen: a file the door opens
/// that it has not seen is taken as durable as found; directories are never lost.
///
/// Not recording, a call site costs one relaxed atomic load. Production code never records.
package enum PowerLossSimulator {
    private static let recording = Atomic<Bool>(false)
    private static let state = Synchronization.Mutex(Recorder())

    /// What the recorder knows; everything changes under `state`'s lock.
    struct Recorder: @unchecked Sendable {
        var root = ""
        var baseline: [String: [UInt8]] = [:]          // path -> content, at `start`
        var baselineDirectories: Set<String> = []
        var baselineIDs: [String: Int] = [:]
        var operations: [PowerLossOperation] = []
        var names: [String: Int] = [:]                 // path -> file id, now
        var contents: [Int: [UInt8]] = [:]              // file id -> content, now
        var descriptors: [Int32: Int] = [:]             // open descriptor -> file id
        var mappings: [UInt: (file: Int, length: Int, descriptor: Int32)] = [:]   // writable mapping base -> file
        var nextID = 0
    }

    /// Everything recorded between `start` and `stop`.
    package struct Recording: Sendable {
        /// The root folder the workload ran in.
        package var root: String
        /// The files under `root` when recording started (taken as durable), by path.
        package var baseline: [String: [UInt8]]
        /// The file ids of the baseline files.
        package var baselineIDs: [String: Int]
        /// The folders under `root` when recording started.
        package var baselineDirectories: Set<String>
        /// The operations in the order they happened.
        package var operations: [PowerLossOperation]

        /// Indices `i` such that cutting before operation `i` is cutting just before a sync.
        package var syncIndices: [Int] { operations.indices.filter { operations[$0].isSync } }
    }

    /// True while recording (cheap; the door asks it before doing any work for the simulator).
    @inline(__always)
    package static var isRecording: Bool { recording.load(ordering: .relaxed) }

    /// Starts recording the changes under `root`. What is there now is taken as durable.
    package static func start(root: String) {
        let root = normalized(root)
        var recorder = Recorder()
        recorder.root = root
        for (path, isDirectory) in walk(root) {
            if isDirectory {
                recorder.baselineDirectories.insert(path)
            } else if let bytes = readFile(path) {
                let id = recorder.nextID
                recorder.nextID += 1
                recorder.baseline[path] = bytes
                recorder.baselineIDs[path] = id
                recorder.names[path] = id
                recorder.contents[id] = bytes
            }
        }
        state.withLock { $0 = recorder }
        recording.store(true, ordering: .sequentiallyConsistent)
    }

    /// Stops recording and returns what was recorded (writes through mappings still open are
    /// taken in first).
    package static func stop() -> Recording {
        let result = state.withLock { recorder -> Recording in
            captureMappings(&recorder)
            let recording = Recording(root: recorder.root, baseline: recorder.baseline, baselineIDs: recorder.baselineIDs,
                                      baselineDirectories: recorder.baselineDirectories, operations: recorder.operations)
            recorder = Recorder()
            return recording
        }
        recording.store(false, ordering: .sequentiallyConsistent)
        return result
    }

    /// Logs a note (after taking in the writes through mappings so far) and returns its index
    /// in the log: a workload marks when an operation starts and when it was acknowledged.
    @discardableResult
    package static func mark(_ note: String) -> Int {
        state.withLock { recorder in
            captureMappings(&recorder)
            recorder.operations.append(.marker(note))
            return recorder.operations.count - 1
        }
    }

    // MARK: Hooks of the I/O door

    static func didOpen(_ descriptor: Int32, path: String, flags: Int32, existed: Bool) {
        guard isRecording else { return }
        let path = normalized(path)
        // A descriptor number is reused after close: forget what it named before.
        state.withLock { $0.descriptors[descriptor] = nil }
        record(path: path) { recorder in
            let id: Int
            if !existed || recorder.names[path] == nil {
                id = recorder.nextID
                recorder.nextID += 1
                if existed {
                    // Made outside the door: take it as found, durable.
                    recorder.contents[id] = readDescriptor(descriptor)
                    recorder.baseline[path] = recorder.contents[id]
                    recorder.baselineIDs[path] = id
                } else {
                    recorder.contents[id] = []
                    recorder.operations.append(.create(path: path, file: id))
                }
                recorder.names[path] = id
            } else {
                id = recorder.names[path] ?? 0
                if flags & O_TRUNC != 0 { apply(.setSize(file: id, size: 0), &recorder) }
            }
            recorder.descriptors[descriptor] = id
        }
    }

    static func didWrite(_ descriptor: Int32, _ bytes: UnsafeRawBufferPointer, at offset: Int) {
        recordDescriptor(descriptor) { recorder, id in
            apply(.write(file: id, offset: offset, bytes: [UInt8](bytes)), &recorder)
        }
    }

    /// Called before the real `ftruncate`, so writes through a mapping are taken in while the
    /// file still holds them.
    static func willTruncate(_ descriptor: Int32, to length: Int) {
        recordDescriptor(descriptor) { recorder, id in apply(.setSize(file: id, size: length), &recorder) }
    }

    static func didAllocate(_ descriptor: Int32, upTo end: Int) {
        recordDescriptor(descriptor) { recorder, id in apply(.extend(file: id, size: end), &recorder) }
    }

    /// Called before the real `fdatasync`: what was written before it is durable once it returns.
    static func willSync(_ descriptor: Int32) {
        recordDescriptor(descriptor) { recorder, id in recorder.operations.append(.syncFile(file: id)) }
    }

    static func didMap(_ descriptor: Int32, base: UnsafeMutableRawPointer, length: Int) {
        recordDescriptor(descriptor) { recorder, id in
            recorder.mappings[UInt(bitPattern: base)] = (id, length, descriptor)
        }
    }

    /// Called before `munmap`: what was written through the mapping is taken in first.
    static func willUnmap(base: UnsafeMutableRawPointer) {
        guard isRecording else { return }
        state.withLock { recorder in
            captureMappings(&recorder)
            recorder.mappings[UInt(bitPattern: base)] = nil
        }
    }

    /// Called before `close`: writes through the file's mappings are taken in, and the
    /// descriptor and its mappings forgotten (its number may name another file next).
    static func willClose(_ descriptor: Int32) {
        guard isRecording else { return }
        state.withLock { recorder in
            guard recorder.descriptors[descriptor] != nil else { return }
            captureMappings(&recorder)
            recorder.descriptors[descriptor] = nil
            recorder.mappings = recorder.mappings.filter { $0.value.descriptor != descriptor }
        }
    }

    static func didMakeDirectory(_ path: String) {
        let path = normalized(path)
        record(path: path) { $0.operations.append(.makeDirectory(path: path)) }
    }

    static func didRename(_ from: String, _ to: String) {
        guard isRecording else { return }
        let from = normalized(from), to = normalized(to)
        record(path: to) { recorder in
            guard let id = recorder.names.removeValue(forKey: from) else { return }
            recorder.names[to] = id
            recorder.operations.append(.rename(from: from, to: to))
        }
    }

    static func didUnlink(_ path: String) {
        guard isRecording else { return }
        let path = normalized(path)
        record(path: path) { recorder in
            guard recorder.names.removeValue(forKey: path) != nil else { return }
            recorder.operations.append(.unlink(path: path))
        }
    }

    /// Called before the real directory `fsync`.
    static func willSyncDirectory(_ path: String) {
        record(path: path) { $0.operations.append(.syncDirectory(path: normalized(path))) }
    }

    // MARK: Recording

    private static func record(path: String, _ body: (inout Recorder) -> Void) {
        guard isRecording else { return }
        state.withLock { recorder in
            let path = normalized(path)
            guard !recorder.root.isEmpty, path == recorder.root || path.hasPrefix(recorder.root + "/") else { return }
            captureMappings(&recorder)
            body(&recorder)
        }
    }

    private static func recordDescriptor(_ descriptor: Int32, _ body: (inout Recorder, Int) -> Void) {
        guard isRecording else { return }
        state.withLock { recorder in
            guard let id = recorder.descriptors[descriptor] else { return }
            captureMappings(&recorder)
            body(&recorder, id)
        }
    }

    /// Appends a content operation and applies it to the simulator's copy of the file.
    private static func apply(_ operation: PowerLossOperation, _ recorder: inout Recorder) {
        recorder.operations.append(operation)
        switch operation {
        case .write(let id, let offset, let bytes):
            var content = recorder.contents[id] ?? []
            if content.count < offset + bytes.count { content += [UInt8](repeating: 0, count: offset + bytes.count - content.count) }
            content.replaceSubrange(offset..<offset + bytes.count, with: bytes)
            recorder.contents[id] = content
        case .setSize(let id, let size):
            var content = recorder.contents[id] ?? []
            if content.count > size { content.removeLast(content.count - size) } else { content += [UInt8](repeating: 0, count: size - content.count) }
            recorder.contents[id] = content
        case .extend(let id, let size):
            let content = recorder.contents[id] ?? []
            if content.count < size { recorder.contents[id] = content + [UInt8](repeating: 0, count: size - content.count) }
        default:
            break
        }
    }

    /// Logs as writes every byte range where a writable mapping differs from the simulator's
    /// copy of its file (runs closer than 64 bytes are one write).
    private static func captureMappings(_ recorder: inout Recorder) {
        for (base, mapping) in recorder.mappings.sorted(by: { $0.key < $1.key }) {
            guard let pointer = UnsafeRawPointer(bitPattern: base), let content = recorder.contents[mapping.file] else { continue }
            // Never past the file's end: a mapped page there faults (SIGBUS).
            var info = stat()
            guard fstat(mapping.descriptor, &info) == 0 else { continue }
            let count = min(mapping.length, content.count, Int(info.st_size))
            var runs: [Range<Int>] = []
            content.withUnsafeBytes { copy in
                var index = 0
                while index < count {
                    // Whole words first: most of a mapping is unchanged.
                    if index + 8 <= count, pointer.loadUnaligned(fromByteOffset: index, as: UInt64.self)
                        == copy.loadUnaligned(fromByteOffset: index, as: UInt64.self) {
                        index += 8
                        continue
                    }
                    if pointer.load(fromByteOffset: index, as: UInt8.self) == copy[index] { index += 1; continue }
                    var end = index + 1
                    var same = 0
                    while end < count && same < 64 {
                        if pointer.load(fromByteOffset: end, as: UInt8.self) == copy[end] { same += 1 } else { same = 0 }
                        end += 1
                    }
                    runs.append(index..<(end - same))
                    index = end
                }
            }
            for run in runs {
                let bytes = [UInt8](UnsafeRawBufferPointer(start: pointer + run.lowerBound, count: run.count))
                apply(.write(file: mapping.file, offset: run.lowerBound, bytes: bytes), &recorder)
            }
        }
    }

    // MARK: File-system helpers

    /// `path` without a trailing slash or `//`.
    static func normalized(_ path: String) -> String {
        var parts = path.split(separator: "/", omittingEmptySubsequences: true).map(String.init)
        parts.removeAll { $0 == "." }
        return "/" + parts.joined(separator: "/")
    }

    /// Every file and folder under `root` (not `root` itself), with whether it is a folder.
    static func walk(_ root: String) -> [(String, Bool)] {
        guard let directory = opendir(root) else { return [] }
        defer { closedir(directory) }
        var result: [(String, Bool)] = []
        while let entry = readdir(directory) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) { raw in
                String(decoding: raw.prefix(while: { $0 != 0 }), as: UTF8.self)
            }
            guard name != ".", name != ".." else { continue }
            let path = root + "/" + name
            var info = stat()
            guard lstat(path, &info) == 0 else { continue }
            if (info.st_mode & S_IFMT) == S_IFDIR {
                result.append((path, true))
                result += walk(path)
            } else if (info.st_mode & S_IFMT) == S_IFREG {
                result.append((path, false))
            }
        }
        return result
    }

    static func readFile(_ path: String) -> [UInt8]? {
        let descriptor = open(path, O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else { return nil }
        defer { _ = close(descriptor) }
        return readDescriptor(descriptor)
    }

    static func readDescriptor(_ descriptor: Int32) -> [UInt8] {
        var info = stat()
        guard fstat(descriptor, &info) == 0 else { return [] }
        var bytes = [UInt8](repeating: 0, count: Int(info.st_size))
        var done = 0
        while done < bytes.count {
            let n = bytes.withUnsafeMutableBytes { pread(descriptor, $0.baseAddress! + done, $0.count - done, off_t(done)) }
            if n <= 0 { break }
            done += n
        }
        return Array(bytes.prefix(done))
    }
}
