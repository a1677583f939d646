import CChecksum

/// The index snapshot (`index.snapshot`, FORMAT.md "Index snapshot"): the keydir and the
/// per-segment accounting as of a moment, so a store opens without reading its segments.
///
/// It is written at clean close and after compaction, only once every segment it covers is on
/// stable storage, and deleted when compaction removes a segment it names. On open it is used
/// only when every segment it lists is present with the recorded length; records appended after
/// it (from `activeLength` on in the active segment, and whole newer segments) are replayed.
struct IndexSnapshot {
    static let magic: [UInt8] = Array("USNP".utf8)
    static let version: UInt16 = 1
    static let headerSize = 48
    static let segmentRecordSize = 24
    static let noActiveSegment = UInt32.max

    struct SegmentInfo: Equatable {
        var id: UInt32
        var length: UInt32
        var liveBytes: UInt64
        var recordCount: UInt32
    }

    var maxSequence: UInt64
    var nextSegmentID: UInt32
    var activeSegmentID: UInt32
    var activeLength: UInt32
    var tableCapacity: UInt32
    var segments: [SegmentInfo]

    /// Serializes the snapshot with the entries of `keydir`, in slot order.
    func encode(keydir: KeyDir) -> [UInt8] {
        var bytes = Self.magic
        bytes.reserveCapacity(Self.headerSize + segments.count * Self.segmentRecordSize + keydir.count * 8 + 4)
        LittleEndian.append16(Self.version, to: &bytes)
        LittleEndian.append16(0, to: &bytes)
        LittleEndian.append64(maxSequence, to: &bytes)
        LittleEndian.append32(nextSegmentID, to: &bytes)
        LittleEndian.append32(activeSegmentID, to: &bytes)
        LittleEndian.append32(activeLength, to: &bytes)
        LittleEndian.append32(UInt32(segments.count), to: &bytes)
        LittleEndian.append64(UInt64(keydir.count), to: &bytes)
        LittleEndian.append32(tableCapacity, to: &bytes)
        LittleEndian.append32(0, to: &bytes)
        for segment in segments {
            LittleEndian.append32(segment.id, to: &bytes)
            LittleEndian.append32(segment.length, to: &bytes)
            LittleEndian.append64(segment.liveBytes, to: &bytes)
            LittleEndian.append32(segment.recordCount, to: &bytes)
            LittleEndian.append32(0, to: &bytes)
        }
        // Entries in slot order, each with its slot (as the gap from the previous one, so
        // usually one byte): an opener puts every entry straight back into the same slot.
        var previous = -1
        keydir.forEachSlot { slot, entry in
            Varint.append(UInt64(slot - previous - 1), to: &bytes)
            previous = slot
            LittleEndian.append32(entry.tag, to: &bytes)
            Varint.append(UInt64(entry.segment), to: &bytes)
            LittleEndian.append32(entry.offset, to: &bytes)
        }
        let crc = bytes.withUnsafeBytes { cs_crc32c_extend(0, $0.baseAddress, $0.count) }
        LittleEndian.append32(crc, to: &bytes)
        return bytes
    }

    /// Parses a snapshot and rebuilds the keydir it holds.
    /// Throws `corrupt` naming the offset when any byte is not as FORMAT.md says.
    /// - Complexity: O(entries); entries go straight into their recorded slots when the recorded
    ///   capacity is plausible for their number, else they are inserted into a table sized anew.
    static func decode(_ raw: UnsafeRawBufferPointer, path: String) throws -> (IndexSnapshot, KeyDir) {
        guard let base = raw.baseAddress, raw.count >= headerSize + 4 else {
            throw StoreError.corrupt("\(path): \(raw.count) bytes, too short for a snapshot")
        }
        guard raw.prefix(4).elementsEqual(magic) else { throw StoreError.corrupt("\(path): bad magic at offset 0") }
        let end = raw.count - 4
        guard LittleEndian.load32(base, end) == cs_crc32c_extend(0, base, end) else {
            throw StoreError.corrupt("\(path): checksum mismatch at offset \(end)")
        }
        guard LittleEndian.load16(base, 4) == version else { throw StoreError.corrupt("\(path): unsupported version") }
        var snapshot = IndexSnapshot(maxSequence: LittleEndian.load64(base, 8), nextSegmentID: LittleEndian.load32(base, 16),
                                     activeSegmentID: LittleEndian.load32(base, 20), activeLength: LittleEndian.load32(base, 24),
                                     tableCapacity: LittleEndian.load32(base, 40), segments: [])
        let segmentCount = Int(LittleEndian.load32(base, 28))
        let entryCount = LittleEndian.load64(base, 32)
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
        // Each entry takes at least 10 bytes: a count beyond that is corrupt, not a reason to allocate.
        guard entryCount <= UInt64((end - at) / 10) else {
            throw StoreError.corrupt("\(path): entry count \(entryCount) exceeds the file")
        }
        let count = Int(entryCount)
        let capacity = Int(snapshot.tableCapacity)
        // Direct placement needs the very table the entries came from; a capacity out of
        // proportion to the count (or a corrupt one) is not worth trusting with an allocation.
        let direct = capacity >= KeyDir.minimumCapacity && count * 4 <= capacity * 3 && capacity <= count * 4 + 1024
        let keydir = direct ? KeyDir(capacity: capacity) : KeyDir()
        if !direct { keydir.reserve(count) }
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
                guard slot < capacity else { throw StoreError.corrupt("\(path): entry \(index) slot \(slot) beyond the table") }
                keydir.restore(slot: slot, tag: tag, location: location)
            } else {
                keydir.insert(tag: tag, location: location)
            }
            at = segment.next + 4
        }
        guard at == end else { throw StoreError.corrupt("\(path): \(end - at) unexpected bytes at offset \(at)") }
        return (snapshot, keydir)
    }
}
