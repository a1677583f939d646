import BenchSupport
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

/// The values of a workload, written in place into one reused buffer so the timed loops
/// allocate nothing themselves. Every key gets its own content, so an engine that compresses
/// (LevelDB and RocksDB use Snappy by default) gains nothing it would not gain on real data:
/// - `.random(n)`: n bytes copied from a pool of pseudo-random bytes at an offset that depends
///   on the key and generation (incompressible), with the key index (4 bytes, little-endian) and
///   a generation byte stamped in front, so a read can check it got the right, newest value;
/// - `.json`: one of 512 JSON-like documents of 0.6-1.6 KiB (`JSONDocuments`), with the key
///   index in its `"id"` and the generation in its `"rev"`.
struct ValueSource: Sendable {
    let kind: ValueKind
    private let pool: [UInt8]
    private let documents: [[UInt8]]
    private(set) var bytes: [UInt8]
    static let poolSize = 1 << 20

    init(kind: ValueKind, seed: UInt64) {
        self.kind = kind
        switch kind {
        case .random(let size):
            var rng = SplitMix64(seed: seed ^ 0xBADC0FFEE)
            var pool = [UInt8](repeating: 0, count: Self.poolSize + size)
            pool.withUnsafeMutableBytes { raw in
                for i in stride(from: 0, to: raw.count - 7, by: 8) { raw.storeBytes(of: rng.next(), toByteOffset: i, as: UInt64.self) }
            }
            self.pool = pool
            documents = []
            bytes = [UInt8](repeating: 0, count: size)
        case .json:
            pool = []
            documents = JSONDocuments.make(count: JSONDocuments.count, seed: seed)
            bytes = []
            bytes.reserveCapacity(documents.map(\.count).max()!)
        }
    }

    /// Makes `bytes` the value of key `index` at `generation` (0-9).
    @inline(__always)
    mutating func make(index: Int, generation: UInt8) {
        switch kind {
        case .random(let size):
            let offset = (index &* 40_503 &+ Int(generation) &* 7_919) & (Self.poolSize - 1)
            pool.withUnsafeBytes { source in
                bytes.withUnsafeMutableBytes { target in
                    target.baseAddress!.copyMemory(from: source.baseAddress! + offset, byteCount: size)
                }
            }
            stamp(index: index, generation: generation)
        case .json:
            bytes.removeAll(keepingCapacity: true)
            bytes.append(contentsOf: documents[index % documents.count])
            bytes.withUnsafeMutableBufferPointer { value in
                var n = index
                for at in stride(from: JSONDocuments.idOffset + JSONDocuments.idDigits - 1, through: JSONDocuments.idOffset, by: -1) {
                    value[at] = UInt8(48 + n % 10)
                    n /= 10
                }
                value[JSONDocuments.revOffset] = 48 + generation
            }
        }
    }

    @inline(__always)
    private mutating func stamp(index: Int, generation: UInt8) {
        guard bytes.count >= 5 else { return }
        bytes.withUnsafeMutableBufferPointer { value in
            value[0] = UInt8(truncatingIfNeeded: index)
            value[1] = UInt8(truncatingIfNeeded: index >> 8)
            value[2] = UInt8(truncatingIfNeeded: index >> 16)
            value[3] = UInt8(truncatingIfNeeded: index >> 24)
            value[4] = generation
        }
    }

    /// True when `value` has the size and stamp of key `index` at `generation` (any generation
    /// when nil).
    @inline(__always)
    func check(_ value: [UInt8], index: Int, generation: UInt8?) -> Bool {
        switch kind {
        case .random(let size):
            guard value.count == size else { return false }
            guard size >= 5 else { return true }
            return value.withUnsafeBufferPointer { v in
                v[0] == UInt8(truncatingIfNeeded: index) && v[1] == UInt8(truncatingIfNeeded: index >> 8) &&
                    v[2] == UInt8(truncatingIfNeeded: index >> 16) && v[3] == UInt8(truncatingIfNeeded: index >> 24) &&
                    (generation == nil || v[4] == generation!)
            }
        case .json:
            guard value.count == documents[index % documents.count].count else { return false }
            var n = index
            for at in stride(from: JSONDocuments.idOffset + JSONDocuments.idDigits - 1, through: JSONDocuments.idOffset, by: -1) {
                guard value[at] == UInt8(48 + n % 10) else { return false }
                n /= 10
            }
            return generation == nil || value[JSONDocuments.revOffset] == 48 + generation!
        }
    }

    /// Bytes of the keys and values of keys `0 ..< keys` as the caller writes them.
    func rawBytes(keys: Int) -> Int {
        switch kind {
        case .random(let size): return keys * (KeyBuffer.length + size)
        case .json:
            let full = keys / documents.count
            var total = full * documents.reduce(0) { $0 + $1.count }
            for i in 0..<(keys % documents.count) { total += documents[i].count }
            return total + keys * KeyBuffer.length
        }
    }

    /// Average value size.
    var averageSize: Int {
        switch kind {
        case .random(let size): return size
        case .json: return documents.reduce(0) { $0 + $1.count } / documents.count
        }
    }
}

/// A random permutation of `0 ..< count` (4 bytes per key).
func randomPermutation(count: Int, seed: UInt64) -> [UInt32] {
    var order = [UInt32](0..<UInt32(count))
    var rng = SplitMix64(seed: seed)
    order.shuffle(using: &rng)
    return order
}
