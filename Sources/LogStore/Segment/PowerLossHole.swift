/// Tells a hole left by a power loss from a damaged record, in the active segment.
///
/// A disk writes whole 512-byte sectors, and the page cache writes a file's pages back in any
/// order, so a power loss can keep a later sector of unsynced appends and lose an earlier one.
/// A lost sector keeps its old content, and an active segment's space is all zero before it is
/// appended to: so the hole holds zero bytes from its start (or from a sector boundary in it)
/// to the next sector boundary. A record damaged in place (a bit flip) has no such run, unless
/// its own bytes do.
enum PowerLossHole {
    static let sectorSize = 512

    /// Whether the corrupt `range` of a segment mapped at `base` holds a whole zero stretch
    /// from its start or from a sector boundary inside it up to the next sector boundary.
    /// O(range.count).
    static func isLostWrite(_ base: UnsafeRawPointer, _ range: Range<Int>) -> Bool {
        var start = range.lowerBound
        while start < range.upperBound {
            let boundary = (start / sectorSize + 1) * sectorSize
            guard boundary <= range.upperBound else { return false }
            var zero = true
            var index = start
            while index < boundary {
                if base.load(fromByteOffset: index, as: UInt8.self) != 0 { zero = false; break }
                index += 1
            }
            if zero { return true }
            start = boundary
        }
        return false
    }
}
