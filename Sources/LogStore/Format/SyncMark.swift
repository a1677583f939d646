import CChecksum
import Foundation

/// A place in the write-path log: a segment id and a byte offset in it. Positions order the
/// way the log was written: by segment id, then offset (compaction outputs are not in the
/// write path and have no position).
struct LogPosition: Sendable, Comparable, CustomStringConvertible {
    var segment: UInt32
    var offset: Int

    /// Before every record of every segment.
    static let start = LogPosition(segment: 0, offset: 0)

    static func < (a: LogPosition, b: LogPosition) -> Bool {
        a.segment != b.segment ? a.segment < b.segment : a.offset < b.offset
    }

    var description: String { "segment \(segment) offset \(offset)" }
}

/// A sync mark (FORMAT.md, "The sync mark file"): written after a sync completed, it says that
/// every write-path segment before `position.segment`, and that segment up to
/// `position.offset`, were on stable storage, and that the first record written at or after
/// `position` has sequence number `nextSequence`. Recovery trusts the log before the newest
/// mark it finds (a corrupt record there is skipped and reported) and ends it at the first
/// hole, corrupt byte or sequence gap after it, so what a power cut leaves is a prefix.
struct SyncMark: Sendable, Equatable {
    var position: LogPosition
    var nextSequence: UInt64
}

/// The `SYNCMARK` file: two 32-byte slots, at offsets 0 and 512 (different disk sectors), each
/// holding a sync mark. A writer overwrites the slot that does not hold the newest mark, so a
/// write torn by a power cut leaves the other one; a reader takes the valid slot with the
/// latest position.
///
/// Slot: magic "USYN", version u16 (1), reserved u16 (0), segment id u32, offset u32, next
/// sequence number u64, reserved u32 (0), CRC-32C of the slot's first 28 bytes; little-endian.
enum SyncMarkFile {
    static let name = "SYNCMARK"
    static let magic: [UInt8] = Array("USYN".utf8)
    static let version: UInt16 = 1
    static let slotSize = 32
    static let slotOffsets = [0, 512]

    static func encode(_ mark: SyncMark) -> [UInt8] {
        var bytes = magic
        LittleEndian.append16(version, to: &bytes)
        LittleEndian.append16(0, to: &bytes)
        LittleEndian.append32(mark.position.segment, to: &bytes)
        LittleEndian.append32(UInt32(truncatingIfNeeded: mark.position.offset), to: &bytes)
        LittleEndian.append64(mark.nextSequence, to: &bytes)
        LittleEndian.append32(0, to: &bytes)
        let crc = bytes.withUnsafeBytes { cs_crc32c_extend(0, $0.baseAddress, $0.count) }
        LittleEndian.append32(crc, to: &bytes)
        return bytes
    }

    /// The mark in one slot, or nil when the slot is not a valid version-1 slot.
    static func decodeSlot(_ bytes: [UInt8], at offset: Int) -> SyncMark? {
        guard offset + slotSize <= bytes.count else { return nil }
        return bytes.withUnsafeBytes { raw -> SyncMark? in
            guard let base = raw.baseAddress?.advanced(by: offset) else { return nil }
            guard (0..<4).allSatisfy({ base.load(fromByteOffset: $0, as: UInt8.self) == magic[$0] }),
                  LittleEndian.load16(base, 4) == version,
                  LittleEndian.load32(base, 28) == cs_crc32c_extend(0, base, 28) else { return nil }
            return SyncMark(position: LogPosition(segment: LittleEndian.load32(base, 8), offset: Int(LittleEndian.load32(base, 12))),
                            nextSequence: LittleEndian.load64(base, 16))
        }
    }

    /// The newest valid mark of a file's bytes and the index of its slot, or nil.
    static func newest(in bytes: [UInt8]) -> (mark: SyncMark, slot: Int)? {
        var best: (mark: SyncMark, slot: Int)?
        for (slot, offset) in slotOffsets.enumerated() {
            guard let mark = decodeSlot(bytes, at: offset) else { continue }
            if best.map({ mark.position > $0.mark.position }) ?? true { best = (mark, slot) }
        }
        return best
    }
}
