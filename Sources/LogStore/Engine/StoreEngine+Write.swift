import Foundation

extension StoreEngine {
    /// Bytes reserved in a new active segment at first; it grows in doubling steps after.
    static let initialSegmentAllocation = 256 << 10

    /// Appends one record and applies it.
    func write(_ record: consuming PendingRecord) throws {
        try validate(record)
        let written: UInt64
        if needsPreparation(record) {
            // Consumed, then lent by address: the record (its key, value and crypt) is neither
            // retained again nor copied through its value witnesses on the way to the segment
            // (an encrypted put at 100 B: ~300 instructions of copies and destroys).
            var prepared = record
            try prepare(&prepared)
            written = try withUnsafePointer(to: &prepared) { pointer in
                try writeMutex.withLock { try appendLocked(UnsafeBufferPointer(start: pointer, count: 1)) }
            }
        } else {
            // The common plain put: borrowed all the way down, never copied.
            written = try withUnsafePointer(to: record) { pointer in
                try writeMutex.withLock { try appendLocked(UnsafeBufferPointer(start: pointer, count: 1)) }
            }
        }
        try awaitDurability(written)
    }

    /// Appends a batch as consecutive records (flagged as FORMAT.md "Write batches" says), so
    /// recovery applies it whole or not at all.
    func write(batch: [PendingRecord]) throws {
        guard !batch.isEmpty else { return }
        for record in batch { try validate(record) }
        var prepared = batch
        for index in prepared.indices where needsPreparation(prepared[index]) { try prepare(&prepared[index]) }
        let written = try prepared.withUnsafeBufferPointer { records in
            try writeMutex.withLock { try appendLocked(records) }
        }
        try awaitDurability(written)
    }

    func validate(_ record: PendingRecord) throws {
        guard !options.readOnly else { throw StoreError.readOnly }
        guard record.key.count <= RecordCodec.maxKeyLength else { throw StoreError.valueTooLarge(record.key.count) }
        // Room for the 16-byte tag an encrypted value gains.
        guard record.value.count <= RecordCodec.maxValueLength - AESGCM.tagSize else { throw StoreError.valueTooLarge(record.value.count) }
    }

    /// False for tombstones and for plain values in a store without compression or a key.
    @inline(__always)
    func needsPreparation(_ record: PendingRecord) -> Bool {
        !record.flags.contains(.tombstone) && (record.crypt != nil || options.compression != nil || options.encryption != nil)
    }

    /// Compresses and applies a custom crypt, outside every lock (a custom crypt is the
    /// application's code, and compression is the slow part of a write). AES-GCM with the
    /// store's key happens later, in place, because the record's header is bound into it.
    func prepare(_ record: inout PendingRecord) throws {
        guard needsPreparation(record) else { return }
        if let compression = options.compression, record.value.count >= max(1, compression.threshold),
           let frame = record.value.withUnsafeBytes({ value in
               compressionDictionary(for: record.space)?.compress(value, with: zstd) ?? zstd.compress(value)
           }) {
            record.rawLength = record.value.count
            record.value = frame
            record.flags.insert(.compressed)
        }
        switch (record.crypt ?? (options.encryption != nil ? .default : .plain)).kind {
        case .plain:
            break
        case .storeKey:
            record.flags.insert(.encrypted)
        case .custom(let encrypt, _):
            record.value = try encrypt(record.value)
            record.flags.insert(.customCrypt)
            guard record.value.count <= RecordCodec.maxValueLength else { throw StoreError.valueTooLarge(record.value.count) }
        }
        record.crypt = nil
    }

    /// Encodes `records` at the end of the active segment, publishes them to readers, and
    /// returns the write generation for the durability wait. Nothing changes unless all of them
    /// are written. Records are read in place (never copied). Caller holds `writeMutex`.
    func appendLocked(_ records: UnsafeBufferPointer<PendingRecord>) throws -> UInt64 {
        guard !isClosed else { throw StoreError.closed }
        try syncFailure.check()
        // Records are read through their pointer: `records[index]` copied a record (retaining
        // its key, value and crypt) for each call it was passed to.
        guard let record = records.baseAddress else { return generation }
        // A reused buffer: no allocation per put (sized at once for a big batch: no doubling).
        let fieldsOf = scratchFields.room(for: records.count)
        var total = 0
        for index in records.indices {
            let fields = try self.fields(of: record + index, sequence: nextSequence + UInt64(index), index: index, count: records.count)
            total += RecordCodec.encodedSize(fields, keyLength: record[index].key.count, valueLength: storedLength(of: record[index]))
            fieldsOf[index] = fields
        }
        let segment = try segmentWithRoom(for: total)
        let start = segment.length
        var offset = start
        for index in records.indices {
            offset += try encode(record + index, fields: fieldsOf[index], at: segment.base + offset)
        }
        nextSequence += UInt64(records.count)
        segment.length = offset
        segment.recordCount += records.count
        segment.dropPagesBehindWriteHead()
        rw.withWriteLock {
            segments.setLimit(offset, of: segment.id)
            var at = start
            for index in records.indices {
                // The header the codec wrote, computed rather than parsed back.
                let header = RecordCodec.header(for: fieldsOf[index], keyLength: record[index].key.count,
                                                valueLength: storedLength(of: record[index]))
                applyAppended(segment: segment, offset: at, header: header)
                at += header.totalLength
            }
        }
        // A huge batch's fields are not kept for the life of the store.
        if records.count > 4096 { scratchFields.shrink() }
        return try finishAppend(bytes: total)
    }

    /// Counts a write just published (`bytes` appended) for the durability wait and the
    /// background syncer; returns its generation. Caller holds `writeMutex`.
    @inline(__always)
    func finishAppend(bytes total: Int) throws -> UInt64 {
        generation += 1
        // Only fsyncEachWrite waits on generations; skip the coordinator's lock otherwise.
        if let backgroundSyncer {
            // One add and one compare unless a sync round is due (BackgroundSyncer).
            backgroundSyncer.appendedBytes &+= UInt64(total)
            if backgroundSyncer.appendedBytes >= backgroundSyncer.slowPathAt { try backgroundSyncSlowPath(backgroundSyncer) }
        } else if isDurableMode {
            syncer.noteWritten(generation)
        }
        return generation
    }

    /// Bytes of the value as it will be stored (AES-GCM adds its tag).
    @inline(__always)
    func storedLength(of record: PendingRecord) -> Int {
        record.value.count + (record.flags.contains(.encrypted) ? AESGCM.tagSize : 0)
    }

    /// The header fields of the `index`th of `count` records of a write. Caller holds `writeMutex`.
    @inline(__always)
    func fields(of record: UnsafePointer<PendingRecord>, sequence: UInt64, index: Int, count: Int) throws -> RecordCodec.Fields {
        // Read through the pointer: a record passed by value was copied (its key, value and
        // crypt retained, through its value witnesses) on the encrypted path.
        var fields = RecordCodec.Fields(flags: record.pointee.flags, sequence: sequence, space: record.pointee.space,
                                        expiresAtMillis: record.pointee.expiresAtMillis, rawLength: record.pointee.rawLength)
        if index > 0 { fields.flags.insert(.batchFollower) }
        if index < count - 1 { fields.flags.insert(.batchContinues) }
        if record.pointee.flags.contains(.encrypted) {
            guard let keyID = writeKeyID else {
                throw StoreError.cryptRequired(key: "\(String(decoding: record.pointee.key, as: UTF8.self)) (the store has no default key)")
            }
            fields.keyID = keyID
            fields.nonce = try nextNonce()
        }
        return fields
    }

    /// Writes one record at `destination`, sealing its value with AES-GCM when it is to be
    /// encrypted. Returns its length.
    @inline(__always)
    func encode(_ record: UnsafePointer<PendingRecord>, fields: RecordCodec.Fields, at destination: UnsafeMutableRawPointer) throws -> Int {
        try record.pointee.key.withUnsafeBytes { key in
            try record.pointee.value.withUnsafeBytes { value in
                guard fields.flags.contains(.encrypted) else {
                    return RecordCodec.encode(fields, key: key, value: value, to: destination)
                }
                // The write key's cipher: only writes change it, and the caller holds writeMutex.
                let current = currentCipher
                let cipher = current?.keyID == fields.keyID ? current?.cipher : rw.withReadLock { ciphers[fields.keyID] }
                guard let cipher else { throw StoreError.wrongKey(keyID: fields.keyID) }
                return try RecordCodec.encode(fields, key: key, valueLength: value.count + AESGCM.tagSize,
                                              to: destination) { recordStart, valueOffset in
                    // The flag byte as written (the codec adds `hasExpiry`), batch bits cleared.
                    let written = RecordFlags(rawValue: recordStart.load(fromByteOffset: RecordCodec.checksumSize, as: UInt8.self))
                    // The nonce as the codec wrote it into the header.
                    let nonceOffset = RecordCodec.header(for: fields, keyLength: key.count, valueLength: value.count + AESGCM.tagSize).nonceOffset
                    try cipher.seal(value, nonce: UnsafeRawBufferPointer(start: recordStart + nonceOffset, count: RecordCodec.nonceSize),
                                    aadPrefix: RecordCodec.authenticatedFlags(written),
                                    aad: UnsafeRawBufferPointer(start: recordStart + RecordCodec.checksumSize + 1,
                                                                count: valueOffset - RecordCodec.checksumSize - 1),
                                    into: recordStart + valueOffset)
                }
            }
        }
    }

    /// The next AES-GCM nonce: 8 random bytes then a little-endian 32-bit counter. Caller
    /// holds `writeMutex`.
    private func nextNonce() throws -> RecordCodec.Nonce {
        if noncePrefix == nil || nonceCounter == UInt32.max {
            noncePrefix = try CryptoPrimitives.randomBytes(8).withUnsafeBytes { LittleEndian.load64($0.baseAddress!, 0) }
            nonceCounter = 0
        }
        nonceCounter += 1
        return RecordCodec.Nonce(prefix: noncePrefix ?? 0, counter: nonceCounter)
    }

    /// Points the keydir at a record just appended. Caller holds `writeMutex` and `rw` for writing.
    @inline(__always)
    func applyAppended(segment: Segment, offset: Int, header: RecordHeader) {
        let key = UnsafeRawBufferPointer(start: segment.base + offset + header.keyOffset, count: header.keyLength)
        let tag = KeyDir.tag(of: KeyDir.hash(space: header.space, key: key))
        let isTombstone = header.flags.contains(.tombstone)
        let location = RecordLocation(segment: segment.id, offset: UInt32(offset))
        if let hit = lookup(tag: tag, space: header.space, key: key) {
            segments[hit.entry.segment]?.liveBytes -= hit.header.totalLength
            if isTombstone {
                hit.table.remove(at: hit.slot)
            } else {
                hit.table.setLocation(location, at: hit.slot)
                segment.liveBytes += header.totalLength
            }
        } else if !isTombstone {
            // The space's table without a retain when it exists (the usual case).
            if let table = keydir.unretainedTable(for: header.space) {
                table._withUnsafeGuaranteedRef { $0.insert(tag: tag, location: location) }
            } else {
                keydir.tableCreating(for: header.space).insert(tag: tag, location: location)
            }
            segment.liveBytes += header.totalLength
        }
    }

    /// The active segment, rolled over first when `count` bytes do not fit, with file space
    /// reserved for them. Caller holds `writeMutex`.
    func segmentWithRoom(for count: Int, populate: Bool = true) throws -> Segment {
        if let segment = active, segment.remainingCapacity >= count {
            try segment.reserve(count, populate: populate)
            return segment
        }
        let segment = try roll(minimumCapacity: count)
        try segment.reserve(count, populate: populate)
        return segment
    }

    /// Seals the active segment and starts a new one with room for at least `minimumCapacity`
    /// bytes of records. Caller holds `writeMutex`.
    @discardableResult
    func roll(minimumCapacity: Int) throws -> Segment {
        let capacity = max(options.segmentSize, minimumCapacity + SegmentHeader.size)
        guard capacity <= Int(UInt32.max) else { throw StoreError.valueTooLarge(minimumCapacity) }
        if let old = active {
            try old.trimToLength()
            if isDurableMode {
                try syncFailure.sync { try old.file.syncData() }
            } else {
                // The background syncer syncs it, then the directory naming the new segment.
                unsyncedSegments.append(old)
                backgroundSyncer?.directoryDirty = true
            }
        }
        let id = nextSegmentID
        let segment = try Segment.create(path: segmentPath(id), id: id, flags: 0, capacity: capacity,
                                         initialAllocation: Self.initialSegmentAllocation)
        nextSegmentID += 1
        // Its header before its name: a power loss must not leave a named segment whose header
        // never reached the disk while records after it did (PowerLossTests).
        if isDurableMode { try syncFailure.sync { try segment.file.syncData(); try Directory.sync(directory) } }
        rw.withWriteLock { segments.add(segment) }
        if let old = active {
            // Sealed pages stay in the page cache; they just stop counting toward our RSS.
            old.region.dropResidentPages(offset: 0, count: old.length)
        }
        active = segment
        scheduleCompactionIfNeeded()
        return segment
    }

    /// Blocks until generation `written` is as durable as the store's mode promises.
    func awaitDurability(_ written: UInt64) throws {
        if options.durability == .fsyncEachWrite {
            try syncer.waitUntilDurable(written) { () in try syncActiveSegment() }
        }
    }

    /// Fsyncs the active segment (sealed ones were synced when sealed, in durable modes), then,
    /// once `syncMarkSpacing` bytes were synced since the last mark (or always with
    /// `markAlways`), records a sync mark claiming what it synced: marks cost an fsync per
    /// 64 KiB of log, not per write. Sealed segments found at open and not yet synced (a crash
    /// in another mode) are synced, with the directory, before the first such mark claims them.
    func syncActiveSegment(markAlways: Bool = false) throws {
        let (segment, mark, sealed) = writeMutex.withLock { (active, captureSyncMarkLocked(), unsyncedSegments) }
        try syncFailure.sync { try segment?.file.syncData() }
        guard let mark, writeMutex.withLock({ !isClosed && (markAlways || syncMarkIsDue(mark)) }) else { return }
        if !sealed.isEmpty {
            try syncFailure.sync {
                for segment in sealed { try segment.file.syncData() }
                try Directory.sync(directory)
            }
            writeMutex.withLock { unsyncedSegments.removeAll { segment in sealed.contains { $0 === segment } } }
        }
        recordSyncMark(mark)
    }

    func sync() throws {
        if writeMutex.withLock({ backgroundSyncer != nil }) {
            try syncLog()
            return
        }
        // What is synced and the mark claiming it are taken together: a segment sealed after
        // this point is not covered by the mark.
        let (pending, current, mark, removals): ([Segment], Segment?, SyncMark?, [String]) = try writeMutex.withLock {
            guard !isClosed else { throw StoreError.closed }
            defer { unsyncedSegments = [] }
            return (unsyncedSegments, active, captureSyncMarkLocked(), attachments.takeRemovals())
        }
        do {
            try syncFailure.sync {
                try attachments.syncWritten()
                for segment in pending { try segment.file.syncData() }
                try current?.file.syncData()
                // The directory too, always: the active segment's name may never have been synced
                // (a new store's first segment; PointInTimeRecoveryTests), and a mark claims it.
                try Directory.sync(directory)
            }
        } catch {
            attachments.restoreRemovals(removals)
            throw error
        }
        attachments.finish(removals, markDurable: recordSyncMark(mark))
    }
}

/// Room for the header fields of the records of one append, reused by every append (the
/// caller holds `writeMutex`). Raw memory of a trivial type: as an `[RecordCodec.Fields]` that
/// was emptied and appended to per put, it cost ~170 instructions a put in uniqueness checks
/// and `replaceSubrange`.
final class FieldsScratch {
    private static let initialCapacity = 16
    // Unchecked: writeMutex makes every access exclusive.
    @exclusivity(unchecked) private var pointer = UnsafeMutablePointer<RecordCodec.Fields>.allocate(capacity: FieldsScratch.initialCapacity)
    @exclusivity(unchecked) private var capacity = FieldsScratch.initialCapacity

    deinit { pointer.deallocate() }

    /// Memory for `count` fields, to be written before they are read (earlier contents are
    /// not kept). `RecordCodec.Fields` is trivial, so slots are assigned without deinitializing.
    @inline(__always)
    func room(for count: Int) -> UnsafeMutablePointer<RecordCodec.Fields> {
        if count > capacity {
            pointer.deallocate()
            pointer = .allocate(capacity: count)
            capacity = count
        }
        return pointer
    }

    /// Gives back the memory a huge batch needed.
    func shrink() {
        guard capacity > Self.initialCapacity else { return }
        pointer.deallocate()
        pointer = .allocate(capacity: Self.initialCapacity)
        capacity = Self.initialCapacity
    }
}
