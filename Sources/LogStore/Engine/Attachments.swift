import Foundation
import CChecksum

/// Files beside the store that records depend on (FORMAT.md, "Attachments"): a file array's
/// external files, `<store folder>.files/<key space>/<id>`.
///
/// Outside `.fsyncEachWrite` nothing on the write path syncs such a file. Instead:
/// - a writer notes the file it wrote (`noteWritten`) before it writes the records naming it;
///   every sync of the log (a background round, `sync()`, compaction's sync, close) first
///   fsyncs the files noted so far and their folders (`syncWritten`), so a record before a
///   sync mark never names a file the disk may lose;
/// - a record after the last mark may have reached the disk without its file (the kernel
///   writes pages back in any order): the writer adds an attachment check
///   (`LogStore.WriteBatch.requireAttachment`) to the batch, and point-in-time recovery ends the
///   log at a batch whose file is not there whole (`StoreEngine.attachmentIsIntact`);
/// - a file no longer named is unlinked only after a sync that began after the batch that
///   stopped naming it (`unlinkAfterSync`), and only once that sync's mark is on disk
///   (`finish`): an earlier unlink could reach the disk while the batch did not, and a power cut
///   would bring the old record back without its file; and while the mark is not on disk,
///   recovery would still check the batch that named the file, after the old watermark, and end
///   the log there.
final class AttachmentRegistry: @unchecked Sendable {
    private let mutex = Mutex()
    /// Files written since the last sync took them, and their folders.
    private var written: [String] = []
    private var folders: Set<String> = []
    /// Files to unlink once a sync that began after their removal completed.
    private var removed: [String] = []

    /// `path` (in `folder`) was written; the records naming it come next.
    func noteWritten(_ path: String, folder: String) {
        mutex.withLock {
            written.append(path)
            folders.insert(folder)
        }
    }

    /// `paths` are no longer named by any record in the log (the batch saying so is written).
    func unlinkAfterSync(_ paths: [String]) {
        guard !paths.isEmpty else { return }
        mutex.withLock { removed += paths }
    }

    /// The removals to carry out after the sync that is beginning: call it when the sync
    /// captures what it covers (with `writeMutex`, or before taking it), so every batch that
    /// made these files unnamed is in what the sync covers.
    func takeRemovals() -> [String] {
        mutex.withLock {
            defer { removed = [] }
            return removed
        }
    }

    /// Fsyncs the files noted so far, then their folders. Call it inside the sync, after it
    /// captured what it covers and before it fsyncs the log. On failure what was taken is noted
    /// again (the store's sync fails and is remembered; a later sync retries).
    func syncWritten() throws {
        let (files, dirs) = mutex.withLock { () -> ([String], Set<String>) in
            defer { written = []; folders = [] }
            return (written, folders)
        }
        guard !files.isEmpty || !dirs.isEmpty else { return }
        do {
            for path in files {
                let file: SystemFile
                do {
                    file = try SystemFile(path: path, flags: O_RDONLY)
                } catch StoreError.io(_, let code) where code == ENOENT {
                    continue    // unlinked already: replaced and its replacement synced
                }
                try file.syncData()
            }
            for folder in dirs.sorted() { try Directory.sync(folder) }
        } catch {
            mutex.withLock {
                written = files + written
                folders.formUnion(dirs)
            }
            throw error
        }
    }

    /// After a sync: unlinks `paths` (what `takeRemovals` returned) when the sync's mark is on
    /// disk, else keeps them for the next sync. A failed unlink leaves an unnamed file, which the
    /// layer that wrote it deletes at its next load.
    func finish(_ paths: [String], markDurable: Bool) {
        guard markDurable else {
            restoreRemovals(paths)
            return
        }
        for path in paths { try? Directory.remove(path) }
    }

    /// Removals not carried out (the sync failed): back for the next one.
    func restoreRemovals(_ paths: [String]) {
        unlinkAfterSync(paths)
    }
}

extension StoreEngine {
    static let attachmentCheckPrefix = Array("attach/".utf8)

    /// The folder of the attachments of key space `space`: `<store folder>.files/<space, 8
    /// lowercase hex digits>`.
    func attachmentFolder(space: UInt32) -> URL {
        directoryURL.deletingLastPathComponent()
            .appendingPathComponent(directoryURL.lastPathComponent + ".files", isDirectory: true)
            .appendingPathComponent(String(format: "%08x", space), isDirectory: true)
    }

    /// The key of an attachment check: `attach/<space 8 hex>/<id 16 hex>/<size decimal>/<CRC-32C 8 hex>`.
    static func attachmentCheckKey(space: UInt32, id: UInt64, size: UInt64, checksum: UInt32) -> [UInt8] {
        attachmentCheckPrefix + Array((String(format: "%08x/%016llx/", space, id) + "\(size)/" + String(format: "%08x", checksum)).utf8)
    }

    /// Whether the attachment an attachment-check record names (its key `key`) is on disk with
    /// the size and CRC-32C the key says. A key that does not parse is not intact.
    func attachmentIsIntact(key: UnsafeRawBufferPointer) -> Bool {
        guard key.count > Self.attachmentCheckPrefix.count else { return false }
        let text = String(decoding: key.dropFirst(Self.attachmentCheckPrefix.count), as: UTF8.self)
        let parts = text.split(separator: "/", omittingEmptySubsequences: false)
        guard parts.count == 4, parts[0].count == 8, parts[1].count == 16, parts[3].count == 8,
              let space = UInt32(parts[0], radix: 16), let id = UInt64(parts[1], radix: 16),
              let size = Int(parts[2]), let checksum = UInt32(parts[3], radix: 16) else { return false }
        let path = attachmentFolder(space: space).appendingPathComponent(String(format: "%016llx", id)).path
        guard let file = try? SystemFile(path: path, flags: O_RDONLY), let actual = try? file.size(), actual == size else { return false }
        guard size > 0 else { return checksum == 0 }
        var crc: UInt32 = 0
        var offset = 0
        var buffer = [UInt8](repeating: 0, count: min(size, 1 << 20))
        while offset < size {
            let count = min(buffer.count, size - offset)
            let ok: Bool = buffer.withUnsafeMutableBytes { raw in
                guard (try? file.read(into: UnsafeMutableRawBufferPointer(rebasing: raw[0..<count]), at: offset)) != nil,
                      let base = raw.baseAddress else { return false }
                crc = cs_crc32c_extend(crc, base, count)
                return true
            }
            guard ok else { return false }
            offset += count
        }
        return crc == checksum
    }
}
