/// The live segments of a store by id, with flat arrays for the read path.
///
/// `base(of:)` and `limit(of:)` are array lookups without reference counting, which matters at
/// millions of reads a second. Ids index the arrays directly; they grow by one per new segment.
struct SegmentTable {
    private(set) var byID: [UInt32: Segment] = [:]
    private var bases: [UnsafeRawPointer?] = []
    private var limits: [Int] = []

    var count: Int { byID.count }
    var all: [Segment] { byID.values.sorted { $0.id < $1.id } }

    subscript(id: UInt32) -> Segment? { byID[id] }

    mutating func add(_ segment: Segment) {
        let index = Int(segment.id)
        if index >= bases.count {
            let grow = max(index + 1, bases.count * 2) - bases.count
            bases.append(contentsOf: repeatElement(nil, count: grow))
            limits.append(contentsOf: repeatElement(0, count: grow))
        }
        byID[segment.id] = segment
        bases[index] = UnsafeRawPointer(segment.base)
        limits[index] = segment.length
    }

    mutating func remove(_ id: UInt32) {
        byID[id] = nil
        if Int(id) < bases.count {
            bases[Int(id)] = nil
            limits[Int(id)] = 0
        }
    }

    mutating func removeAll() {
        byID = [:]
        bases = []
        limits = []
    }

    /// Publishes a new valid length of a segment (the active one, after an append).
    @inline(__always)
    mutating func setLimit(_ limit: Int, of id: UInt32) { limits[Int(id)] = limit }

    /// Calls `body` with the flat arrays of bases and limits (indexed by segment id), for
    /// loops over many records that should not look the arrays up again per record.
    @inline(__always)
    func withBasesAndLimits<Result>(_ body: (UnsafeBufferPointer<UnsafeRawPointer?>, UnsafeBufferPointer<Int>) throws -> Result) rethrows -> Result {
        try bases.withUnsafeBufferPointer { bases in try limits.withUnsafeBufferPointer { limits in try body(bases, limits) } }
    }

    @inline(__always)
    func base(of id: UInt32) -> UnsafeRawPointer? {
        Int(id) < bases.count ? bases[Int(id)] : nil
    }

    @inline(__always)
    func limit(of id: UInt32) -> Int { Int(id) < limits.count ? limits[Int(id)] : 0 }
}
