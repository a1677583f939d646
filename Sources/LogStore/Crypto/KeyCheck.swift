/// Constants and derivations of the store's keys (FORMAT.md, "Keys").
enum KeyCheck {
    /// HKDF-SHA256 salt for keys derived from an application key string.
    static let derivationSalt = Array("UnifiedStorage.LogStore.v1 salt".utf8)
    /// HKDF-SHA256 info for keys derived from an application key string.
    static let derivationInfo = Array("UnifiedStorage default key".utf8)
    /// The message whose HMAC-SHA256 under a key is that key's check value.
    static let checkMessage = Array("UnifiedStorage.LogStore.v1 key check".utf8)

    /// The 16-byte check value the store keeps per key id, to refuse a wrong key at open
    /// without keeping the key: the first 16 bytes of HMAC-SHA256(key, checkMessage).
    static func value(of key: [UInt8]) throws -> [UInt8] {
        Array(try CryptoPrimitives.hmacSHA256(key: key, message: checkMessage).prefix(16))
    }

    /// The key of a key id's check value, in `LogStore.engineSpace`.
    static func recordKey(for keyID: UInt32) -> [UInt8] { Array("keycheck/\(keyID)".utf8) }
}

extension LogStore {
    /// The key space the engine keeps its own records in (key check values). Never used by
    /// the library's layers or applications.
    public static let engineSpace: KeySpace = 0xFFFF_FFFF
}
