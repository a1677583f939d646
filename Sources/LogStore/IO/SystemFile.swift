#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Foundation

/// The engine's one door to the file system: thin typed wrappers over the system calls it uses.
///
/// Every failure becomes `StoreError.io` naming the call and the path. Every call here (and
/// nowhere else in the engine) first asks `FaultInjection` whether a test wants it to fail, and
/// tells `PowerLossSimulator` what it changed when a test is recording.
/// Package-visible so the layers above (the file arrays' external files) use the same door.
package final class SystemFile: @unchecked Sendable {
    let descriptor: Int32
    package let path: String

    /// Opens `path` with the given `open(2)` flags; `O_CLOEXEC` is always added.
    package init(path: String, flags: Int32, mode: mode_t = 0o644) throws {
        try FaultInjection.failIfInjected(.open, path, operation: "open \(path)")
        let existed = PowerLossSimulator.isRecording ? Directory.exists(path) : true
        let fd = open(path, flags | O_CLOEXEC, mode)
        guard fd >= 0 else { throw StoreError.io(operation: "open \(path)", errno: errno) }
        PowerLossSimulator.didOpen(fd, path: path, flags: flags, existed: existed)
        self.descriptor = fd
        self.path = path
    }

    deinit {
        PowerLossSimulator.willClose(descriptor)
        _ = close(descriptor)
    }

    /// Size of the file in bytes.
    package func size() throws -> Int {
        try FaultInjection.failIfInjected(.fstat, path, operation: "fstat \(path)")
        var info = stat()
        guard fstat(descriptor, &info) == 0 else { throw StoreError.io(operation: "fstat \(path)", errno: errno) }
        return Int(info.st_size)
    }

    /// Writes all of `bytes` at `offset`, retrying short writes and EINTR.
    package func write(_ bytes: UnsafeRawBufferPointer, at offset: Int) throws {
        var done = 0
        if let fault = FaultInjection.check(.pwrite, path) {
            // A filling disk writes part of the bytes before it refuses the rest.
            if fault == .shortWrite, bytes.count > 1 {
                _ = pwrite(descriptor, bytes.baseAddress!, bytes.count / 2, off_t(offset))
            }
            throw StoreError.io(operation: "pwrite \(path) (injected)", errno: fault.errno)
        }
        while done < bytes.count {
            let n = pwrite(descriptor, bytes.baseAddress! + done, bytes.count - done, off_t(offset + done))
            if n < 0 {
                if errno == EINTR { continue }
                throw StoreError.io(operation: "pwrite \(path)", errno: errno)
            }
            if n == 0 { throw StoreError.io(operation: "pwrite \(path)", errno: EIO) }
            done += n
        }
        PowerLossSimulator.didWrite(descriptor, bytes, at: offset)
    }

    package func write(_ bytes: [UInt8], at offset: Int) throws {
        try bytes.withUnsafeBytes { (buffer) in try write(buffer, at: offset) }
    }

    /// Reads exactly `count` bytes at `offset`; fewer bytes (end of file) is `corrupt`.
    package func read(count: Int, at offset: Int) throws -> [UInt8] {
        var result = [UInt8](repeating: 0, count: count)
        try result.withUnsafeMutableBytes { try read(into: $0, at: offset) }
        return result
    }

    /// Fills `buffer` with the bytes at `offset`; fewer bytes (end of file) is `corrupt`.
    package func read(into buffer: UnsafeMutableRawBufferPointer, at offset: Int) throws {
        try FaultInjection.failIfInjected(.pread, path, operation: "pread \(path)")
        guard let base = buffer.baseAddress else { return }
        var done = 0
        while done < buffer.count {
            let n = pread(descriptor, base + done, buffer.count - done, off_t(offset + done))
            if n < 0 {
                if errno == EINTR { continue }
                throw StoreError.io(operation: "pread \(path)", errno: errno)
            }
            if n == 0 { throw StoreError.corrupt("\(path): file ends at \(offset + done), expected \(buffer.count) bytes at \(offset)") }
            done += n
        }
    }

    /// Reads into `buffer` from `offset` until it is full or the file ends; returns how many
    /// bytes it read (fewer than `buffer.count` only at the end of the file).
    package func readAvailable(into buffer: UnsafeMutableRawBufferPointer, at offset: Int) throws -> Int {
        try FaultInjection.failIfInjected(.pread, path, operation: "pread \(path)")
        guard let base = buffer.baseAddress else { return 0 }
        var done = 0
        while done < buffer.count {
            let n = pread(descriptor, base + done, buffer.count - done, off_t(offset + done))
            if n < 0 {
                if errno == EINTR { continue }
                throw StoreError.io(operation: "pread \(path)", errno: errno)
            }
            if n == 0 { break }
            done += n
        }
        return done
    }

    /// Reads the whole file.
    package func readAll() throws -> [UInt8] {
        try read(count: try size(), at: 0)
    }

    /// Flushes the file's data (and the metadata needed to read it) to stable storage.
    package func syncData() throws {
        try FaultInjection.failIfInjected(.fdatasync, path, operation: "fdatasync \(path)")
        PowerLossSimulator.willSync(descriptor)
        #if os(Linux)
        let result = fdatasync(descriptor)
        #else
        let result = fsync(descriptor)
        #endif
        guard result == 0 else { throw StoreError.io(operation: "fdatasync \(path)", errno: errno) }
    }

    func truncate(to length: Int) throws {
        try FaultInjection.failIfInjected(.ftruncate, path, operation: "ftruncate \(path)")
        PowerLossSimulator.willTruncate(descriptor, to: length)
        guard ftruncate(descriptor, off_t(length)) == 0 else {
            throw StoreError.io(operation: "ftruncate \(path)", errno: errno)
        }
    }

    /// Reserves disk blocks for `[offset, offset + length)` so later writes through a mapping
    /// cannot fail with SIGBUS on a full disk: a full disk is an error here instead.
    func allocate(offset: Int, length: Int) throws {
        try FaultInjection.failIfInjected(.fallocate, path, operation: "fallocate \(path)")
        #if os(Linux)
        let result = posix_fallocate(descriptor, off_t(offset), off_t(length))
        guard result == 0 else { throw StoreError.io(operation: "fallocate \(path)", errno: result) }
        PowerLossSimulator.didAllocate(descriptor, upTo: offset + length)
        #else
        if try size() < offset + length { try truncate(to: offset + length) }
        #endif
    }

    /// Takes an advisory `flock` lock without waiting. Returns false when another open file
    /// description (in this process or another) holds a conflicting lock.
    func tryLock(exclusive: Bool) throws -> Bool {
        try FaultInjection.failIfInjected(.flock, path, operation: "flock \(path)")
        if flock(descriptor, (exclusive ? LOCK_EX : LOCK_SH) | LOCK_NB) == 0 { return true }
        if errno == EWOULDBLOCK { return false }
        throw StoreError.io(operation: "flock \(path)", errno: errno)
    }

    /// Maps `length` bytes of the file. The mapping may be longer than the file; only bytes
    /// inside the file may be touched.
    /// With `copyOnWrite`, the mapping is private: writes to it never reach the file.
    func map(length: Int, writable: Bool, copyOnWrite: Bool = false) throws -> MappedRegion {
        let region = try MappedRegion(descriptor: descriptor, length: length, writable: writable && !copyOnWrite,
                                      copyOnWrite: copyOnWrite, path: path)
        if writable { PowerLossSimulator.didMap(descriptor, base: region.base, length: length) }
        return region
    }
}

#if canImport(Glibc)
private let systemRename = Glibc.rename
#else
private let systemRename = Darwin.rename
#endif

/// Directory-level calls: listing, renaming, removing, and syncing a directory entry.
package enum Directory {
    package static func create(_ path: String) throws {
        try FaultInjection.failIfInjected(.mkdir, path, operation: "mkdir \(path)")
        if mkdir(path, 0o755) != 0 && errno != EEXIST {
            // Create missing parents too, like `mkdir -p`.
            do {
                try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
            } catch {
                throw StoreError.io(operation: "mkdir \(path)", errno: errno == 0 ? EIO : errno)
            }
        }
        PowerLossSimulator.didMakeDirectory(path)
    }

    package static func exists(_ path: String) -> Bool {
        var info = stat()
        return stat(path, &info) == 0
    }

    package static func list(_ path: String) throws -> [String] {
        try FaultInjection.failIfInjected(.opendir, path, operation: "opendir \(path)")
        guard let dir = opendir(path) else { throw StoreError.io(operation: "opendir \(path)", errno: errno) }
        defer { closedir(dir) }
        var names: [String] = []
        while let entry = readdir(dir) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) { raw in
                String(decoding: raw.prefix(while: { $0 != 0 }), as: UTF8.self)
            }
            if name != "." && name != ".." { names.append(name) }
        }
        return names
    }

    package static func rename(_ from: String, _ to: String) throws {
        try FaultInjection.failIfInjected(.rename, from, operation: "rename \(from) -> \(to)")
        guard systemRename(from, to) == 0 else { throw StoreError.io(operation: "rename \(from) -> \(to)", errno: errno) }
        PowerLossSimulator.didRename(from, to)
    }

    /// Removes a file; a file that is already gone is not an error.
    package static func remove(_ path: String) throws {
        try FaultInjection.failIfInjected(.unlink, path, operation: "unlink \(path)")
        guard unlink(path) == 0 || errno == ENOENT else { throw StoreError.io(operation: "unlink \(path)", errno: errno) }
        PowerLossSimulator.didUnlink(path)
    }

    /// Makes creations, renames and removals in the directory durable.
    package static func sync(_ path: String) throws {
        try FaultInjection.failIfInjected(.fsyncDirectory, path, operation: "fsync \(path)")
        PowerLossSimulator.willSyncDirectory(path)
        let fd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        guard fd >= 0 else { throw StoreError.io(operation: "open \(path)", errno: errno) }
        defer { _ = close(fd) }
        guard fsync(fd) == 0 else { throw StoreError.io(operation: "fsync \(path)", errno: errno) }
    }
}
