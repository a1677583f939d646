import Foundation

extension StoreEngine {
    /// Bytes reserved in a new active segment at first; it grows in doubling steps after.
    static let initialSegmentAllocation = 256 << 10

    /// Appends one record and applies it.
    func write(_ record: PendingRecord) throws {
        try validate(record)
        let written = try writeMutex.withLock { () throws -> UInt64 in
            try appendLocked(CollectionOfOne(record))
        }
        try awaitDurability(written)
    }

    /// Appends a batch as consecutive records (all but the last flagged `batchContinues`), so
    /// recovery applies it whole or not at all.
    func write(batch: [PendingRecord]) throws {
        guard !batch.isEmpty else { return }
        for record in batch { try validate(record) }
        let written = try writeMutex.withLock { () throws -> UInt64 in
            try appendLocked(batch)
        }
        try awaitDurability(written)
    }

    private func validate(_ record: PendingRecord) throws {
        guard !options.readOnly else { throw StoreError.readOnly }
        guard record.key.count <= RecordCodec.maxKeyLength else { throw StoreError.valueTooLarge(record.key.count) }
        guard record.value.count <= RecordCodec.maxValueLength else { throw StoreError.valueTooLarge(record.value.count) }
    }

    /// Encodes `records` at the end of the active segment, publishes them to readers, and
    /// returns the write generation for the durability wait. Caller holds `writeMutex`.
    @inline(__always)
    private func appendLocked<C: Collection<PendingRecord>>(_ records: C) throws -> UInt64 {
        guard !isClosed else { throw StoreError.closed }
        var total = 0
        var sequence = nextSequence
        for record in records {
            total += RecordCodec.encodedSize(fields(of: record, sequence: sequence), keyLength: record.key.count,
                                             valueLength: record.value.count)
            sequence += 1
        }
        let segment = try segmentWithRoom(for: total)
        let start = segment.length
        var offset = start
        var index = 0
        for record in records {
            var recordFields = fields(of: record, sequence: nextSequence)
            if index > 0 { recordFields.flags.insert(.batchFollower) }
            index += 1
            if index < records.count { recordFields.flags.insert(.batchContinues) }
            offset += record.key.withUnsafeBytes { key in
                record.value.withUnsafeBytes { value in
                    RecordCodec.encode(recordFields, key: key, value: value, to: segment.base + offset)
                }
            }
            nextSequence += 1
        }
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
        syncer.noteWritten(generation)
        return generation
    }

    @inline(__always)
    private func fields(of record: PendingRecord, sequence: UInt64) -> RecordCodec.Fields {
        RecordCodec.Fields(flags: record.flags, sequence: sequence, space: record.space, expiresAtMillis: record.expiresAtMillis)
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
        try syncer.syncAll { () in try syncActiveSegment() }
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
