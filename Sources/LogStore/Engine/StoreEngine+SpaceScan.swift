import CChecksum

extension StoreEngine {
    /// Calls `body` with the key and the value of every live, unexpired record of `space`, in
    /// the keydir's slot order (no particular key order), all under one hold of the read lock.
    /// The bytes are lent from the mapped segments and valid only during the call.
    ///
    /// `value` is nil for a record that cannot be lent as stored: encrypted, compressed or
    /// custom-encrypted, and one that fails its checksum. A caller that needs such a value
    /// reads it again by key (`withValue`), which decodes it or reports what is wrong; the walk
    /// itself never throws for a record, so one bad record does not hide the others.
    ///
    /// With `parts` > 1 a large table is walked in that many slot ranges at once, on as many
    /// threads, and `body` gets the range's number (0 ..< parts): it must keep each part's
    /// results apart. `partsUsed` is called first with the number of parts the walk runs.
    ///
    /// `body` runs under the read lock: it must not call back into the store, and writers wait
    /// until the walk ends.
    /// - Throws: `StoreError.closed`; `StoreError.corrupt` when the keydir is damaged.
    /// - Complexity: O(keys of `space`): no hashing, no probing.
    /// Keys of `space` in the keydir.
    func keyCount(space: UInt32) throws -> Int {
        try rw.withReadLock {
            guard !isClosed else { throw StoreError.closed }
            return keydir.table(for: space)?.count ?? 0
        }
    }

    /// Keys in the keydir, by space (spaces with none left out).
    func keyCounts() throws -> [UInt32: Int] {
        try rw.withReadLock {
            guard !isClosed else { throw StoreError.closed }
            var counts: [UInt32: Int] = [:]
            for (space, table) in zip(keydir.spaces, keydir.tables) where table.count > 0 { counts[space] = table.count }
            return counts
        }
    }

    func forEachStoredValue(space: UInt32, parts: Int, partsUsed: (Int) -> Void,
                            _ body: (Int, UnsafeRawBufferPointer, UnsafeRawBufferPointer?) -> Void) throws {
        try rw.withReadLock {
            guard !isClosed else { throw StoreError.closed }
            let now = Clock.nowMillis()
            guard let table = keydir.table(for: space) else { partsUsed(1); return }
            let capacity = table.capacity
            let count = parts > 1 ? min(parts, ParallelParts.count(for: capacity, minimumPerPart: 1 << 15)) : 1
            partsUsed(count)
            segments.withBasesAndLimits { bases, limits in
                ParallelParts.run(count) { part in
                    let range = (capacity * part / count) ..< (capacity * (part + 1) / count)
                    // The records lie scattered in slot order: each one's first two cache lines
                    // (a short record's header, key and value) are asked for 16 slots ahead, so
                    // their misses overlap the work on the records before it.
                    table.forEach(slots: range, lookingAhead: 16, { entry in
                        if Int(entry.segment) < bases.count, let base = bases[Int(entry.segment)] {
                            cs_prefetch(base + Int(entry.offset))
                            cs_prefetch(base + Int(entry.offset) + 64)
                        }
                    }) { entry in
                        guard Int(entry.segment) < bases.count, let base = bases[Int(entry.segment)] else { return }
                        let offset = Int(entry.offset)
                        guard let header = RecordCodec.decodeHeader(base, at: offset, limit: limits[Int(entry.segment)]),
                              header.space == space, !header.isExpired(nowMillis: now) else { return }
                        let key = UnsafeRawBufferPointer(start: base + offset + header.keyOffset, count: header.keyLength)
                        let lendable = header.flags.isDisjoint(with: [.encrypted, .compressed, .customCrypt])
                            && RecordCodec.checksumMatches(base, at: offset, header: header)
                        body(part, key, lendable ? UnsafeRawBufferPointer(start: base + offset + header.valueOffset, count: header.valueLength) : nil)
                    }
                }
            }
            if keydir.isDamaged { throw indexDamagedError() }
        }
    }
}
