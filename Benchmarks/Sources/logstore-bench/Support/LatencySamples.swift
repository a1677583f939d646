/// One duration per operation, in nanoseconds (saturating at ~4.3 s), in a buffer allocated and
/// touched before the timed loop so recording costs a store and no page fault.
final class LatencySamples: @unchecked Sendable {
    private let buffer: UnsafeMutableBufferPointer<UInt32>
    private(set) var count = 0

    init(capacity: Int) {
        buffer = .allocate(capacity: max(1, capacity))
        buffer.initialize(repeating: 0)
    }

    deinit { buffer.deallocate() }

    /// Bytes the buffer holds (it counts toward the process RSS).
    var memoryBytes: Int { buffer.count * MemoryLayout<UInt32>.stride }

    @inline(__always)
    func record(_ nanos: UInt64) {
        guard count < buffer.count else { return }
        buffer[count] = nanos > UInt64(UInt32.max) ? UInt32.max : UInt32(truncatingIfNeeded: nanos)
        count += 1
    }

    /// The samples of all of `parts` in one buffer.
    static func merged(_ parts: [LatencySamples]) -> LatencySamples {
        let all = LatencySamples(capacity: parts.reduce(0) { $0 + $1.count })
        for part in parts {
            for i in 0..<part.count { all.buffer[all.count + i] = part.buffer[i] }
            all.count += part.count
        }
        return all
    }

    /// Percentiles (nearest rank, in microseconds) of the recorded samples, e.g. `[0.5, 0.99]`.
    /// Sorts the samples in place.
    func percentilesMicros(_ ranks: [Double]) -> [Double]? {
        guard count > 0 else { return nil }
        var samples = UnsafeMutableBufferPointer(rebasing: buffer[0..<count])
        samples.sort()
        return ranks.map { rank in
            let index = min(count - 1, max(0, Int((rank * Double(count)).rounded(.up)) - 1))
            return Double(samples[index]) / 1000
        }
    }
}
