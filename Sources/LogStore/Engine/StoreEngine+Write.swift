import Foundation

extension StoreEngine {
    /// Bytes reserved in a new active segment at first; it grows in doubling steps after.
    static let initialSegmentAllocation = 256 << 10

    /// Appends one record and applies it.
    func write(_ record: PendingRecord) throws {
        try validate(record)
        var prepared = record
        try prepare(&prepared)
        let written = try writeMutex.withLock { () throws -> UInt64 in
            try appendLocked(CollectionOfOne(prepared))
        }
        try awaitDurability(written)
    }

    /// Appends a batch as consecutive records (flagged as FORMAT.md "Write batches" says), so
    /// recovery applies it whole or not at all.
    func write(batch: [PendingRecord]) throws {
        guard !batch.isEmpty else { return }
        for record in batch { try validate(record) }
        var prepared = batch
        for index in prepared.indices { try prepare(&prepared[index]) }
        let written = try writeMutex.withLock { () throws -> UInt64 in
            try appendLocked(prepared)
        }
        try awaitDurability(written)
    }

    private func validate(_ record: PendingRecord) throws {
        guard !options.readOnly else { throw StoreError.readOnly }
        guard record.key.count <= RecordCodec.maxKeyLength else { throw StoreError.valueTooLarge(record.key.count) }
        // Room for the 16-byte tag an encrypted value gains.
        guard record.value.count <= RecordCodec.maxValueLength - AESGCM.tagSize else { throw StoreError.valueTooLarge(record.value.count) }
    }

    /// Compresses and applies a custom crypt, outside every lock (a custom crypt is the
    /// application's code, and compression is the slow part of a write). AES-GCM with the
    /// store's key happens later, in place, because the record's header is bound into it.
    func prepare(_ record: inout PendingRecord) throws {
        if record.flags.contains(.tombstone) || (record.crypt == nil && options.compression == nil && options.encryption == nil) {
            return   // the common plain put: nothing to do
        }
        if let compression = options.compression, record.value.count >= max(1, compression.threshold),
           let frame = record.value.withUnsafeBytes({ zstd.compress($0) }) {
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
    /// are written. Caller holds `writeMutex`.
    @inline(__always)
    func appendLocked<C: Collection<PendingRecord>>(_ records: C) throws -> UInt64 {
        guard !isClosed else { throw StoreError.closed }
        // A reused buffer: no allocation per put. (writeMutex)
        scratchFields.removeAll(keepingCapacity: true)
        var total = 0
        var sequence = nextSequence
        var index = 0
        for record in records {
            var fields = RecordCodec.Fields(flags: record.flags, sequence: sequence, space: record.space,
                                            expiresAtMillis: record.expiresAtMillis, rawLength: record.rawLength)
            if index > 0 { fields.flags.insert(.batchFollower) }
            if index < records.count - 1 { fields.flags.insert(.batchContinues) }
            var storedLength = record.value.count
            if record.flags.contains(.encrypted) {
                guard let keyID = writeKeyID else {
                    throw StoreError.cryptRequired(key: "\(String(decoding: record.key, as: UTF8.self)) (the store has no default key)")
                }
                fields.keyID = keyID
                fields.nonce = try nextNonce()
                storedLength += AESGCM.tagSize
            }
            total += RecordCodec.encodedSize(fields, keyLength: record.key.count, valueLength: storedLength)
            scratchFields.append(fields)
            sequence += 1
            index += 1
        }
        let segment = try segmentWithRoom(for: total)
        let start = segment.length
        var offset = start
        index = 0
        for record in records {
            let fields = scratchFields[index]
            index += 1
            offset += try record.key.withUnsafeBytes { key in
                try record.value.withUnsafeBytes { value in
                    guard fields.flags.contains(.encrypted) else {
                        return RecordCodec.encode(fields, key: key, value: value, to: segment.base + offset)
                    }
                    let cipher = rw.withReadLock { ciphers[fields.keyID] }
                    guard let cipher else { throw StoreError.wrongKey(keyID: fields.keyID) }
                    return try RecordCodec.encode(fields, key: key, valueLength: value.count + AESGCM.tagSize,
                                                  to: segment.base + offset) { recordStart, valueOffset in
                        try fields.nonce.withUnsafeBytes { nonce in
                            try cipher.seal(value, nonce: nonce, aadPrefix: RecordCodec.authenticatedFlags(fields.flags),
                                            aad: UnsafeRawBufferPointer(start: recordStart + RecordCodec.checksumSize + 1,
                                                                        count: valueOffset - RecordCodec.checksumSize - 1),
                                            into: recordStart + valueOffset)
                        }
                    }
                }
            }
        }
        nextSequence = sequence
        segment.length = offset
        segment.recordCount += records.count
        rw.withWriteLock {
            segments.setLimit(offset, of: segment.id)
            var at = start
            while at < offset {
                // Re-parse what was just written: the codec is the one source of offsets.
                guard let header = RecordCodec.decodeHeader(segment.base, at: at, limit: offset) else { break }
                applyAppended(segment: segment, offset: at, header: header)
                at += header.totalLength
            }
        }
        generation += 1
        // Only the fsync modes wait on generations; skip the coordinator's lock otherwise.
        if isDurableMode { syncer.noteWritten(generation) }
        return generation
    }

    /// The next AES-GCM nonce: 8 random bytes then a little-endian 32-bit counter. Caller
    /// holds `writeMutex`.
    private func nextNonce() throws -> [UInt8] {
        if noncePrefix.isEmpty || nonceCounter == UInt32.max {
            noncePrefix = try CryptoPrimitives.randomBytes(8)
            nonceCounter = 0
        }
        nonceCounter += 1
        var nonce = noncePrefix
        LittleEndian.append32(nonceCounter, to: &nonce)
        return nonce
    }

    /// Points the keydir at a record just appended. Caller holds `writeMutex` and `rw` for writing.
    @inline(__always)
    private func applyAppended(segment: Segment, offset: Int, header: RecordHeader) {
        let key = UnsafeRawBufferPointer(start: segment.base + offset + header.keyOffset, count: header.keyLength)
        let tag = KeyDir.tag(of: KeyDir.hash(space: header.space, key: key))
        let isTombstone = header.flags.contains(.tombstone)
        let location = RecordLocation(segment: segment.id, offset: UInt32(offset))
        if let hit = lookup(tag: tag, space: header.space, key: key) {
            segments[hit.entry.segment]?.liveBytes -= hit.header.totalLength
            if isTombstone {
                keydir.remove(at: hit.slot)
            } else {
                keydir.setLocation(location, at: hit.slot)
                segment.liveBytes += header.totalLength
            }
        } else if !isTombstone {
            keydir.insert(tag: tag, location: location)
            segment.liveBytes += header.totalLength
        }
    }

    /// The active segment, rolled over first when `count` bytes do not fit, with file space
    /// reserved for them. Caller holds `writeMutex`.
    private func segmentWithRoom(for count: Int) throws -> Segment {
        if let segment = active, segment.remainingCapacity >= count {
            try segment.reserve(count)
            return segment
        }
        let segment = try roll(minimumCapacity: count)
        try segment.reserve(count)
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
            if isDurableMode { try old.file.syncData() } else { unsyncedSegments.append(old) }
        }
        let id = nextSegmentID
        let segment = try Segment.create(path: segmentPath(id), id: id, flags: 0, capacity: capacity,
                                         initialAllocation: Self.initialSegmentAllocation)
        nextSegmentID += 1
        if isDurableMode { try Directory.sync(directory) }
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

    /// Fsyncs the active segment (sealed ones were synced when sealed, in durable modes).
    func syncActiveSegment() throws {
        let segment = writeMutex.withLock { active }
        try segment?.file.syncData()
    }

    func sync() throws {
        let pending: [Segment] = try writeMutex.withLock {
            guard !isClosed else { throw StoreError.closed }
            defer { unsyncedSegments = [] }
            return unsyncedSegments
        }
        for segment in pending { try segment.file.syncData() }
        try syncActiveSegment()
        if !pending.isEmpty { try Directory.sync(directory) }
    }

    /// Starts the group-commit timer for `.groupCommit` stores.
    func startGroupCommit(interval: TimeInterval) {
        let timer = DispatchSource.makeTimerSource(queue: DispatchQueue(label: "UnifiedStorage.LogStore.groupCommit"))
        let nanos = max(1_000_000, Int((interval * 1e9).rounded()))
        timer.schedule(deadline: .now() + .nanoseconds(nanos), repeating: .nanoseconds(nanos))
        timer.setEventHandler { [weak self] in
            guard let self, self.syncer.hasUnsyncedWrites else { return }
            try? self.syncer.syncAll { () in try self.syncActiveSegment() }
        }
        timer.resume()
        groupCommitTimer = timer
    }
}
