import Foundation

/// One segment file, mapped into memory.
///
/// Its mutable counters are guarded by the engine's locks (writeMutex to change them), so
/// their dynamic exclusivity checks are off.
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
    @exclusivity(unchecked) var length: Int
    /// Bytes reserved in the file for appends (active segments); the file size otherwise.
    @exclusivity(unchecked) private(set) var allocated: Int
    /// Bytes of records the keydir points at; the rest of `length - header` is dead.
    @exclusivity(unchecked) var liveBytes = 0
    /// Records in this segment; used by statistics and verify.
    @exclusivity(unchecked) var recordCount = 0
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
        do {
            let header = SegmentHeader(segmentID: id, flags: flags, createdMillis: Clock.nowMillis())
            let allocation = min(capacity, max(initialAllocation, SegmentHeader.size))
            try file.allocate(offset: 0, length: allocation)
            try file.write(header.encoded(), at: 0)
            let region = try file.map(length: capacity, writable: true)
            return Segment(id: id, path: path, header: header, file: file, region: region,
                           length: SegmentHeader.size, allocated: allocation, writable: true)
        } catch {
            // A full disk or an I/O error half way: take the file away so the next attempt can
            // create it again (recovery removes it too if this removal fails as well).
            try? Directory.remove(path)
            throw error
        }
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
    @inline(__always)
    /// With `populate` false the pages are not faulted in ahead (a streamed batch faults in a
    /// window at a time, `populate(through:)`).
    func reserve(_ count: Int, populate: Bool = true) throws {
        let needed = length + count
        if needed > allocated {
            let target = min(region.length, max(needed, min(allocated * 2, allocated + Self.growthStep)))
            try file.allocate(offset: allocated, length: target - allocated)
            allocated = target
        }
        if populate, needed > populatedUpTo { self.populate(through: needed) }
    }

    /// Largest single growth of an active segment: bounds the time one put spends reserving.
    static let growthStep = 8 << 20

    /// Bytes faulted in for writing ahead of the write head at a time.
    ///
    /// Small on purpose: pages faulted in for writing are dirty, so a sync of the file writes
    /// them back and write-protects them, and a page cleaned before the writer reached it faults
    /// again, alone, when it does (issue 21's profile: with 8 MiB ahead, a background sync every
    /// 2 MiB cost the writer a fault on most pages). 64 KiB is one `madvise` per 16 pages.
    static let populateStep = 64 << 10
    /// End of the range faulted in for writing. (writeMutex)
    @exclusivity(unchecked) private var populatedUpTo = 0

    /// Faults in `[populatedUpTo, needed + populateStep)` (within the reserved blocks) for
    /// writing with one call instead of one fault per 4 KiB page as the writes reach them
    /// (Linux 5.14+; elsewhere the hint is ignored and pages fault lazily).
    func populate(through needed: Int) {
        let from = max(populatedUpTo, length)
        let to = min(allocated, needed + Self.populateStep)
        if to > from { region.populateForWriting(offset: from, count: to - from) }
        populatedUpTo = max(to, needed)
    }

    /// Start of the bytes written since the last sync round took them (a page boundary).
    /// (writeMutex)
    @exclusivity(unchecked) private var writtenSinceSync = 0

    /// The whole pages written since the last call, for a sync round to take out of the
    /// mapping (`MappedRegion.dropResidentPages`) before it fsyncs: writeback must
    /// write-protect every dirty page it cleans that is mapped writable, one TLB shootdown of
    /// the writer's CPU per page; pages no longer mapped cost nothing there (issue 21's
    /// profile). The page holding the write head stays. Caller holds `writeMutex`.
    func takeWrittenSinceLastSync() -> Range<Int> {
        let end = length / Self.pageSize * Self.pageSize
        guard end > writtenSinceSync else { return writtenSinceSync..<writtenSinceSync }
        defer { writtenSinceSync = end }
        return writtenSinceSync..<end
    }

    /// `takeWrittenSinceLastSync` under `lock` (the store's `writeMutex`), then those pages
    /// out of the mapping, outside it: for a sync round about to fsync this segment.
    func dropPagesWrittenSinceLastSync(lock: Mutex) {
        let written = lock.withLockSpinning { takeWrittenSinceLastSync() }
        region.dropResidentPages(offset: written.lowerBound, count: written.count)
    }

    static let pageSize = max(4096, Int(sysconf(Int32(_SC_PAGESIZE))))

    /// Bytes behind the write head that may stay resident; older written pages are dropped from
    /// the process (they stay in the page cache), so writing a big store does not grow RSS.
    static let residentWriteWindow = 8 << 20
    @exclusivity(unchecked) private var residentFrom = 0

    /// Drops the pages of what was written more than `residentWriteWindow` bytes ago.
    func dropPagesBehindWriteHead() {
        guard length - residentFrom > 2 * Self.residentWriteWindow else { return }
        let upTo = length - Self.residentWriteWindow
        region.dropResidentPages(offset: residentFrom, count: upTo - residentFrom)
        residentFrom = upTo
    }

    /// Cuts the file down to its valid length (at seal, close and an explicit snapshot), so no
    /// reserved space is left; `reserve` grows it again if the segment is still active.
    func trimToLength() throws {
        if allocated > length {
            try file.truncate(to: length)
            allocated = length
            // Pages past the end left the mapping with the truncation: an active segment that
            // is appended to again reserves and faults them in anew.
            populatedUpTo = min(populatedUpTo, length)
        }
    }

    /// Zeroes `[from, allocated)`: after a torn tail is found, so stale bytes can never be
    /// mistaken for records later.
    func zeroTail(from offset: Int) {
        if allocated > offset { memset(base + offset, 0, allocated - offset) }
    }

    /// Zeroes `[from, to)` of the reserved space (a streamed batch that failed half way).
    func zeroTail(from offset: Int, to end: Int) {
        let end = min(end, allocated)
        if end > offset { memset(base + offset, 0, end - offset) }
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
