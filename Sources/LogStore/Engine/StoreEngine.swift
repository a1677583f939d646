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
    /// Serializes registrations in the space catalog (`space(named:)`).
    let catalogMutex = Mutex()
    /// The space catalog, cached on first use. Guarded by catalogMutex.
    var spaceCatalog: SpaceCatalog?
    let syncer = SyncCoordinator()

    // Guarded by rw (mutated with writeMutex held too).
    // Unchecked: the locks above are what make these accesses exclusive, and the dynamic
    // exclusivity checks cost ~10% of a get (swift_beginAccess per access).
    @exclusivity(unchecked) var keydir = SpaceKeyDirs()
    @exclusivity(unchecked) var segments = SegmentTable()
    @exclusivity(unchecked) var isClosed = false
    /// AES-256-GCM ciphers by key id: every key the store can read with.
    var ciphers: [UInt32: AESGCM] = [:]
    /// The cipher of the write key, so a read of a record under it skips the dictionary. (rw)
    @exclusivity(unchecked) var currentCipher: (keyID: UInt32, cipher: AESGCM)?
    /// Trained zstd dictionaries by id, and the one each key space compresses new values with.
    var dictionaries: [UInt32: ZstdDictionary] = [:]
    var spaceDictionaries: [UInt32: ZstdDictionary] = [:]

    /// zstd for reads always (a store may hold compressed records whatever its options say),
    /// and for writes when `options.compression` is set.
    let zstd: ZstdCodec

    // Guarded by writeMutex.
    // Unchecked exclusivity on what every write touches: writeMutex makes access exclusive.
    var lockFile: SystemFile?
    @exclusivity(unchecked) var active: Segment?
    @exclusivity(unchecked) var nextSequence: UInt64 = 1
    var nextSegmentID: UInt32 = 1
    @exclusivity(unchecked) var generation: UInt64 = 0
    /// Sealed segments not yet fsynced (process-crash-safe mode); synced before a snapshot.
    var unsyncedSegments: [Segment] = []
    /// The first failed fsync, after which writes are refused until the store is reopened.
    let syncFailure = StickySyncFailure()
    /// Files beside the store that records depend on, synced before the log by every sync
    /// (`AttachmentRegistry`).
    let attachments = AttachmentRegistry()
    /// Held by `syncLog` for a whole round, so an explicit `sync()` waits for a background round
    /// in flight (and what it took, unlinks included, is done when `sync()` returns). Never
    /// taken with `writeMutex` held.
    let syncRoundMutex = Mutex()
    var compactionCount = 0
    /// The header of the index snapshot on disk when the keydir is exactly what it holds (set
    /// when one is loaded or written): a close with nothing changed need not rewrite it.
    var snapshotOnDisk: IndexSnapshot?
    /// The state the last completed `syncAllLocked` made durable (writeMutex).
    var fullySynced: FullySynced?
    /// Per-append scratch space for record fields, kept to avoid an allocation per put. (writeMutex)
    let scratchFields = FieldsScratch()
    var backgroundCompactionScheduled = false
    /// Set when a compaction committed on disk but could not finish in memory: the next open
    /// finishes it, and no further compaction runs in this session.
    var compactionNeedsReopen = false
    /// Bounds the unsynced log in `.processCrashSafe` and `.groupCommit` stores; nil in
    /// `.fsyncEachWrite` and read-only stores. Set once at open. (writeMutex)
    @exclusivity(unchecked) var backgroundSyncer: BackgroundSyncer?
    /// `SYNCMARK` (nil when read-only), the newest mark written to it, and the slot the next
    /// one goes to (`StoreEngine+SyncMarks`). (writeMutex)
    var syncMarkFile: SystemFile?
    var lastSyncMark: SyncMark?
    var syncMarkNextSlot = 0
    /// Failures of background compactions, kept for statistics and tools.
    var backgroundErrors: [String] = []

    /// Written once during open.
    var recoveryReport: [String] = []
    /// Key id new AES-GCM records are written under; nil without a default key. (writeMutex)
    var writeKeyID: UInt32?
    /// The nonce of the next AES-GCM record: a random 8-byte prefix drawn at open and whenever
    /// the 32-bit counter after it wraps (FORMAT.md, "Nonces"). (writeMutex)
    var noncePrefix: UInt64?
    var nonceCounter: UInt32 = 0

    init(url: URL, options: LogStore.Options) {
        self.directoryURL = url.standardizedFileURL
        self.directory = url.standardizedFileURL.path
        self.options = options
        self.zstd = ZstdCodec(level: options.compression?.level ?? 3)
    }

    var isDurableMode: Bool { options.durability != .processCrashSafe }

    func path(of name: String) -> String { directory + "/" + name }
    func segmentPath(_ id: UInt32) -> String { path(of: StoreFileName.segment(id)) }

    // MARK: Lookup

    /// A keydir hit: the slot, the record's header and where its bytes are.
    struct Hit {
        /// The table of the key's space, and the slot in it. Unowned: the keydir keeps the table
        /// alive, and a hit is used only under the lock it was found with (no reference
        /// counting on the hot path).
        unowned(unsafe) var table: KeyDir
        var slot: Int
        var entry: KeyDir.Entry
        var header: RecordHeader
        var base: UnsafeRawPointer
        var offset: Int { Int(entry.offset) }
    }

    /// Finds the live record of `key` in `space`. Caller holds `rw` (either side) or `writeMutex`.
    @inline(__always)
    func lookup(tag: UInt32, space: UInt32, key: UnsafeRawBufferPointer) -> Hit? {
        // Borrowed without a retain: the keydir keeps its tables alive while the caller holds
        // its lock.
        guard let table = keydir.unretainedTable(for: space) else { return nil }
        return table._withUnsafeGuaranteedRef { table -> Hit? in
            // The matching record's header, filled by the probe: a non-optional local (an
            // optional `Hit` assigned inside the closure was copied three times per lookup).
            var header = RecordHeader.empty
            let slot = table.find(tag: tag) { entry in
                guard let base = segments.base(of: entry.segment) else { return false }
                let offset = Int(entry.offset)
                guard let candidate = RecordCodec.decodeHeader(base, at: offset, limit: segments.limit(of: entry.segment)),
                      candidate.space == space, candidate.keyLength == key.count else { return false }
                guard Self.keyEquals(base + offset + candidate.keyOffset, key) else { return false }
                header = candidate
                return true
            }
            guard let slot else { return nil }
            let entry = table.entry(at: slot)
            guard let base = segments.base(of: entry.segment) else { return nil }
            return Hit(table: table, slot: slot, entry: entry, header: header, base: base)
        }
    }

    /// Whether the `key.count` bytes at `stored` are `key`. Keys of 8 to 16 bytes (the DAO's row
    /// keys, most application keys) are compared as two overlapping 8-byte words; others through
    /// memcmp, a libc call.
    @inline(__always)
    static func keyEquals(_ stored: UnsafeRawPointer, _ key: UnsafeRawBufferPointer) -> Bool {
        guard let bytes = key.baseAddress else { return true }   // the empty key
        let count = key.count
        if count >= 8 && count <= 16 {
            return stored.loadUnaligned(as: UInt64.self) == bytes.loadUnaligned(as: UInt64.self)
                && stored.loadUnaligned(fromByteOffset: count - 8, as: UInt64.self) == bytes.loadUnaligned(fromByteOffset: count - 8, as: UInt64.self)
        }
        return memcmp(stored, bytes, count) == 0
    }

    /// The table and slot of the entry of `space` with `tag` pointing exactly at `location`, or
    /// nil. Caller holds a lock.
    func findEntry(tag: UInt32, space: UInt32, location: RecordLocation) -> (table: KeyDir, slot: Int)? {
        guard let table = keydir.table(for: space), let slot = table.find(tag: tag, location: location) else { return nil }
        return (table, slot)
    }

    /// Parses the header of the record an entry points at. Caller holds a lock.
    func header(at location: RecordLocation) -> RecordHeader? {
        guard let base = segments.base(of: location.segment) else { return nil }
        return RecordCodec.decodeHeader(base, at: Int(location.offset), limit: segments.limit(of: location.segment))
    }

    // MARK: Reads

    func get(key: [UInt8], space: UInt32, crypt: DataCrypt?) throws -> [UInt8]? {
        switch try read(key: key, space: space, { [UInt8]($0) }) {
        case .absent: return nil
        case .lent(let bytes): return bytes
        case .encoded(let stored): return try decode(stored, key: key, crypt: crypt)
        }
    }

    func withValue<Result>(key: [UInt8], space: UInt32, crypt: DataCrypt?,
                           _ body: (UnsafeRawBufferPointer) throws -> Result) throws -> Result? {
        try key.withUnsafeBytes { try withValue(keyBytes: $0, space: space, crypt: crypt, body) }
    }

    /// `withValue` with the key given as bytes, for callers that make keys in place (the DAO's
    /// row keys): no array per read.
    func withValue<Result>(keyBytes: UnsafeRawBufferPointer, space: UInt32, crypt: DataCrypt?,
                           _ body: (UnsafeRawBufferPointer) throws -> Result) throws -> Result? {
        switch try read(keyBytes: keyBytes, space: space, body) {
        case .absent: return nil
        case .lent(let result): return result
        case .encoded(let stored): return try decode(stored, key: keyBytes, crypt: crypt).withUnsafeBytes(body)
        }
    }

    /// The keyed read of `get` and `withValue`, under the read lock: a plain record's value is
    /// checked against its checksum and lent to `body` in place; an encrypted, compressed or
    /// custom-crypt one comes back as `.encoded` (checksum checked, AES-GCM opened) for
    /// `decode` outside the lock.
    @inline(__always)
    private func read<Result>(key: [UInt8], space: UInt32,
                              _ body: (UnsafeRawBufferPointer) throws -> Result) throws -> BorrowOutcome<Result> {
        try key.withUnsafeBytes { try read(keyBytes: $0, space: space, body) }
    }

    /// `read` with the key as bytes.
    @inline(__always)
    private func read<Result>(keyBytes: UnsafeRawBufferPointer, space: UInt32,
                              _ body: (UnsafeRawBufferPointer) throws -> Result) throws -> BorrowOutcome<Result> {
        let tag = KeyDir.tag(of: KeyDir.hash(space: space, key: keyBytes))
        return try rw.withReadLock { () throws -> BorrowOutcome<Result> in
            guard !isClosed else { throw StoreError.closed }
            let found = lookup(tag: tag, space: space, key: keyBytes)
            if keydir.isDamaged { throw indexDamagedError() }
            guard let hit = found else { return .absent }
            if hit.header.expiresAtMillis != nil && hit.header.isExpired(nowMillis: Clock.nowMillis()) { return .absent }
            if hit.header.flags.isDisjoint(with: [.encrypted, .compressed, .customCrypt]) {
                guard RecordCodec.checksumMatches(hit.base, at: hit.offset, header: hit.header) else {
                    throw StoreError.corrupt("\(segmentPath(hit.entry.segment)): record checksum mismatch at offset \(hit.offset)")
                }
                return .lent(try body(UnsafeRawBufferPointer(start: hit.base + hit.offset + hit.header.valueOffset,
                                                             count: hit.header.valueLength)))
            }
            return .encoded(try storedValue(base: hit.base, offset: hit.offset, header: hit.header, segment: hit.entry.segment))
        }
    }

    /// What `read` found under the lock.
    enum BorrowOutcome<Result> { case absent, lent(Result), encoded(StoredValue) }

    /// A record's value as read under the lock: checksum checked and AES-GCM opened, but
    /// still custom-encrypted and compressed if it was.
    struct StoredValue {
        var bytes: [UInt8]
        var flags: RecordFlags
        var rawLength: Int
        var location: RecordLocation
    }

    /// Checks a record and copies out its value, decrypting AES-GCM. Caller holds `rw`.
    func storedValue(base: UnsafeRawPointer, offset: Int, header: RecordHeader, segment: UInt32) throws -> StoredValue {
        guard RecordCodec.checksumMatches(base, at: offset, header: header) else {
            throw StoreError.corrupt("\(segmentPath(segment)): record checksum mismatch at offset \(offset)")
        }
        let value = UnsafeRawBufferPointer(start: base + offset + header.valueOffset, count: header.valueLength)
        var bytes: [UInt8]
        if header.flags.contains(.encrypted) {
            let current = currentCipher
            guard let cipher = current?.keyID == header.keyID ? current?.cipher : ciphers[header.keyID] else {
                throw StoreError.wrongKey(keyID: header.keyID)
            }
            bytes = try cipher.open(value, nonce: UnsafeRawBufferPointer(start: base + offset + header.nonceOffset, count: AESGCM.nonceSize),
                                    aadPrefix: RecordCodec.authenticatedFlags(header.flags),
                                    aad: UnsafeRawBufferPointer(start: base + offset + RecordCodec.checksumSize + 1,
                                                                count: header.valueOffset - RecordCodec.checksumSize - 1),
                                    what: "\(segmentPath(segment)) record at offset \(offset)")
        } else {
            bytes = [UInt8](value)
        }
        return StoredValue(bytes: bytes, flags: header.flags, rawLength: header.rawLength,
                           location: RecordLocation(segment: segment, offset: UInt32(offset)))
    }

    /// Undoes a custom crypt and compression, outside every lock (a custom crypt is the
    /// application's code).
    func decode<Key: Collection<UInt8>>(_ stored: StoredValue, key: Key, crypt: DataCrypt?) throws -> [UInt8] {
        var bytes = stored.bytes
        if stored.flags.contains(.customCrypt) {
            guard case .custom(_, let decrypt)? = crypt?.kind else {
                throw StoreError.cryptRequired(key: String(decoding: key, as: UTF8.self))
            }
            bytes = try decrypt(bytes)
        }
        if stored.flags.contains(.compressed) {
            bytes = try decompress(bytes, rawLength: stored.rawLength, location: stored.location)
        }
        return bytes
    }

    /// Visits the live, unexpired records of `space` whose key starts with `prefix`.
    /// - Complexity: O(keys of `space`): only that space's table is walked.
    private func forEachLive(space: UInt32, prefix: [UInt8],
                             _ body: (UnsafeRawPointer, Int, RecordHeader, UInt32) -> Void) throws {
        try rw.withReadLock {
            guard !isClosed else { throw StoreError.closed }
            let now = Clock.nowMillis()
            prefix.withUnsafeBytes { prefixBytes in
                keydir.table(for: space)?.forEach { entry in
                    guard let base = segments.base(of: entry.segment) else { return }
                    let offset = Int(entry.offset)
                    guard let header = RecordCodec.decodeHeader(base, at: offset, limit: segments.limit(of: entry.segment)),
                          header.space == space, header.keyLength >= prefixBytes.count,
                          !header.isExpired(nowMillis: now) else { return }
                    if prefixBytes.count > 0 && memcmp(base + offset + header.keyOffset, prefixBytes.baseAddress!, prefixBytes.count) != 0 { return }
                    body(base, offset, header, entry.segment)
                }
            }
            if keydir.isDamaged { throw indexDamagedError() }
        }
    }

    func keys(space: UInt32, prefix: [UInt8]) throws -> [[UInt8]] {
        var keys: [[UInt8]] = []
        try forEachLive(space: space, prefix: prefix) { base, offset, header, _ in
            keys.append([UInt8](UnsafeRawBufferPointer(start: base + offset + header.keyOffset, count: header.keyLength)))
        }
        return keys.sorted { $0.lexicographicallyPrecedes($1) }
    }

    func entries(space: UInt32, prefix: [UInt8], crypt: DataCrypt?) throws -> [(key: [UInt8], value: [UInt8])] {
        var found: [(key: [UInt8], stored: StoredValue)] = []
        var failure: Error?
        try forEachLive(space: space, prefix: prefix) { base, offset, header, segment in
            guard failure == nil else { return }
            do {
                found.append((key: [UInt8](UnsafeRawBufferPointer(start: base + offset + header.keyOffset, count: header.keyLength)),
                              stored: try storedValue(base: base, offset: offset, header: header, segment: segment)))
            } catch {
                failure = error
            }
        }
        if let failure { throw failure }
        return try found.sorted { $0.key.lexicographicallyPrecedes($1.key) }
            .map { (key: $0.key, value: try decode($0.stored, key: $0.key, crypt: crypt)) }
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
                stats.backgroundErrors = backgroundErrors
                return stats
            }
        }
    }
}
