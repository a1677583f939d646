/// The flag byte of a record (FORMAT.md, "Records").
struct RecordFlags: OptionSet, Sendable, Hashable {
    let rawValue: UInt8

    /// The record deletes its key; it has no value.
    static let tombstone = RecordFlags(rawValue: 0x01)
    /// An 8-byte absolute expiry time follows the length fields.
    static let hasExpiry = RecordFlags(rawValue: 0x02)
    /// More records of the same atomic batch follow this one; the batch's last record has it clear.
    static let batchContinues = RecordFlags(rawValue: 0x04)
    /// The stored value is a zstd frame; the decompressed length follows the length fields.
    static let compressed = RecordFlags(rawValue: 0x08)
    /// The stored value is AES-256-GCM ciphertext plus tag under the store's key `keyID`.
    static let encrypted = RecordFlags(rawValue: 0x10)
    /// The stored value was transformed by an application-supplied crypt.
    static let customCrypt = RecordFlags(rawValue: 0x20)
    /// The value may be dropped by the cache cleaner.
    static let purgeable = RecordFlags(rawValue: 0x40)

    /// The record is not the first of its batch. With `batchContinues` this makes batches
    /// self-delimiting: after lost bytes, records of a batch whose start was lost are recognised
    /// (they carry this flag) and dropped, so a batch never half-applies.
    static let batchFollower = RecordFlags(rawValue: 0x80)

    static let known: RecordFlags = [.tombstone, .hasExpiry, .batchContinues, .compressed, .encrypted, .customCrypt, .purgeable, .batchFollower]
    /// The flags that only mean something inside a write batch.
    static let batchFlags: RecordFlags = [.batchContinues, .batchFollower]
}
