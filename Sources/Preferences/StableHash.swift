/// The stable name of a user's folder: 64-bit FNV-1a of the user id's UTF-8, as 16 lowercase hex
/// digits. Stable across runs, processes and platforms (Swift's `Hasher` is seeded per process),
/// and it keeps the id itself out of the file system. Not cryptographic: it hides the id from a
/// casual look, not from someone who can guess ids and hash them.
enum StableHash {
    static let offsetBasis: UInt64 = 0xcbf2_9ce4_8422_2325
    static let prime: UInt64 = 0x0000_0100_0000_01b3

    /// FNV-1a over `bytes`.
    static func fnv1a64<Bytes: Sequence>(_ bytes: Bytes) -> UInt64 where Bytes.Element == UInt8 {
        var hash = offsetBasis
        for byte in bytes {
            hash ^= UInt64(byte)
            hash = hash &* prime
        }
        return hash
    }

    /// `fnv1a64` of `text`'s UTF-8 as 16 lowercase hex digits.
    static func hex(_ text: String) -> String {
        let value = fnv1a64(text.utf8)
        let digits = String(value, radix: 16)
        return String(repeating: "0", count: 16 - digits.count) + digits
    }
}
