import COpenSSL
import Foundation

/// AES-256-GCM over OpenSSL's EVP interface, for one key.
///
/// Contexts are initialised with the key once and then reused: each operation only sets the
/// nonce, so the hot path allocates no context and expands no key schedule. A small pool lets
/// several threads seal and open at once.
package final class AESGCM: @unchecked Sendable {
    package static let keySize = 32
    package static let nonceSize = 12
    package static let tagSize = 16

    /// The key; kept so a rekey can wrap it.
    let key: [UInt8]
    private let mutex = Mutex()
    private var encryptors: [OpaquePointer] = []
    private var decryptors: [OpaquePointer] = []

    /// - Throws: `StoreError.wrongKey(keyID: 0)` when the key is not 32 bytes.
    package init(key: [UInt8]) throws {
        guard key.count == Self.keySize else { throw StoreError.wrongKey(keyID: 0) }
        self.key = key
    }

    deinit {
        for context in encryptors + decryptors { EVP_CIPHER_CTX_free(context) }
    }

    /// Encrypts `plaintext` and writes ciphertext followed by the 16-byte tag to `output`
    /// (which must have room for `plaintext.count + 16` bytes). The additional authenticated
    /// data is `aadPrefix` (when given) followed by `aad`.
    package func seal(_ plaintext: UnsafeRawBufferPointer, nonce: UnsafeRawBufferPointer, aadPrefix: UInt8? = nil,
              aad: UnsafeRawBufferPointer, into output: UnsafeMutableRawPointer) throws {
        let context = try take(encrypting: true)
        defer { give(context, encrypting: true) }
        var length: Int32 = 0
        var prefix = aadPrefix ?? 0
        guard EVP_EncryptInit_ex(context, nil, nil, nil, nonce.bindMemory(to: UInt8.self).baseAddress) == 1,
              aadPrefix == nil || EVP_EncryptUpdate(context, nil, &length, &prefix, 1) == 1,
              aad.count == 0 || EVP_EncryptUpdate(context, nil, &length, aad.bindMemory(to: UInt8.self).baseAddress, Int32(aad.count)) == 1
        else { throw Self.failure("EVP_EncryptInit_ex") }
        let out = output.assumingMemoryBound(to: UInt8.self)
        var written = 0
        if plaintext.count > 0 {
            guard EVP_EncryptUpdate(context, out, &length, plaintext.bindMemory(to: UInt8.self).baseAddress, Int32(plaintext.count)) == 1 else {
                throw Self.failure("EVP_EncryptUpdate")
            }
            written = Int(length)
        }
        guard EVP_EncryptFinal_ex(context, out + written, &length) == 1 else { throw Self.failure("EVP_EncryptFinal_ex") }
        written += Int(length)
        guard EVP_CIPHER_CTX_ctrl(context, EVP_CTRL_GCM_GET_TAG, Int32(Self.tagSize), out + written) == 1 else {
            throw Self.failure("EVP_CTRL_GCM_GET_TAG")
        }
    }

    /// Verifies the tag at the end of `sealed` and returns the plaintext; the plaintext is
    /// never returned (or otherwise exposed) unless the tag verifies.
    /// - Throws: `StoreError.tampered(what)` when authentication fails.
    package func open(_ sealed: UnsafeRawBufferPointer, nonce: UnsafeRawBufferPointer, aadPrefix: UInt8? = nil,
              aad: UnsafeRawBufferPointer, what: @autoclosure () -> String) throws -> [UInt8] {
        guard sealed.count >= Self.tagSize else { throw StoreError.tampered("\(what()): \(sealed.count) bytes, shorter than the tag") }
        let context = try take(encrypting: false)
        defer { give(context, encrypting: false) }
        let cipherCount = sealed.count - Self.tagSize
        let base = sealed.bindMemory(to: UInt8.self).baseAddress!
        var length: Int32 = 0
        var prefix = aadPrefix ?? 0
        guard EVP_DecryptInit_ex(context, nil, nil, nil, nonce.bindMemory(to: UInt8.self).baseAddress) == 1,
              aadPrefix == nil || EVP_DecryptUpdate(context, nil, &length, &prefix, 1) == 1,
              aad.count == 0 || EVP_DecryptUpdate(context, nil, &length, aad.bindMemory(to: UInt8.self).baseAddress, Int32(aad.count)) == 1,
              EVP_CIPHER_CTX_ctrl(context, EVP_CTRL_GCM_SET_TAG, Int32(Self.tagSize), UnsafeMutableRawPointer(mutating: base + cipherCount)) == 1
        else { throw Self.failure("EVP_DecryptInit_ex") }
        var plaintext = [UInt8](repeating: 0, count: cipherCount)
        var written = 0
        let verified = plaintext.withUnsafeMutableBufferPointer { out -> Bool in
            if cipherCount > 0 {
                guard EVP_DecryptUpdate(context, out.baseAddress, &length, base, Int32(cipherCount)) == 1 else { return false }
                written = Int(length)
            }
            // Final writes nothing for GCM; it still wants a valid pointer.
            var scratch: UInt8 = 0
            if cipherCount > 0 { return EVP_DecryptFinal_ex(context, out.baseAddress! + written, &length) == 1 }
            return EVP_DecryptFinal_ex(context, &scratch, &length) == 1
        }
        guard verified else {
            // Wipe what decryption produced before the tag was refused; none of it leaves here.
            plaintext.withUnsafeMutableBytes { if let base = $0.baseAddress { memset(base, 0, $0.count) } }
            throw StoreError.tampered("\(what()): authentication tag does not match")
        }
        return plaintext
    }

    /// Verifies the tag at the end of `sealed` and decrypts into `output` (room for
    /// `sealed.count - 16` bytes), without allocating: the segmented file reader's path.
    /// Returns false, with `output` zeroed, when the tag does not verify (or `sealed` is shorter
    /// than a tag), so no byte of an unauthenticated plaintext leaves it.
    /// - Throws: `StoreError.io` when OpenSSL fails for another reason.
    package func open(_ sealed: UnsafeRawBufferPointer, nonce: UnsafeRawBufferPointer, aad: UnsafeRawBufferPointer,
                      into output: UnsafeMutableRawPointer) throws -> Bool {
        guard sealed.count >= Self.tagSize, let base = sealed.bindMemory(to: UInt8.self).baseAddress else { return false }
        let context = try take(encrypting: false)
        defer { give(context, encrypting: false) }
        let cipherCount = sealed.count - Self.tagSize
        var length: Int32 = 0
        guard EVP_DecryptInit_ex(context, nil, nil, nil, nonce.bindMemory(to: UInt8.self).baseAddress) == 1,
              aad.count == 0 || EVP_DecryptUpdate(context, nil, &length, aad.bindMemory(to: UInt8.self).baseAddress, Int32(aad.count)) == 1,
              EVP_CIPHER_CTX_ctrl(context, EVP_CTRL_GCM_SET_TAG, Int32(Self.tagSize), UnsafeMutableRawPointer(mutating: base + cipherCount)) == 1
        else { throw Self.failure("EVP_DecryptInit_ex") }
        let out = output.assumingMemoryBound(to: UInt8.self)
        var written = 0
        var verified = true
        if cipherCount > 0 {
            verified = EVP_DecryptUpdate(context, out, &length, base, Int32(cipherCount)) == 1
            written = Int(length)
        }
        var scratch: UInt8 = 0
        if verified {
            verified = cipherCount > 0 ? EVP_DecryptFinal_ex(context, out + written, &length) == 1
                                       : EVP_DecryptFinal_ex(context, &scratch, &length) == 1
        }
        if !verified { memset(output, 0, cipherCount) }
        return verified
    }

    private func take(encrypting: Bool) throws -> OpaquePointer {
        if let context = mutex.withLock({ encrypting ? encryptors.popLast() : decryptors.popLast() }) { return context }
        guard let context = EVP_CIPHER_CTX_new() else { throw Self.failure("EVP_CIPHER_CTX_new") }
        let ok = key.withUnsafeBufferPointer { keyBytes -> Bool in
            if encrypting {
                return EVP_EncryptInit_ex(context, EVP_aes_256_gcm(), nil, keyBytes.baseAddress, nil) == 1
            }
            return EVP_DecryptInit_ex(context, EVP_aes_256_gcm(), nil, keyBytes.baseAddress, nil) == 1
        }
        guard ok else {
            EVP_CIPHER_CTX_free(context)
            throw Self.failure("EVP_CipherInit_ex")
        }
        return context
    }

    private func give(_ context: OpaquePointer, encrypting: Bool) {
        mutex.withLock {
            if encrypting { encryptors.append(context) } else { decryptors.append(context) }
        }
    }

    private static func failure(_ call: String) -> StoreError {
        StoreError.io(operation: "OpenSSL \(call) (error \(ERR_get_error()))", errno: EIO)
    }
}

/// Cryptographic helpers: random bytes, HKDF-SHA256, HMAC-SHA256.
package enum CryptoPrimitives {
    /// `count` bytes from OpenSSL's CSPRNG.
    package static func randomBytes(_ count: Int) throws -> [UInt8] {
        var bytes = [UInt8](repeating: 0, count: count)
        guard RAND_bytes(&bytes, Int32(count)) == 1 else {
            throw StoreError.io(operation: "OpenSSL RAND_bytes", errno: EIO)
        }
        return bytes
    }

    /// HMAC-SHA256 of `message` under `key`.
    package static func hmacSHA256(key: [UInt8], message: [UInt8]) throws -> [UInt8] {
        var out = [UInt8](repeating: 0, count: 32)
        var length: UInt32 = 0
        guard HMAC(EVP_sha256(), key, Int32(key.count), message, message.count, &out, &length) != nil, length == 32 else {
            throw StoreError.io(operation: "OpenSSL HMAC", errno: EIO)
        }
        return out
    }

    /// HKDF-SHA256 (RFC 5869): extract with `salt`, expand with `info` to `length` bytes.
    package static func hkdfSHA256(secret: [UInt8], salt: [UInt8], info: [UInt8], length: Int) throws -> [UInt8] {
        let pseudoRandomKey = try hmacSHA256(key: salt, message: secret)
        var output: [UInt8] = []
        var previous: [UInt8] = []
        var counter: UInt8 = 1
        while output.count < length {
            previous = try hmacSHA256(key: pseudoRandomKey, message: previous + info + [counter])
            output += previous
            counter &+= 1
        }
        return Array(output.prefix(length))
    }
}
