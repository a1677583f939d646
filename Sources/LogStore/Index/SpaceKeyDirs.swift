import CChecksum

/// The keydir split by key space: one `KeyDir` table per space that holds live keys.
///
/// Listing or dropping a space walks that space's table only, so it costs O(keys of the
/// space), not O(keys in the store). A lookup first finds its space's table: a scan of a short
/// array while the store has few spaces, a dictionary once it has many.
///
/// Not thread-safe: the engine guards it with its read-write lock.
final class SpaceKeyDirs {
    // Unchecked: the engine's locks make access exclusive; the checks cost on every lookup.
    /// Spaces and their tables, in the order they first got a key.
    @exclusivity(unchecked) private(set) var spaces: [UInt32] = []
    @exclusivity(unchecked) private(set) var tables: [KeyDir] = []
    /// Index into `tables` by space, kept once there are more than `scanLimit` spaces.
    @exclusivity(unchecked) private var indexBySpace: [UInt32: Int] = [:]
    private static let scanLimit = 8
    /// Set when the tables are served in place from a mapped index snapshot: whether one of its
    /// blocks failed its checksum.
    private(set) var snapshotDamage: SnapshotDamage?
    /// `snapshotDamage.flag`, raw so the read path tests it without reference counting.
    @exclusivity(unchecked) private var damageFlag: UnsafeMutablePointer<UInt8>?

    init() {}

    /// Tables served from a mapped snapshot whose damage `damage` records.
    init(servedFrom damage: SnapshotDamage) {
        snapshotDamage = damage
        damageFlag = damage.flag
    }

    /// Whether a block of the mapped snapshot the tables are served from failed its checksum:
    /// then lookups may have missed keys, and the engine must not answer from the keydir.
    @inline(__always)
    var isDamaged: Bool {
        guard let flag = damageFlag else { return false }
        return cs_flag_load(flag) != 0
    }

    /// Checks every block of every snapshot-backed table not checked yet; returns whether the
    /// keydir is intact. O(keys) the first time.
    func verifyAll() -> Bool {
        for table in tables { table.verifyAll() }
        return !isDamaged
    }

    /// The table of `space`, or nil when the space never held a key since open or compaction.
    @inline(__always)
    func table(for space: UInt32) -> KeyDir? {
        unretainedTable(for: space)?.takeUnretainedValue()
    }

    /// `table(for:)` without a retain, for the keyed read and write paths: the caller holds the
    /// engine's lock, which keeps `tables` (and so the table) alive and unchanged while it uses
    /// it (a strong reference cost two retains and releases per lookup).
    @inline(__always)
    func unretainedTable(for space: UInt32) -> Unmanaged<KeyDir>? {
        if spaces.count <= Self.scanLimit {
            for index in spaces.indices where spaces[index] == space { return Unmanaged.passUnretained(tables[index]) }
            return nil
        }
        return indexBySpace[space].map { Unmanaged.passUnretained(tables[$0]) }
    }

    /// The table of `space`, made empty when there is none yet.
    func tableCreating(for space: UInt32, capacity: Int = KeyDir.minimumCapacity) -> KeyDir {
        if let table = table(for: space) { return table }
        let table = KeyDir(capacity: capacity)
        add(table, for: space)
        return table
    }

    /// Adds the table of a space that has none yet (used when loading a snapshot).
    func add(_ table: KeyDir, for space: UInt32) {
        spaces.append(space)
        tables.append(table)
        if spaces.count > Self.scanLimit {
            if indexBySpace.isEmpty {
                for (index, known) in spaces.enumerated() { indexBySpace[known] = index }
            } else {
                indexBySpace[space] = tables.count - 1
            }
        }
    }

    /// Live keys in every space.
    var count: Int { tables.reduce(0) { $0 + $1.count } }

    /// Bytes of memory the tables occupy.
    var memoryBytes: Int { tables.reduce(0) { $0 + $1.memoryBytes } }

    /// Calls `body` with every entry of every space, space by space, each in slot order.
    /// `KeyDir.releaseMappedPages` of every table. Caller holds `writeMutex`.
    func releaseMappedPages() {
        for table in tables { table.releaseMappedPages() }
    }

    func forEach(_ body: (UInt32, KeyDir.Entry) throws -> Void) rethrows {
        for index in tables.indices {
            let space = spaces[index]
            try tables[index].forEach { try body(space, $0) }
        }
    }

    /// Removes every entry, in every space, for which `shouldRemove` is true.
    func removeAll(where shouldRemove: (KeyDir.Entry) -> Bool) {
        for table in tables { table.removeAll(where: shouldRemove) }
    }
}
