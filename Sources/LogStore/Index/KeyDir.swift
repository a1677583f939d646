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

    // Unchecked: the engine's locks make access exclusive; the checks cost on every probe.
    @exclusivity(unchecked) private(set) var slots: UnsafeMutablePointer<Entry>
    @exclusivity(unchecked) private(set) var capacity: Int
    /// Whether `slots` is an anonymous mapping (else a heap allocation).
    private var slotsMapped: Bool
    private(set) var count = 0

    init(capacity requested: Int = KeyDir.minimumCapacity) {
        capacity = max(Self.minimumCapacity, requested)
        (slots, slotsMapped) = Self.allocateSlots(capacity)
    }

    deinit { Self.deallocateSlots(slots, capacity, mapped: slotsMapped) }

    /// Bytes of memory the table occupies.
    var memoryBytes: Int { capacity * Self.entrySize }

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
        while true {
            let entry = slots[i]
            if entry.tag == 0 { return nil }
            if entry.tag == tag, try matches(entry) { return i }
            i += 1
            if i == capacity { i = 0 }
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
        slots[slot].segment = location.segment
        slots[slot].offset = location.offset
    }

    /// Adds an entry for a key known not to be in the table. Grows the table past 3/4 full.
    func insert(tag: UInt32, location: RecordLocation) {
        if (count + 1) * 4 > capacity * 3 { resize(to: capacity * 2) }
        place(Entry(tag: tag, segment: location.segment, offset: location.offset))
        count += 1
    }

    /// Removes the entry in `slot`, shifting back the entries after it that may move.
    func remove(at slot: Int) {
        var hole = slot
        var j = slot
        while true {
            j += 1
            if j == capacity { j = 0 }
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
        slots.update(repeating: Entry(tag: 0, segment: 0, offset: 0), count: capacity)
        count = 0
    }

    /// Calls `body` with every occupied slot's index and entry, in slot order.
    func forEachSlot(_ body: (Int, Entry) throws -> Void) rethrows {
        for i in 0..<capacity where slots[i].tag != 0 { try body(i, slots[i]) }
    }

    /// Puts an entry back into the slot a snapshot recorded (the slot must be empty). Only
    /// valid when rebuilding the exact table the snapshot was taken of, same capacity.
    func restore(slot: Int, tag: UInt32, location: RecordLocation) {
        slots[slot] = Entry(tag: tag, segment: location.segment, offset: location.offset)
        count += 1
    }

    /// Calls `body` with every entry, in slot order.
    func forEach(_ body: (Entry) throws -> Void) rethrows {
        for i in 0..<capacity where slots[i].tag != 0 { try body(slots[i]) }
    }

    /// Removes every entry for which `shouldRemove` is true.
    func removeAll(where shouldRemove: (Entry) -> Bool) {
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
        while slots[i].tag != 0 {
            i += 1
            if i == capacity { i = 0 }
        }
        slots[i] = entry
    }

    private func resize(to newCapacity: Int) {
        let old = slots
        let oldCapacity = capacity
        let oldMapped = slotsMapped
        (slots, slotsMapped) = Self.allocateSlots(newCapacity)
        capacity = newCapacity
        for i in 0..<oldCapacity where old[i].tag != 0 { place(old[i]) }
        Self.deallocateSlots(old, oldCapacity, mapped: oldMapped)
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
