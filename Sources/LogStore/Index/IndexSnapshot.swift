import CChecksum

/// The index snapshot (`index.snapshot`, FORMAT.md "Index snapshot"): the keydir and the
/// per-segment accounting as of a moment, so a store opens without reading its segments.
///
/// It is written at clean close and after compaction, only once every segment it covers is on
/// stable storage, and deleted when compaction removes a segment it names. On open it is used
/// only when every segment it lists is present with the recorded length; records appended after
/// it (from `activeLength` on in the active segment, and whole newer segments) are replayed.
///
/// Version 3 (written since issue 16) stores each key space's table as its raw slot array,
/// page-aligned, with a checksum per block of slots, so an opener maps the file and serves the
/// tables in place (`KeyDir(mappedSlots:)`): an open costs a few page faults, not a load.
/// Version 2 (one varint-packed table per key space) is still read, the old way (every entry
/// decoded into memory); the next snapshot is version 3. A version 1 snapshot (one table for
/// every space, written before 2026-11-25) is recognised and not used: the opener reads the
/// segments instead.
struct IndexSnapshot: Equatable {
    static let magic: [UInt8] = Array("USNP".utf8)
    static let version: UInt16 = 3
    /// The varint-packed version with one table per key space: decoded into memory.
    static let packedVersion: UInt16 = 2
    /// The version whose single table has no key spaces; readable layout, not used.
    static let unspacedVersion: UInt16 = 1
    /// Header size of versions 1 and 2.
    static let headerSize = 48
    static let segmentRecordSize = 24
    static let tableHeaderSize = 12
    /// The fewest bytes an entry takes: a one-byte gap, the tag, a one-byte segment id, the offset.
    static let minimumEntrySize = 10
    static let noActiveSegment = UInt32.max

    struct SegmentInfo: Equatable {
        var id: UInt32
        var length: UInt32
        var liveBytes: UInt64
        var recordCount: UInt32
    }

    /// Why a snapshot that is intact cannot be used.
    struct Unusable: Error, CustomStringConvertible {
        var description: String
    }

    var maxSequence: UInt64
    var nextSegmentID: UInt32
    var activeSegmentID: UInt32
    var activeLength: UInt32
    var segments: [SegmentInfo]

    /// Serializes the snapshot in the version 2 layout (varint-packed tables); kept so tests
    /// and tools can make the stores older builds wrote. The engine writes version 3.
    func encodeVersion2(keydir: SpaceKeyDirs) -> [UInt8] {
        var bytes = Self.magic
        let tables = keydir.tables.indices.filter { keydir.tables[$0].count > 0 }
        bytes.reserveCapacity(Self.headerSize + segments.count * Self.segmentRecordSize
                              + tables.count * Self.tableHeaderSize + keydir.count * 8 + 4)
        LittleEndian.append16(Self.packedVersion, to: &bytes)
        LittleEndian.append16(0, to: &bytes)
        LittleEndian.append64(maxSequence, to: &bytes)
        LittleEndian.append32(nextSegmentID, to: &bytes)
        LittleEndian.append32(activeSegmentID, to: &bytes)
        LittleEndian.append32(activeLength, to: &bytes)
        LittleEndian.append32(UInt32(segments.count), to: &bytes)
        LittleEndian.append64(UInt64(keydir.count), to: &bytes)
        LittleEndian.append32(UInt32(tables.count), to: &bytes)
        LittleEndian.append32(0, to: &bytes)
        for segment in segments {
            LittleEndian.append32(segment.id, to: &bytes)
            LittleEndian.append32(segment.length, to: &bytes)
            LittleEndian.append64(segment.liveBytes, to: &bytes)
            LittleEndian.append32(segment.recordCount, to: &bytes)
            LittleEndian.append32(0, to: &bytes)
        }
        for index in tables {
            let table = keydir.tables[index]
            LittleEndian.append32(keydir.spaces[index], to: &bytes)
            LittleEndian.append32(UInt32(table.capacity), to: &bytes)
            LittleEndian.append32(UInt32(table.count), to: &bytes)
            // Entries in slot order, each with its slot (as the gap from the previous one, so
            // usually one byte): an opener puts every entry straight back into the same slot.
            var previous = -1
            table.forEachSlot { slot, entry in
                Varint.append(UInt64(slot - previous - 1), to: &bytes)
                previous = slot
                LittleEndian.append32(entry.tag, to: &bytes)
                Varint.append(UInt64(entry.segment), to: &bytes)
                LittleEndian.append32(entry.offset, to: &bytes)
            }
        }
        let crc = bytes.withUnsafeBytes { cs_crc32c_extend(0, $0.baseAddress, $0.count) }
        LittleEndian.append32(crc, to: &bytes)
        return bytes
    }

    /// Parses a snapshot and gives the keydir it holds.
    ///
    /// A version 3 snapshot whose bytes are `region` (the file mapped copy-on-write) is served
    /// in place: only its metadata is read and checked here, each block of slots when first
    /// touched. Otherwise (bytes in memory, or version 2) every entry is checked and copied.
    /// - Throws: `corrupt` naming the offset when any byte read is not as FORMAT.md says;
    ///   `Unusable` for an intact version 1 snapshot (it has no key spaces).
    /// - Complexity: served in place, O(segments + tables + blocks) and a few page faults;
    ///   otherwise O(entries).
    static func decode(_ raw: UnsafeRawBufferPointer, path: String, region: MappedRegion? = nil) throws -> (IndexSnapshot, SpaceKeyDirs) {
        guard raw.baseAddress != nil, raw.count >= 6 else {
            throw StoreError.corrupt("\(path): \(raw.count) bytes, too short for a snapshot")
        }
        guard raw.prefix(4).elementsEqual(magic) else { throw StoreError.corrupt("\(path): bad magic at offset 0") }
        if raw.load(fromByteOffset: 4, as: UInt8.self) == UInt8(version) && raw.load(fromByteOffset: 5, as: UInt8.self) == 0 {
            let inPlace = region.map { $0.base == UnsafeMutableRawPointer(mutating: raw.baseAddress!) && $0.length == raw.count } ?? false
            return try decodeVersion3(raw, path: path, region: inPlace ? region : nil)
        }
        return try decodePacked(raw, path: path)
    }

    /// Decodes versions 1 and 2 (the whole file under one checksum, varint-packed entries).
    private static func decodePacked(_ raw: UnsafeRawBufferPointer, path: String) throws -> (IndexSnapshot, SpaceKeyDirs) {
        guard let base = raw.baseAddress, raw.count >= headerSize + 4 else {
            throw StoreError.corrupt("\(path): \(raw.count) bytes, too short for a snapshot")
        }
        let end = raw.count - 4
        guard LittleEndian.load32(base, end) == cs_crc32c_extend(0, base, end) else {
            throw StoreError.corrupt("\(path): checksum mismatch at offset \(end)")
        }
        let fileVersion = LittleEndian.load16(base, 4)
        guard fileVersion != unspacedVersion else {
            throw Unusable(description: "\(path): version 1 (one table for all key spaces); the segments are read instead and the next snapshot is version 2")
        }
        guard fileVersion == packedVersion else { throw StoreError.corrupt("\(path): unsupported version \(fileVersion)") }
        var snapshot = IndexSnapshot(maxSequence: LittleEndian.load64(base, 8), nextSegmentID: LittleEndian.load32(base, 16),
                                     activeSegmentID: LittleEndian.load32(base, 20), activeLength: LittleEndian.load32(base, 24),
                                     segments: [])
        let segmentCount = Int(LittleEndian.load32(base, 28))
        let entryCount = LittleEndian.load64(base, 32)
        let tableCount = Int(LittleEndian.load32(base, 40))
        var at = headerSize
        guard segmentCount <= (end - at) / segmentRecordSize else {
            throw StoreError.corrupt("\(path): segment count \(segmentCount) exceeds the file")
        }
        for _ in 0..<segmentCount {
            snapshot.segments.append(SegmentInfo(id: LittleEndian.load32(base, at), length: LittleEndian.load32(base, at + 4),
                                                 liveBytes: LittleEndian.load64(base, at + 8),
                                                 recordCount: LittleEndian.load32(base, at + 16)))
            at += segmentRecordSize
        }
        // A count beyond what the bytes can hold is corrupt, not a reason to allocate.
        guard tableCount <= (end - at) / tableHeaderSize,
              entryCount <= UInt64((end - at - tableCount * tableHeaderSize) / minimumEntrySize) else {
            throw StoreError.corrupt("\(path): table count \(tableCount) or entry count \(entryCount) exceeds the file")
        }
        let keydir = SpaceKeyDirs()
        var total = 0
        for _ in 0..<tableCount {
            guard at + tableHeaderSize <= end else { throw StoreError.corrupt("\(path): table header truncated at offset \(at)") }
            let space = LittleEndian.load32(base, at)
            let capacity = Int(LittleEndian.load32(base, at + 4))
            let count = Int(LittleEndian.load32(base, at + 8))
            guard keydir.table(for: space) == nil else { throw StoreError.corrupt("\(path): key space \(space) listed twice at offset \(at)") }
            guard count > 0, count <= (end - at - tableHeaderSize) / minimumEntrySize else {
                throw StoreError.corrupt("\(path): entry count \(count) of key space \(space) impossible at offset \(at)")
            }
            at += tableHeaderSize
            let table = try decodeTable(base, at: &at, end: end, capacity: capacity, count: count, path: path)
            keydir.add(table, for: space)
            total += count
        }
        guard UInt64(total) == entryCount else {
            throw StoreError.corrupt("\(path): tables hold \(total) entries, the header says \(entryCount)")
        }
        guard at == end else { throw StoreError.corrupt("\(path): \(end - at) unexpected bytes at offset \(at)") }
        return (snapshot, keydir)
    }

    /// Reads one table's `count` entries from `at`, leaving `at` after them.
    private static func decodeTable(_ base: UnsafeRawPointer, at: inout Int, end: Int, capacity: Int, count: Int,
                                    path: String) throws -> KeyDir {
        // Direct placement needs the very table the entries came from; a capacity out of
        // proportion to the count (or a corrupt one) is not worth trusting with an allocation.
        let direct = capacity >= KeyDir.minimumCapacity && count * 4 <= capacity * 3 && capacity <= count * 4 + 1024
        let table = direct ? KeyDir(capacity: capacity) : KeyDir()
        if !direct { table.reserve(count) }
        var slot = -1
        for index in 0..<count {
            guard let gap = Varint.read(base, at: at, limit: end), gap.next + 4 <= end,
                  let segment = Varint.read(base, at: gap.next + 4, limit: end), segment.next + 4 <= end,
                  segment.value <= UInt64(UInt32.max), gap.value < UInt64(Int32.max) else {
                throw StoreError.corrupt("\(path): entry \(index) truncated or out of range at offset \(at)")
            }
            slot += Int(gap.value) + 1
            let tag = LittleEndian.load32(base, gap.next)
            let location = RecordLocation(segment: UInt32(segment.value), offset: LittleEndian.load32(base, segment.next))
            guard tag != 0 else { throw StoreError.corrupt("\(path): entry \(index) has tag 0 at offset \(at)") }
            if direct {
                guard slot < capacity else {
                    throw StoreError.corrupt("\(path): entry \(index) slot \(slot) beyond the table at offset \(at)")
                }
                table.restore(slot: slot, tag: tag, location: location)
            } else {
                table.insert(tag: tag, location: location)
            }
            at = segment.next + 4
        }
        return table
    }
}
