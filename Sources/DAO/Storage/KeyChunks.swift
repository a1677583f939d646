/// The entries of one index in order: memcmp-ordered byte strings (`IndexKeyCodec` entries,
/// unique because each ends with its rowid) kept in chunks of at most `chunkLimit` entries, each
/// chunk one flat byte arena plus the end offset of every entry. No object per entry: an
/// entry costs its bytes and 4 bytes of offset. Search O(log n), insert and delete
/// O(log n + chunk bytes), scans in both directions.
struct KeyChunks: Sendable {
    /// One chunk: entry i is `bytes[(i == 0 ? 0 : ends[i - 1])..<ends[i]]` when it owns its
    /// entries; a chunk of a mapped index checkpoint (`init(mapped:...)`) reads them in place
    /// from the file and is copied into the heap only when a statement changes it.
    struct Chunk: @unchecked Sendable {
        // @unchecked: the mapped pointers point into the file `blocks` keeps alive, which
        // nobody writes.
        var bytes: [UInt8] = []
        var ends: [Int32] = []
        /// The mapped file's blocks; this chunk is block `block`, checked on first touch.
        private var blocks: CheckpointBlocks?
        /// The index's whole arena and end offsets (u32, little-endian, from the arena's start)
        /// in the file, and this chunk's first entry and entry count in them.
        private var arena: UnsafeRawPointer?
        private var fileEnds: UnsafeRawPointer?
        // 32-bit fields keep the chunk as small as before the blocks were added (an index's
        // arena is at most 4 GiB, so fewer than 2^29 entries; blocks are far fewer): the
        // chunks array is what every index search walks.
        private var storedBlock: Int32 = 0
        private var storedFirst: Int32 = 0
        private var storedCount: Int32 = 0
        /// The arena's length in bytes (no end offset may pass it).
        private var storedArenaLength: UInt32 = 0
        @inline(__always) private var block: Int { Int(storedBlock) }
        @inline(__always) private var first: Int { Int(storedFirst) }
        @inline(__always) private var mappedCount: Int { Int(storedCount) }
        @inline(__always) private var arenaLength: Int { Int(storedArenaLength) }

        init(bytes: [UInt8] = [], ends: [Int32] = []) {
            self.bytes = bytes
            self.ends = ends
        }

        init(blocks: CheckpointBlocks, block: Int, arena: UnsafeRawPointer, arenaLength: Int, ends: UnsafeRawPointer, first: Int, count: Int) {
            self.blocks = blocks
            storedBlock = Int32(truncatingIfNeeded: block)
            self.arena = arena
            storedArenaLength = UInt32(truncatingIfNeeded: arenaLength)
            fileEnds = ends
            storedFirst = Int32(truncatingIfNeeded: first)
            storedCount = Int32(truncatingIfNeeded: count)
        }

        /// Whether the entries are read from a mapped file.
        var isMapped: Bool { arena != nil }

        @inline(__always) var entryCount: Int { arena == nil ? ends.count : mappedCount }

        /// The mapped pointers when the block is sound (checked now if it was not yet); nil for
        /// an owned chunk and for a damaged block (which reads as `DamagedBlock.entry`s).
        @inline(__always)
        private var sound: (arena: UnsafeRawPointer, ends: UnsafeRawPointer)? {
            guard let arena, let fileEnds, let blocks else { return nil }
            let state = blocks.states[block]
            if state == CheckpointBlocks.sound { return (arena, fileEnds) }
            if state == CheckpointBlocks.unchecked, check(blocks, arena, fileEnds) { return (arena, fileEnds) }
            return nil
        }

        /// Checks the block: its entries' end offsets ascending, each entry at least 8 bytes
        /// (its row key), inside the arena, then the CRC-32C of the offsets and the bytes.
        private func check(_ blocks: CheckpointBlocks, _ arena: UnsafeRawPointer, _ fileEnds: UnsafeRawPointer) -> Bool {
            let start = first == 0 ? 0 : Int(MappedInts.u32(fileEnds, first - 1))
            var sound = start <= arenaLength
            var last = start
            if sound {
                for i in 0..<mappedCount {
                    let end = Int(MappedInts.u32(fileEnds, first + i))
                    guard end >= last + 8, end <= arenaLength else { sound = false; break }
                    last = end
                }
            }
            if sound {
                let crc = DamagedBlock.crc(0, fileEnds + first * 4, mappedCount * 4)
                sound = DamagedBlock.crc(crc, arena + start, last - start) == blocks.expectedChecksum(block)
            }
            blocks.record(block, sound: sound, what: "\(IndexCheckpointFile.name): index block \(block) failed its check")
            return sound
        }

        @inline(__always) func start(_ i: Int) -> Int {
            if isMapped {
                guard let (_, fileEnds) = sound else { return i * DamagedBlock.entry.count }
                return first + i == 0 ? 0 : Int(MappedInts.u32(fileEnds, first + i - 1)) - base(fileEnds)
            }
            return i == 0 ? 0 : Int(ends[i - 1])
        }

        /// The end of entry i, counted from the chunk's first byte.
        @inline(__always) func end(_ i: Int) -> Int {
            if isMapped {
                guard let (_, fileEnds) = sound else { return (i + 1) * DamagedBlock.entry.count }
                return Int(MappedInts.u32(fileEnds, first + i)) - base(fileEnds)
            }
            return Int(ends[i])
        }

        /// Where the chunk's bytes start in the mapped arena.
        @inline(__always) private func base(_ fileEnds: UnsafeRawPointer) -> Int {
            first > 0 ? Int(MappedInts.u32(fileEnds, first - 1)) : 0
        }

        @inline(__always)
        func withEntry<R>(_ i: Int, _ body: (UnsafeRawBufferPointer) throws -> R) rethrows -> R {
            if isMapped {
                guard let (arena, fileEnds) = sound else { return try DamagedBlock.entry.withUnsafeBytes(body) }
                let start = first + i == 0 ? 0 : Int(MappedInts.u32(fileEnds, first + i - 1))
                let end = Int(MappedInts.u32(fileEnds, first + i))
                return try body(UnsafeRawBufferPointer(start: arena + start, count: end - start))
            }
            let start = start(i), end = Int(ends[i])
            return try bytes.withUnsafeBytes { try body(UnsafeRawBufferPointer(rebasing: $0[start..<end])) }
        }

        /// Calls `body` once with entries `from..<to` read in place (`EntryRun`). The block is
        /// checked and the arrays are entered once for the run, not per entry (per entry, each
        /// read of `blocks` retained and released it: about a fifth of a covering scan's
        /// instructions).
        @inline(__always)
        func withEntryRun<R>(_ from: Int, _ to: Int, _ body: (EntryRun) throws -> R) rethrows -> R {
            if isMapped {
                guard let (arena, fileEnds) = sound else {
                    return try DamagedBlock.entry.withUnsafeBytes { placeholder in
                        try body(EntryRun(from: from, to: to, arena: nil, mappedEnds: nil, first: 0, ownedEnds: nil, placeholder: placeholder))
                    }
                }
                return try body(EntryRun(from: from, to: to, arena: arena, mappedEnds: fileEnds, first: first, ownedEnds: nil, placeholder: nil))
            }
            return try bytes.withUnsafeBytes { raw in
                try ends.withUnsafeBufferPointer { ends in
                    try body(EntryRun(from: from, to: to, arena: raw.baseAddress, mappedEnds: nil, first: 0, ownedEnds: ends.baseAddress, placeholder: nil))
                }
            }
        }

        /// Calls `body` with all of the chunk's entry bytes, back to back.
        func withAllBytes<R>(_ body: (UnsafeRawBufferPointer) throws -> R) rethrows -> R {
            if isMapped {
                guard let (arena, fileEnds) = sound else {
                    let placeholders = (0..<mappedCount).flatMap { _ in DamagedBlock.entry }
                    return try placeholders.withUnsafeBytes(body)
                }
                let from = base(fileEnds), to = mappedCount == 0 ? from : Int(MappedInts.u32(fileEnds, first + mappedCount - 1))
                return try body(UnsafeRawBufferPointer(start: arena + from, count: to - from))
            }
            return try bytes.withUnsafeBytes(body)
        }

        /// Copies mapped entries into the heap before a change.
        mutating func own() {
            guard isMapped else { return }
            let count = mappedCount
            var newEnds: [Int32] = []
            newEnds.reserveCapacity(count)
            for i in 0..<count { newEnds.append(Int32(end(i))) }
            let newBytes = withAllBytes { [UInt8]($0) }
            self = Chunk(bytes: newBytes, ends: newEnds)
        }

        /// Puts `entry` at position `i` (the chunk owns its entries). One method, so that the
        /// caller's `chunks[c]` is one exclusive access: the offsets after `i` are shifted
        /// through one buffer pointer, not through `chunks[c].ends[j]`, which checked both
        /// arrays' uniqueness on every step (~47 checks an insert).
        mutating func insert(_ entry: [UInt8], at i: Int) {
            let start = start(i)
            bytes.insert(contentsOf: entry, at: start)
            ends.insert(Int32(start + entry.count), at: i)
            let length = Int32(entry.count)
            ends.withUnsafeMutableBufferPointer { ends in
                for j in (i + 1)..<ends.count { ends[j] += length }
            }
        }

        /// Gives the chunk's owned arrays exactly their size when their capacity is well above it.
        mutating func shrinkToFit() {
            guard !isMapped else { return }
            if bytes.capacity > bytes.count + bytes.count / 8 { bytes = bytes.withUnsafeBufferPointer { Array($0) } }
            if ends.capacity > ends.count + ends.count / 8 { ends = ends.withUnsafeBufferPointer { Array($0) } }
        }

        /// Removes entry `i` (the chunk owns its entries).
        mutating func remove(at i: Int) {
            let start = start(i), end = Int(ends[i])
            bytes.removeSubrange(start..<end)
            ends.remove(at: i)
            let length = Int32(end - start)
            ends.withUnsafeMutableBufferPointer { ends in
                for j in i..<ends.count { ends[j] -= length }
            }
        }
    }

    private(set) var chunks: [Chunk] = []
    private(set) var count = 0
    static var chunkLimit: Int { 256 }

    /// A position: chunk and entry inside it.
    struct Position: Equatable { var chunk: Int; var index: Int }

    init() {}

    /// Builds from entries in one flat arena (`bounds(i)`: entry i's bytes) taken in the
    /// order `order`, which must be ascending.
    init(bytes: [UInt8], order: [Int32], bounds entryBounds: (Int) -> Range<Int>) {
        let fill = Self.chunkLimit * 3 / 4
        func bounds(_ position: Int32) -> Range<Int> { entryBounds(Int(position)) }
        chunks.reserveCapacity((order.count + fill - 1) / fill)
        var first = 0
        while first < order.count {
            let group = order[first..<min(first + fill, order.count)]
            // Arrays of exactly the chunk's size: appending grew them up to twice that.
            var chunk = Chunk()
            chunk.bytes.reserveCapacity(group.reduce(0) { $0 + bounds($1).count })
            chunk.ends.reserveCapacity(group.count)
            for position in group {
                chunk.bytes.append(contentsOf: bytes[bounds(position)])
                chunk.ends.append(Int32(chunk.bytes.count))
            }
            chunks.append(chunk)
            first += fill
        }
        count = order.count
    }

    /// Builds from one flat arena of entries already in order (`ends`: each entry's end offset).
    init(sortedBytes bytes: [UInt8], ends: [UInt32]) {
        let fill = Self.chunkLimit * 3 / 4
        var first = 0
        while first < ends.count {
            let last = min(first + fill, ends.count)
            let base = first == 0 ? 0 : Int(ends[first - 1])
            let top = Int(ends[last - 1])
            chunks.append(Chunk(bytes: Array(bytes[base..<top]), ends: ends[first..<last].map { Int32(Int($0) - base) }))
            first = last
        }
        count = ends.count
    }

    /// Serves `count` entries already in order in place from the mapped file of `blocks`:
    /// their bytes back to back at byte `arenaOffset` (`arenaLength` bytes), each entry's end
    /// (u32, little-endian, from the arena's start) at `endsOffset`; one chunk per block of
    /// `perBlock` entries, the first being block `firstBlock`. The caller has checked that the
    /// offsets and the arena are inside the file; each block's entries are checked when first
    /// read.
    init(mapped blocks: CheckpointBlocks, arenaOffset: Int, arenaLength: Int, endsOffset: Int, count: Int, firstBlock: Int, perBlock: Int) {
        chunks.reserveCapacity((count + perBlock - 1) / perBlock)
        var first = 0
        let base = blocks.file.base
        while first < count {
            let last = min(first + perBlock, count)
            chunks.append(Chunk(blocks: blocks, block: firstBlock + first / perBlock, arena: base + arenaOffset, arenaLength: arenaLength,
                                ends: base + endsOffset, first: first, count: last - first))
            first = last
        }
        self.count = count
    }

    /// Bytes the heap holds for entries (chunks copied from the map or built in memory): entry
    /// bytes plus 4 bytes of offset each.
    var ownedBytes: Int { chunks.reduce(0) { $0 + ($1.isMapped ? 0 : $1.bytes.count + $1.ends.count * 4) } }

    /// The first position whose entry is not below `probe` (compared on the probe's length),
    /// or, with `orEqual`, the first whose entry is above it.
    func lowerBound(_ probe: [UInt8], orEqual: Bool = false) -> Position {
        probe.withUnsafeBytes { p in
            let isBefore: (UnsafeRawBufferPointer) -> Bool = { entry in
                let c = IndexKeyCodec.compare(entry, p)
                return orEqual ? c <= 0 : c < 0
            }
            // Through a buffer pointer: the chunks are read in place, not copied (a copy
            // retains and releases each of their references).
            return chunks.withUnsafeBufferPointer { outer -> Position in
                var low = 0, high = outer.count
                while low < high {
                    let mid = (low + high) >> 1
                    if outer[mid].withEntry(outer[mid].entryCount - 1, isBefore) { low = mid + 1 } else { high = mid }
                }
                guard low < outer.count else { return Position(chunk: outer.count, index: 0) }
                var l = 0, h = outer[low].entryCount
                while l < h {
                    let m = (l + h) >> 1
                    if outer[low].withEntry(m, isBefore) { l = m + 1 } else { h = m }
                }
                return Position(chunk: low, index: l)
            }
        }
    }

    var startPosition: Position { Position(chunk: 0, index: 0) }
    var endPosition: Position { Position(chunk: chunks.count, index: 0) }

    /// Calls `body` with the entry at `position`; nil past the end.
    @inline(__always)
    func withEntry<R>(at position: Position, _ body: (UnsafeRawBufferPointer) throws -> R) rethrows -> R? {
        guard position.chunk < chunks.count else { return nil }
        return try withChunk(position.chunk) { chunk in
            guard position.index < chunk.entryCount else { return nil }
            return try chunk.withEntry(position.index, body)
        }
    }

    /// Chunk `c`, read in place. `chunks[c]` returns a copy of the chunk, retaining and
    /// releasing its three references on every read (~600 instructions an index entry of a
    /// scan, three reads an entry); a buffer pointer's element is borrowed.
    @inline(__always)
    private func withChunk<R>(_ c: Int, _ body: (Chunk) throws -> R) rethrows -> R {
        try chunks.withUnsafeBufferPointer { try body($0[c]) }
    }

    /// Entries `from..<to` of one chunk, read in place during a `Chunk.withEntryRun` call (the
    /// pointers are valid only then). A scan walks a run itself, so that the entries of a chunk
    /// cost no call each: a closure called per entry retained and released every reference it
    /// captured around each call.
    struct EntryRun {
        let from: Int
        let to: Int
        /// The first byte of the chunk's entries (owned), or of the index's arena (mapped).
        fileprivate let arena: UnsafeRawPointer?
        /// A mapped chunk's end offsets (u32, little-endian), its entries numbered from `first`.
        fileprivate let mappedEnds: UnsafeRawPointer?
        fileprivate let first: Int
        /// An owned chunk's end offsets.
        fileprivate let ownedEnds: UnsafePointer<Int32>?
        /// A damaged block's entries all read as this (`DamagedBlock.entry`).
        fileprivate let placeholder: UnsafeRawBufferPointer?

        /// Entry `i` of the chunk (`from <= i < to`).
        @inline(__always)
        func entry(_ i: Int) -> UnsafeRawBufferPointer {
            if let placeholder { return placeholder }
            let start: Int, end: Int
            if let mappedEnds {
                start = first + i == 0 ? 0 : Int(MappedInts.u32(mappedEnds, first + i - 1))
                end = Int(MappedInts.u32(mappedEnds, first + i))
            } else if let ownedEnds {
                start = i == 0 ? 0 : Int(ownedEnds[i - 1])
                end = Int(ownedEnds[i])
            } else {
                return UnsafeRawBufferPointer(start: nil, count: 0)
            }
            return UnsafeRawBufferPointer(start: arena.map { $0 + start }, count: end - start)
        }

        /// Calls `body` with each entry in order (in reverse order with `reverse`) until it
        /// returns false; false when it did.
        @inline(__always)
        func forEach(reverse: Bool, _ body: (UnsafeRawBufferPointer) throws -> Bool) rethrows -> Bool {
            if reverse {
                var i = to - 1
                while i >= from { if try !body(entry(i)) { return false }; i -= 1 }
            } else {
                var i = from
                while i < to { if try !body(entry(i)) { return false }; i += 1 }
            }
            return true
        }
    }

    /// Calls `body` with the entries from `start` up to `end` (in reverse order with
    /// `reverse`), one run of entries per chunk, until it returns false; false when it did.
    /// A scan that walks each run itself makes no call per entry.
    func forEachRun(from start: Position, to end: Position, reverse: Bool = false,
                    _ body: (EntryRun) throws -> Bool) rethrows -> Bool {
        guard start.chunk < chunks.count, start.chunk < end.chunk || (start.chunk == end.chunk && start.index < end.index) else { return true }
        let lastChunk = min(end.chunk, chunks.count - 1)
        var c = reverse ? lastChunk : start.chunk
        // The chunks are read in place (a copy retains and releases each of their references).
        return try chunks.withUnsafeBufferPointer { chunks in
            while reverse ? c >= start.chunk : c <= lastChunk {
                defer { c += reverse ? -1 : 1 }
                let from = c == start.chunk ? start.index : 0
                let to = c == end.chunk ? min(end.index, chunks[c].entryCount) : chunks[c].entryCount
                guard from < to else { continue }
                if try !chunks[c].withEntryRun(from, to, body) { return false }
            }
            return true
        }
    }

    /// Calls `body` with each entry from `start` up to (not including) `end`, in order, or in
    /// reverse order with `reverse` (from the one before `end` down to `start`), until `body`
    /// returns false. Returns false when `body` stopped the walk. A chunk is entered once for
    /// all its entries (`forEachRun`).
    /// - Complexity: O(entries visited + chunks spanned).
    func forEachEntry(from start: Position, to end: Position, reverse: Bool = false,
                      _ body: (UnsafeRawBufferPointer) throws -> Bool) rethrows -> Bool {
        try forEachRun(from: start, to: end, reverse: reverse) { try $0.forEach(reverse: reverse, body) }
    }

    /// The rowid of the entry at `position`; nil past the end.
    func rowid(at position: Position) -> Int64? {
        withEntry(at: position) { IndexKeyCodec.rowid(ofEntry: $0) }
    }

    func next(_ position: Position) -> Position {
        if position.index + 1 < withChunk(position.chunk, \.entryCount) { return Position(chunk: position.chunk, index: position.index + 1) }
        return Position(chunk: position.chunk + 1, index: 0)
    }

    /// Gives every chunk arrays of exactly its size where inserts left them well larger (an
    /// insert that outgrows a chunk's arrays doubles them; a split gives both halves exact
    /// ones): before a big commit, which needs the room (~1 MB at the bench's million rows).
    /// - Complexity: O(bytes of the chunks copied).
    mutating func shrinkToFit() {
        for c in chunks.indices { chunks[c].shrinkToFit() }
    }

    /// Inserts `entry` in order.
    mutating func insert(_ entry: [UInt8]) {
        count += 1
        if chunks.isEmpty {
            chunks.append(Chunk(bytes: entry, ends: [Int32(entry.count)]))
            return
        }
        var position = lowerBound(entry)
        if position.chunk == chunks.count { position = Position(chunk: chunks.count - 1, index: chunks[chunks.count - 1].entryCount) }
        let c = position.chunk, i = position.index
        chunks[c].own()
        chunks[c].insert(entry, at: i)
        if chunks[c].ends.count > Self.chunkLimit {
            // An entry appended after the last one (ascending keys: an id, a timestamp) starts
            // a new chunk and leaves the full one as it is, as a B-tree's append split does:
            // halving would leave every chunk of such an index half empty.
            split(c, at: c == chunks.count - 1 && i == chunks[c].ends.count - 1 ? i : chunks[c].ends.count / 2)
        }
    }

    /// Moves the entries from `first` on of chunk `c` to a new chunk after it. Both keep
    /// arrays of exactly their size: the split chunk's grown capacity is not carried along.
    private mutating func split(_ c: Int, at first: Int) {
        let cut = Int(chunks[c].ends[first - 1])
        var tail = Chunk(bytes: Array(chunks[c].bytes[cut...]), ends: [])
        tail.ends = chunks[c].ends[first...].map { $0 - Int32(cut) }
        chunks[c] = Chunk(bytes: Array(chunks[c].bytes[..<cut]), ends: Array(chunks[c].ends[..<first]))
        chunks.insert(tail, at: c + 1)
    }

    /// Removes the entry equal to `entry`, if present; says whether it was.
    @discardableResult
    mutating func remove(_ entry: [UInt8]) -> Bool {
        let position = lowerBound(entry)
        let same = withEntry(at: position) { found in
            entry.withUnsafeBytes { found.count == $0.count && IndexKeyCodec.compare(found, $0) == 0 }
        }
        guard same == true else { return false }
        count -= 1
        let c = position.chunk, i = position.index
        chunks[c].own()
        chunks[c].remove(at: i)
        if chunks[c].ends.isEmpty { chunks.remove(at: c) }
        return true
    }
}
