/// An ordered multiset kept in chunks of at most `chunkLimit` sorted elements: O(log n) search,
/// insert and delete cost O(log n + chunk), in-order scans in both directions. Used for the
/// rowid order of a table (Element = Int64); indexes use `KeyChunks`.
struct SortedChunks<Element: Sendable>: Sendable {
    private(set) var chunks: [[Element]] = []
    private(set) var count = 0
    static var chunkLimit: Int { 512 }

    /// A position: chunk and index inside it.
    struct Position: Equatable { var chunk: Int; var index: Int }

    /// Builds from elements already in order.
    init(sorted elements: [Element]) {
        var start = 0
        while start < elements.count {
            let end = min(start + Self.chunkLimit * 3 / 4, elements.count)
            chunks.append(Array(elements[start..<end]))
            start = end
        }
        count = elements.count
    }

    init() {}

    /// The first position whose element is not less than the probe (`isBefore(element)` false).
    /// Reads through buffer pointers: no copies (retains) of chunks or elements while searching.
    func lowerBound(_ isBefore: (Element) -> Bool) -> Position {
        chunks.withUnsafeBufferPointer { outer -> Position in
            var low = 0, high = outer.count
            while low < high {
                let mid = (low + high) >> 1
                let before = outer[mid].withUnsafeBufferPointer { inner in inner.count > 0 && isBefore(inner[inner.count - 1]) }
                if before { low = mid + 1 } else { high = mid }
            }
            guard low < outer.count else { return Position(chunk: outer.count, index: 0) }
            return outer[low].withUnsafeBufferPointer { inner -> Position in
                var l = 0, h = inner.count
                while l < h {
                    let m = (l + h) >> 1
                    if isBefore(inner[m]) { l = m + 1 } else { h = m }
                }
                return Position(chunk: low, index: l)
            }
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
        if chunks.isEmpty { chunks.append([element]); return }
        var position = lowerBound(isBefore)
        if position.chunk == chunks.count { position = Position(chunk: chunks.count - 1, index: chunks[chunks.count - 1].count) }
        chunks[position.chunk].insert(element, at: position.index)
        if chunks[position.chunk].count > Self.chunkLimit {
            let half = chunks[position.chunk].count / 2
            let tail = Array(chunks[position.chunk][half...])
            chunks[position.chunk].removeSubrange(half...)
            chunks.insert(tail, at: position.chunk + 1)
        }
    }

    /// Appends an element known to be the largest.
    mutating func append(_ element: Element) {
        count += 1
        if let lastIndex = chunks.indices.last, chunks[lastIndex].count < Self.chunkLimit {
            chunks[lastIndex].append(element)
        } else {
            chunks.append([element])
        }
    }

    /// Removes the element at `position`.
    mutating func remove(at position: Position) {
        count -= 1
        chunks[position.chunk].remove(at: position.index)
        if chunks[position.chunk].isEmpty { chunks.remove(at: position.chunk) }
    }

    var last: Element? { chunks.last?.last }
    var first: Element? { chunks.first?.first }
}
