import Foundation
import LogStore
import CZstd

/// The records of one file array in one store, and their in-memory index (FORMAT.md,
/// "Caches: file arrays"):
///
/// - manifest `"m" + name` -> version 1 | storage kind u8 | file id u64 | size u64 | written ms u64
///   | chunk size u32 (little-endian, 30 bytes, plain);
/// - chunk `"c" + file id (u64 big-endian) + chunk number (u32 big-endian)` -> that slice of
///   the content (the service's crypt);
/// - or, for plain services in stores that do not compress, files of 64 KiB and more are kept
///   whole as `<store folder>.files/<key space, 8 hex digits>/<file id, 16 hex digits>` beside
///   the store (storage kind 1), so they read and write at the file system's own speed.
///
/// A write puts its chunks one record at a time (so a file is never held twice in memory), or
/// writes its external file (under its new file id, which nothing refers to yet), then, in one atomic batch,
/// the manifest, the deletion of the records it replaces and of the files evicted past
/// capacity (and, for a new external file outside `.fsyncEachWrite`, its attachment check:
/// FORMAT.md, "Attachments"); external files no longer referenced are unlinked after that
/// batch is durable (outside `.fsyncEachWrite`, after the store's next sync). A crash before
/// the batch leaves only unreferenced chunks or files, which the next load deletes: a file is
/// visible entirely or not at all.
///
/// When that batch throws, it may still have reached the disk (a failed fsync: the record is
/// written, its durability unknown). So a failed call cleans up nothing, leaving unreferenced
/// chunks and files to the next load; and a removal first asks the store whether an fsync
/// failed (`checkNoFailedSync`), so after one, a removal of a name memory does not list is
/// refused, not acknowledged.
///
/// File ids only grow, so the write order is the id order: eviction takes the smallest id,
/// overwriting gives a new id (renewing the age) and renaming keeps it.
final class FileArrayIndex: @unchecked Sendable {
    struct Manifest: Equatable {
        /// Where the content is: `chunks` records, or one `external` file.
        enum Kind: UInt8 { case chunks = 0, external = 1, zstdChunks = 2 }

        var kind: Kind = .chunks
        var fileID: UInt64
        var size: UInt64
        var writtenMillis: UInt64
        var chunkSize: UInt32

        static let version: UInt8 = 1

        var encoded: [UInt8] {
            var bytes: [UInt8] = [Self.version, kind.rawValue]
            bytes.reserveCapacity(30)
            appendLittleEndian(fileID, to: &bytes)
            appendLittleEndian(size, to: &bytes)
            appendLittleEndian(writtenMillis, to: &bytes)
            appendLittleEndian(UInt64(chunkSize), to: &bytes, width: 4)
            return bytes
        }

        init(kind: Kind = .chunks, fileID: UInt64, size: UInt64, writtenMillis: UInt64, chunkSize: UInt32) {
            self.kind = kind
            self.fileID = fileID
            self.size = size
            self.writtenMillis = writtenMillis
            self.chunkSize = chunkSize
        }

        init?(_ bytes: [UInt8]) {
            guard bytes.count == 30, bytes[0] == Self.version, let kind = Kind(rawValue: bytes[1]) else { return nil }
            self.kind = kind
            fileID = readLittleEndian(bytes, at: 2, width: 8)
            size = readLittleEndian(bytes, at: 10, width: 8)
            writtenMillis = readLittleEndian(bytes, at: 18, width: 8)
            chunkSize = UInt32(readLittleEndian(bytes, at: 26, width: 4))
            guard chunkSize > 0 else { return nil }
        }

        /// The chunk records of the content (none for an external file).
        var chunkCount: UInt32 { kind == .external ? 0 : UInt32((size + UInt64(chunkSize) - 1) / UInt64(chunkSize)) }
    }

    /// Content is split into records of this size.
    static let chunkSize: UInt32 = 1 << 20
    /// Plain files of this size and more go to external files when the store allows it.
    static let externalThreshold = 64 << 10
    static let manifestPrefix = UInt8(ascii: "m")
    static let chunkPrefix = UInt8(ascii: "c")

    let store: LogStore
    let space: LogStore.KeySpace
    /// The folder of external files; nil when the store compresses (every file is chunked then).
    let externalFolder: URL?
    /// Under `lock`: set once the folder was created (or found).
    private var externalFolderExists = false
    /// `.fsyncEachWrite`: an external file is synced before its manifest, and unlinked as soon
    /// as the batch that dropped it returns (it is durable then).
    private let syncsEachWrite: Bool
    /// Serializes every operation on this array in this store.
    let lock = NSLock()
    /// Under `lock`: name -> manifest.
    var manifests: [String: Manifest] = [:]
    /// Under `lock`: file id -> name, for eviction.
    var nameOfFile: [UInt64: String] = [:]
    /// Under `lock`: file ids in write order (ids of removed files are skipped lazily).
    private var writeOrder: [UInt64] = []
    private var writeOrderStart = 0
    var nextFileID: UInt64 = 1

    static func manifestKey(_ name: String) -> [UInt8] { [manifestPrefix] + Array(name.utf8) }

    static func chunkKey(_ fileID: UInt64, _ chunk: UInt32) -> [UInt8] {
        var key: [UInt8] = [chunkPrefix]
        key.reserveCapacity(13)
        for shift in stride(from: 56, through: 0, by: -8) { key.append(UInt8(truncatingIfNeeded: fileID >> UInt64(shift))) }
        for shift in stride(from: 24, through: 0, by: -8) { key.append(UInt8(truncatingIfNeeded: chunk >> UInt32(shift))) }
        return key
    }

    private init(store: LogStore, directory: URL, compresses: Bool, spaceName: String) throws {
        self.store = store
        space = try store.space(named: spaceName)
        // `<store folder>.files/<space>` (FORMAT.md): the engine's attachment folder of the space.
        externalFolder = compresses ? nil : store.attachmentURL(space: space, id: 0).deletingLastPathComponent()
        syncsEachWrite = store.options.durability == .fsyncEachWrite
        try load()
    }

    /// The external file of `fileID`.
    func externalURL(_ fileID: UInt64) -> URL? {
        externalFolder?.appendingPathComponent(String(format: "%016llx", fileID))
    }

    // MARK: Registry (one index per store and array)

    private static let registry = StoreIndexRegistry<FileArrayIndex>()

    static func index(for store: LogStore, directory: URL, compresses: Bool, spaceName: String) throws -> FileArrayIndex {
        try registry.index(for: store, name: spaceName) {
            try FileArrayIndex(store: store, directory: directory, compresses: compresses, spaceName: spaceName)
        }
    }

    // MARK: Loading

    private func load() throws {
        for key in try store.keys(space: space, prefix: [Self.manifestPrefix]) {
            guard let name = String(validating: key.dropFirst(), as: UTF8.self),
                  let value = try store.get(forKey: key, space: space, crypt: nil),
                  let manifest = Manifest(value) else { continue }
            manifests[name] = manifest
            nameOfFile[manifest.fileID] = name
        }
        writeOrder = nameOfFile.keys.sorted()
        var highest = writeOrder.last ?? 0
        // Chunks no manifest refers to: a write cut short by a crash, or leftovers of one.
        var orphans = LogStore.WriteBatch()
        for key in try store.keys(space: space, prefix: [Self.chunkPrefix]) where key.count == 13 {
            let fileID = readBigEndian(key, at: 1, width: 8)
            highest = max(highest, fileID)
            if let name = nameOfFile[fileID], let manifest = manifests[name],
               readBigEndian(key, at: 9, width: 4) < UInt64(manifest.chunkCount) { continue }
            orphans.delete(forKey: key, space: space)
        }
        if orphans.count > 0 { try store.write(orphans) }
        // External files no manifest refers to (temporary ones included): the same leftovers.
        if let externalFolder, Directory.exists(externalFolder.path) {
            var leftovers: [String] = []
            for name in try Directory.list(externalFolder.path) {
                let id = UInt64(name.prefix(16), radix: 16)
                if let id { highest = max(highest, id) }
                if let id, name.count == 16, let owner = nameOfFile[id], manifests[owner]?.kind == .external { continue }
                leftovers.append(externalFolder.appendingPathComponent(name).path)
            }
            if syncsEachWrite {
                // A failure leaves the leftover for the next load.
                for path in leftovers { try? Directory.remove(path) }
            } else {
                // After the store's next sync and its mark: until then recovery may still check
                // (FORMAT.md, "Attachments") a batch naming one of them, after an old watermark,
                // and would end the log there if it were gone.
                store.unlinkAttachmentsAfterSync(leftovers)
            }
        }
        nextFileID = highest + 1
    }

    // MARK: Operations (caller holds `lock`)

    /// Writes `data` as `name`, evicting the oldest files past `capacity` (<= 0: no limit)
    /// in the same batch as the manifest.
    func write(_ data: Data, name: String, capacity: Int, crypt: DataCrypt, plain: Bool, compress: Bool = false) throws {
        let fileID = nextFileID
        nextFileID += 1
        let chunkSize = Int(Self.chunkSize)
        var offset = 0
        var chunk: UInt32 = 0
        var kind = compress ? Manifest.Kind.zstdChunks : .chunks
        var checksum: UInt32?
        if !compress, plain, data.count >= Self.externalThreshold, let url = externalURL(fileID) {
            checksum = try writeExternal(data, to: url)
            kind = .external
            offset = data.count
        }
        while offset < data.count {
            let end = min(offset + chunkSize, data.count)
            let bytes = data.withUnsafeBytes { raw in
                compress ? Self.zstdChunk(UnsafeRawBufferPointer(rebasing: raw[offset..<end])) : [UInt8](raw[offset..<end])
            }
            try store.put(bytes, forKey: Self.chunkKey(fileID, chunk), space: space, crypt: crypt)
            offset = end
            chunk += 1
        }
        let manifest = Manifest(kind: kind, fileID: fileID, size: UInt64(data.count),
                                writtenMillis: UInt64(max(0, Date().timeIntervalSince1970 * 1000)), chunkSize: Self.chunkSize)
        var batch = LogStore.WriteBatch()
        batch.put(manifest.encoded, forKey: Self.manifestKey(name), space: space, crypt: .plain)
        if let checksum {
            // After a power cut, recovery keeps this batch only with its file whole (the
            // manifest may reach the disk before the file: see `writeExternal`).
            batch.requireAttachment(space: space, id: fileID, size: UInt64(data.count), checksum: checksum)
        }
        var removed: [String] = []
        if let old = manifests[name] { deleteChunks(of: old, into: &batch) }
        if capacity > 0 {
            var count = manifests.count + (manifests[name] == nil ? 1 : 0)
            var cursor = writeOrderStart
            while count > capacity, cursor < writeOrder.count {
                let id = writeOrder[cursor]
                cursor += 1
                guard let victim = nameOfFile[id], victim != name, let victimManifest = manifests[victim] else { continue }
                batch.delete(forKey: Self.manifestKey(victim), space: space)
                deleteChunks(of: victimManifest, into: &batch)
                removed.append(victim)
                count -= 1
            }
        }
        // When this throws, the batch may be on disk anyway (see the type's comment): its
        // chunks and external file stay; if it is not, the next load deletes them.
        try store.write(batch)
        var unlinked: [Manifest] = []
        if let old = manifests[name] {
            nameOfFile.removeValue(forKey: old.fileID)
            unlinked.append(old)
        }
        for victim in removed {
            if let victimManifest = manifests[victim] { unlinked.append(victimManifest) }
            forget(victim)
        }
        unlinkExternal(unlinked)
        manifests[name] = manifest
        nameOfFile[fileID] = name
        writeOrder.append(fileID)
        compactWriteOrder()
    }

    /// Under `lock`: up to `limit` stored names, oldest write first, leaving out those
    /// `skip` says. O(limit + skipped) (the write order is kept, not sorted per call).
    func oldestNames(limit: Int, skipping skip: (String) -> Bool) -> [String] {
        var result: [String] = []
        var cursor = writeOrderStart
        while result.count < limit, cursor < writeOrder.count {
            let id = writeOrder[cursor]
            cursor += 1
            guard let name = nameOfFile[id], manifests[name]?.fileID == id, !skip(name) else { continue }
            result.append(name)
        }
        return result
    }

    /// The content of `name`, read chunk by chunk straight into one buffer.
    func read(_ name: String) throws -> Data? {
        guard let manifest = manifests[name] else { return nil }
        guard let size = Int(exactly: manifest.size) else { throw StoreError.corrupt("file array \(name): size \(manifest.size)") }
        if manifest.kind == .external { return try readExternal(manifest, name: name, size: size) }
        var data = Data(count: size)
        var offset = 0
        for chunk in 0..<manifest.chunkCount {
            let expected = min(Int(manifest.chunkSize), size - offset)
            let copied = try data.withUnsafeMutableBytes { target -> Int? in
                try store.withValue(forKey: Self.chunkKey(manifest.fileID, chunk), space: space, crypt: nil) { source -> Int in
                    guard let to = target.baseAddress else { return -1 }
                    if manifest.kind == .zstdChunks {
                        return Self.unzstdChunk(source, into: UnsafeMutableRawBufferPointer(start: to + offset, count: expected))
                    }
                    guard source.count == expected, let from = source.baseAddress else { return -1 }
                    to.advanced(by: offset).copyMemory(from: from, byteCount: expected)
                    return expected
                }
            }
            guard let copied, copied == expected else {
                throw StoreError.corrupt("file array \(name): chunk \(chunk) of file \(manifest.fileID) missing or of the wrong size")
            }
            offset += expected
        }
        return data
    }

    /// Renames `name` to `newName` (replacing a file of that name), keeping content and age.
    func rename(_ name: String, to newName: String) throws -> Bool {
        guard let manifest = manifests[name] else { return false }
        guard name != newName else { return true }
        var batch = LogStore.WriteBatch()
        batch.delete(forKey: Self.manifestKey(name), space: space)
        batch.put(manifest.encoded, forKey: Self.manifestKey(newName), space: space, crypt: .plain)
        if let replaced = manifests[newName] { deleteChunks(of: replaced, into: &batch) }
        try store.write(batch)
        if let replaced = manifests[newName] {
            unlinkExternal([replaced])
            forget(newName)
        }
        manifests.removeValue(forKey: name)
        manifests[newName] = manifest
        nameOfFile[manifest.fileID] = newName
        return true
    }

    /// Deletes `names` (manifests and chunks) in one batch.
    func remove(_ names: [String]) throws {
        var batch = LogStore.WriteBatch()
        var present: [String] = []
        // Even with nothing listed to remove: a name whose write threw may be on disk.
        try store.checkNoFailedSync()
        for name in names {
            guard let manifest = manifests[name] else { continue }
            batch.delete(forKey: Self.manifestKey(name), space: space)
            deleteChunks(of: manifest, into: &batch)
            present.append(name)
        }
        guard batch.count > 0 else { return }
        try store.write(batch)
        unlinkExternal(present.compactMap { manifests[$0] })
        for name in present { forget(name) }
        compactWriteOrder()
    }

    // MARK: zstd chunks

    /// A chunk of a compressed file: `01` + a zstd frame (level 3) when that is smaller,
    /// else `00` + the bytes.
    static func zstdChunk(_ raw: UnsafeRawBufferPointer) -> [UInt8] {
        let bound = ZSTD_compressBound(raw.count)
        var output = [UInt8](repeating: 0, count: bound + 1)
        let size = output.withUnsafeMutableBytes { out -> Int in
            guard let base = out.baseAddress else { return Int.max }
            return ZSTD_compress(base + 1, bound, raw.baseAddress, raw.count, 3)
        }
        if ZSTD_isError(size) == 0, size < raw.count {
            output[0] = 1
            output.removeSubrange((size + 1)...)
            return output
        }
        return [0] + raw
    }

    /// Decodes a compressed file's chunk into `target`, which has exactly the chunk's length
    /// (so a hostile frame can never expand past it). Returns the bytes written, -1 on error.
    static func unzstdChunk(_ source: UnsafeRawBufferPointer, into target: UnsafeMutableRawBufferPointer) -> Int {
        guard let marker = source.first, let from = source.baseAddress, let to = target.baseAddress else { return target.isEmpty ? 0 : -1 }
        let payload = UnsafeRawBufferPointer(start: from + 1, count: source.count - 1)
        switch marker {
        case 0:
            guard payload.count == target.count else { return -1 }
            if let base = payload.baseAddress { to.copyMemory(from: base, byteCount: payload.count) }
            return payload.count
        case 1:
            let size = ZSTD_decompress(to, target.count, payload.baseAddress, payload.count)
            return ZSTD_isError(size) == 0 && size == target.count ? size : -1
        default:
            return -1
        }
    }

    // MARK: External files

    /// Writes `data` to `url` through the engine's I/O door (so fault injection reaches it).
    /// No temporary name is needed: the file id is new, and nothing refers to the file until
    /// the manifest written after it, so a file cut short by a crash is unreferenced and
    /// deleted at the next load.
    ///
    /// After a power cut no manifest may name a file the disk lost (issue 21 item 3;
    /// FileArrayPowerLossTests). In `.fsyncEachWrite` the file and its folder are synced here,
    /// before the manifest. In the other modes nothing waits for the disk here (FORMAT.md,
    /// "Attachments"): the file is handed to the store, whose every sync of the log (the
    /// background syncer's rounds, `sync()`, close) fsyncs it and its folder before the log, so
    /// a manifest before a sync mark names a synced file; and the manifest's batch carries an
    /// attachment check with the returned CRC-32C, so recovery ends the log before a manifest
    /// after the mark whose file did not reach the disk whole. Returns the content's CRC-32C
    /// (nil in `.fsyncEachWrite`, which needs no check).
    private func writeExternal(_ data: Data, to url: URL) throws -> UInt32? {
        guard let folder = externalFolder else { return nil }
        if !externalFolderExists {
            try Directory.create(folder.path)
            // The folder (and the `.files` folder above it, which the same mkdir may have made)
            // are entries of their parents: synced once, so a power cut cannot lose the folder
            // of files whose entries survive.
            let parent = folder.deletingLastPathComponent()
            try Directory.sync(parent.path)
            try Directory.sync(parent.deletingLastPathComponent().path)
            externalFolderExists = true
        }
        do {
            let file = try SystemFile(path: url.path, flags: O_CREAT | O_WRONLY | O_TRUNC, mode: 0o600)
            try data.withUnsafeBytes { try file.write($0, at: 0) }
            if syncsEachWrite {
                try file.syncData()
                try Directory.sync(folder.path)
                return nil
            }
        } catch {
            try? Directory.remove(url.path)
            throw error
        }
        store.attachmentWritten(url.path)
        return data.withUnsafeBytes { LogStore.checksum($0) }
    }

    private func readExternal(_ manifest: Manifest, name: String, size: Int) throws -> Data {
        guard let url = externalURL(manifest.fileID) else { throw StoreError.corrupt("file array \(name): external file in a compressing store") }
        let file: SystemFile
        do {
            file = try SystemFile(path: url.path, flags: O_RDONLY)
        } catch StoreError.io(_, let code) where code == ENOENT {
            throw StoreError.corrupt("file array \(name): \(url.path) is missing")
        }
        let actual = try file.size()
        guard actual == size else { throw StoreError.corrupt("file array \(name): \(url.path) holds \(actual) bytes, the manifest says \(size)") }
        var data = Data(count: size)
        try data.withUnsafeMutableBytes { try file.read(into: $0, at: 0) }
        return data
    }

    /// Unlinks the external files of `manifests`, if any, once the batch that stopped
    /// referring to them is durable. Outside `.fsyncEachWrite` that batch may still be unsynced,
    /// and an unlink can reach the disk before it: after a power cut the old manifest would come
    /// back naming a file that is gone (issue 21 item 3; FileArrayPowerLossTests). So the store
    /// unlinks them after its next sync of the log (`LogStore.unlinkAttachmentsAfterSync`);
    /// nothing waits for it here. A failure, or a process that ends first, leaves unreferenced
    /// files, which the next load deletes.
    private func unlinkExternal(_ manifests: [Manifest]) {
        let urls = manifests.compactMap { $0.kind == .external ? externalURL($0.fileID) : nil }
        guard !urls.isEmpty else { return }
        if syncsEachWrite {
            for url in urls { try? Directory.remove(url.path) }
        } else {
            store.unlinkAttachmentsAfterSync(urls.map(\.path))
        }
    }

    private func deleteChunks(of manifest: Manifest, into batch: inout LogStore.WriteBatch) {
        for chunk in 0..<manifest.chunkCount { batch.delete(forKey: Self.chunkKey(manifest.fileID, chunk), space: space) }
    }

    private func forget(_ name: String) {
        guard let manifest = manifests.removeValue(forKey: name) else { return }
        nameOfFile.removeValue(forKey: manifest.fileID)
    }

    /// Drops the ids of removed files from the front of the write order.
    private func compactWriteOrder() {
        while writeOrderStart < writeOrder.count, nameOfFile[writeOrder[writeOrderStart]] == nil { writeOrderStart += 1 }
        if writeOrderStart > 1024, writeOrderStart * 2 > writeOrder.count {
            writeOrder.removeFirst(writeOrderStart)
            writeOrderStart = 0
        }
        if writeOrder.count > 4 * max(nameOfFile.count, 1024) {
            writeOrder = writeOrder[writeOrderStart...].filter { nameOfFile[$0] != nil }
            writeOrderStart = 0
        }
    }
}

func appendLittleEndian(_ value: UInt64, to bytes: inout [UInt8], width: Int = 8) {
    for i in 0..<width { bytes.append(UInt8(truncatingIfNeeded: value >> (8 * UInt64(i)))) }
}

func readLittleEndian(_ bytes: [UInt8], at offset: Int, width: Int) -> UInt64 {
    var value: UInt64 = 0
    for i in 0..<width { value |= UInt64(bytes[offset + i]) << (8 * UInt64(i)) }
    return value
}

func readBigEndian(_ bytes: [UInt8], at offset: Int, width: Int) -> UInt64 {
    var value: UInt64 = 0
    for i in 0..<width { value = value << 8 | UInt64(bytes[offset + i]) }
    return value
}
