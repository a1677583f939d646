import CChecksum
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Where a record lies: segment id and byte offset of the record's first byte.
struct RecordLocation: Sendable, Hashable {
    var segment: UInt32
    var offset: UInt32
}

/// The in-memory hash index: a flat open-addressing table of 12-byte entries, one per live key.
///
/// An entry holds 32 bits of the key's hash (its *tag*, never 0; 0 marks an empty slot) and the
/// location of the key's newest record. Keys themselves are not stored: a lookup compares the key
/// of each candidate record, read from the mapped segment, through the `matches` closure. The
/// home slot of a tag is `tag * capacity >> 32`, so growing the table needs no key at all.
/// Collisions are resolved by linear probing; removal shifts later entries back (no tombstones).
///
/// A table loaded from an index snapshot of version 3 is served in place: its slots are the
/// snapshot's own bytes, mapped copy-on-write, so opening costs no load of the table and a
/// change since the snapshot (a write, a delete, a compaction move) lands in a private copy of
/// the page it touches (the overlay), until the next snapshot writes the table anew. Every
/// block of `blockSlots` slots is checked against its checksum the first time it is touched
/// (`SnapshotBlocks`).
///
/// Not thread-safe: the engine guards it with its read-write lock.
final class KeyDir {
    struct Entry {
        var tag: UInt32
        var segment: UInt32
        var offset: UInt32

        var location: RecordLocation { RecordLocation(segment: segment, offset: offset) }
    }

    static let entrySize = MemoryLayout<Entry>.stride
    static let minimumCapacity = 64
    /// Slots per checksummed block of a snapshot-backed table (12 KiB of slots).
    static let blockSlots = 1 << blockShift
    static let blockShift = 10

    // Unchecked: the engine's locks make access exclusive; the checks cost on every probe.
    @exclusivity(unchecked) private(set) var slots: UnsafeMutablePointer<Entry>
    @exclusivity(unchecked) private(set) var capacity: Int
    /// Whether `slots` is an anonymous mapping (else a heap allocation, or the snapshot's).
    private var slotsMapped: Bool
    private(set) var count = 0
    /// The mapped snapshot the slots live in, with their checksum state; nil when the table
    /// owns its slots.
    private(set) var snapshotBlocks: SnapshotBlocks?
    /// `snapshotBlocks.verified`, raw so a probe tests it without reference counting.
    @exclusivity(unchecked) private var verifiedBlocks: UnsafeMutablePointer<UInt8>?

    init(capacity requested: Int = KeyDir.minimumCapacity) {
        capacity = max(Self.minimumCapacity, requested)
        (slots, slotsMapped) = Self.allocateSlots(capacity)
    }

    /// A table served in place from a mapped snapshot: `slots` points into `blocks.region`
    /// and holds `count` entries (its blocks are checked as they are touched).
    init(mappedSlots: UnsafeMutablePointer<Entry>, capacity: Int, count: Int, blocks: SnapshotBlocks) {
        self.capacity = capacity
        self.count = count
        slots = mappedSlots
        slotsMapped = false
        snapshotBlocks = blocks
        verifiedBlocks = blocks.verified
    }

    deinit {
        if snapshotBlocks == nil { Self.deallocateSlots(slots, capacity, mapped: slotsMapped) }
    }

    /// Checks the block holding `slot` if the table is snapshot-backed and it is not checked yet.
    @inline(__always)
    private func checkBlock(of slot: Int) {
        if let verified = verifiedBlocks, cs_flag_load(verified + (slot >> Self.blockShift)) == 0 {
            checkBlockSlowly(slot >> Self.blockShift)
        }
    }

    @inline(never)
    private func checkBlockSlowly(_ block: Int) {
        snapshotBlocks?.verify(block: block, slots: UnsafeRawPointer(slots), capacity: capacity)
    }

    /// Checks every block of a snapshot-backed table not checked yet (a mismatch marks the
    /// snapshot damaged). O(capacity) the first time, then O(1).
    func verifyAll() {
        snapshotBlocks?.verifyAll(slots: UnsafeRawPointer(slots), capacity: capacity)
    }

    /// Bytes of memory the table occupies.
    var memoryBytes: Int { capacity * Self.entrySize }

    /// Whether any slot has been written since the table was made or mapped: a mapped slot's
    /// page is then the process's own copy, which only the mapping holds.
    @exclusivity(unchecked) private var slotsWritten = false

    /// Takes the pages of a table served from a mapped snapshot out of the process, when no
    /// slot has been written since it was mapped: they are then the file's own pages, which the
    /// next probe maps again from the page cache. A walk that looks up every record touches
    /// all of them (24 MiB at a million keys); a written table keeps its pages (they hold its
    /// only copy of the changes). Caller holds `writeMutex`, so no slot changes meanwhile.
    func releaseMappedPages() {
        guard let region = snapshotBlocks?.region, !slotsWritten else { return }
        region.dropResidentPages(offset: UnsafeRawPointer(slots) - UnsafeRawPointer(region.base), count: capacity * Self.entrySize)
    }

    /// The tag of a 64-bit key hash.
    @inline(__always)
    static func tag(of hash: UInt64) -> UInt32 {
        let tag = UInt32(truncatingIfNeeded: hash >> 32)
        return tag == 0 ? 1 : tag
    }

    /// The 64-bit hash of a key in a key space; stable across processes.
    @inline(__always)
    static func hash(space: UInt32, key: UnsafeRawBufferPointer) -> UInt64 {
        cs_hash64(key.baseAddress, key.count, UInt64(space) &* 0x9E37_79B9_7F4A_7C15 &+ 0x2545_F491_4F6C_DD1D)
    }

    @inline(__always)
    private func home(_ tag: UInt32) -> Int {
        Int((UInt64(tag) &* UInt64(capacity)) >> 32)
    }

    /// The slot of the entry with `tag` for which `matches` is true, or nil.
    @inline(__always)
    func find(tag: UInt32, matches: (Entry) throws -> Bool) rethrows -> Int? {
        var i = home(tag)
        checkBlock(of: i)
        var blocksEntered = 0
        while true {
            let entry = slots[i]
            if entry.tag == 0 { return nil }
            if entry.tag == tag, try matches(entry) { return i }
            i += 1
            if i == capacity { i = 0 }
            if i & (Self.blockSlots - 1) == 0 {
                checkBlock(of: i)
                // Only a damaged snapshot table can lack an empty slot: never probe forever.
                blocksEntered += 1
                if blocksEntered > capacity >> Self.blockShift + 1 { return nil }
            }
        }
    }

    /// The slot of the entry with `tag` pointing exactly at `location`, or nil.
    func find(tag: UInt32, location: RecordLocation) -> Int? {
        find(tag: tag) { $0.segment == location.segment && $0.offset == location.offset }
    }

    @inline(__always)
    func entry(at slot: Int) -> Entry { slots[slot] }

    @inline(__always)
    func setLocation(_ location: RecordLocation, at slot: Int) {
        slotsWritten = true
        slots[slot].segment = location.segment
        slots[slot].offset = location.offset
    }

    /// Adds an entry for a key known not to be in the table. Grows the table past 3/4 full.
    func insert(tag: UInt32, location: RecordLocation) {
        slotsWritten = true
        if (count + 1) * 4 > capacity * 3 { resize(to: capacity * 2) }
        place(Entry(tag: tag, segment: location.segment, offset: location.offset))
        count += 1
    }

    /// Removes the entry in `slot`, shifting back the entries after it that may move.
    func remove(at slot: Int) {
        slotsWritten = true
        var hole = slot
        var j = slot
        checkBlock(of: slot)
        while true {
            j += 1
            if j == capacity { j = 0 }
            if j & (Self.blockSlots - 1) == 0 { checkBlock(of: j) }
            let entry = slots[j]
            if entry.tag == 0 { break }
            // The entry at j may fill the hole when its home is not cyclically inside (hole, j].
            let fromHome = (j - home(entry.tag) + capacity) % capacity
            let fromHole = (j - hole + capacity) % capacity
            if fromHome >= fromHole {
                slots[hole] = entry
                hole = j
            }
        }
        slots[hole] = Entry(tag: 0, segment: 0, offset: 0)
        count -= 1
    }

    /// Removes every entry.
    func removeAll() {
        verifyAll()
        slotsWritten = true
        slots.update(repeating: Entry(tag: 0, segment: 0, offset: 0), count: capacity)
        count = 0
    }

    /// Calls `body` with every occupied slot's index and entry, in slot order.
    func forEachSlot(_ body: (Int, Entry) throws -> Void) rethrows {
        verifyAll()
        for i in 0..<capacity where slots[i].tag != 0 { try body(i, slots[i]) }
    }

    /// Puts an entry back into the slot a snapshot recorded (the slot must be empty). Only
    /// valid when rebuilding the exact table the snapshot was taken of, same capacity.
    func restore(slot: Int, tag: UInt32, location: RecordLocation) {
        slotsWritten = true
        slots[slot] = Entry(tag: tag, segment: location.segment, offset: location.offset)
        count += 1
    }

    /// Calls `body` with every entry of the slots `range` (all of them when nil), in slot order,
    /// and `ahead` with the entry `distance` slots further on before it (so a caller can
    /// prefetch what it will read there). Several threads may walk disjoint ranges at once
    /// while no one changes the table.
    @inline(__always)
    func forEach(slots range: Range<Int>? = nil, lookingAhead distance: Int, _ ahead: (Entry) -> Void,
                 _ body: (Entry) throws -> Void) rethrows {
        verifyAll()
        let range = range.map { $0.clamped(to: 0..<capacity) } ?? 0..<capacity
        for i in range {
            if i + distance < range.upperBound && slots[i + distance].tag != 0 { ahead(slots[i + distance]) }
            if slots[i].tag != 0 { try body(slots[i]) }
        }
    }

    /// Calls `body` with every entry, in slot order.
    func forEach(_ body: (Entry) throws -> Void) rethrows {
        verifyAll()
        for i in 0..<capacity where slots[i].tag != 0 { try body(slots[i]) }
    }

    /// Removes every entry for which `shouldRemove` is true.
    func removeAll(where shouldRemove: (Entry) -> Bool) {
        verifyAll()
        slotsWritten = true
        var i = 0
        while i < capacity {
            // After a removal the slot may hold a shifted entry: look at it again.
            if slots[i].tag != 0 && shouldRemove(slots[i]) { remove(at: i) } else { i += 1 }
        }
    }

    /// Reserves room for `total` entries without growing on the way.
    func reserve(_ total: Int) {
        var target = capacity
        while total * 4 > target * 3 { target *= 2 }
        if target != capacity { resize(to: target) }
    }

    private func place(_ entry: Entry) {
        var i = home(entry.tag)
        checkBlock(of: i)
        var blocksEntered = 0
        while slots[i].tag != 0 {
            i += 1
            if i == capacity { i = 0 }
            if i & (Self.blockSlots - 1) == 0 {
                checkBlock(of: i)
                blocksEntered += 1
                if blocksEntered > capacity >> Self.blockShift + 1 { return }   // damaged: dropped
            }
        }
        slots[i] = entry
    }

    private func resize(to newCapacity: Int) {
        verifyAll()
        let old = slots
        let oldCapacity = capacity
        let oldMapped = slotsMapped
        let oldBlocks = snapshotBlocks
        (slots, slotsMapped) = Self.allocateSlots(newCapacity)
        capacity = newCapacity
        // The new table is the process's own: no snapshot blocks to check any more.
        snapshotBlocks = nil
        verifiedBlocks = nil
        for i in 0..<oldCapacity where old[i].tag != 0 { place(old[i]) }
        if oldBlocks == nil { Self.deallocateSlots(old, oldCapacity, mapped: oldMapped) }
    }

    /// Tables from this size on get their own anonymous mapping, zero-filled by the kernel and
    /// eligible for transparent huge pages: a random probe into a big table otherwise costs a
    /// TLB miss as well as a cache miss.
    private static let mappedThreshold = 4 << 20

    private static func allocateSlots(_ capacity: Int) -> (UnsafeMutablePointer<Entry>, mapped: Bool) {
        let bytes = capacity * entrySize
        if bytes >= mappedThreshold,
           let raw = mmap(nil, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0), raw != MAP_FAILED {
            #if os(Linux)
            madvise(raw, bytes, MADV_HUGEPAGE)
            #endif
            return (raw.bindMemory(to: Entry.self, capacity: capacity), true)   // all zero: every slot empty
        }
        let pointer = UnsafeMutablePointer<Entry>.allocate(capacity: capacity)
        pointer.initialize(repeating: Entry(tag: 0, segment: 0, offset: 0), count: capacity)
        return (pointer, false)
    }

    private static func deallocateSlots(_ slots: UnsafeMutablePointer<Entry>, _ capacity: Int, mapped: Bool) {
        if mapped {
            munmap(UnsafeMutableRawPointer(slots), capacity * entrySize)
        } else {
            slots.deallocate()
        }
    }
}
