import CChecksum

/// The blocks of a mapped index checkpoint (FORMAT.md "DAO index checkpoint", version 3) and
/// whether each has been checked: a block (384 rowids of a table, or 192 entries of an index)
/// is checked against its CRC-32C, and its structure (rowid order, entry offsets) is checked,
/// the first time a statement touches it (`SortedChunks`, `KeyChunks`). A block that fails is
/// remembered in `damage`; its chunk then reads as harmless placeholders (memory-safe, never
/// outside the mapping) and the database, which looks at `damage` after every statement, throws
/// that statement's work away, rebuilds the tables from the rows and runs it again
/// (`SQLDatabase.run`): what a statement returns never comes from a damaged block.
///
/// A version 2 file is checked whole when it is mapped: its blocks start out checked.
///
/// Not thread-safe by itself: the states are only read and written under the database's
/// statement lock, as everything the tables hold.
final class CheckpointBlocks: @unchecked Sendable {
    /// The mapped file, kept alive by every chunk that reads from it (through this object).
    let file: MappedFile
    /// Per block: 0 not checked yet, 1 checked and sound, 2 damaged.
    let states: UnsafeMutablePointer<UInt8>
    let count: Int
    /// Where the expected CRC-32C of block 0 is in the file (4 bytes each, little-endian);
    /// nil when the file was checked whole.
    private let checksums: UnsafeRawPointer?
    /// What the first damaged block was, once one was found.
    private(set) var damage: String?

    static let unchecked: UInt8 = 0
    static let sound: UInt8 = 1
    static let damaged: UInt8 = 2

    init(file: MappedFile, count: Int, checksums: UnsafeRawPointer?) {
        self.file = file
        self.count = count
        self.checksums = checksums
        states = .allocate(capacity: max(count, 1))
        states.initialize(repeating: checksums == nil ? Self.sound : Self.unchecked, count: max(count, 1))
    }

    deinit { states.deallocate() }

    /// The CRC-32C the file gives for block `block`.
    @inline(__always)
    func expectedChecksum(_ block: Int) -> UInt32? {
        checksums.map { MappedInts.u32($0, block) }
    }

    /// Records the outcome of checking `block`; `what` names it when it failed.
    func record(_ block: Int, sound: Bool, what: @autoclosure () -> String) {
        states[block] = sound ? Self.sound : Self.damaged
        if !sound, damage == nil { damage = what() }
    }

    /// Whether a damaged block was found.
    var isDamaged: Bool { damage != nil }
}

/// What a chunk of a damaged index block reads as: one entry per slot, NULL with rowid 0
/// (`IndexKeyCodec`: tag 0x05, then the row key of rowid 0). Never returned to a caller: the
/// statement that touched the block is run again on tables rebuilt from the rows.
enum DamagedBlock {
    static let entry: [UInt8] = [0x05, 0x80, 0, 0, 0, 0, 0, 0, 0]

    /// CRC-32C of `count` bytes at `pointer`, continuing `crc`.
    @inline(__always)
    static func crc(_ crc: UInt32, _ pointer: UnsafeRawPointer, _ count: Int) -> UInt32 {
        cs_crc32c_extend(crc, pointer, count)
    }
}
