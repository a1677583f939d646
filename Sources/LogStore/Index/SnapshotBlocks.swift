import CChecksum

/// The checksum state of a keydir table served in place from a mapped index snapshot
/// (FORMAT.md, "Index snapshot", version 3).
///
/// The snapshot stores a CRC-32C per block of `KeyDir.blockSlots` slots. Opening checks only
/// the snapshot's metadata; a block's slots are checked the first time the table touches them
/// (a probe, an insert, a walk), so an open costs a few page faults whatever the store's size,
/// and no lookup ever acts on an unchecked slot. A mismatch marks the whole snapshot damaged
/// (`SnapshotDamage`); the engine then refuses answers from the keydir and rebuilds it from the
/// segments at the next open.
///
/// Thread-safe for checking: readers under the engine's read lock may check blocks at the same
/// time (the marks are atomic bytes; checking a block twice is harmless).
final class SnapshotBlocks: @unchecked Sendable {
    /// The mapping the table's slots live in; kept alive as long as the table uses it.
    let region: MappedRegion
    /// The table's block checksums, little-endian UInt32s inside the (checked) metadata.
    private let checksums: UnsafeRawPointer
    let blockCount: Int
    /// One byte per block: nonzero once the block's checksum matched.
    let verified: UnsafeMutablePointer<UInt8>
    let damage: SnapshotDamage

    init(region: MappedRegion, checksums: UnsafeRawPointer, blockCount: Int, damage: SnapshotDamage) {
        self.region = region
        self.checksums = checksums
        self.blockCount = blockCount
        self.damage = damage
        verified = .allocate(capacity: max(1, blockCount))
        verified.initialize(repeating: 0, count: max(1, blockCount))
    }

    deinit { verified.deallocate() }

    /// Checks block `block` of `slots` (a table of `capacity` slots) against its checksum,
    /// marking it verified, or the snapshot damaged.
    func verify(block: Int, slots: UnsafeRawPointer, capacity: Int) {
        guard block < blockCount, cs_flag_load(verified + block) == 0 else { return }
        let first = block * KeyDir.blockSlots
        let count = min(KeyDir.blockSlots, capacity - first)
        let crc = cs_crc32c_extend(0, slots + first * KeyDir.entrySize, count * KeyDir.entrySize)
        if crc == LittleEndian.load32(checksums, block * 4) {
            cs_flag_store(verified + block, 1)
        } else {
            damage.mark()
        }
    }

    /// Checks every block not checked yet.
    func verifyAll(slots: UnsafeRawPointer, capacity: Int) {
        for block in 0..<blockCount { verify(block: block, slots: slots, capacity: capacity) }
    }
}

/// Whether any block of a mapped index snapshot failed its checksum. Shared by the tables of
/// one snapshot; set by whichever thread finds the mismatch, read by the engine after lookups.
final class SnapshotDamage: @unchecked Sendable {
    /// The snapshot's path, for the error the engine throws.
    let path: String
    /// One byte: nonzero once damage was found. Raw so the hot path reads it with no retain.
    let flag: UnsafeMutablePointer<UInt8>

    init(path: String) {
        self.path = path
        flag = .allocate(capacity: 1)
        flag.initialize(to: 0)
    }

    deinit { flag.deallocate() }

    var isDamaged: Bool { cs_flag_load(flag) != 0 }

    func mark() { cs_flag_store(flag, 1) }
}
