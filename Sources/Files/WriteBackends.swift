import Foundation
import LogStore

/// Where a `FileWriter`'s bytes go.
protocol WriteBackend: AnyObject {
    /// Takes `bytes` (buffering them as it likes).
    func write(_ bytes: UnsafeRawBufferPointer) throws
    /// Writes what is buffered and makes the file the named one (atomic replacement).
    func finish() throws
    /// Drops everything written: the named file stays as it was.
    func abandon()
}

/// Plain bytes, into a temporary file renamed over the target at close, or appended in place.
final class PlainWriteBackend: WriteBackend {
    private static let bufferSize = 256 << 10
    private let file: SystemFile
    /// nil in append mode.
    private let replacement: AtomicReplacement?
    private let durable: Bool
    private var buffer: [UInt8] = []
    private var position: Int

    init(target: URL, durable: Bool, append: Bool) throws {
        self.durable = durable
        if append {
            try Directory.create(target.deletingLastPathComponent().path)
            file = try SystemFile(path: target.path, flags: O_WRONLY | O_CREAT, mode: 0o644)
            replacement = nil
            position = try file.size()
        } else {
            (replacement, file) = try AtomicReplacement.begin(target: target, durable: durable)
            position = 0
        }
        buffer.reserveCapacity(Self.bufferSize)
    }

    func write(_ bytes: UnsafeRawBufferPointer) throws {
        if buffer.count + bytes.count <= Self.bufferSize {
            buffer.append(contentsOf: bytes)
            return
        }
        try flush()
        if bytes.count >= Self.bufferSize {
            try file.write(bytes, at: position)
            position += bytes.count
            releaseTargetCacheOnce()
        } else {
            buffer.append(contentsOf: bytes)
        }
    }

    private func flush() throws {
        guard !buffer.isEmpty else { return }
        try buffer.withUnsafeBytes { try file.write($0, at: position) }
        position += buffer.count
        buffer.removeAll(keepingCapacity: true)
        releaseTargetCacheOnce()
    }

    private var releasedTargetCache = false

    /// Once the new file is large: the old file's cache goes (`AtomicReplacement.releaseTargetCache`).
    private func releaseTargetCacheOnce() {
        guard !releasedTargetCache, position >= AtomicReplacement.cacheReleaseThreshold, let replacement else { return }
        releasedTargetCache = true
        replacement.releaseTargetCache()
    }

    func finish() throws {
        do { try flush() } catch {
            replacement?.abandon()
            throw error
        }
        if let replacement {
            try replacement.commit(file)
        } else if durable {
            try file.syncData()
        }
    }

    func abandon() {
        // In append mode what reached the file stays there; only the buffer is dropped.
        buffer.removeAll()
        replacement?.abandon()
    }
}

/// Segmented AES-256-GCM (EncryptedFileHeader) into a temporary file renamed over the target
/// at close. Plaintext is gathered into a batch of whole segments; a full segment is sealed only
/// once a byte after it arrives, because the last segment's nonce is flagged.
final class EncryptedWriteBackend: WriteBackend {
    private let file: SystemFile
    private let replacement: AtomicReplacement
    private let header: EncryptedFileHeader
    private let cipher: AESGCM
    private let segmentSize: Int
    /// Segments sealed per batch (about 1 MiB).
    private let batchSegments: Int
    /// Plaintext waiting: room for a batch plus one segment.
    private let plain: UnsafeMutableRawBufferPointer
    private var plainCount = 0
    /// Bytes of `plain` ever written (wiped at deinit).
    private var touched = 0
    /// The file's header, then a batch's sealed segments: the header goes out with the first
    /// batch, in the same write.
    private let sealed: UnsafeMutableRawBufferPointer
    /// Whether the header is still to be written (before the first batch).
    private var headerPending = true
    private var nextSegment = 0
    /// Where the next batch goes in the file (after the header, which goes out with the first).
    private var position = EncryptedFileHeader.size
    private var releasedTargetCache = false

    init(target: URL, durable: Bool, storageKey: [UInt8], segmentSize: Int) throws {
        let (header, fileKey) = try EncryptedFileHeader.new(segmentSize: segmentSize, storageKey: storageKey)
        self.header = header
        self.cipher = try AESGCM(key: fileKey)
        self.segmentSize = segmentSize
        self.batchSegments = max(1, (1 << 20) / segmentSize)
        plain = ScratchBuffers.borrow(byteCount: (batchSegments + 1) * segmentSize)
        sealed = ScratchBuffers.borrow(byteCount: EncryptedFileHeader.size + (batchSegments + 1) * (segmentSize + AESGCM.tagSize))
        do {
            (replacement, file) = try AtomicReplacement.begin(target: target, durable: durable)
        } catch {
            ScratchBuffers.giveBack(plain)
            ScratchBuffers.giveBack(sealed)
            throw error
        }
        header.bytes.withUnsafeBytes { sealed.copyMemory(from: $0) }
    }

    deinit {
        // Wipe the plaintext left in the buffer.
        memset(plain.baseAddress!, 0, touched)
        ScratchBuffers.giveBack(plain)
        ScratchBuffers.giveBack(sealed)
    }

    func write(_ bytes: UnsafeRawBufferPointer) throws {
        guard var source = bytes.baseAddress else { return }
        var remaining = bytes.count
        while remaining > 0 {
            let held = plainCount / segmentSize
            if plainCount % segmentSize == 0, remaining > segmentSize, held < batchSegments {
                // Whole segments with bytes after them: the buffered ones (whole, so not the
                // last) and then as many as fit in the batch sealed straight from the caller's
                // buffer, without copying them into `plain`.
                let direct = min(batchSegments - held, (remaining - 1) / segmentSize)
                try seal(buffered: held, then: UnsafeRawBufferPointer(start: source, count: direct * segmentSize), lastIsFinal: false)
                plainCount = 0
                source += direct * segmentSize
                remaining -= direct * segmentSize
                continue
            }
            if plainCount == plain.count {
                // Full and more follows: seal every segment but the last, keep that one.
                try seal(buffered: batchSegments, then: nil, lastIsFinal: false)
                let kept = plainCount - batchSegments * segmentSize
                memmove(plain.baseAddress!, plain.baseAddress! + batchSegments * segmentSize, kept)
                plainCount = kept
                continue
            }
            // Fill the buffer, at most up to the end of the segment under way (so that a
            // write after a short one can go direct again).
            let boundary = plainCount % segmentSize == 0 ? plain.count : (plainCount / segmentSize + 1) * segmentSize
            let take = min(remaining, boundary - plainCount)
            memcpy(plain.baseAddress! + plainCount, source, take)
            plainCount += take
            touched = max(touched, plainCount)
            source += take
            remaining -= take
        }
    }

    /// Writes inside a batch start and end on a page boundary of the file (but the batch's
    /// first and last): a write that starts inside a page the last one ended in cost ~1.8x
    /// per byte (the kernel caches such a write page by page, not in large folios).
    static let writeAlignment = 4096
    /// Bytes gathered before a write inside a batch: each write has a fixed cost, and the
    /// kernel caches a larger write in larger folios.
    static let minimumWrite = 256 << 10

    /// Seals the first `buffered` segments of `plain` followed by the segments of `direct`
    /// (when given; otherwise the buffered segments end at `plainCount`), the very last one
    /// flagged final when `lastIsFinal`, and writes them at the end of the file (after the
    /// header, in the same write, for the first batch). Only the last segment may be short.
    ///
    /// The batch is sealed in chunks of about 64 KiB on a helper thread (and on this one when
    /// the helper is behind) while this thread writes the sealed chunks in order
    /// (`SealPipeline`), so the AES of the later chunks overlaps the copy of the earlier ones.
    /// (Before: the batch sealed on two threads and then written, the next batch sealed while
    /// a background thread wrote the last one: a 1 MiB file paid its AES and its copy one
    /// after the other, 0.63x of a plain write: BENCHMARKS.md, "Files".)
    private func seal(buffered: Int, then direct: UnsafeRawBufferPointer?, lastIsFinal: Bool) throws {
        let plain = self.plain, header = self.header, cipher = self.cipher, segmentSize = self.segmentSize
        let directSegments = direct.map { ($0.count + segmentSize - 1) / segmentSize } ?? 0
        let segments = buffered + directSegments
        guard nextSegment + segments <= Int(UInt32.max) else { throw FileStorageError.unsupported("files of more than 2^32 segments") }
        let first = nextSegment
        let storedSize = segmentSize + AESGCM.tagSize
        let plainBytes = direct.map { buffered * segmentSize + $0.count } ?? min(plainCount, buffered * segmentSize)
        /// The plaintext of segment `index` of the batch.
        func segment(_ index: Int) -> UnsafeRawBufferPointer {
            let start = index * segmentSize
            let count = min(segmentSize, plainBytes - start)
            if let direct, index >= buffered {
                return UnsafeRawBufferPointer(rebasing: direct[(start - buffered * segmentSize)...].prefix(count))
            }
            return UnsafeRawBufferPointer(start: plain.baseAddress.map { $0 + start }, count: count)
        }
        /// Sealed bytes of segments `0 ..< end` of the batch.
        func sealedEnd(_ end: Int) -> Int {
            (end - 1) * storedSize + min(segmentSize, plainBytes - (end - 1) * segmentSize) + AESGCM.tagSize
        }
        // The batch's sealed segments go after the header's room in `sealed`.
        let batchStart = sealed.baseAddress! + EncryptedFileHeader.size
        // Chunks of about `SealPipeline.chunkBytes`, at most 64 of them.
        let perChunk = max(SealPipeline.chunkBytes / segmentSize, (segments + 63) / 64, 1)
        let chunkCount = (segments + perChunk - 1) / perChunk
        let base = position
        let batchEnd = base + sealedEnd(segments)
        // The header (before the first batch) goes out with the batch's first write.
        var flushed = headerPending ? 0 : base
        try SealPipeline.run(chunkCount: chunkCount, seal: { chunk in
            try withUnsafeTemporaryAllocation(byteCount: AESGCM.nonceSize, alignment: 1) { nonce in
                try header.bytes.withUnsafeBytes { aad in
                    for index in chunk * perChunk ..< min(segments, (chunk + 1) * perChunk) {
                        header.writeNonce(into: nonce, segment: first + index, last: lastIsFinal && index == segments - 1)
                        try cipher.seal(segment(index), nonce: UnsafeRawBufferPointer(nonce), aad: aad, into: batchStart + index * storedSize)
                    }
                }
            }
        }, write: { chunks in
            // File offsets: what is sealed ends at `available`; bytes before `flushed` are
            // written. Inside the batch, writes end on a multiple of `writeAlignment`.
            let available = base + sealedEnd(min(segments, chunks.upperBound * perChunk))
            var end = available
            if available < batchEnd {
                end = available / Self.writeAlignment * Self.writeAlignment
                if end - flushed < Self.minimumWrite { return }
            }
            try file.write(UnsafeRawBufferPointer(start: batchStart + (flushed - base), count: end - flushed), at: flushed)
            flushed = end
        })
        headerPending = false
        nextSegment += segments
        position += sealedEnd(segments)
        if !releasedTargetCache, position >= AtomicReplacement.cacheReleaseThreshold {
            releasedTargetCache = true
            replacement.releaseTargetCache()
        }
    }

    func finish() throws {
        do {
            // The final batch: every buffered segment, the last one flagged (one empty segment
            // for an empty file).
            try seal(buffered: max(1, (plainCount + segmentSize - 1) / segmentSize), then: nil, lastIsFinal: true)
            plainCount = 0
        } catch {
            abandon()
            throw error
        }
        try replacement.commit(file)
    }

    func abandon() {
        plainCount = 0
        replacement.abandon()
    }
}
