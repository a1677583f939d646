extension Array {
    /// `count` copies of `value`: what `Array(repeating:count:)` makes, without its cost on the
    /// statement and row paths. The standard library builds that array in an unspecialized
    /// function that looks the array's storage type up in the runtime's metadata cache on
    /// every call (about 900 instructions under callgrind, twice per INSERT); reserving and
    /// appending here is specialized in this module and keeps the type's metadata in a static.
    /// - Complexity: O(count).
    @inline(__always)
    static func filled(_ value: Element, count: Int) -> [Element] {
        var array: [Element] = []
        array.reserveCapacity(count)
        for _ in 0..<count { array.append(value) }
        return array
    }
}
