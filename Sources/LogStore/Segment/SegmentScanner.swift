/// Walks the records of a mapped segment from its header on, the way recovery and verify read
/// (FORMAT.md, "Recovery").
///
/// At an invalid record the scanner searches forward for the next valid one. If it finds one,
/// the bytes between are reported as a corrupt range and the walk goes on; if none follows, the
/// walk ends there, and `tailIsClean` says whether the rest was all zero bytes (a clean end) or
/// held garbage (a torn tail).
struct SegmentScanner {
    enum Event {
        case record(offset: Int, header: RecordHeader)
        case corrupt(range: Range<Int>)
    }

    private let base: UnsafeRawPointer
    private let limit: Int
    private(set) var offset: Int
    /// After the walk ends: whether everything past `validEnd` was zero.
    private(set) var tailIsClean = true
    /// After the walk ends: the end of the last valid record (or of the header).
    private(set) var validEnd: Int

    init(base: UnsafeRawPointer, limit: Int, from start: Int = SegmentHeader.size) {
        self.base = base
        self.limit = limit
        self.offset = start
        self.validEnd = start
    }

    mutating func next() -> Event? {
        guard offset < limit else { return nil }
        if let header = RecordCodec.validRecord(base, at: offset, limit: limit) {
            let event = Event.record(offset: offset, header: header)
            offset += header.totalLength
            validEnd = offset
            return event
        }
        if let resumed = nextValidRecord(after: offset) {
            let event = Event.corrupt(range: offset..<resumed)
            offset = resumed
            return event
        }
        tailIsClean = isZero(from: offset)
        offset = limit
        return nil
    }

    /// The first offset after `start` where a valid record begins, or nil.
    private func nextValidRecord(after start: Int) -> Int? {
        // A record's sixth byte is the first byte of its sequence number, which is never 0;
        // so only positions five bytes before a non-zero byte are candidates.
        var q = start + 1 + 5
        while q < limit {
            if base.load(fromByteOffset: q, as: UInt8.self) == 0 {
                // Skip zero words quickly.
                while q + 8 <= limit && base.loadUnaligned(fromByteOffset: q, as: UInt64.self) == 0 { q += 8 }
                while q < limit && base.load(fromByteOffset: q, as: UInt8.self) == 0 { q += 1 }
                continue
            }
            let p = q - 5
            if RecordCodec.validRecord(base, at: p, limit: limit) != nil { return p }
            q += 1
        }
        return nil
    }

    private func isZero(from start: Int) -> Bool {
        var i = start
        while i + 8 <= limit {
            if base.loadUnaligned(fromByteOffset: i, as: UInt64.self) != 0 { return false }
            i += 8
        }
        while i < limit {
            if base.load(fromByteOffset: i, as: UInt8.self) != 0 { return false }
            i += 1
        }
        return true
    }
}
