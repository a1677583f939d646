import Foundation
import LogStore

/// The temporary file a writer fills and then puts in its target's place at close (an exchange
/// of the two names, or a rename), so a crash leaves the old file or the new one, never a mix
/// (FORMAT.md, "Encrypted files": temporary files). Named `.<target name>.<16 hex>.ustmp` in
/// the target's folder.
struct AtomicReplacement {
    let target: URL
    let temporary: URL
    /// Whether to sync the file before the rename and the folder after it.
    let durable: Bool

    /// Creates the target's folder if needed and opens a new temporary file beside it.
    /// - Throws: `StoreError.io` when the folder or the file cannot be created.
    static func begin(target: URL, durable: Bool) throws -> (AtomicReplacement, SystemFile) {
        let folder = target.deletingLastPathComponent()
        try Directory.create(folder.path)
        let temporary = folder.appendingPathComponent(".\(target.lastPathComponent).\(randomHex())\(FileName.temporarySuffix)")
        TemporaryFiles.begin(temporary.path)
        do {
            let file = try SystemFile(path: temporary.path, flags: O_WRONLY | O_CREAT | O_EXCL, mode: 0o644)
            return (AtomicReplacement(target: target, temporary: temporary, durable: durable), file)
        } catch {
            TemporaryFiles.end(temporary.path)
            throw error
        }
    }

    /// 16 random lowercase hex digits: the temporary name only has to be unlikely to be taken
    /// (it is created with `O_EXCL`), so the system's generator serves, without OpenSSL's
    /// and `String(format:)`'s cost (~90k instructions a name between them, under callgrind).
    private static func randomHex() -> String {
        let digits = String(UInt64.random(in: .min ... .max), radix: 16)
        return String(repeating: "0", count: 16 - digits.count) + digits
    }

    /// Makes the temporary file the target: sync it (when durable), put it in the target's
    /// place, sync the folder (when durable). An existing target is exchanged with the
    /// temporary file (`RenameExchange`) and then unlinked under the temporary name; otherwise,
    /// or where the system cannot exchange, the temporary file is renamed over the target.
    func commit(_ file: SystemFile) throws {
        defer { TemporaryFiles.end(temporary.path) }
        do {
            if durable { try file.syncData() }
            if RenameExchange.exchange(temporary.path, target.path) {
                // The old file, now under the temporary name; a leftover is swept at next open.
                try? Directory.remove(temporary.path)
            } else {
                try Directory.rename(temporary.path, target.path)
            }
        } catch {
            try? Directory.remove(temporary.path)
            throw error
        }
        if durable { try Directory.sync(target.deletingLastPathComponent().path) }
    }

    /// New-file bytes written from which a writer calls `releaseTargetCache()`: below this the
    /// old file's cache is small and the calls would cost more than they save.
    static let cacheReleaseThreshold = 4 << 20

    /// Asks the system to drop the page cache of the file being replaced (the target as it is
    /// now), once a writer knows the new file is large. Its content is going away at `commit`,
    /// and while it is cached the new file's pages come from memory not recently used: on
    /// this project's VM (free memory handed back to the host) first-touching that memory made
    /// a 256 MiB replacement 3-4 times slower than writing the file in place, which frees the
    /// old pages first (BENCHMARKS.md, "Files"). Dropping them lets the new file reuse them.
    ///
    /// Changes nothing that can be observed: the old file stays, whole, under its name, and an
    /// open reader still reads it (from disk, where not cached); dirty pages are not dropped
    /// (the system starts their writeback instead), nor pages a process has mapped. Advisory:
    /// any failure (no target, not a regular file, no permission) is ignored.
    func releaseTargetCache() {
        #if os(Linux)
        let descriptor = open(target.path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK)
        guard descriptor >= 0 else { return }
        defer { close(descriptor) }
        var info = stat()
        guard fstat(descriptor, &info) == 0, info.st_mode & S_IFMT == S_IFREG, info.st_size > 0 else { return }
        _ = posix_fadvise(descriptor, 0, 0, POSIX_FADV_DONTNEED)
        #endif
    }

    /// Drops the temporary file; the target stays as it was.
    func abandon() {
        try? Directory.remove(temporary.path)
        TemporaryFiles.end(temporary.path)
    }
}

/// The temporary files writers of this process are filling: the leftover sweep skips them.
enum TemporaryFiles {
    private static let lock = NSLock()
    nonisolated(unsafe) private static var active: Set<String> = []

    static func begin(_ path: String) { lock.withLock { _ = active.insert(path) } }
    static func end(_ path: String) { lock.withLock { _ = active.remove(path) } }
    static func isActive(_ path: String) -> Bool { lock.withLock { active.contains(path) } }

    /// Removes every `*.ustmp` file under `folder` (recursively) that no writer of this
    /// process is filling: what a crash during a write left behind. Returns how many.
    @discardableResult
    static func removeLeftovers(under folder: URL) -> Int {
        guard let walker = FileManager.default.enumerator(at: folder, includingPropertiesForKeys: nil) else { return 0 }
        var removed = 0
        for case let url as URL in walker where url.lastPathComponent.hasSuffix(FileName.temporarySuffix) {
            let path = url.path
            if isActive(path) { continue }
            if (try? Directory.remove(path)) != nil { removed += 1 }
        }
        return removed
    }
}
