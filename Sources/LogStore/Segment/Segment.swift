import Foundation

/// One segment file, mapped into memory.
///
/// A segment is *active* while the engine appends to it (mapped read-write, its file grown in
/// steps with `fallocate` ahead of the writes) and *sealed* afterwards (never written again).
/// Records are read straight from the mapping.
final class Segment: @unchecked Sendable {
    let id: UInt32
    let path: String
    let header: SegmentHeader
    let file: SystemFile
    let region: MappedRegion
    /// Bytes of valid content: the header and every record up to the first invalid byte.
    var length: Int
    /// Bytes reserved in the file for appends (active segments); the file size otherwise.
    private(set) var allocated: Int
    /// Bytes of records the keydir points at; the rest of `length - header` is dead.
    var liveBytes = 0
    /// Records in this segment; used by statistics and verify.
    var recordCount = 0
    let writable: Bool

    var base: UnsafeMutableRawPointer { region.base }
    var deadBytes: Int { max(0, length - SegmentHeader.size - liveBytes) }

    private init(id: UInt32, path: String, header: SegmentHeader, file: SystemFile, region: MappedRegion,
                 length: Int, allocated: Int, writable: Bool) {
        self.id = id
        self.path = path
        self.header = header
        self.file = file
        self.region = region
        self.length = length
        self.allocated = allocated
        self.writable = writable
    }

    /// Creates a new segment file holding only its header, reserving `initialAllocation` bytes
    /// and mapping `capacity` bytes for appends.
    static func create(path: String, id: UInt32, flags: UInt32, capacity: Int, initialAllocation: Int) throws -> Segment {
        // O_EXCL: ids are never reused, so an existing file means a bug, not something to overwrite.
        let file = try SystemFile(path: path, flags: O_RDWR | O_CREAT | O_EXCL)
        let header = SegmentHeader(segmentID: id, flags: flags, createdMillis: Clock.nowMillis())
        let allocation = min(capacity, max(initialAllocation, SegmentHeader.size))
        try file.allocate(offset: 0, length: allocation)
        try file.write(header.encoded(), at: 0)
        let region = try file.map(length: capacity, writable: true)
        return Segment(id: id, path: path, header: header, file: file, region: region,
                       length: SegmentHeader.size, allocated: allocation, writable: true)
    }

    /// Opens an existing segment file. Writable segments are mapped with room for `capacity`
    /// bytes so the engine can go on appending to them.
    static func open(path: String, writable: Bool, capacity: Int) throws -> Segment {
        let file = try SystemFile(path: path, flags: writable ? O_RDWR : O_RDONLY)
        let size = try file.size()
        guard size >= SegmentHeader.size else {
            throw StoreError.corrupt("\(path): \(size) bytes, shorter than the \(SegmentHeader.size)-byte segment header")
        }
        let region = try file.map(length: writable ? max(capacity, size) : size, writable: writable)
        let header = try SegmentHeader.decode(region.base, length: size, path: path)
        return Segment(id: header.segmentID, path: path, header: header, file: file, region: region,
                       length: size, allocated: size, writable: writable)
    }

    /// Free room for appends before the mapping is full.
    var remainingCapacity: Int { region.length - length }

    /// Makes sure `count` more bytes can be written at `length`, growing the file's reserved
    /// blocks in doubling steps. Throws (ENOSPC) instead of leaving a hole a write could fault on.
    func reserve(_ count: Int) throws {
        let needed = length + count
        guard needed > allocated else { return }
        let target = min(region.length, max(needed, min(allocated * 2, allocated + 64 << 20)))
        try file.allocate(offset: allocated, length: target - allocated)
        allocated = target
    }

    /// Cuts the file down to its valid length (at seal and close), so no reserved space is left.
    func trimToLength() throws {
        if allocated > length {
            try file.truncate(to: length)
            allocated = length
        }
    }

    /// Zeroes `[from, allocated)`: after a torn tail is found, so stale bytes can never be
    /// mistaken for records later.
    func zeroTail(from offset: Int) {
        if allocated > offset { memset(base + offset, 0, allocated - offset) }
    }
}

/// Wall-clock time in milliseconds since 1970, the unit of record expiry.
enum Clock {
    static func nowMillis() -> UInt64 {
        var spec = timespec()
        clock_gettime(CLOCK_REALTIME, &spec)
        return UInt64(spec.tv_sec) * 1000 + UInt64(spec.tv_nsec) / 1_000_000
    }

    /// Milliseconds since 1970 of a date, clamped at 0 and rounded up so a record never
    /// expires before its date.
    static func millis(of date: Date) -> UInt64 {
        let ms = (date.timeIntervalSince1970 * 1000).rounded(.up)
        if ms <= 0 { return 0 }
        if ms >= Double(UInt64.max) { return UInt64.max }
        return UInt64(ms)
    }
}
