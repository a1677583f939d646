import CChecksum
import Foundation

/// A log-structured key-value store in a directory: the engine under every other layer.
///
/// Writes append records to the active segment file; an in-memory hash index (the keydir) maps
/// each live key to its newest record; compaction rewrites sealed segments to drop dead records.
/// Reads run in parallel with each other and with writes and compaction. FORMAT.md describes
/// every byte written.
///
/// ```swift
/// let store = try LogStore(directory: url)
/// try store.put(Array("v".utf8), forKey: Array("k".utf8))
/// let value = try store.get(forKey: Array("k".utf8))   // [0x76]
/// try store.close()
/// ```
public final class LogStore: Sendable {
    /// A namespace for keys. 0 ..< 2^31 belong to callers; the upper half to the library's layers.
    public typealias KeySpace = UInt32

    /// How a store is opened and how it writes.
    public struct Options: Sendable {
        /// What a successful write promises.
        public enum Durability: Sendable, Equatable {
            /// The write survives the process being killed at any point (it is in the kernel's
            /// page cache when the call returns). A background syncer, which no write waits on,
            /// bounds what a power loss can lose: by default at most the writes of the last
            /// second (`maxUnsyncedInterval`) or the last 4 MiB (`maxUnsyncedBytes`), whichever
            /// is less, as long as the disk keeps up with the writes (see `maxUnsyncedBytes`).
            /// With both options nil there is no syncer, and a power loss can lose everything
            /// since the last `sync()`, compaction or close.
            case processCrashSafe
            /// Like `processCrashSafe` with `interval` in place of `maxUnsyncedInterval`: a power
            /// loss loses at most the writes of the last `interval` seconds (or the last
            /// `maxUnsyncedBytes`, 4 MiB by default, when less).
            case groupCommit(interval: TimeInterval)
            /// The write is on stable storage when the call returns. Writers waiting at the same
            /// time share one fsync.
            case fsyncEachWrite
        }

        /// Default `.processCrashSafe`.
        public var durability: Durability = .processCrashSafe
        /// In `.processCrashSafe`, the longest an acknowledged write stays unsynced (seconds;
        /// default 1; nil: no time bound): a write is on stable storage at most this long after
        /// it returned, as long as one fsync round of the background syncer takes less than half
        /// of it. The syncer wakes once per half interval while writes come in, and never when
        /// none do. No write waits for it, but its writeback competes with the writer for the
        /// CPU and the file system: bursts of puts measured about 20-25% slower at 100 B and
        /// 25-50% at 4 KiB on a loaded 2-core machine (BENCHMARKS.md, "issue 21 run"); nil for
        /// both this and `maxUnsyncedBytes` turns the syncer off.
        public var maxUnsyncedInterval: TimeInterval? = 1
        /// In `.processCrashSafe` and `.groupCommit`, the most bytes of acknowledged records
        /// (as encoded in the log) that may be unsynced at any moment (default 4 MiB; nil: no
        /// byte bound). The background syncer starts a round once half of it is unsynced and
        /// runs rounds back to back while more is. No write waits for it unless
        /// `waitsBeyondMaxUnsyncedBytes` is set, so the bound holds while the disk keeps up with
        /// the writes; a burst written faster than the disk can store it (hundreds of MB/s)
        /// leaves unsynced what the disk is behind, until the syncer catches up.
        public var maxUnsyncedBytes: Int? = 4 << 20
        /// Makes `maxUnsyncedBytes` a hard bound (default false): a write that would leave more
        /// than it unsynced syncs the log before it returns, so a burst larger than the bound
        /// runs at the disk's sync speed (BENCHMARKS.md: 5x slower for 4 KiB puts on the bench
        /// machine). No effect without `maxUnsyncedBytes` or in `.fsyncEachWrite`.
        public var waitsBeyondMaxUnsyncedBytes: Bool = false
        /// Bytes after which the active segment is sealed and a new one started (default 64 MiB).
        /// A record larger than this gets a segment of its own.
        public var segmentSize: Int = 64 << 20
        /// Share of dead bytes in sealed segments (0...1) that starts a background compaction
        /// when a segment is sealed (default 0.5). Values above 1 turn background compaction off.
        public var compactionTrigger: Double = 0.5
        /// Open without writing anything: no recovery repairs, every write throws `readOnly`.
        /// Read-only openers share the lock with each other but not with a writer.
        public var readOnly: Bool = false

        /// zstd settings for values; nil (the default) stores every value as given.
        public struct Compression: Sendable {
            /// zstd level, 1 (fastest) to 19; 3 is zstd's default.
            public var level: Int32
            /// Values shorter than this many bytes are never compressed.
            public var threshold: Int
            public init(level: Int32 = 3, threshold: Int = 256) {
                self.level = level
                self.threshold = threshold
            }
        }

        /// The store's default AES-256-GCM key and its id.
        public struct Encryption: Sendable {
            public var key: [UInt8]
            public var keyID: UInt32
            /// A 32-byte key supplied by the application.
            public init(key: [UInt8], keyID: UInt32) {
                self.key = key
                self.keyID = keyID
            }
            /// A key derived from an application key string with HKDF-SHA256 (salt and info in
            /// FORMAT.md, "Keys").
            public init(deriving applicationKey: String, keyID: UInt32 = 1) throws {
                self.key = try CryptoPrimitives.hkdfSHA256(secret: Array(applicationKey.utf8), salt: KeyCheck.derivationSalt,
                                                           info: KeyCheck.derivationInfo, length: AESGCM.keySize)
                self.keyID = keyID
            }
        }

        /// Compress values with zstd (before any encryption). Default nil: no compression.
        public var compression: Compression? = nil
        /// The default key. When set, values are encrypted with it unless a call passes another
        /// crypt (`DataCrypt.plain` for none); nil: plain unless a call passes a crypt.
        public var encryption: Encryption? = nil

        public init() {}
    }

    /// Puts and deletes applied all together or not at all, even across a crash.
    public struct WriteBatch: Sendable {
        var records: [PendingRecord] = []

        public init() {}

        /// Makes room for `count` records at once (a layer that knows how many it will add
        /// avoids the array's doubling, which holds up to twice a huge batch at its peak).
        package mutating func reserveCapacity(_ count: Int) { records.reserveCapacity(count) }

        /// Adds a put of `value` under `key`; `expiresAt` makes it invisible from that time on.
        public mutating func put(_ value: [UInt8], forKey key: [UInt8], space: KeySpace = 0, expiresAt: Date? = nil) {
            records.append(PendingRecord(flags: [], space: space, key: key, value: value,
                                         expiresAtMillis: expiresAt.map(Clock.millis(of:))))
        }

        /// Adds a put whose value is protected by `crypt` (nil: the store's default policy).
        public mutating func put(_ value: [UInt8], forKey key: [UInt8], space: KeySpace = 0, expiresAt: Date? = nil,
                                 crypt: DataCrypt?, purgeable: Bool = false) {
            records.append(PendingRecord(flags: purgeable ? .purgeable : [], space: space, key: key, value: value,
                                         expiresAtMillis: expiresAt.map(Clock.millis(of:)), crypt: crypt))
        }

        /// Adds a delete of `key`.
        public mutating func delete(forKey key: [UInt8], space: KeySpace = 0) {
            records.append(PendingRecord(flags: .tombstone, space: space, key: key, value: [], expiresAtMillis: nil))
        }

        /// Number of operations in the batch.
        public var count: Int { records.count }

        /// Adds an attachment check (FORMAT.md, "Attachments"): the batch names the file
        /// `LogStore.attachmentURL(space:id:)`, which holds `size` bytes of CRC-32C `checksum`.
        /// Point-in-time recovery ends the log before this batch when, after the synced part,
        /// the file is not on disk whole. A tombstone in the engine's space: it adds no key.
        package mutating func requireAttachment(space: KeySpace, id: UInt64, size: UInt64, checksum: UInt32) {
            records.append(PendingRecord(flags: .tombstone, space: LogStore.engineSpace,
                                         key: StoreEngine.attachmentCheckKey(space: space, id: id, size: size, checksum: checksum),
                                         value: [], expiresAtMillis: nil))
        }
    }

    /// Counters describing the store at one moment.
    public struct Statistics: Sendable {
        /// Keys in the keydir, the engine's own records in `LogStore.engineSpace` included
        /// (expired keys still count until compaction drops them).
        public var liveKeys: Int
        /// Bytes of the records the keydir points at.
        public var liveBytes: Int
        /// Bytes of records superseded, deleted or expired, reclaimable by compaction.
        public var deadBytes: Int
        public var segmentCount: Int
        /// Memory held by the keydir table.
        public var keydirBytes: Int
        /// Bytes of all segment files (headers included), as written.
        public var segmentBytes: Int = 0
        /// Compactions completed since open.
        public var compactions: Int = 0
        /// Failures of work the store did on its own since open (background compactions, the
        /// compaction that ends a rekey), one line each, oldest first. Such a failure loses
        /// nothing: the store goes on with its files as they were.
        public var backgroundErrors: [String] = []
    }

    /// The result of `verify()`.
    public struct VerifyReport: Sendable {
        /// One line per problem, naming the file and byte offset. Empty when all is well.
        public var problems: [String]
        public var recordsChecked: Int
    }

    /// One record as found in a segment, for inspection tools (`ustore dump`).
    public struct RecordInfo: Sendable {
        public var space: KeySpace
        public var key: [UInt8]
        /// The value as stored; empty for a tombstone.
        public var value: [UInt8]
        public var sequence: UInt64
        /// The flag byte (FORMAT.md, "Records").
        public var flags: UInt8
        public var expiresAt: Date?
        public var isTombstone: Bool
        /// True when the keydir points at this record.
        public var isLive: Bool
        public var segment: UInt32
        public var offset: Int
    }

    let engine: StoreEngine

    /// Opens the store in `directory`, creating it if needed (unless read-only), and recovers
    /// from whatever a crash left: a torn tail is cut off, a corrupt record skipped and reported
    /// in `recoveryReport`, an interrupted compaction finished or undone.
    ///
    /// - Throws: `StoreError.locked` if another opener (in this process or another) holds it;
    ///   `StoreError.io` when a file cannot be read or created; `StoreError.corrupt` only when
    ///   the directory holds something that is not a store at all.
    /// - Complexity: with a valid index snapshot, O(keys) to load it plus the records written
    ///   after it; otherwise a read of every segment.
    public init(directory: URL, options: Options = Options()) throws {
        engine = try StoreEngine(directory: directory, options: options)
    }

    /// Stores `value` under `key` in `space`, replacing any earlier value.
    /// - Throws: `valueTooLarge` for keys over 64 KiB or values over 1 GiB; `readOnly`;
    ///   `closed`; `io` (for example ENOSPC), in which case nothing was written.
    /// - Complexity: O(1) amortized.
    public func put(_ value: [UInt8], forKey key: [UInt8], space: KeySpace = 0, expiresAt: Date? = nil) throws {
        try engine.write(PendingRecord(flags: [], space: space, key: key, value: value,
                                       expiresAtMillis: expiresAt.map(Clock.millis(of:))))
    }

    /// Calls `body` with the value of `key` (nil when absent or expired) without copying it out
    /// of the segment when it is stored plain; encrypted or compressed values are decoded first.
    /// The buffer is valid only during `body`, which must not write to this store (a plain
    /// value is lent under the store's read lock).
    /// - Throws: as `get(forKey:space:crypt:)`, and whatever `body` throws.
    public func withValue<Result>(forKey key: [UInt8], space: KeySpace = 0, crypt: DataCrypt? = nil,
                                  _ body: (UnsafeRawBufferPointer) throws -> Result) throws -> Result? {
        try engine.withValue(key: key, space: space, crypt: crypt, body)
    }

    /// `withValue` without a generic result, for layers that read many values in a loop (the
    /// DAO reads every row through it): a generic call from another module looks up its result
    /// type's metadata on every call (about 6% of a full-table scan's perf samples).
    /// Calls `body` with the value of `key` when there is one (same lending rules as
    /// `withValue`, the store's default crypt) and says whether it did.
    /// - Throws: as `withValue(forKey:space:crypt:_:)`.
    package func withValueBytes(forKey key: [UInt8], space: KeySpace, _ body: (UnsafeRawBufferPointer) throws -> Void) throws -> Bool {
        try engine.withValue(key: key, space: space, crypt: nil, body) != nil
    }

    /// `withValueBytes` with the key given as bytes (valid during the call): a caller that
    /// makes its keys in place (the DAO's 8-byte row keys) reads without an array per key.
    /// - Throws: as `withValue(forKey:space:crypt:_:)`.
    package func withValueBytes(forKeyBytes key: UnsafeRawBufferPointer, space: KeySpace,
                                _ body: (UnsafeRawBufferPointer) throws -> Void) throws -> Bool {
        try engine.withValue(keyBytes: key, space: space, crypt: nil, body) != nil
    }

    /// Calls `body` with the key and value of every live record of `space`, in no particular
    /// order, lent from the mapped segments under one hold of the read lock (for layers that
    /// scan a whole space with a cheap test per record: the DAO's full-table filters). `value`
    /// is nil for a record that cannot be lent as stored (encrypted, compressed, custom crypt,
    /// or failing its checksum): read it by key to get it or the error that says why not.
    /// `body` must not call into the store; writes wait until the walk ends.
    ///
    /// The walk runs in up to `parts` slot ranges at once on as many threads (two at most, and
    /// one for a small space or a one-core machine): `partsUsed` learns how many first, and
    /// `body` gets its range's number with each record, so that it keeps each part's results
    /// apart. Each record is visited once.
    /// - Throws: `StoreError.closed`; `StoreError.corrupt` when the index is damaged.
    /// - Complexity: O(keys of `space`).
    package func forEachStoredValue(space: KeySpace, parts: Int, partsUsed: (Int) -> Void,
                                    _ body: (_ part: Int, _ key: UnsafeRawBufferPointer, _ value: UnsafeRawBufferPointer?) -> Void) throws {
        try engine.forEachStoredValue(space: space, parts: parts, partsUsed: partsUsed, body)
    }

    /// The number of keys of `space` in the keydir (expired ones that compaction has not
    /// dropped yet included): what a layer sizing a pass over the space expects to meet.
    /// - Throws: `StoreError.closed`.
    /// - Complexity: O(1).
    package func keyCount(space: KeySpace) throws -> Int {
        try engine.keyCount(space: space)
    }

    /// The number of keys in the keydir of every space that has any (expired ones not yet
    /// dropped included): what a walk of the live records must meet (`ustore export` checks it).
    /// - Throws: `StoreError.closed`.
    /// - Complexity: O(spaces).
    package func keyCounts() throws -> [KeySpace: Int] {
        try engine.keyCounts()
    }

    /// Stores `value` under `key`, protected by `crypt`: `DataCrypt.default` encrypts with the
    /// store's key (AES-256-GCM), a custom crypt with its own function, `DataCrypt.plain` not at
    /// all, nil as the store's options say. `purgeable` marks it for the cache cleaner.
    /// - Throws: as `put(_:forKey:space:expiresAt:)`; `cryptRequired` when `.default` is asked
    ///   of a store without a key; whatever a custom crypt's `encrypt` throws.
    public func put(_ value: [UInt8], forKey key: [UInt8], space: KeySpace = 0, expiresAt: Date? = nil,
                    crypt: DataCrypt?, purgeable: Bool = false) throws {
        try engine.write(PendingRecord(flags: purgeable ? .purgeable : [], space: space, key: key, value: value,
                                       expiresAtMillis: expiresAt.map(Clock.millis(of:)), crypt: crypt))
    }

    /// The newest value of `key` in `space`; nil when absent, deleted or expired.
    /// Values written with a custom crypt need `get(forKey:space:crypt:)`.
    /// - Throws: `corrupt` when the record's checksum does not match (it is never returned);
    ///   `closed`.
    /// - Complexity: O(1).
    public func get(forKey key: [UInt8], space: KeySpace = 0) throws -> [UInt8]? {
        try engine.get(key: key, space: space, crypt: nil)
    }

    /// The newest value of `key`, decrypted with `crypt` if it was written with a custom crypt
    /// (default-key and plain values read the same with any crypt).
    /// - Throws: `cryptRequired` for a custom-crypt value read with a nil crypt; `tampered` when
    ///   AES-GCM authentication fails; `wrongKey` for a key id the store does not hold;
    ///   `corrupt` for a bad checksum or zstd frame; whatever the crypt's `decrypt` throws.
    public func get(forKey key: [UInt8], space: KeySpace = 0, crypt: DataCrypt?) throws -> [UInt8]? {
        try engine.get(key: key, space: space, crypt: crypt)
    }

    /// Deletes `key` from `space`. Deleting an absent key is not an error (it still writes a
    /// tombstone, so the delete is ordered after every earlier write).
    public func delete(forKey key: [UInt8], space: KeySpace = 0) throws {
        try engine.write(PendingRecord(flags: .tombstone, space: space, key: key, value: [], expiresAtMillis: nil))
    }

    /// Applies every operation of `batch` atomically: after a crash, all of them or none.
    public func write(_ batch: WriteBatch) throws {
        try engine.write(batch: batch.records)
    }

    /// Applies one atomic batch, as `write(_:)` does and with the same bytes on disk, whose
    /// operations `fill` hands over a chunk at a time, so that a batch of millions of records
    /// (a DAO transaction's rows) is never in memory whole, nor its segment pages.
    ///
    /// `fill(&chunk, n)` adds the operations of chunk `n` (0, 1, 2, ...) to the empty `chunk`
    /// and returns false when there are no more (a chunk left empty ends the batch too). The
    /// store asks for the chunks more than once (to size the batch, then to write it): each
    /// pass must get the same operations in the same order. `fill` runs under the store's write lock: it must not call the store.
    /// - Throws: as `write(_:)`; `StoreError.corrupt` when a pass got other operations than the
    ///   first (nothing is then written).
    /// - Complexity: O(operations); memory O(one chunk).
    package func write(streaming fill: (inout WriteBatch, Int) throws -> Bool) throws {
        try engine.write(streaming: fill)
    }

    /// The live, unexpired keys of `space` that start with `prefix`, sorted bytewise.
    /// - Complexity: O(keys in `space`) plus sorting the result: each key space has its own
    ///   keydir table, so the other spaces' keys are not visited.
    public func keys(space: KeySpace, prefix: [UInt8] = []) throws -> [[UInt8]] {
        try engine.keys(space: space, prefix: prefix)
    }

    /// The live, unexpired keys and values of `space` starting with `prefix`, sorted by key,
    /// decoded as `get(forKey:space:crypt:)` does.
    /// - Complexity: O(keys in `space`) plus sorting and reading the values found.
    public func entries(space: KeySpace, prefix: [UInt8] = [], crypt: DataCrypt? = nil) throws -> [(key: [UInt8], value: [UInt8])] {
        try engine.entries(space: space, prefix: prefix, crypt: crypt)
    }

    /// Forces everything written so far onto stable storage, whatever the durability mode.
    public func sync() throws { try engine.sync() }

    /// Seals the active segment and compacts every sealed segment; returns when done. Reads and
    /// writes go on meanwhile. Dead, expired and tombstone records are dropped.
    public func compact() throws { try engine.compact(sealActive: true) }

    /// Re-encrypts every record sealed with a store key under `newKey`, which becomes the
    /// default key; ends with a compaction, so no old ciphertext stays on disk. Reads and writes
    /// go on meanwhile (writes already use the new key). Crash-safe at every point: a store
    /// reopened with either the old or the new key reads every record and finishes the rekey.
    /// After it, the old key id is retired: opening with it throws `wrongKey`.
    /// When it throws, the old key opens the store (and finishes the rekey when it had begun),
    /// except when the failure was a failed fsync of the very last step, whose write may have
    /// landed: then the old key gets `wrongKey` and the new key opens it. Once it returns, only
    /// the new key does. A failure of the final compaction does not
    /// make it throw (the rekey is already committed); the old ciphertexts then stay until the
    /// next compaction.
    /// - Parameter progress: called with the share done, 0...1, ending with 1.
    /// - Throws: `wrongKey` when `newKey` is not 32 bytes or its id is known with other bytes;
    ///   `readOnly`; `closed`; `io`.
    public func rekey(to newKey: Options.Encryption, progress: (@Sendable (Double) -> Void)? = nil) throws {
        try engine.rekey(to: newKey, progress: progress)
    }

    /// Trains a zstd dictionary on the current values of `space` (up to `sampleLimit` of them)
    /// and compresses that space's new values with it from now on (when `Options.compression`
    /// is set). Small values that zstd alone cannot shrink often compress well with one. The
    /// dictionary is stored in the store; values keep the dictionary they were written with.
    /// - Returns: the dictionary id, or nil when the space holds too little to learn from.
    @discardableResult
    public func trainCompressionDictionary(space: KeySpace, maxSize: Int = 16 << 10, sampleLimit: Int = 10_000) throws -> UInt32? {
        try engine.trainDictionary(space: space, maxSize: maxSize, sampleLimit: sampleLimit)
    }

    /// The id of the dictionary `space`'s new values are compressed with (FORMAT.md, record
    /// `zdict-space/<space>`), or nil when none was trained for it. O(1).
    public func compressionDictionaryID(space: KeySpace) -> UInt32? {
        engine.compressionDictionary(for: space)?.id
    }

    /// The key space registered under `name` (a layer's table, cache or preferences), assigned
    /// from the library's half (2^31 and up) on first use and the same forever after. This is
    /// how the library's layers share one store without colliding.
    /// - Throws: `readOnly` when the name is new and the store is read-only.
    public func space(named name: String) throws -> KeySpace {
        try engine.space(named: name)
    }

    /// Every name registered with `space(named:)` and its key space.
    public func namedSpaces() throws -> [String: KeySpace] {
        try engine.namedSpaces()
    }

    /// Deletes every live key of `space` in one atomic batch.
    /// - Complexity: O(keys in `space`).
    public func removeAll(space: KeySpace) throws {
        try checkNoFailedSync()   // even with no key listed (see checkNoFailedSync)
        var batch = WriteBatch()
        for key in try keys(space: space) { batch.delete(forKey: key, space: space) }
        if batch.count > 0 { try write(batch) }
    }

    /// Counters for this moment.
    public var statistics: Statistics { engine.statistics() }

    /// Reads every record of every segment and checks it, and checks that every keydir entry
    /// points at a valid record. Writes wait while it runs.
    public func verify() throws -> VerifyReport { try engine.verify() }

    /// What recovery found and did when the store was opened (skipped corrupt ranges, a cut torn
    /// tail, a finished compaction). Empty after a clean close.
    public var recoveryReport: [String] { engine.recoveryReport }

    /// Calls `body` with every valid record of every segment in segment and file order, live or
    /// not. For inspection; writes wait while it runs.
    public func forEachRecord(_ body: (RecordInfo) throws -> Void) throws { try engine.forEachRecord(body) }

    /// Syncs, writes the index snapshot for a fast reopen and releases the lock. Every later
    /// call throws `closed`. Closing twice is not an error.
    public func close() throws {
        if !isClosed { closeHooks.run() }
        try engine.close()
    }

    /// Syncs and writes the index snapshot now, so that a `close()` with no write after it
    /// only syncs (the DAO's `SQLDatabase.checkpoint()` calls it: the next open is then cheap
    /// for the keydir too). Does nothing on a read-only store.
    /// - Throws: `StoreError` from the sync or the snapshot write (the store is unchanged: an
    ///   opener then reads the segments past the last good snapshot, losing nothing).
    package func writeIndexSnapshot() throws { try engine.writeSnapshotNow() }

    /// Work that layers above run just before the store closes, while it still takes writes
    /// (the DAO writes its index checkpoint). A hook's failures are its own: it must not throw.
    package let closeHooks = CloseHooks()

    /// Whether `close()` has run (then every call throws `StoreError.closed`). O(1): one lock.
    public var isClosed: Bool { engine.writeMutex.withLock { engine.isClosed } }

    /// Whether writes encrypt with a store key now: the options' key, or one a `rekey` added
    /// since (the layers above keep such a store's plaintext off the disk). O(1): one lock.
    package var hasWriteKey: Bool { engine.writeMutex.withLock { engine.writeKeyID != nil } }

    /// The options the store was opened with (the layers above follow its durability).
    package var options: Options { engine.options }

    /// The store's directory (the layers above keep derived files there, FORMAT.md names them).
    package var directory: URL { engine.directoryURL }

    /// The file attachment `id` of key space `space` is kept in (FORMAT.md, "Attachments"):
    /// `<store folder>.files/<space, 8 hex digits>/<id, 16 hex digits>`.
    package func attachmentURL(space: KeySpace, id: UInt64) -> URL {
        engine.attachmentFolder(space: space).appendingPathComponent(String(format: "%016llx", id))
    }

    /// The CRC-32C of `bytes` (FORMAT.md, "Checksums"), as an attachment check wants it.
    package static func checksum(_ bytes: UnsafeRawBufferPointer) -> UInt32 {
        guard let base = bytes.baseAddress, !bytes.isEmpty else { return 0 }
        return cs_crc32c_extend(0, base, bytes.count)
    }

    /// Notes that the attachment at `path` was written, before the batch naming it: every sync
    /// of the log fsyncs it and its folder first (AttachmentRegistry). Not needed in
    /// `.fsyncEachWrite`, where the writer syncs the file before the batch.
    package func attachmentWritten(_ path: String) {
        engine.attachments.noteWritten(path, folder: (path as NSString).deletingLastPathComponent)
    }

    /// Unlinks the attachments at `paths` after the next sync of the log completes: the batch
    /// that stopped naming them (written before this call) is then durable.
    package func unlinkAttachmentsAfterSync(_ paths: [String]) {
        engine.attachments.unlinkAfterSync(paths)
    }

    /// Throws the failed fsync after which the store refuses writes until it is reopened; does
    /// nothing on a healthy store (one relaxed atomic load). Layers that keep state in memory
    /// call it before an operation that may need no write at all (a removal of something memory
    /// does not list): after a failed fsync, memory and disk may disagree (a write that threw
    /// may be on disk), so such an operation must not be acknowledged either.
    package func checkNoFailedSync() throws {
        try engine.syncFailure.check()
    }

    deinit { try? engine.close() }
}

/// One record to append, before encoding.
struct PendingRecord: Sendable {
    var flags: RecordFlags
    var space: UInt32
    var key: [UInt8]
    /// The value as given; after `StoreEngine.prepare`, the bytes to store (compressed and/or
    /// custom-encrypted; AES-GCM happens in place while encoding).
    var value: [UInt8]
    var expiresAtMillis: UInt64?
    var crypt: DataCrypt? = nil
    /// Set by `prepare`: the original length of a compressed value.
    var rawLength = 0
    /// Set by `prepare`: the key id of an AES-GCM record.
    var keyID: UInt32 = 0
}

/// APDataCrypt: how one value is protected. `DataCrypt.default` is AES-256-GCM under the
/// store's default key (such values read back without passing a crypt); a custom crypt is a
/// pair of functions the application supplies, and its values need it to be read;
/// `DataCrypt.plain` stores the value unprotected even in a store with a default key.
public struct DataCrypt: Sendable {
    enum Kind: Sendable {
        case storeKey
        case plain
        case custom(encrypt: @Sendable ([UInt8]) throws -> [UInt8], decrypt: @Sendable ([UInt8]) throws -> [UInt8])
    }

    let kind: Kind

    /// A custom crypt: `encrypt` runs on every value written with it, `decrypt` on every value
    /// read with it. Either may throw; the error reaches the caller unchanged.
    public init(encrypt: @escaping @Sendable ([UInt8]) throws -> [UInt8], decrypt: @escaping @Sendable ([UInt8]) throws -> [UInt8]) {
        kind = .custom(encrypt: encrypt, decrypt: decrypt)
    }

    init(kind: Kind) { self.kind = kind }

    /// AES-256-GCM with the default key of the store being written.
    public static let `default` = DataCrypt(kind: .storeKey)
    /// No protection.
    public static let plain = DataCrypt(kind: .plain)
}

/// Hooks run by `LogStore.close()` before the store closes, in the order they were added.
package final class CloseHooks: @unchecked Sendable {
    private let mutex = Mutex()
    private var hooks: [@Sendable () -> Void] = []

    package func add(_ hook: @escaping @Sendable () -> Void) {
        mutex.withLock { hooks.append(hook) }
    }

    func run() {
        for hook in mutex.withLock({ hooks }) { hook() }
    }
}
