#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The live records a compaction copied, in the order it copied them, kept until the switch
/// re-points their keydir entries: about 8 bytes a record instead of a 32-byte struct (issue 16:
/// a million records cost 8 MiB of memory, not 32 MiB plus the array's regrowth).
///
/// Compaction walks each input segment forward and appends to its outputs in order, so the old
/// offsets ascend within an input segment and each new location is, nearly always, the previous
/// one plus the previous record's length. An entry is a varint `head` = `(old offset - previous
/// old offset) << 2 | newExplicit << 1 | oldSegmentChanged`, then the old segment and offset as
/// varints when `oldSegmentChanged` (the delta is then 0), the new segment and offset as varints
/// when `newExplicit`, the record's length as a varint, the 32-bit tag (little-endian) and the
/// key space as a varint. Memory only: nothing here reaches a file.
///
/// Entries live in chunks of `chunkSize` bytes reserved up front, so the log never copies
/// itself while it grows. Given a spill path, every full chunk goes to that file (created, then
/// unlinked at once, so it never outlives the compaction: a crash in between leaves a `*.tmp`
/// file the next open removes) and the log holds one chunk in memory: its pages are the page
/// cache's, which the kernel may write back and evict, not the process's.
struct CompactionRelocations {
    /// One copied record.
    struct Relocation {
        var tag: UInt32
        var space: UInt32
        var old: RecordLocation
        var new: RecordLocation
        var length: Int
    }

    static let chunkSize = 256 << 10
    /// The longest entry: a head, two locations and a length of at most 10 bytes each, a tag
    /// and a space of at most 5.
    private static let maxEntrySize = 10 + 4 * 5 + 10 + 4 + 5

    private var chunks: [[UInt8]] = []
    private(set) var count = 0
    private let spillPath: String?
    private var spill: SystemFile?
    /// Lengths of the chunks written to `spill`, one after the other from offset 0.
    private var spilledChunks: [Int] = []
    private var spilledBytes = 0

    init(spillPath: String? = nil) {
        self.spillPath = spillPath
    }
    private var last = Relocation(tag: 0, space: 0, old: RecordLocation(segment: 0, offset: 0),
                                  new: RecordLocation(segment: 0, offset: 0), length: 0)

    /// Bytes the entries take.
    var byteCount: Int { spilledBytes + chunks.reduce(0) { $0 + $1.count } }

    /// Chunks held in memory (at most one when spilling).
    var chunksInMemory: Int { chunks.count }

    mutating func append(_ relocation: Relocation) throws {
        let oldSegmentChanged = count == 0 || relocation.old.segment != last.old.segment || relocation.old.offset < last.old.offset
        let expectedNew = UInt64(last.new.offset) + UInt64(last.length)
        let newExplicit = count == 0 || relocation.new.segment != last.new.segment || UInt64(relocation.new.offset) != expectedNew
        let delta = oldSegmentChanged ? 0 : UInt64(relocation.old.offset - last.old.offset)
        if chunks.isEmpty || chunks[chunks.count - 1].count + Self.maxEntrySize > Self.chunkSize {
            if let spillPath, let full = chunks.last {
                if spill == nil {
                    let file = try SystemFile(path: spillPath, flags: O_RDWR | O_CREAT | O_TRUNC)
                    spill = file
                    try Directory.remove(spillPath)
                }
                try spill?.write(full, at: spilledBytes)
                spilledChunks.append(full.count)
                spilledBytes += full.count
                chunks[chunks.count - 1].removeAll(keepingCapacity: true)
            } else {
                var chunk: [UInt8] = []
                chunk.reserveCapacity(Self.chunkSize)
                chunks.append(chunk)
            }
        }
        let index = chunks.count - 1
        Self.encode(relocation, head: delta << 2 | (newExplicit ? 2 : 0) | (oldSegmentChanged ? 1 : 0), into: &chunks[index])
        last = relocation
        count += 1
    }

    private static func encode(_ relocation: Relocation, head: UInt64, into bytes: inout [UInt8]) {
        Varint.append(head, to: &bytes)
        if head & 1 != 0 {
            Varint.append(UInt64(relocation.old.segment), to: &bytes)
            Varint.append(UInt64(relocation.old.offset), to: &bytes)
        }
        if head & 2 != 0 {
            Varint.append(UInt64(relocation.new.segment), to: &bytes)
            Varint.append(UInt64(relocation.new.offset), to: &bytes)
        }
        Varint.append(UInt64(relocation.length), to: &bytes)
        LittleEndian.append32(relocation.tag, to: &bytes)
        Varint.append(UInt64(relocation.space), to: &bytes)
    }

    /// Visits every relocation in the order appended. Throws (never traps) if the log does not
    /// decode, which would be a bug in `append`.
    func forEach(_ body: (Relocation) throws -> Void) throws {
        var current = Relocation(tag: 0, space: 0, old: RecordLocation(segment: 0, offset: 0),
                                 new: RecordLocation(segment: 0, offset: 0), length: 0)
        var visited = 0
        var spilledChunk: [UInt8] = []
        var spilledAt = 0
        func decode(_ chunk: [UInt8]) throws {
            try chunk.withUnsafeBytes { raw in
                guard let base = raw.baseAddress else { return }
                let limit = raw.count
                var at = 0
                func next() throws -> UInt64 {
                    guard let (value, after) = Varint.read(base, at: at, limit: limit) else {
                        throw StoreError.corrupt("compaction relocation log does not decode at byte \(at) of a chunk")
                    }
                    at = after
                    return value
                }
                func next32() throws -> UInt32 {
                    let value = try next()
                    guard let narrow = UInt32(exactly: value) else {
                        throw StoreError.corrupt("compaction relocation log holds \(value) where a 32-bit value belongs")
                    }
                    return narrow
                }
                while at < limit {
                    let head = try next()
                    var old = current.old
                    if head & 1 != 0 {
                        old = RecordLocation(segment: try next32(), offset: try next32())
                    } else {
                        guard let offset = UInt32(exactly: UInt64(old.offset) + (head >> 2)) else {
                            throw StoreError.corrupt("compaction relocation log: old offset past 4 GiB")
                        }
                        old.offset = offset
                    }
                    var new: RecordLocation
                    if head & 2 != 0 {
                        new = RecordLocation(segment: try next32(), offset: try next32())
                    } else {
                        guard let offset = UInt32(exactly: UInt64(current.new.offset) + UInt64(current.length)) else {
                            throw StoreError.corrupt("compaction relocation log: new offset past 4 GiB")
                        }
                        new = RecordLocation(segment: current.new.segment, offset: offset)
                    }
                    let length = Int(try next32())
                    guard at + 4 <= limit else { throw StoreError.corrupt("compaction relocation log: tag cut short") }
                    let tag = LittleEndian.load32(base, at)
                    at += 4
                    let space = try next32()
                    current = Relocation(tag: tag, space: space, old: old, new: new, length: length)
                    visited += 1
                    try body(current)
                }
            }
        }
        if let spill {
            for length in spilledChunks {
                if spilledChunk.count != length { spilledChunk = [UInt8](repeating: 0, count: length) }
                try spilledChunk.withUnsafeMutableBytes { try spill.read(into: $0, at: spilledAt) }
                spilledAt += length
                try decode(spilledChunk)
            }
        }
        for chunk in chunks { try decode(chunk) }
        guard visited == count else { throw StoreError.corrupt("compaction relocation log: \(visited) entries decoded of \(count)") }
    }
}
