/// The record that makes a rekey crash-safe (FORMAT.md, "Rekeying"): kept in the engine's key
/// space under `rekey` while records are being re-encrypted. It holds each key wrapped under the
/// other, so whichever of the two the application opens the store with, the other can be
/// recovered and every record stays readable until the rekey finishes.
struct RekeyState: Equatable {
    static let recordKey = Array("rekey".utf8)
    static let wrapSize = AESGCM.nonceSize + AESGCM.keySize + AESGCM.tagSize
    static let encodedSize = 8 + 2 * wrapSize
    static let newKeyContext = Array("UnifiedStorage.LogStore.v1 rekey: new key".utf8)
    static let oldKeyContext = Array("UnifiedStorage.LogStore.v1 rekey: old key".utf8)

    var oldKeyID: UInt32
    var newKeyID: UInt32
    /// nonce || AES-256-GCM(old key, nonce, aad: newKeyContext, new key) || tag
    var newKeyWrapped: [UInt8]
    /// nonce || AES-256-GCM(new key, nonce, aad: oldKeyContext, old key) || tag
    var oldKeyWrapped: [UInt8]

    /// The record key marking that key id `keyID` was replaced by a finished rekey.
    static func retiredRecordKey(_ keyID: UInt32) -> [UInt8] { Array("rekeyed/\(keyID)".utf8) }

    init(oldKeyID: UInt32, oldKey: [UInt8], newKeyID: UInt32, newKey: [UInt8]) throws {
        self.oldKeyID = oldKeyID
        self.newKeyID = newKeyID
        newKeyWrapped = try Self.wrap(newKey, under: oldKey, context: Self.newKeyContext)
        oldKeyWrapped = try Self.wrap(oldKey, under: newKey, context: Self.oldKeyContext)
    }

    init(decoding bytes: [UInt8]) throws {
        guard bytes.count == Self.encodedSize else { throw StoreError.corrupt("rekey record: \(bytes.count) bytes, expected \(Self.encodedSize)") }
        oldKeyID = bytes.withUnsafeBytes { LittleEndian.load32($0.baseAddress!, 0) }
        newKeyID = bytes.withUnsafeBytes { LittleEndian.load32($0.baseAddress!, 4) }
        newKeyWrapped = Array(bytes[8..<(8 + Self.wrapSize)])
        oldKeyWrapped = Array(bytes[(8 + Self.wrapSize)...])
    }

    func encoded() -> [UInt8] {
        var bytes: [UInt8] = []
        LittleEndian.append32(oldKeyID, to: &bytes)
        LittleEndian.append32(newKeyID, to: &bytes)
        return bytes + newKeyWrapped + oldKeyWrapped
    }

    /// The other key of the pair, given one of them (by id and bytes); nil for any other id.
    func otherKey(keyID: UInt32, key: [UInt8]) throws -> (keyID: UInt32, key: [UInt8])? {
        if keyID == oldKeyID { return (newKeyID, try Self.unwrap(newKeyWrapped, under: key, context: Self.newKeyContext)) }
        if keyID == newKeyID { return (oldKeyID, try Self.unwrap(oldKeyWrapped, under: key, context: Self.oldKeyContext)) }
        return nil
    }

    private static func wrap(_ key: [UInt8], under wrappingKey: [UInt8], context: [UInt8]) throws -> [UInt8] {
        let nonce = try CryptoPrimitives.randomBytes(AESGCM.nonceSize)
        var sealed = [UInt8](repeating: 0, count: key.count + AESGCM.tagSize)
        let cipher = try AESGCM(key: wrappingKey)
        try key.withUnsafeBytes { plain in
            try nonce.withUnsafeBytes { n in
                try context.withUnsafeBytes { aad in
                    try sealed.withUnsafeMutableBytes { try cipher.seal(plain, nonce: n, aad: aad, into: $0.baseAddress!) }
                }
            }
        }
        return nonce + sealed
    }

    private static func unwrap(_ wrapped: [UInt8], under wrappingKey: [UInt8], context: [UInt8]) throws -> [UInt8] {
        let cipher = try AESGCM(key: wrappingKey)
        return try Array(wrapped[AESGCM.nonceSize...]).withUnsafeBytes { sealed in
            try Array(wrapped[..<AESGCM.nonceSize]).withUnsafeBytes { n in
                try context.withUnsafeBytes { aad in try cipher.open(sealed, nonce: n, aad: aad, what: "rekey record") }
            }
        }
    }
}
