/// An ordered multiset kept in chunks of at most `chunkLimit` sorted elements: O(log n) search,
/// insert and delete cost O(log n + chunk), in-order scans in both directions. Used for the
/// rowid order of a table (Element = Int64); indexes use `KeyChunks`.
///
/// A chunk either owns its elements (a heap array) or reads them in place from a mapped index
/// checkpoint (`init(mapped:...)`: little-endian 8-byte integers, one chunk per checksummed block
/// of the file, checked on first read): a table opened from
/// a checkpoint holds no copy of its rowids, and a chunk is copied into the heap only when a
/// statement changes it (the heap then holds only what changed since the checkpoint).
struct SortedChunks<Element: FixedWidthInteger & Sendable>: Sendable {
    /// One chunk's elements, in order: owned, or lent from a mapped file.
    struct Chunk: RandomAccessCollection, @unchecked Sendable {
        // @unchecked: `mapped` points into the file `blocks` keeps alive, which nobody writes.
        fileprivate var owned: [Element]
        fileprivate var mapped: UnsafeRawPointer?
        fileprivate var mappedCount = 0
        /// The mapped file's blocks; this chunk is block `block`, checked on first touch.
        fileprivate var blocks: CheckpointBlocks?
        fileprivate var block = 0
        /// Whether the element before the first is the previous block's last (same table).
        fileprivate var follows = false

        fileprivate init(_ owned: [Element]) { self.owned = owned }

        fileprivate init(blocks: CheckpointBlocks, block: Int, at pointer: UnsafeRawPointer, count: Int, follows: Bool) {
            owned = []
            mapped = pointer
            mappedCount = count
            self.blocks = blocks
            self.block = block
            self.follows = follows
        }

        var startIndex: Int { 0 }
        var endIndex: Int { mapped == nil ? owned.count : mappedCount }

        @inline(__always)
        subscript(i: Int) -> Element {
            if let mapped {
                if let blocks, blocks.states[block] == CheckpointBlocks.unchecked { check(blocks, mapped) }
                // A damaged block's elements are read as they are (any 8 bytes inside the
                // mapping): the statement that read them is thrown away (CheckpointBlocks).
                return Element(truncatingIfNeeded: MappedInts.u64(mapped, i))
            }
            return owned[i]
        }

        /// Checks the block against its checksum, its rowids' order, and the last rowid of
        /// the block before it.
        private func check(_ blocks: CheckpointBlocks, _ mapped: UnsafeRawPointer) {
            var sound = DamagedBlock.crc(0, mapped, mappedCount * 8) == blocks.expectedChecksum(block)
            if sound {
                var previous = follows ? Int64(bitPattern: MappedInts.u64(mapped - 8, 0)) : Int64.min
                for i in 0..<mappedCount {
                    let rowid = Int64(bitPattern: MappedInts.u64(mapped, i))
                    if (i > 0 || follows) && previous >= rowid { sound = false; break }
                    previous = rowid
                }
            }
            blocks.record(block, sound: sound, what: "\(IndexCheckpointFile.name): rowid block \(block) failed its check")
        }

        /// Whether the elements are read from a mapped file.
        var isMapped: Bool { mapped != nil }

        /// Copies mapped elements into the heap before a change.
        fileprivate mutating func own() {
            guard mapped != nil else { return }
            owned = Array(self)
            mapped = nil
            mappedCount = 0
            blocks = nil
        }
    }

    private(set) var chunks: [Chunk] = []
    private(set) var count = 0
    static var chunkLimit: Int { 512 }

    /// A position: chunk and index inside it.
    struct Position: Equatable { var chunk: Int; var index: Int }

    /// Builds from elements already in order.
    init(sorted elements: [Element]) {
        var start = 0
        while start < elements.count {
            let end = min(start + Self.chunkLimit * 3 / 4, elements.count)
            chunks.append(Chunk(Array(elements[start..<end])))
            start = end
        }
        count = elements.count
    }

    /// Serves `count` elements already in order (little-endian, 8 bytes each, any alignment)
    /// at byte `offset` of the mapped file of `blocks` in place, one chunk per block of
    /// `perBlock` elements, the first being block `firstBlock`. The caller has checked they are
    /// in the file; each block is checked when first read.
    init(mapped blocks: CheckpointBlocks, offset: Int, count: Int, firstBlock: Int, perBlock: Int) {
        var start = 0
        chunks.reserveCapacity((count + perBlock - 1) / perBlock)
        let base = blocks.file.base + offset
        while start < count {
            let end = min(start + perBlock, count)
            chunks.append(Chunk(blocks: blocks, block: firstBlock + start / perBlock, at: base + start * 8, count: end - start, follows: start > 0))
            start = end
        }
        self.count = count
    }

    init() {}

    /// Elements held in the heap (chunks copied from the map or added since), for memory reports.
    var ownedCount: Int { chunks.reduce(0) { $0 + ($1.isMapped ? 0 : $1.count) } }

    /// The first position whose element is not less than the probe (`isBefore(element)` false).
    /// Reads through buffer pointers: no copies (retains) of chunks or elements while searching.
    func lowerBound(_ isBefore: (Element) -> Bool) -> Position {
        chunks.withUnsafeBufferPointer { outer -> Position in
            var low = 0, high = outer.count
            while low < high {
                let mid = (low + high) >> 1
                let inner = outer[mid].count
                if inner > 0 && isBefore(outer[mid][inner - 1]) { low = mid + 1 } else { high = mid }
            }
            guard low < outer.count else { return Position(chunk: outer.count, index: 0) }
            var l = 0, h = outer[low].count
            while l < h {
                let m = (l + h) >> 1
                if isBefore(outer[low][m]) { l = m + 1 } else { h = m }
            }
            return Position(chunk: low, index: l)
        }
    }

    var startPosition: Position { Position(chunk: 0, index: 0) }
    var endPosition: Position { Position(chunk: chunks.count, index: 0) }

    func element(at position: Position) -> Element? {
        guard position.chunk < chunks.count, position.index < chunks[position.chunk].count else { return nil }
        return chunks[position.chunk][position.index]
    }

    func next(_ position: Position) -> Position {
        if position.index + 1 < chunks[position.chunk].count { return Position(chunk: position.chunk, index: position.index + 1) }
        return Position(chunk: position.chunk + 1, index: 0)
    }

    /// The position before `position`, or nil at the start.
    func previous(_ position: Position) -> Position? {
        if position.index > 0 { return Position(chunk: position.chunk, index: position.index - 1) }
        var chunk = position.chunk - 1
        while chunk >= 0 {
            if !chunks[chunk].isEmpty { return Position(chunk: chunk, index: chunks[chunk].count - 1) }
            chunk -= 1
        }
        return nil
    }

    /// Inserts `element` after every element not after it (`isBefore` is "element < new").
    mutating func insert(_ element: Element, isBefore: (Element) -> Bool) {
        count += 1
        if chunks.isEmpty { chunks.append(Chunk([element])); return }
        var position = lowerBound(isBefore)
        if position.chunk == chunks.count { position = Position(chunk: chunks.count - 1, index: chunks[chunks.count - 1].count) }
        chunks[position.chunk].own()
        chunks[position.chunk].owned.insert(element, at: position.index)
        if chunks[position.chunk].count > Self.chunkLimit {
            let half = chunks[position.chunk].count / 2
            let tail = Array(chunks[position.chunk].owned[half...])
            chunks[position.chunk].owned.removeSubrange(half...)
            chunks.insert(Chunk(tail), at: position.chunk + 1)
        }
    }

    /// Appends an element known to be the largest.
    mutating func append(_ element: Element) {
        count += 1
        if let lastIndex = chunks.indices.last, !chunks[lastIndex].isMapped, chunks[lastIndex].count < Self.chunkLimit {
            chunks[lastIndex].owned.append(element)
        } else {
            chunks.append(Chunk([element]))
        }
    }

    /// Removes the element at `position`.
    mutating func remove(at position: Position) {
        count -= 1
        chunks[position.chunk].own()
        chunks[position.chunk].owned.remove(at: position.index)
        if chunks[position.chunk].isEmpty { chunks.remove(at: position.chunk) }
    }

    var last: Element? { chunks.last?.last }
    var first: Element? { chunks.first?.first }
}
