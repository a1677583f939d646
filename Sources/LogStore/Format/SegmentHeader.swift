import CChecksum

/// The 32-byte header at the start of every segment file (FORMAT.md, "Segment files").
struct SegmentHeader: Sendable, Equatable {
    static let size = 32
    static let magic: [UInt8] = Array("USEG".utf8)
    /// The version the engine writes. Version 2 (issue 21) has version 1's layout and says the
    /// store follows the point-in-time recovery rule and may hold sync marks (FORMAT.md,
    /// "Sync marks"); version 1 segments are still read.
    static let formatVersion: UInt16 = 2
    static let readableVersions: ClosedRange<UInt16> = 1...2

    /// Segment flag bit 0: the segment was written by compaction (its records are not in
    /// sequence order and never form batches).
    static let compactionOutputFlag: UInt32 = 1

    var segmentID: UInt32
    var flags: UInt32
    var createdMillis: UInt64
    var version: UInt16 = SegmentHeader.formatVersion

    var isCompactionOutput: Bool { flags & Self.compactionOutputFlag != 0 }

    func encoded() -> [UInt8] {
        var bytes = Self.magic
        LittleEndian.append16(version, to: &bytes)
        LittleEndian.append16(UInt16(Self.size), to: &bytes)
        LittleEndian.append32(segmentID, to: &bytes)
        LittleEndian.append32(flags, to: &bytes)
        LittleEndian.append64(createdMillis, to: &bytes)
        LittleEndian.append32(0, to: &bytes)
        let crc = bytes.withUnsafeBytes { cs_crc32c_extend(0, $0.baseAddress, $0.count) }
        LittleEndian.append32(crc, to: &bytes)
        return bytes
    }

    /// Parses a header; the error names what is wrong with it.
    static func decode(_ base: UnsafeRawPointer, length: Int, path: String) throws -> SegmentHeader {
        guard length >= size else { throw StoreError.corrupt("\(path): \(length) bytes, shorter than a segment header") }
        let magicOK = (0..<4).allSatisfy { base.load(fromByteOffset: $0, as: UInt8.self) == magic[$0] }
        guard magicOK else { throw StoreError.corrupt("\(path): bad magic at offset 0") }
        guard LittleEndian.load32(base, 28) == cs_crc32c_extend(0, base, 28) else {
            throw StoreError.corrupt("\(path): segment header checksum mismatch at offset 28")
        }
        let version = LittleEndian.load16(base, 4)
        guard readableVersions.contains(version) else { throw StoreError.corrupt("\(path): unsupported format version \(version)") }
        guard LittleEndian.load16(base, 6) == UInt16(size) else { throw StoreError.corrupt("\(path): unexpected header size") }
        return SegmentHeader(segmentID: LittleEndian.load32(base, 8), flags: LittleEndian.load32(base, 12),
                             createdMillis: LittleEndian.load64(base, 16), version: version)
    }
}

/// Names of the files in a store directory (FORMAT.md, "Directory layout").
enum StoreFileName {
    static let lock = "LOCK"
    static let snapshot = "index.snapshot"
    static let compactionCommit = "COMPACTION"
    static let temporarySuffix = ".tmp"
    /// Compaction's relocation log, unlinked as soon as it is created (`CompactionRelocations`).
    static let relocationSpill = "COMPACTION.relocations" + temporarySuffix

    static func segment(_ id: UInt32) -> String {
        let hex = String(id, radix: 16)
        return String(repeating: "0", count: max(0, 8 - hex.count)) + hex + ".seg"
    }

    /// The id of a segment file name (`0000002a.seg` is 42), or nil for any other name:
    /// exactly 8 lowercase hexadecimal digits, not all zero, then `.seg`.
    static func segmentID(of name: String) -> UInt32? {
        let utf8 = Array(name.utf8)
        guard utf8.count == 12, name.hasSuffix(".seg"),
              utf8[..<8].allSatisfy({ (0x30...0x39).contains($0) || (0x61...0x66).contains($0) }),
              let id = UInt32(name.prefix(8), radix: 16), id != 0 else { return nil }
        return id
    }
}
