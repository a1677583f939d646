import Foundation
import LogStore

/// The encrypted file format, version 1 (FORMAT.md, "Encrypted files"): a 72-byte header, then
/// segments of `segmentSize` plaintext bytes (the last one shorter, or empty for an empty file),
/// each AES-256-GCM ciphertext followed by its 16-byte tag.
///
/// Nonce of segment i: the header's 7-byte prefix, i as a big-endian UInt32, and 0x01 for the
/// last segment (0x00 otherwise). Associated data of every segment: the 72 header bytes. Key:
/// HKDF-SHA256 of the storage key with the header's salt.
struct EncryptedFileHeader: Equatable {
    static let magic = Array("USFILEGC".utf8)
    static let version: UInt8 = 1
    static let size = 72
    static let tagSize = AESGCM.tagSize
    static let minimumSegmentSize = 64
    static let maximumSegmentSize = 1 << 24
    static let keyInfo = Array("UnifiedStorage.Files.v1 file key".utf8)

    var segmentSize: Int
    var salt: [UInt8]
    var noncePrefix: [UInt8]
    /// The 72 bytes as written (the key check included once `sealed` ran).
    var bytes: [UInt8]

    /// A new header with a random salt and nonce prefix, its key check computed under the key
    /// derived from `storageKey`. Returns the header and the file key.
    static func new(segmentSize: Int, storageKey: [UInt8]) throws -> (EncryptedFileHeader, [UInt8]) {
        // One call for both (each call into OpenSSL's generator costs ~9k instructions).
        let random = try CryptoPrimitives.randomBytes(39)
        let salt = Array(random[0 ..< 32]), prefix = Array(random[32 ..< 39])
        var bytes = magic + [version, 0, 0, 0]
        bytes += withUnsafeBytes(of: UInt32(segmentSize).littleEndian, Array.init)
        bytes += salt + prefix + [0]
        let fileKey = try deriveKey(storageKey, salt: salt)
        bytes += try keyCheck(fileKey, bytes)
        return (EncryptedFileHeader(segmentSize: segmentSize, salt: salt, noncePrefix: prefix, bytes: bytes), fileKey)
    }

    /// Parses and authenticates the first 72 bytes of a file; returns the header and file key.
    /// - Throws: `corrupt` for a short file, a bad magic or field; `unsupportedVersion`;
    ///   `wrongKey` when the key check does not match.
    static func open(_ bytes: [UInt8], fileSize: Int, storageKey: [UInt8], file: String) throws -> (EncryptedFileHeader, [UInt8]) {
        guard bytes.prefix(magic.count).elementsEqual(magic.prefix(bytes.count)) else {
            throw FileStorageError.corrupt(file: file, offset: 0, reason: "not an encrypted file (bad magic)")
        }
        guard fileSize >= size, bytes.count == size else {
            throw FileStorageError.corrupt(file: file, offset: Int64(fileSize), reason: "\(fileSize) bytes, shorter than the \(size)-byte header")
        }
        guard bytes[8] == version else { throw FileStorageError.unsupportedVersion(file: file, version: bytes[8]) }
        guard bytes[9] == 0, bytes[10] == 0, bytes[11] == 0 else { throw FileStorageError.corrupt(file: file, offset: 9, reason: "reserved bytes are not zero") }
        let segmentSize = Int(UInt32(bytes[12]) | UInt32(bytes[13]) << 8 | UInt32(bytes[14]) << 16 | UInt32(bytes[15]) << 24)
        guard (minimumSegmentSize...maximumSegmentSize).contains(segmentSize) else {
            throw FileStorageError.corrupt(file: file, offset: 12, reason: "segment size \(segmentSize) outside \(minimumSegmentSize)...\(maximumSegmentSize)")
        }
        guard bytes[55] == 0 else { throw FileStorageError.corrupt(file: file, offset: 55, reason: "reserved byte is not zero") }
        let salt = Array(bytes[16..<48])
        let fileKey = try deriveKey(storageKey, salt: salt)
        guard try keyCheck(fileKey, Array(bytes[0..<56])) == Array(bytes[56..<72]) else { throw FileStorageError.wrongKey(file: file) }
        return (EncryptedFileHeader(segmentSize: segmentSize, salt: salt, noncePrefix: Array(bytes[48..<55]), bytes: bytes), fileKey)
    }

    /// HKDF-SHA256(storage key, salt, "UnifiedStorage.Files.v1 file key") -> 32 bytes.
    static func deriveKey(_ storageKey: [UInt8], salt: [UInt8]) throws -> [UInt8] {
        try CryptoPrimitives.hkdfSHA256(secret: storageKey, salt: salt, info: keyInfo, length: AESGCM.keySize)
    }

    /// The first 16 bytes of HMAC-SHA256(file key, header bytes 0..<56).
    static func keyCheck(_ fileKey: [UInt8], _ headerStart: [UInt8]) throws -> [UInt8] {
        Array(try CryptoPrimitives.hmacSHA256(key: fileKey, message: headerStart).prefix(16))
    }

    /// Segment `index`'s 12-byte nonce.
    func nonce(segment index: Int, last: Bool) -> [UInt8] {
        var nonce = noncePrefix + [0, 0, 0, 0, 0]
        setNonce(&nonce, segment: index, last: last)
        return nonce
    }

    /// Writes segment `index`'s counter and last flag into bytes 7..<12 of `nonce` (whose first
    /// 7 bytes hold the prefix), so the per-segment path allocates nothing.
    func setNonce(_ nonce: inout [UInt8], segment index: Int, last: Bool) {
        nonce.withUnsafeMutableBytes { Self.writeCounter(into: $0, segment: index, last: last) }
    }

    /// Bytes 7..<12 of a nonce: segment `index` as a big-endian UInt32, then the last flag.
    private static func writeCounter(into nonce: UnsafeMutableRawBufferPointer, segment index: Int, last: Bool) {
        let counter = UInt32(truncatingIfNeeded: index)
        nonce[7] = UInt8(truncatingIfNeeded: counter >> 24)
        nonce[8] = UInt8(truncatingIfNeeded: counter >> 16)
        nonce[9] = UInt8(truncatingIfNeeded: counter >> 8)
        nonce[10] = UInt8(truncatingIfNeeded: counter)
        nonce[11] = last ? 1 : 0
    }

    /// Writes segment `index`'s whole 12-byte nonce into `nonce`: the form for a batch split
    /// between threads, each with a nonce buffer of its own.
    func writeNonce(into nonce: UnsafeMutableRawBufferPointer, segment index: Int, last: Bool) {
        noncePrefix.withUnsafeBytes { nonce.copyMemory(from: $0) }
        Self.writeCounter(into: nonce, segment: index, last: last)
    }

    /// Bytes of a stored (sealed) full segment.
    var storedSegmentSize: Int { segmentSize + Self.tagSize }

    /// Byte offset of segment `index` in the file.
    func offset(ofSegment index: Int) -> Int { Self.size + index * storedSegmentSize }

    /// The segment count and plaintext length of a file of `fileSize` bytes.
    /// - Throws: `corrupt` when the file cannot end where it does (inside a header or a tag).
    func layout(fileSize: Int, file: String) throws -> (segments: Int, length: Int) {
        let body = fileSize - Self.size
        guard body >= Self.tagSize else {
            throw FileStorageError.corrupt(file: file, offset: Int64(fileSize), reason: "ends before the first segment's tag")
        }
        let segments = (body + storedSegmentSize - 1) / storedSegmentSize
        let last = body - (segments - 1) * storedSegmentSize
        guard last >= Self.tagSize else {
            throw FileStorageError.corrupt(file: file, offset: Int64(fileSize), reason: "ends inside the tag of segment \(segments - 1)")
        }
        guard segments <= Int(UInt32.max) else { throw FileStorageError.corrupt(file: file, offset: 0, reason: "more than 2^32 segments") }
        return (segments, body - segments * Self.tagSize)
    }
}
