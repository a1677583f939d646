import Foundation

/// Writes the records compaction keeps into new segment files named `*.seg.tmp`, each flagged
/// as a compaction output, rolling to a new file past the segment size. Files are fsynced by
/// `finish`; nothing is visible to the store until the engine commits and renames them.
struct CompactionOutput {
    struct Produced {
        var id: UInt32
        var temporaryPath: String
        var finalPath: String
        var length: Int
        var recordCount: Int
    }

    private let directory: String
    private let segmentSize: Int
    private let allocateID: () -> UInt32
    private var file: SystemFile?
    private var current: Produced?
    private var buffer: [UInt8] = []
    private var bufferStart = 0
    private(set) var produced: [Produced] = []

    /// Buffered bytes that trigger a write: small, since the buffer is resident memory for the
    /// whole compaction (issue 16), large enough that writes stay a few hundred per 100 MiB.
    private static let flushThreshold = 256 << 10

    init(directory: String, segmentSize: Int, allocateID: @escaping () -> UInt32) {
        self.directory = directory
        self.segmentSize = segmentSize
        self.allocateID = allocateID
    }

    /// Copies the `length`-byte record at `record`, with its flag byte replaced by `flags` (and
    /// its checksum recomputed) when they differ. Returns where it now lies.
    mutating func append(_ record: UnsafeRawPointer, length: Int, flags: RecordFlags?) throws -> RecordLocation {
        if let current, current.length + length > segmentSize, current.length > SegmentHeader.size {
            try finishCurrent()
        }
        if current == nil { try startSegment() }
        guard var segment = current else { throw StoreError.corrupt("compaction output has no segment") }
        let location = RecordLocation(segment: segment.id, offset: UInt32(segment.length))
        let at = buffer.count
        buffer.append(contentsOf: UnsafeRawBufferPointer(start: record, count: length))
        if let flags {
            buffer.withUnsafeMutableBytes { RecordCodec.rewriteFlags(flags, record: $0.baseAddress! + at, length: length) }
        }
        segment.length += length
        segment.recordCount += 1
        current = segment
        if buffer.count >= Self.flushThreshold { try flush() }
        return location
    }

    /// Flushes and fsyncs the last file; returns every file written.
    mutating func finish() throws -> [Produced] {
        if current != nil { try finishCurrent() }
        return produced
    }

    /// Removes every temporary file written (after a failure before commit).
    func discard() {
        for segment in produced { try? Directory.remove(segment.temporaryPath) }
        if let current { try? Directory.remove(current.temporaryPath) }
    }

    private mutating func startSegment() throws {
        let id = allocateID()
        let finalPath = directory + "/" + StoreFileName.segment(id)
        let temporaryPath = finalPath + StoreFileName.temporarySuffix
        current = Produced(id: id, temporaryPath: temporaryPath, finalPath: finalPath, length: SegmentHeader.size, recordCount: 0)
        file = try SystemFile(path: temporaryPath, flags: O_WRONLY | O_CREAT | O_TRUNC)
        buffer = SegmentHeader(segmentID: id, flags: SegmentHeader.compactionOutputFlag, createdMillis: Clock.nowMillis()).encoded()
        bufferStart = 0
    }

    private mutating func flush() throws {
        guard let file, !buffer.isEmpty else { return }
        try file.write(buffer, at: bufferStart)
        bufferStart += buffer.count
        buffer.removeAll(keepingCapacity: true)
    }

    private mutating func finishCurrent() throws {
        try flush()
        try file?.syncData()
        file = nil
        if let current { produced.append(current) }
        current = nil
    }
}
