/// The keys `key%08d` and values of the benchmark, written in place into reused buffers so the
/// timed loops allocate nothing themselves. (An engine's API may still allocate: LogStore's
/// `get` returns a fresh `[UInt8]`.)
struct KeyBuffer {
    static let prefix: [UInt8] = Array("key".utf8)
    static let digits = 8
    static let length = prefix.count + digits
    /// Largest key count `key%08d` covers with a fixed key length.
    static let maxKeys = 100_000_000

    private(set) var bytes: [UInt8] = KeyBuffer.prefix + [UInt8](repeating: UInt8(ascii: "0"), count: KeyBuffer.digits)

    /// "00" ... "99", so a key takes four divisions instead of eight.
    private static let digitPairs: [UInt8] = {
        var pairs: [UInt8] = []
        for n in 0..<100 {
            pairs.append(UInt8(48 + n / 10))
            pairs.append(UInt8(48 + n % 10))
        }
        return pairs
    }()

    /// Makes `bytes` the key of index `i` (`0 <= i < maxKeys`).
    @inline(__always)
    mutating func set(_ i: Int) {
        var n = i
        KeyBuffer.digitPairs.withUnsafeBufferPointer { pairs in
            bytes.withUnsafeMutableBufferPointer { key in
                var at = KeyBuffer.length - 2
                while at >= KeyBuffer.prefix.count {
                    let pair = (n % 100) &* 2
                    n /= 100
                    key[at] = pairs[pair]
                    key[at + 1] = pairs[pair + 1]
                    at -= 2
                }
            }
        }
    }
}

/// A value of fixed size: a byte pattern with the key index (4 bytes, little-endian) and a
/// generation byte stamped in front, so a read can check it got the right, newest value.
struct ValueBuffer {
    private(set) var bytes: [UInt8]

    init(size: Int) {
        bytes = (0..<size).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ 7) }
    }

    @inline(__always)
    mutating func stamp(index: Int, generation: UInt8) {
        guard bytes.count >= 5 else { return }
        bytes.withUnsafeMutableBufferPointer { value in
            value[0] = UInt8(truncatingIfNeeded: index)
            value[1] = UInt8(truncatingIfNeeded: index >> 8)
            value[2] = UInt8(truncatingIfNeeded: index >> 16)
            value[3] = UInt8(truncatingIfNeeded: index >> 24)
            value[4] = generation
        }
    }

    /// True when `value` has the expected size and the stamp of `index` and `generation`.
    @inline(__always)
    static func check(_ value: [UInt8], size: Int, index: Int, generation: UInt8) -> Bool {
        guard value.count == size else { return false }
        guard size >= 5 else { return true }
        return value.withUnsafeBufferPointer { v in
            v[0] == UInt8(truncatingIfNeeded: index) && v[1] == UInt8(truncatingIfNeeded: index >> 8) &&
                v[2] == UInt8(truncatingIfNeeded: index >> 16) && v[3] == UInt8(truncatingIfNeeded: index >> 24) &&
                v[4] == generation
        }
    }
}

/// SplitMix64: a small seeded generator, so every run reads keys in the same random order.
struct SplitMix64: RandomNumberGenerator {
    private var state: UInt64

    init(seed: UInt64) { state = seed }

    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}

/// A random permutation of `0 ..< count` (4 bytes per key).
func randomPermutation(count: Int, seed: UInt64) -> [UInt32] {
    var order = [UInt32](0..<UInt32(count))
    var rng = SplitMix64(seed: seed)
    order.shuffle(using: &rng)
    return order
}
