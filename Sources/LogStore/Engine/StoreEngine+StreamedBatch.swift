import Foundation

extension StoreEngine {
    /// Records asked of a streamed batch's source at a time.
    static let streamedChunkSize = 4096

    /// Bytes of a streamed batch's segment pages kept mapped behind the write (or read) head
    /// (up to twice this between two drops). Nothing behind the head is read again by the pass,
    /// so a small window only costs an `madvise` per MiB; 4 MiB kept ~16 MiB of a 1M-row
    /// commit's pages resident across its two passes.
    static let streamedResidentWindow = 1 << 20

    /// Appends one atomic batch whose records `fill` makes a chunk at a time
    /// (`LogStore.write(streaming:)`): the same bytes as `write(batch:)`, without ever holding
    /// all the records, their header fields or all their segment pages in memory.
    ///
    /// Three passes, all under `writeMutex`: the chunks are asked for once to size the batch
    /// (and validate it), once to encode it into the reserved space, and the keydir is then
    /// pointed at the records by reading their headers back from the segment. A store that
    /// compresses values, or a batch with a custom crypt, cannot be sized ahead (and a custom
    /// crypt is application code, not to be run under the lock): those are collected whole
    /// and written as `write(batch:)` does.
    func write(streaming fill: (inout LogStore.WriteBatch, Int) throws -> Bool) throws {
        guard !options.readOnly else { throw StoreError.readOnly }
        let outcome = try writeMutex.withLock { try appendStreamedLocked(fill) }
        switch outcome {
        case .written(let generation):
            try awaitDurability(generation)
        case .needsPreparation:
            var all: [PendingRecord] = []
            var chunk = LogStore.WriteBatch()
            var index = 0
            while try nextChunk(&chunk, index, fill) {
                all.append(contentsOf: chunk.records)
                index += 1
            }
            try write(batch: all)
        }
    }

    enum StreamedOutcome {
        case written(generation: UInt64)
        /// Values must be compressed or custom-encrypted first (see `write(streaming:)`).
        case needsPreparation
    }

    @inline(__always)
    private func nextChunk(_ chunk: inout LogStore.WriteBatch, _ index: Int,
                           _ fill: (inout LogStore.WriteBatch, Int) throws -> Bool) throws -> Bool {
        chunk.records.removeAll(keepingCapacity: true)
        return try fill(&chunk, index) && !chunk.records.isEmpty
    }

    /// The three passes of `write(streaming:)`. Caller holds `writeMutex`.
    private func appendStreamedLocked(_ fill: (inout LogStore.WriteBatch, Int) throws -> Bool) throws -> StreamedOutcome {
        guard !isClosed else { throw StoreError.closed }
        try syncFailure.check()
        var chunk = LogStore.WriteBatch()
        chunk.reserveCapacity(Self.streamedChunkSize)

        // Pass 1: count, validate and size every record.
        var count = 0
        var total = 0
        var index = 0
        // Puts per key space (runs of one space counted without a lookup), so each table is
        // grown once to its final size, not doubled step by step with two tables alive.
        var putsBySpace: [UInt32: Int] = [:]
        var run = (space: UInt32(0), puts: 0)
        while try nextChunk(&chunk, index, fill) {
            for record in chunk.records {
                if !record.flags.contains(.tombstone) {
                    if record.space != run.space, run.puts > 0 { putsBySpace[run.space, default: 0] += run.puts; run.puts = 0 }
                    run.space = record.space
                    run.puts += 1
                }
                try validate(record)
                if record.crypt.map({ if case .custom = $0.kind { return true } else { return false } }) ?? false
                    || (options.compression != nil && !record.flags.contains(.tombstone)) {
                    return .needsPreparation
                }
                total += try streamedSize(of: record, sequence: nextSequence + UInt64(count))
                count += 1
            }
            index += 1
        }
        guard count > 0 else { return .written(generation: generation) }
        if run.puts > 0 { putsBySpace[run.space, default: 0] += run.puts }

        // Pass 2: encode into the reserved space; pages behind the head leave the process.
        let segment = try segmentWithRoom(for: total, populate: false)
        let start = segment.length
        let end = start + total
        var at = start
        var dropped = start
        do {
            index = 0
            var ordinal = 0
            while try nextChunk(&chunk, index, fill) {
                segment.populate(through: min(end, at + chunk.records.reduce(0) { $0 + $1.key.count + $1.value.count + 64 }))
                for var record in chunk.records {
                    // The source must give the records of pass 1 again, in the same order.
                    guard ordinal < count else { throw StoreError.corrupt("streamed batch: more records on the second pass than the \(count) of the first") }
                    if needsPreparation(record) { try prepare(&record) }
                    let fields = try withUnsafePointer(to: &record) {
                        try self.fields(of: $0, sequence: nextSequence + UInt64(ordinal), index: ordinal, count: count)
                    }
                    let size = RecordCodec.encodedSize(fields, keyLength: record.key.count, valueLength: storedLength(of: record))
                    guard at + size <= end else { throw StoreError.corrupt("streamed batch: the second pass is longer than the first (\(total) bytes)") }
                    at += try withUnsafePointer(to: &record) { try encode($0, fields: fields, at: segment.base + at) }
                    ordinal += 1
                }
                if at - dropped > 2 * Self.streamedResidentWindow {
                    segment.region.dropResidentPages(offset: dropped, count: at - Self.streamedResidentWindow - dropped)
                    dropped = at - Self.streamedResidentWindow
                }
                index += 1
            }
            guard ordinal == count, at == end else {
                throw StoreError.corrupt("streamed batch: \(ordinal) records of \(at - start) bytes on the second pass, \(count) of \(total) on the first")
            }
        } catch {
            // Nothing was published; leave the reserved space zero, as recovery expects of it.
            segment.zeroTail(from: start, to: at)
            throw error
        }

        // What pass 2 left mapped goes before pass 3 reads the headers back from the start.
        segment.region.dropResidentPages(offset: dropped, count: end - dropped)

        // Pass 3: publish, reading each record's header back from the segment.
        nextSequence += UInt64(count)
        segment.length = end
        segment.recordCount += count
        rw.withWriteLock {
            for (space, puts) in putsBySpace where puts >= Self.streamedChunkSize {
                let table = keydir.tableCreating(for: space)
                table.reserve(table.count + puts)
            }
            segments.setLimit(end, of: segment.id)
            var offset = start
            var readDropped = start
            var sweptAt = start
            while offset < end, let header = RecordCodec.decodeHeader(segment.base, at: offset, limit: end) {
                applyAppended(segment: segment, offset: offset, header: header)
                offset += header.totalLength
                if offset - readDropped > 2 * Self.streamedResidentWindow {
                    // Every 4 windows the whole stretch behind is swept, not only the last:
                    // a key whose tag matches an earlier record's makes the keydir read that
                    // record, and the kernel maps 64 KiB around it, far behind the head
                    // (with drops of the last window only, a 1M-row batch kept ~18 MB of its
                    // segment resident). A sweep of pages no longer mapped costs the kernel a
                    // page-table walk, not a fault.
                    let from = offset - sweptAt > 4 * Self.streamedResidentWindow ? start : readDropped
                    segment.region.dropResidentPages(offset: from, count: offset - Self.streamedResidentWindow - from)
                    if from == start { sweptAt = offset }
                    readDropped = offset - Self.streamedResidentWindow
                }
            }
        }
        segment.dropPagesBehindWriteHead()
        return .written(generation: try finishAppend(bytes: total))
    }

    /// A record's encoded size, computed without taking a nonce (pass 1 of a streamed batch).
    private func streamedSize(of record: PendingRecord, sequence: UInt64) throws -> Int {
        var fields = RecordCodec.Fields(flags: record.flags, sequence: sequence, space: record.space,
                                        expiresAtMillis: record.expiresAtMillis, rawLength: record.rawLength)
        var valueLength = record.value.count
        if !record.flags.contains(.tombstone), case .storeKey = (record.crypt ?? (options.encryption != nil ? .default : .plain)).kind {
            guard let keyID = writeKeyID else {
                throw StoreError.cryptRequired(key: "\(String(decoding: record.key, as: UTF8.self)) (the store has no default key)")
            }
            fields.flags.insert(.encrypted)
            fields.keyID = keyID
            fields.nonce = RecordCodec.Nonce(prefix: 0, counter: 0)
            valueLength += AESGCM.tagSize
        }
        return RecordCodec.encodedSize(fields, keyLength: record.key.count, valueLength: valueLength)
    }
}
