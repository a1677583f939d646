import Foundation

/// The engine behind `LogStore`: state, locking and the read and write paths.
///
/// Locking, outermost first:
/// - `compactionMutex`: one compaction at a time (and close waits for it).
/// - `writeMutex`: serializes every mutation: appends, segment rolls, the compaction switch,
///   close. Fields marked "writeMutex" are only touched with it held.
/// - `rw`: guards what readers look at (keydir, segment table, `isClosed`). Mutators take it
///   for writing, briefly, while also holding `writeMutex`; readers take it for reading.
final class StoreEngine: @unchecked Sendable {
    let directoryURL: URL
    let directory: String
    let options: LogStore.Options

    let writeMutex = Mutex()
    let rw = ReadWriteLock()
    let compactionMutex = Mutex()
    let syncer = SyncCoordinator()

    // Guarded by rw (mutated with writeMutex held too).
    var keydir = KeyDir()
    var segments = SegmentTable()
    var isClosed = false

    // Guarded by writeMutex.
    var lockFile: SystemFile?
    var active: Segment?
    var nextSequence: UInt64 = 1
    var nextSegmentID: UInt32 = 1
    var generation: UInt64 = 0
    /// Sealed segments not yet fsynced (process-crash-safe mode); synced before a snapshot.
    var unsyncedSegments: [Segment] = []
    var compactionCount = 0
    var backgroundCompactionScheduled = false
    /// Set when a compaction committed on disk but could not finish in memory: the next open
    /// finishes it, and no further compaction runs in this session.
    var compactionNeedsReopen = false
    var groupCommitTimer: DispatchSourceTimer?
    /// Failures of background compactions, kept for statistics and tools.
    var backgroundErrors: [String] = []

    /// Written once during open.
    var recoveryReport: [String] = []

    init(url: URL, options: LogStore.Options) {
        self.directoryURL = url.standardizedFileURL
        self.directory = url.standardizedFileURL.path
        self.options = options
    }

    var isDurableMode: Bool { options.durability != .processCrashSafe }

    func path(of name: String) -> String { directory + "/" + name }
    func segmentPath(_ id: UInt32) -> String { path(of: StoreFileName.segment(id)) }

    // MARK: Lookup

    /// A keydir hit: the slot, the record's header and where its bytes are.
    struct Hit {
        var slot: Int
        var entry: KeyDir.Entry
        var header: RecordHeader
        var base: UnsafeRawPointer
        var offset: Int
    }

    /// Finds the live record of `key` in `space`. Caller holds `rw` (either side) or `writeMutex`.
    @inline(__always)
    func lookup(tag: UInt32, space: UInt32, key: UnsafeRawBufferPointer) -> Hit? {
        var hit: Hit?
        let slot = keydir.find(tag: tag) { entry in
            guard let base = segments.base(of: entry.segment) else { return false }
            let offset = Int(entry.offset)
            guard let header = RecordCodec.decodeHeader(base, at: offset, limit: segments.limit(of: entry.segment)),
                  header.space == space, header.keyLength == key.count else { return false }
            if key.count > 0 && memcmp(base + offset + header.keyOffset, key.baseAddress!, key.count) != 0 { return false }
            hit = Hit(slot: 0, entry: entry, header: header, base: base, offset: offset)
            return true
        }
        guard let slot else { return nil }
        hit?.slot = slot
        return hit
    }

    /// Parses the header of the record an entry points at. Caller holds a lock.
    func header(at location: RecordLocation) -> RecordHeader? {
        guard let base = segments.base(of: location.segment) else { return nil }
        return RecordCodec.decodeHeader(base, at: Int(location.offset), limit: segments.limit(of: location.segment))
    }

    // MARK: Reads

    func get(key: [UInt8], space: UInt32) throws -> [UInt8]? {
        try key.withUnsafeBytes { keyBytes in
            let tag = KeyDir.tag(of: KeyDir.hash(space: space, key: keyBytes))
            return try rw.withReadLock { () throws -> [UInt8]? in
                guard !isClosed else { throw StoreError.closed }
                guard let hit = lookup(tag: tag, space: space, key: keyBytes) else { return nil }
                if hit.header.expiresAtMillis != nil && hit.header.isExpired(nowMillis: Clock.nowMillis()) { return nil }
                guard RecordCodec.checksumMatches(hit.base, at: hit.offset, header: hit.header) else {
                    throw StoreError.corrupt("\(StoreFileName.segment(hit.entry.segment)): record checksum mismatch at offset \(hit.offset)")
                }
                return [UInt8](UnsafeRawBufferPointer(start: hit.base + hit.offset + hit.header.valueOffset, count: hit.header.valueLength))
            }
        }
    }

    /// Visits the live, unexpired records of `space` whose key starts with `prefix`.
    private func forEachLive(space: UInt32, prefix: [UInt8],
                             _ body: (UnsafeRawPointer, Int, RecordHeader) -> Void) throws {
        try rw.withReadLock {
            guard !isClosed else { throw StoreError.closed }
            let now = Clock.nowMillis()
            prefix.withUnsafeBytes { prefixBytes in
                keydir.forEach { entry in
                    guard let base = segments.base(of: entry.segment) else { return }
                    let offset = Int(entry.offset)
                    guard let header = RecordCodec.decodeHeader(base, at: offset, limit: segments.limit(of: entry.segment)),
                          header.space == space, header.keyLength >= prefixBytes.count,
                          !header.isExpired(nowMillis: now) else { return }
                    if prefixBytes.count > 0 && memcmp(base + offset + header.keyOffset, prefixBytes.baseAddress!, prefixBytes.count) != 0 { return }
                    body(base, offset, header)
                }
            }
        }
    }

    func keys(space: UInt32, prefix: [UInt8]) throws -> [[UInt8]] {
        var keys: [[UInt8]] = []
        try forEachLive(space: space, prefix: prefix) { base, offset, header in
            keys.append([UInt8](UnsafeRawBufferPointer(start: base + offset + header.keyOffset, count: header.keyLength)))
        }
        return keys.sorted { $0.lexicographicallyPrecedes($1) }
    }

    func entries(space: UInt32, prefix: [UInt8]) throws -> [(key: [UInt8], value: [UInt8])] {
        var result: [(key: [UInt8], value: [UInt8])] = []
        var corrupt: String?
        try forEachLive(space: space, prefix: prefix) { base, offset, header in
            guard RecordCodec.checksumMatches(base, at: offset, header: header) else {
                corrupt = corrupt ?? "record checksum mismatch at offset \(offset)"
                return
            }
            result.append((key: [UInt8](UnsafeRawBufferPointer(start: base + offset + header.keyOffset, count: header.keyLength)),
                           value: [UInt8](UnsafeRawBufferPointer(start: base + offset + header.valueOffset, count: header.valueLength))))
        }
        if let corrupt { throw StoreError.corrupt(corrupt) }
        return result.sorted { $0.key.lexicographicallyPrecedes($1.key) }
    }

    // MARK: Statistics

    func statistics() -> LogStore.Statistics {
        writeMutex.withLock {
            rw.withReadLock {
                var stats = LogStore.Statistics(liveKeys: keydir.count, liveBytes: 0, deadBytes: 0,
                                                segmentCount: segments.count, keydirBytes: keydir.memoryBytes)
                for segment in segments.byID.values {
                    stats.liveBytes += segment.liveBytes
                    stats.deadBytes += segment.deadBytes
                    stats.segmentBytes += segment.length
                }
                stats.compactions = compactionCount
                return stats
            }
        }
    }
}
