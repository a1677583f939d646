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
    /// Sealed bytes of a batch, two buffers in turn: one being written in the background
    /// while the next batch is sealed into the other.
    private let sealedBuffers: [UnsafeMutableRawBufferPointer]
    /// The buffer the next batch is sealed into.
    private var current = 0
    /// The previous batch's write, while the next one is sealed.
    private let background = BackgroundWrite()
    private var nextSegment = 0
    private var position: Int
    private var releasedTargetCache = false

    init(target: URL, durable: Bool, storageKey: [UInt8], segmentSize: Int) throws {
        let (header, fileKey) = try EncryptedFileHeader.new(segmentSize: segmentSize, storageKey: storageKey)
        self.header = header
        self.cipher = try AESGCM(key: fileKey)
        self.segmentSize = segmentSize
        self.batchSegments = max(1, (1 << 20) / segmentSize)
        plain = ScratchBuffers.borrow(byteCount: (batchSegments + 1) * segmentSize)
        let sealedSize = (batchSegments + 1) * (segmentSize + AESGCM.tagSize)
        sealedBuffers = [ScratchBuffers.borrow(byteCount: sealedSize), ScratchBuffers.borrow(byteCount: sealedSize)]
        do {
            (replacement, file) = try AtomicReplacement.begin(target: target, durable: durable)
        } catch {
            ScratchBuffers.giveBack(plain)
            for buffer in sealedBuffers { ScratchBuffers.giveBack(buffer) }
            throw error
        }
        position = 0
        do {
            try header.bytes.withUnsafeBytes { try file.write($0, at: 0) }
        } catch {
            // Every stored property is set here, so throwing runs `deinit`, which gives the
            // buffers back (giving them back here too put each in the pool twice: two later
            // writers then shared one buffer, and one of them wrote into freed memory).
            replacement.abandon()
            throw error
        }
        position = EncryptedFileHeader.size
    }

    deinit {
        // No buffer goes back to the pool while the background thread still reads it.
        background.waitDiscardingError()
        // Wipe the plaintext left in the buffer.
        memset(plain.baseAddress!, 0, touched)
        ScratchBuffers.giveBack(plain)
        for buffer in sealedBuffers { ScratchBuffers.giveBack(buffer) }
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

    /// Seals the first `buffered` segments of `plain` followed by the segments of `direct`
    /// (when given; otherwise the buffered segments end at `plainCount`), the very last one
    /// flagged final when `lastIsFinal`, and writes them at the end of the file. Only the last
    /// segment may be short.
    ///
    /// From the second batch on, a batch is written in the background (`BackgroundWrite`)
    /// while the next one is sealed; the first and the final batch are written before this
    /// returns. With no write in flight a large batch is
    /// sealed on two threads (`SegmentBatch`); with one in flight the other core is copying it,
    /// so the batch is sealed here alone. (Each half sealed and written by its own thread, as
    /// before, left one thread spinning on ext4's inode lock while the other wrote: 10% of
    /// the samples of a 256 MiB write. A pipeline in 64 KiB chunks measured 10-20% slower than
    /// that: more, smaller writes and a hand-off per chunk.)
    private func seal(buffered: Int, then direct: UnsafeRawBufferPointer?, lastIsFinal: Bool) throws {
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
        let base = position
        let sealed = sealedBuffers[current]
        /// Seals segments `range` of the batch into `sealed`.
        func sealSegments(_ range: Range<Int>) throws {
            try withUnsafeTemporaryAllocation(byteCount: AESGCM.nonceSize, alignment: 1) { nonce in
                try header.bytes.withUnsafeBytes { aad in
                    for index in range {
                        header.writeNonce(into: nonce, segment: first + index, last: lastIsFinal && index == segments - 1)
                        try cipher.seal(segment(index), nonce: UnsafeRawBufferPointer(nonce), aad: aad, into: sealed.baseAddress! + index * storedSize)
                    }
                }
            }
        }
        if background.inFlight {
            try sealSegments(0 ..< segments)
        } else {
            _ = try SegmentBatch.run(count: segments, bytes: plainBytes) { range in
                try sealSegments(range)
                return nil
            }
        }
        // The previous batch is in the file before this one is written after it (a failure
        // of that write surfaces here, and the writer is discarded).
        try background.wait()
        let bytes = UnsafeRawBufferPointer(start: sealed.baseAddress, count: sealedEnd(segments))
        // A file's first batch is written here too: most files are one batch and a close, and
        // a hand-off to the other thread gains them nothing (1 MiB files: ~10% slower).
        if lastIsFinal || first == 0 {
            try file.write(bytes, at: base)
        } else {
            background.start(file, bytes, at: base)
            current ^= 1
        }
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
        background.waitDiscardingError()
        replacement.abandon()
    }
}
