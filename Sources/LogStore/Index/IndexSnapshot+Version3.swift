import CChecksum

/// Version 3 of the index snapshot (FORMAT.md, "Index snapshot"): metadata under one checksum,
/// then each key space's slot array as the keydir holds it in memory (12-byte little-endian
/// entries), page-aligned, with a checksum per block of `KeyDir.blockSlots` slots.
extension IndexSnapshot {
    static let version3HeaderSize = 56
    static let version3TableRecordSize = 24
    /// Slot arrays start at multiples of this, so a mapping can serve them in place.
    static let slotAlignment = 4096

    /// What a version 3 file holds, in file order: the metadata bytes, then each table's slots
    /// at its offset. The file ends with the last table's slots.
    struct Version3Layout {
        var metadata: [UInt8]
        var tables: [(offset: Int, slots: UnsafeRawBufferPointer)]
        var length: Int
        /// Tables made for the file (sparse tables re-sized); kept alive while `tables` is used.
        var keepAlive: [KeyDir]
    }

    static func alignUp(_ value: Int) -> Int { (value + slotAlignment - 1) / slotAlignment * slotAlignment }

    static func blockCount(capacity: Int) -> Int { (capacity + KeyDir.blockSlots - 1) / KeyDir.blockSlots }

    /// Lays out the snapshot with `keydir`'s non-empty tables, in the keydir's order. A table
    /// far larger than its entries (after mass deletes) is written re-sized, so a reopened
    /// store does not map its empty slots. Every table must be intact (`verifyAll`).
    func version3Layout(keydir: SpaceKeyDirs) -> Version3Layout {
        var written: [(space: UInt32, table: KeyDir)] = []
        var keepAlive: [KeyDir] = []
        for (index, table) in keydir.tables.enumerated() where table.count > 0 {
            if table.capacity > table.count * 4 + 1024 {
                let smaller = KeyDir()
                smaller.reserve(table.count)
                table.forEach { smaller.insert(tag: $0.tag, location: $0.location) }
                keepAlive.append(smaller)
                written.append((keydir.spaces[index], smaller))
            } else {
                written.append((keydir.spaces[index], table))
            }
        }
        let blocks = written.reduce(0) { $0 + Self.blockCount(capacity: $1.table.capacity) }
        let metadataLength = Self.version3HeaderSize + segments.count * Self.segmentRecordSize
            + written.count * Self.version3TableRecordSize + blocks * 4 + 4
        var bytes = Self.magic
        bytes.reserveCapacity(metadataLength)
        LittleEndian.append16(Self.version, to: &bytes)
        LittleEndian.append16(0, to: &bytes)
        LittleEndian.append64(maxSequence, to: &bytes)
        LittleEndian.append32(nextSegmentID, to: &bytes)
        LittleEndian.append32(activeSegmentID, to: &bytes)
        LittleEndian.append32(activeLength, to: &bytes)
        LittleEndian.append32(UInt32(segments.count), to: &bytes)
        LittleEndian.append64(UInt64(written.reduce(0) { $0 + $1.table.count }), to: &bytes)
        LittleEndian.append32(UInt32(written.count), to: &bytes)
        LittleEndian.append32(UInt32(KeyDir.blockSlots), to: &bytes)
        LittleEndian.append32(UInt32(metadataLength), to: &bytes)
        LittleEndian.append32(0, to: &bytes)
        for segment in segments {
            LittleEndian.append32(segment.id, to: &bytes)
            LittleEndian.append32(segment.length, to: &bytes)
            LittleEndian.append64(segment.liveBytes, to: &bytes)
            LittleEndian.append32(segment.recordCount, to: &bytes)
            LittleEndian.append32(0, to: &bytes)
        }
        var tables: [(offset: Int, slots: UnsafeRawBufferPointer)] = []
        var offset = Self.alignUp(metadataLength)
        for (space, table) in written {
            let slots = UnsafeRawBufferPointer(start: UnsafeRawPointer(table.slots), count: table.capacity * KeyDir.entrySize)
            LittleEndian.append32(space, to: &bytes)
            LittleEndian.append32(UInt32(table.capacity), to: &bytes)
            LittleEndian.append32(UInt32(table.count), to: &bytes)
            LittleEndian.append32(0, to: &bytes)
            LittleEndian.append64(UInt64(offset), to: &bytes)
            tables.append((offset, slots))
            offset = Self.alignUp(offset + slots.count)
        }
        for (_, table) in written {
            let slots = UnsafeRawPointer(table.slots)
            for block in 0..<Self.blockCount(capacity: table.capacity) {
                let first = block * KeyDir.blockSlots
                let count = min(KeyDir.blockSlots, table.capacity - first)
                LittleEndian.append32(cs_crc32c_extend(0, slots + first * KeyDir.entrySize, count * KeyDir.entrySize), to: &bytes)
            }
        }
        let crc = bytes.withUnsafeBytes { cs_crc32c_extend(0, $0.baseAddress, $0.count) }
        LittleEndian.append32(crc, to: &bytes)
        let length = tables.last.map { $0.offset + $0.slots.count } ?? metadataLength
        return Version3Layout(metadata: bytes, tables: tables, length: length, keepAlive: keepAlive)
    }

    /// The version 3 file in memory (tests, tools). The engine writes it with `write(keydir:to:)`.
    func encode(keydir: SpaceKeyDirs) -> [UInt8] {
        let layout = version3Layout(keydir: keydir)
        var bytes = [UInt8](repeating: 0, count: layout.length)
        bytes.replaceSubrange(0..<layout.metadata.count, with: layout.metadata)
        bytes.withUnsafeMutableBytes { buffer in
            for table in layout.tables {
                buffer.baseAddress!.advanced(by: table.offset).copyMemory(from: table.slots.baseAddress!, byteCount: table.slots.count)
            }
        }
        withExtendedLifetime(layout.keepAlive) {}
        return bytes
    }

    /// Writes the version 3 file to `file` (empty), the slot arrays straight from the tables.
    func write(keydir: SpaceKeyDirs, to file: SystemFile) throws {
        let layout = version3Layout(keydir: keydir)
        try file.write(layout.metadata, at: 0)
        for table in layout.tables { try file.write(table.slots, at: table.offset) }
        withExtendedLifetime(layout.keepAlive) {}
    }

    /// Whether this host's `KeyDir.Entry` is the file's 12-byte little-endian entry, so a
    /// mapped slot array can be used as it is.
    static var entriesMatchFile: Bool {
        UInt32(1).littleEndian == 1 && MemoryLayout<KeyDir.Entry>.stride == 12
            && MemoryLayout<KeyDir.Entry>.offset(of: \.tag) == 0 && MemoryLayout<KeyDir.Entry>.offset(of: \.segment) == 4
            && MemoryLayout<KeyDir.Entry>.offset(of: \.offset) == 8
    }

    /// Decodes a version 3 file; serves its tables in place from `region` when given.
    static func decodeVersion3(_ raw: UnsafeRawBufferPointer, path: String, region: MappedRegion?) throws -> (IndexSnapshot, SpaceKeyDirs) {
        guard let base = raw.baseAddress, raw.count >= version3HeaderSize + 4 else {
            throw StoreError.corrupt("\(path): \(raw.count) bytes, too short for a version 3 snapshot")
        }
        let metadataLength = Int(LittleEndian.load32(base, 48))
        guard metadataLength >= version3HeaderSize + 4, metadataLength <= raw.count else {
            throw StoreError.corrupt("\(path): metadata length \(metadataLength) impossible at offset 48")
        }
        let crcAt = metadataLength - 4
        guard LittleEndian.load32(base, crcAt) == cs_crc32c_extend(0, base, crcAt) else {
            throw StoreError.corrupt("\(path): metadata checksum mismatch at offset \(crcAt)")
        }
        guard LittleEndian.load16(base, 6) == 0, LittleEndian.load32(base, 52) == 0 else {
            throw StoreError.corrupt("\(path): reserved header field not zero")
        }
        guard Int(LittleEndian.load32(base, 44)) == KeyDir.blockSlots else {
            throw StoreError.corrupt("\(path): block of \(LittleEndian.load32(base, 44)) slots at offset 44; this build reads \(KeyDir.blockSlots)")
        }
        var snapshot = IndexSnapshot(maxSequence: LittleEndian.load64(base, 8), nextSegmentID: LittleEndian.load32(base, 16),
                                     activeSegmentID: LittleEndian.load32(base, 20), activeLength: LittleEndian.load32(base, 24),
                                     segments: [])
        let segmentCount = Int(LittleEndian.load32(base, 28))
        let entryCount = LittleEndian.load64(base, 32)
        let tableCount = Int(LittleEndian.load32(base, 40))
        var at = version3HeaderSize
        guard segmentCount <= (crcAt - at) / segmentRecordSize,
              tableCount <= (crcAt - at - segmentCount * segmentRecordSize) / version3TableRecordSize else {
            throw StoreError.corrupt("\(path): segment count \(segmentCount) or table count \(tableCount) exceeds the metadata")
        }
        for _ in 0..<segmentCount {
            guard LittleEndian.load32(base, at + 20) == 0 else { throw StoreError.corrupt("\(path): reserved field not zero at offset \(at + 20)") }
            snapshot.segments.append(SegmentInfo(id: LittleEndian.load32(base, at), length: LittleEndian.load32(base, at + 4),
                                                 liveBytes: LittleEndian.load64(base, at + 8),
                                                 recordCount: LittleEndian.load32(base, at + 16)))
            at += segmentRecordSize
        }
        struct TableRecord { var space: UInt32; var capacity: Int; var count: Int; var offset: Int; var firstBlock: Int }
        var records: [TableRecord] = []
        var expectedOffset = alignUp(metadataLength)
        var blocks = 0
        var total: UInt64 = 0
        for _ in 0..<tableCount {
            let record = TableRecord(space: LittleEndian.load32(base, at), capacity: Int(LittleEndian.load32(base, at + 4)),
                                     count: Int(LittleEndian.load32(base, at + 8)), offset: Int(truncatingIfNeeded: LittleEndian.load64(base, at + 16)),
                                     firstBlock: blocks)
            guard record.capacity >= KeyDir.minimumCapacity, record.count > 0, record.count * 4 <= record.capacity * 3,
                  LittleEndian.load32(base, at + 12) == 0 else {
                throw StoreError.corrupt("\(path): table of key space \(record.space) impossible at offset \(at)")
            }
            guard record.offset == expectedOffset, record.offset + record.capacity * KeyDir.entrySize <= raw.count else {
                throw StoreError.corrupt("\(path): slots of key space \(record.space) at \(record.offset), expected \(expectedOffset) within \(raw.count) bytes")
            }
            guard !records.contains(where: { $0.space == record.space }) else {
                throw StoreError.corrupt("\(path): key space \(record.space) listed twice at offset \(at)")
            }
            records.append(record)
            blocks += blockCount(capacity: record.capacity)
            total += UInt64(record.count)
            expectedOffset = alignUp(record.offset + record.capacity * KeyDir.entrySize)
            at += version3TableRecordSize
        }
        guard total == entryCount else { throw StoreError.corrupt("\(path): tables hold \(total) entries, the header says \(entryCount)") }
        guard at + blocks * 4 == crcAt else {
            throw StoreError.corrupt("\(path): metadata is \(metadataLength) bytes, its tables and \(blocks) block checksums need \(at + blocks * 4 + 4)")
        }
        let fileEnd = records.last.map { $0.offset + $0.capacity * KeyDir.entrySize } ?? metadataLength
        guard raw.count == fileEnd else { throw StoreError.corrupt("\(path): \(raw.count) bytes, the tables end at \(fileEnd)") }
        let checksums = base + at
        // The rest of the metadata's page is read already: it must be the zero padding.
        let paddingEnd = min(alignUp(metadataLength), raw.count)
        guard UnsafeRawBufferPointer(rebasing: raw[metadataLength..<paddingEnd]).allSatisfy({ $0 == 0 }) else {
            throw StoreError.corrupt("\(path): padding after the metadata not zero")
        }

        if let region, entriesMatchFile {
            let damage = SnapshotDamage(path: path)
            let keydir = SpaceKeyDirs(servedFrom: damage)
            for record in records {
                let slots = region.base.advanced(by: record.offset).bindMemory(to: KeyDir.Entry.self, capacity: record.capacity)
                let blocks = SnapshotBlocks(region: region, checksums: checksums + record.firstBlock * 4,
                                            blockCount: blockCount(capacity: record.capacity), damage: damage)
                keydir.add(KeyDir(mappedSlots: slots, capacity: record.capacity, count: record.count, blocks: blocks), for: record.space)
            }
            return (snapshot, keydir)
        }
        // Copied: every block checked now, the padding between tables too.
        let keydir = SpaceKeyDirs()
        var paddingFrom = paddingEnd
        for record in records {
            guard UnsafeRawBufferPointer(rebasing: raw[paddingFrom..<record.offset]).allSatisfy({ $0 == 0 }) else {
                throw StoreError.corrupt("\(path): padding before the slots of key space \(record.space) not zero")
            }
            let slots = base + record.offset
            for block in 0..<blockCount(capacity: record.capacity) {
                let first = block * KeyDir.blockSlots
                let count = min(KeyDir.blockSlots, record.capacity - first)
                guard cs_crc32c_extend(0, slots + first * KeyDir.entrySize, count * KeyDir.entrySize)
                        == LittleEndian.load32(checksums, (record.firstBlock + block) * 4) else {
                    throw StoreError.corrupt("\(path): checksum mismatch of block \(block) of key space \(record.space) at offset \(record.offset + first * KeyDir.entrySize)")
                }
            }
            let table = KeyDir(capacity: record.capacity)
            var found = 0
            for slot in 0..<record.capacity {
                let at = slot * KeyDir.entrySize
                let tag = LittleEndian.load32(slots, at)
                guard tag != 0 else { continue }
                table.restore(slot: slot, tag: tag, location: RecordLocation(segment: LittleEndian.load32(slots, at + 4),
                                                                            offset: LittleEndian.load32(slots, at + 8)))
                found += 1
            }
            guard found == record.count else {
                throw StoreError.corrupt("\(path): key space \(record.space) holds \(found) entries, its record says \(record.count)")
            }
            keydir.add(table, for: record.space)
            paddingFrom = record.offset + record.capacity * KeyDir.entrySize
        }
        return (snapshot, keydir)
    }
}
