import Foundation
import LogStore

/// Where a `FileReader`'s bytes come from.
protocol ReadBackend: AnyObject {
    /// Bytes of content (plaintext for an encrypted file).
    var length: Int { get }
    /// Fills `buffer` from content offset `offset`; returns how many bytes (fewer only at the end).
    func read(into buffer: UnsafeMutableRawBufferPointer, at offset: Int) throws -> Int
}

/// A plain file, read with pread.
final class PlainReadBackend: ReadBackend {
    private let file: SystemFile
    let length: Int

    init(path: String) throws {
        file = try SystemFile(path: path, flags: O_RDONLY)
        length = try file.size()
    }

    func read(into buffer: UnsafeMutableRawBufferPointer, at offset: Int) throws -> Int {
        try file.readAvailable(into: buffer, at: offset)
    }
}

/// An encrypted file (EncryptedFileHeader). Opening authenticates the header and the last
/// segment, so `length` is one the key vouches for; a read decrypts only the segments it
/// touches (a window of up to about 1 MiB of segments for sequential reads). Plaintext of a
/// segment reaches the caller only after its tag verified.
final class EncryptedReadBackend: ReadBackend {
    private let file: SystemFile
    private let name: String
    private let header: EncryptedFileHeader
    private let cipher: AESGCM
    private let segments: Int
    let length: Int
    private let windowCapacity: Int
    /// Decrypted plaintext of segments `windowFirst ..< windowFirst + windowCount`.
    private let window: UnsafeMutableRawBufferPointer
    private var windowFirst = 0
    private var windowCount = 0
    private let sealed: UnsafeMutableRawBufferPointer
    /// Bytes of `window` ever written (wiped at deinit).
    private var touched = 0
    /// The nonce of the segment being opened (prefix, then counter and flag set per segment).
    private var nonce: [UInt8]

    init(path: String, name: String, storageKey: [UInt8]) throws {
        self.name = name
        let opened = try SystemFile(path: path, flags: O_RDONLY)
        file = opened
        let fileSize = try opened.size()
        var headerBytes = [UInt8](repeating: 0, count: min(fileSize, EncryptedFileHeader.size))
        try headerBytes.withUnsafeMutableBytes { try opened.read(into: $0, at: 0) }
        let fileKey: [UInt8]
        (header, fileKey) = try EncryptedFileHeader.open(headerBytes, fileSize: fileSize, storageKey: storageKey, file: name)
        cipher = try AESGCM(key: fileKey)
        nonce = header.nonce(segment: 0, last: false)
        (segments, length) = try header.layout(fileSize: fileSize, file: name)
        windowCapacity = min(segments, max(1, (1 << 20) / header.segmentSize))
        window = ScratchBuffers.borrow(byteCount: windowCapacity * header.segmentSize)
        sealed = ScratchBuffers.borrow(byteCount: windowCapacity * header.storedSegmentSize)
        try load(first: segments - 1, count: 1)
    }

    deinit {
        // Wipe the plaintext this reader left in the window before the buffer is reused.
        memset(window.baseAddress!, 0, touched)
        ScratchBuffers.giveBack(window)
        ScratchBuffers.giveBack(sealed)
    }

    func read(into buffer: UnsafeMutableRawBufferPointer, at offset: Int) throws -> Int {
        guard let destination = buffer.baseAddress, offset < length else { return 0 }
        let size = header.segmentSize
        let end = min(length, offset + buffer.count)
        var position = offset
        while position < end {
            let segment = position / size
            let inWindow = segment >= windowFirst && segment < windowFirst + windowCount
            // Whole segments before the last one (which open left in the window) go straight
            // into the caller's buffer: no copy through the window, no window to wipe.
            let wholeSegments = min(windowCapacity, (end - position) / size, segments - 1 - segment)
            if !inWindow, position % size == 0, wholeSegments > 0 {
                try load(first: segment, count: wholeSegments, into: destination + (position - offset))
                position += wholeSegments * size
                continue
            }
            if !inWindow {
                // Only the segments this read touches, up to a window's worth.
                let lastTouched = (end - 1) / size
                try load(first: segment, count: min(windowCapacity, lastTouched - segment + 1))
            }
            let windowStart = windowFirst * size
            let windowEnd = min(length, (windowFirst + windowCount) * size)
            let take = min(end, windowEnd) - position
            memcpy(destination + (position - offset), window.baseAddress! + (position - windowStart), take)
            position += take
        }
        return end - offset
    }

    /// Reads and authenticates segments `first ..< first + count` into the window, or into
    /// `destination` (whole segments only) leaving the window as it was.
    private func load(first: Int, count: Int, into destination: UnsafeMutableRawPointer? = nil) throws {
        if destination == nil { windowCount = 0 }
        let start = header.offset(ofSegment: first)
        let lastIsFinal = first + count == segments
        let storedCount = count * header.storedSegmentSize - (lastIsFinal ? header.segmentSize - lastSegmentLength : 0)
        let storedSize = header.storedSegmentSize
        // A large batch is split between two threads (SegmentBatch), each reading its half
        // with a pread of its own, so one half's read overlaps the other's decryption.
        let failed = try SegmentBatch.run(count: count, bytes: storedCount) { range in
            let readStart = range.lowerBound * storedSize
            try file.read(into: UnsafeMutableRawBufferPointer(start: sealed.baseAddress! + readStart,
                                                              count: min(storedCount, range.upperBound * storedSize) - readStart),
                          at: start + readStart)
            return try withUnsafeTemporaryAllocation(byteCount: AESGCM.nonceSize, alignment: 1) { nonce in
                try header.bytes.withUnsafeBytes { aad -> Int? in
                    for index in range {
                        let segment = first + index
                        let bytes = UnsafeRawBufferPointer(start: sealed.baseAddress! + index * storedSize,
                                                           count: min(storedSize, storedCount - index * storedSize))
                        header.writeNonce(into: nonce, segment: segment, last: segment == segments - 1)
                        let output = (destination ?? window.baseAddress!) + index * header.segmentSize
                        if try !cipher.open(bytes, nonce: UnsafeRawBufferPointer(nonce), aad: aad, into: output) { return index }
                    }
                    return nil
                }
            }
        }
        if let index = failed {
            // The first segment that did not verify (those after it may have been opened).
            let segment = first + index
            let bytes = UnsafeRawBufferPointer(start: sealed.baseAddress! + index * storedSize, count: min(storedSize, storedCount - index * storedSize))
            throw try failure(bytes, segment: segment, expectedLast: segment == segments - 1,
                              scratch: (destination ?? window.baseAddress!) + index * header.segmentSize)
        }
        guard destination == nil else { return }
        windowFirst = first
        windowCount = count
        touched = max(touched, count * header.segmentSize)
    }

    /// Plaintext bytes of the last segment.
    private var lastSegmentLength: Int { length - (segments - 1) * header.segmentSize }

    private func open(_ bytes: UnsafeRawBufferPointer, segment: Int, last: Bool, into output: UnsafeMutableRawPointer) throws -> Bool {
        header.setNonce(&nonce, segment: segment, last: last)
        return try nonce.withUnsafeBytes { nonce in
            try header.bytes.withUnsafeBytes { aad in try cipher.open(bytes, nonce: nonce, aad: aad, into: output) }
        }
    }

    /// Why a segment failed: with the other last-segment flag it would verify when segments
    /// were cut off (truncated); an earlier segment that verifies as the last one means bytes
    /// were appended after it (extended); otherwise it was altered or moved.
    private func failure(_ bytes: UnsafeRawBufferPointer, segment: Int, expectedLast: Bool, scratch: UnsafeMutableRawPointer) throws -> FileStorageError {
        if try open(bytes, segment: segment, last: !expectedLast, into: scratch) {
            memset(scratch, 0, bytes.count - AESGCM.tagSize)
            return expectedLast ? .truncated(file: name, segment: segment) : .extended(file: name, segment: segment)
        }
        if expectedLast {
            // Only on this failure path: look for the segment that was written as the last.
            for earlier in stride(from: segment - 1, through: 0, by: -1) where try verifiesAsLast(earlier) {
                return .extended(file: name, segment: earlier)
            }
        }
        return .tampered(file: name, segment: segment, offset: Int64(header.offset(ofSegment: segment)))
    }

    /// Whether full segment `segment` authenticates as a last segment.
    private func verifiesAsLast(_ segment: Int) throws -> Bool {
        var stored = [UInt8](repeating: 0, count: header.storedSegmentSize)
        try stored.withUnsafeMutableBytes { try file.read(into: $0, at: header.offset(ofSegment: segment)) }
        var plaintext = [UInt8](repeating: 0, count: header.segmentSize)
        let verifies = try stored.withUnsafeBytes { bytes in
            try plaintext.withUnsafeMutableBytes { try open(bytes, segment: segment, last: true, into: $0.baseAddress!) }
        }
        plaintext.withUnsafeMutableBytes { _ = memset($0.baseAddress!, 0, $0.count) }
        return verifies
    }
}
