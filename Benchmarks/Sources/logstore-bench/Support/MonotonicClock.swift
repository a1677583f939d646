#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// CLOCK_MONOTONIC in nanoseconds: a vDSO call (about 20 ns) where the clock source is the TSC.
enum MonotonicClock {
    @inline(__always)
    static func now() -> UInt64 {
        var spec = timespec()
        clock_gettime(CLOCK_MONOTONIC, &spec)
        return UInt64(spec.tv_sec) &* 1_000_000_000 &+ UInt64(spec.tv_nsec)
    }

    /// Average cost of one `now()` in nanoseconds, measured over `reads` calls.
    static func overheadNanos(reads: Int = 1_000_000) -> Double {
        var sink: UInt64 = 0
        let start = now()
        for _ in 0..<reads { sink &+= now() }
        let elapsed = now() - start
        if sink == 42 { print("") }  // keep the loop
        return Double(elapsed) / Double(reads)
    }

    static func seconds(from start: UInt64, to end: UInt64) -> Double { Double(end &- start) / 1e9 }
    static func millis(from start: UInt64, to end: UInt64) -> Double { Double(end &- start) / 1e6 }
}
