import CAESGCM
import COpenSSL
import Foundation
import Synchronization

/// OpenSSL's AES-256-GCM implementation, fetched from the default provider once per process.
/// Keying a context with `EVP_aes_256_gcm()` fetches it by name again (a method-store lookup,
/// ~2.8k instructions per context under callgrind); a fetched cipher skips that. Nil when the
/// provider has no AES-256-GCM (a context then fails to key, with an error).
private struct FetchedCipher: @unchecked Sendable {
    // Unchecked: an `EVP_CIPHER` from `EVP_CIPHER_fetch` (and an `EVP_MD` from `EVP_MD_fetch`) is immutable and reference-counted by
    // OpenSSL; sharing it between threads is what OpenSSL documents. Never freed (one per process).
    let pointer: OpaquePointer?
}
private let aes256GCM = FetchedCipher(pointer: EVP_CIPHER_fetch(nil, "AES-256-GCM", nil))
/// SHA-256 from the default provider, fetched once per process (`CryptoPrimitives.hmacSHA256`).
private let sha256Digest = FetchedCipher(pointer: EVP_MD_fetch(nil, "SHA256", nil))

/// AES-256-GCM over OpenSSL's EVP interface, for one key.
///
/// Contexts are keyed once (the key schedule and GHASH table are computed when a context is
/// made) and then reused. Per operation the hot path makes the fewest EVP calls OpenSSL 3 allows:
/// the nonce goes in through one `EVP_CIPHER_CTX_set_params` (the whole-IV form of
/// `OSSL_CIPHER_PARAM_AEAD_TLS1_IV_FIXED`, which also carries the expected tag when opening)
/// instead of `EVP_*Init_ex`, which re-queries the IV length through the parameter machinery on
/// every call; the additional data goes in as one update; the tag comes out through one
/// `EVP_CIPHER_CTX_get_params`. Each direction keeps one context in an atomic slot (taken with
/// one exchange, returned with one compare-exchange: the common one-thread case touches no
/// lock); a small locked pool behind it lets several threads seal and open at once. A context is
/// used by one thread at a time (whoever took it out of the slot or pool); a context that failed
/// mid-operation is freed, never reused.
///
/// Where the CPU has VAES, VPCLMULQDQ and AVX2, every message skips EVP (`CAESGCM`'s wide path:
/// GCM written from SP 800-38D with 16 AES blocks in flight in 256-bit registers and GHASH
/// aggregated over 16 blocks; about twice EVP's throughput at 4 KiB and above on OpenSSL 3.0,
/// whose AES-GCM has no VAES code, and without EVP's per-call cost). Where it has AES-NI and
/// PCLMULQDQ only, messages up to `shortMessageLimit` bytes skip EVP (`CAESGCM`'s libcrypto
/// path: the block cipher with the AES instructions, GHASH and the GCM bookkeeping from
/// libcrypto's `CRYPTO_gcm128_*`): OpenSSL 3's EVP costs ~1.5k instructions a call around ~1.2k
/// of GCM work at 100 bytes (BENCHMARKS.md, "AES-GCM per-call overhead"); longer messages stay
/// on EVP, whose stitched AES+GHASH code is faster in bulk there. The output is the same
/// standard GCM (tests compare the paths byte for byte). `CAESGCM` contexts are kept the same
/// way, in one slot and a pool of their own (one context serves both directions).
package final class AESGCM: @unchecked Sendable {
    package static let keySize = 32
    package static let nonceSize = 12
    package static let tagSize = 16

    /// The key; kept so a rekey can wrap it.
    let key: [UInt8]
    /// The fast path: one keyed context per direction, as its address (0: empty).
    private let encryptSlot = Atomic<UInt>(0)
    private let decryptSlot = Atomic<UInt>(0)
    /// The overflow pool, for contexts returned while the slot was full.
    private let mutex = Mutex()
    // Unchecked: `mutex` makes every access exclusive; the dynamic checks cost on every call.
    @exclusivity(unchecked) private var encryptors: [OpaquePointer] = []
    @exclusivity(unchecked) private var decryptors: [OpaquePointer] = []

    /// OpenSSL's parameter names (null-terminated C strings; `OSSL_CIPHER_PARAM_*`).
    private static let ivFixedName: StaticString = "tlsivfixed"
    private static let tagName: StaticString = "tag"
    /// Additional data up to this size is joined with its prefix byte on the stack.
    private static let stackAADLimit = 512

    /// Messages (plaintexts) up to this many bytes take `CAESGCM`'s libcrypto path when the
    /// wide path is not there (messages of any length take the wide path).
    package static let shortMessageLimit = 1024
    /// Whether this machine has a `CAESGCM` path (the first context was made at init).
    package let hasShortMessagePath: Bool
    /// Whether the `CAESGCM` contexts run the wide path (VAES, VPCLMULQDQ), which takes messages
    /// of every length.
    package let hasWidePath: Bool
    /// Whether new `CAESGCM` contexts may take the wide path (false: tests of the libcrypto path).
    private let allowsWidePath: Bool
    /// `CAESGCM` contexts: one in the slot (its address; 0: empty), more in the pool.
    private let shortSlot = Atomic<UInt>(0)
    @exclusivity(unchecked) private var shortContexts: [OpaquePointer] = []

    /// - Throws: `StoreError.wrongKey(keyID: 0)` when the key is not 32 bytes.
    package convenience init(key: [UInt8]) throws {
        try self.init(key: key, shortMessagePath: true)
    }

    /// `shortMessagePath: false` keeps every message on EVP; `widePath: false` keeps `CAESGCM`
    /// on its libcrypto path (short messages only) where the wide path exists (tests compare the
    /// paths).
    package init(key: [UInt8], shortMessagePath: Bool, widePath: Bool = true) throws {
        guard key.count == Self.keySize else { throw StoreError.wrongKey(keyID: 0) }
        self.key = key
        allowsWidePath = widePath
        let first = shortMessagePath ? key.withUnsafeBufferPointer { us_gcm_new_options($0.baseAddress, widePath ? 1 : 0) } : nil
        hasShortMessagePath = first != nil
        hasWidePath = us_gcm_is_wide(first) == 1
        if let first { shortSlot.store(UInt(bitPattern: Int(bitPattern: first)), ordering: .releasing) }
    }

    deinit {
        for context in encryptors + decryptors { EVP_CIPHER_CTX_free(context) }
        for slot in [encryptSlot.load(ordering: .acquiring), decryptSlot.load(ordering: .acquiring)] {
            if let context = OpaquePointer(bitPattern: slot) { EVP_CIPHER_CTX_free(context) }
        }
        for context in shortContexts { us_gcm_free(context) }
        if let context = OpaquePointer(bitPattern: shortSlot.load(ordering: .acquiring)) { us_gcm_free(context) }
    }

    /// Encrypts `plaintext` and writes ciphertext followed by the 16-byte tag to `output`
    /// (which must have room for `plaintext.count + 16` bytes). The additional authenticated
    /// data is `aadPrefix` (when given) followed by `aad`.
    package func seal(_ plaintext: UnsafeRawBufferPointer, nonce: UnsafeRawBufferPointer, aadPrefix: UInt8? = nil,
              aad: UnsafeRawBufferPointer, into output: UnsafeMutableRawPointer) throws {
        guard nonce.count == Self.nonceSize else { throw Self.failure("nonce of \(nonce.count) bytes") }
        if hasWidePath || (hasShortMessagePath && plaintext.count <= Self.shortMessageLimit) {
            let context = try takeShort()
            let sealed = us_gcm_seal(context, nonce.baseAddress?.assumingMemoryBound(to: UInt8.self), aadPrefix == nil ? 0 : 1, aadPrefix ?? 0,
                                     aad.baseAddress?.assumingMemoryBound(to: UInt8.self), aad.count,
                                     plaintext.baseAddress?.assumingMemoryBound(to: UInt8.self), plaintext.count,
                                     output.assumingMemoryBound(to: UInt8.self))
            giveShort(context, reusable: sealed == 1)
            guard sealed == 1 else { throw Self.failure("us_gcm_seal (a text past GCM's 2^36 - 32 bytes, or CRYPTO_gcm128)") }
            return
        }
        // EVP takes lengths as Int32.
        guard plaintext.count <= Int(Int32.max), aad.count < Int(Int32.max) else {
            throw Self.failure("EVP: a message or additional data of 2^31 bytes or more")
        }
        let context = try take(encrypting: true)
        var ok = false
        defer { give(context, encrypting: true, reusable: ok) }
        var length: Int32 = 0
        guard Self.setNonce(context, nonce, tag: nil),
              Self.authenticate(context, prefix: aadPrefix, aad, update: EVP_EncryptUpdate)
        else { throw Self.failure("EVP_EncryptUpdate (nonce, additional data)") }
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
        var params = (Self.octets(Self.tagName, UnsafeMutableRawPointer(out + written), Self.tagSize), OSSL_PARAM())
        let gotTag = withUnsafeMutableBytes(of: &params) {
            EVP_CIPHER_CTX_get_params(context, $0.baseAddress?.assumingMemoryBound(to: OSSL_PARAM.self)) == 1
        }
        guard gotTag else { throw Self.failure("EVP_CIPHER_CTX_get_params (tag)") }
        ok = true
    }

    /// Verifies the tag at the end of `sealed` and returns the plaintext; the plaintext is
    /// never returned (or otherwise exposed) unless the tag verifies.
    /// - Throws: `StoreError.tampered(what)` when authentication fails.
    package func open(_ sealed: UnsafeRawBufferPointer, nonce: UnsafeRawBufferPointer, aadPrefix: UInt8? = nil,
              aad: UnsafeRawBufferPointer, what: @autoclosure () -> String) throws -> [UInt8] {
        guard sealed.count >= Self.tagSize else {
            throw StoreError.tampered("\(what()): \(sealed.count) bytes, shorter than the tag")
        }
        let cipherCount = sealed.count - Self.tagSize
        // The array is made as a copy of the ciphertext, then overwritten by the decryption:
        // `[UInt8](unsafeUninitializedCapacity:)` calls the stdlib's unspecialised
        // `_allocateBufferUninitialized` (a generic-metadata lookup, ~530 instructions per call
        // under callgrind), while a copy of a raw buffer is specialised here (~180, memcpy included).
        var plaintext = [UInt8](UnsafeRawBufferPointer(rebasing: sealed[..<cipherCount]))
        let verified = try plaintext.withUnsafeMutableBytes { out -> Bool in
            // An empty plaintext has no buffer; the decryption still wants a valid pointer.
            var scratch: UInt8 = 0
            return try withUnsafeMutablePointer(to: &scratch) { fallback in
                try open(sealed, nonce: nonce, aadPrefix: aadPrefix, aad: aad, into: out.baseAddress ?? UnsafeMutableRawPointer(fallback))
            }
        }
        // A refused tag: `open(into:)` has already zeroed the buffer, and it is dropped here.
        guard verified else { throw StoreError.tampered("\(what()): authentication tag does not match") }
        return plaintext
    }

    /// Verifies the tag at the end of `sealed` and decrypts into `output` (room for
    /// `sealed.count - 16` bytes), without allocating (the segmented file reader's path, and
    /// the one under `open(_:nonce:aadPrefix:aad:what:)`). The additional authenticated data is
    /// `aadPrefix` (when given) followed by `aad`. Returns false, with `output` zeroed, when the
    /// tag does not verify (or `sealed` is shorter than a tag), so no byte of an unauthenticated
    /// plaintext leaves it; a context whose tag was refused is freed, never reused.
    /// - Throws: `StoreError.io` when OpenSSL fails for another reason.
    package func open(_ sealed: UnsafeRawBufferPointer, nonce: UnsafeRawBufferPointer, aadPrefix: UInt8? = nil,
                      aad: UnsafeRawBufferPointer, into output: UnsafeMutableRawPointer) throws -> Bool {
        guard sealed.count >= Self.tagSize, let base = sealed.baseAddress?.assumingMemoryBound(to: UInt8.self) else { return false }
        guard nonce.count == Self.nonceSize else { throw Self.failure("nonce of \(nonce.count) bytes") }
        let cipherCount = sealed.count - Self.tagSize
        if hasWidePath || (hasShortMessagePath && cipherCount <= Self.shortMessageLimit) {
            let context = try takeShort()
            let opened = us_gcm_open(context, nonce.baseAddress?.assumingMemoryBound(to: UInt8.self), aadPrefix == nil ? 0 : 1, aadPrefix ?? 0,
                                     aad.baseAddress?.assumingMemoryBound(to: UInt8.self), aad.count, base, cipherCount,
                                     base + cipherCount, output.assumingMemoryBound(to: UInt8.self))
            // A context whose tag was refused is freed too, as on the EVP path.
            giveShort(context, reusable: opened == 1)
            guard opened >= 0 else { throw Self.failure("us_gcm_open (a text past GCM's 2^36 - 32 bytes, or CRYPTO_gcm128)") }
            return opened == 1
        }
        // EVP takes lengths as Int32.
        guard cipherCount <= Int(Int32.max), aad.count < Int(Int32.max) else {
            throw Self.failure("EVP: a message or additional data of 2^31 bytes or more")
        }
        let context = try take(encrypting: false)
        var ok = false
        defer { give(context, encrypting: false, reusable: ok) }
        guard Self.setNonce(context, nonce, tag: UnsafeMutableRawPointer(mutating: base + cipherCount)),
              Self.authenticate(context, prefix: aadPrefix, aad, update: EVP_DecryptUpdate)
        else { throw Self.failure("EVP_DecryptUpdate (nonce, tag, additional data)") }
        let out = output.assumingMemoryBound(to: UInt8.self)
        var length: Int32 = 0
        var written = 0
        var verified = true
        if cipherCount > 0 {
            verified = EVP_DecryptUpdate(context, out, &length, base, Int32(cipherCount)) == 1
            written = Int(length)
        }
        // Final writes nothing for GCM; it still wants a valid pointer.
        var scratch: UInt8 = 0
        if verified {
            verified = cipherCount > 0 ? EVP_DecryptFinal_ex(context, out + written, &length) == 1
                                       : EVP_DecryptFinal_ex(context, &scratch, &length) == 1
        }
        // Wipe what decryption produced before the tag was refused; none of it leaves here.
        if !verified { memset(output, 0, cipherCount) }
        ok = verified
        return verified
    }

    /// Sets the whole 12-byte nonce of a keyed context (and, when opening, the expected tag)
    /// without re-initialising it.
    @inline(__always)
    private static func setNonce(_ context: OpaquePointer, _ nonce: UnsafeRawBufferPointer, tag: UnsafeMutableRawPointer?) -> Bool {
        // A data size of SIZE_MAX is OpenSSL's "the whole IV" (EVP_CTRL_GCM_SET_IV_FIXED with -1).
        var params = (octets(ivFixedName, UnsafeMutableRawPointer(mutating: nonce.baseAddress), Int(bitPattern: UInt.max)),
                      tag.map { octets(tagName, $0, tagSize) } ?? OSSL_PARAM(), OSSL_PARAM())
        return withUnsafeMutableBytes(of: &params) {
            EVP_CIPHER_CTX_set_params(context, $0.baseAddress?.assumingMemoryBound(to: OSSL_PARAM.self)) == 1
        }
    }

    /// Feeds `prefix` then `aad` as additional authenticated data in one update.
    @inline(__always)
    private static func authenticate(_ context: OpaquePointer, prefix: UInt8?, _ aad: UnsafeRawBufferPointer,
                                     update: (OpaquePointer?, UnsafeMutablePointer<UInt8>?, UnsafeMutablePointer<Int32>?,
                                              UnsafePointer<UInt8>?, Int32) -> Int32) -> Bool {
        guard let prefix else {
            var length: Int32 = 0
            return aad.count == 0 || update(context, nil, &length, aad.bindMemory(to: UInt8.self).baseAddress, Int32(aad.count)) == 1
        }
        let total = aad.count + 1
        // `length` lives inside `feed` (not captured), so no dynamic exclusivity check per call.
        func feed(_ joined: UnsafeMutableRawBufferPointer) -> Bool {
            guard let start = joined.baseAddress else { return false }
            start.storeBytes(of: prefix, as: UInt8.self)
            if let bytes = aad.baseAddress, aad.count > 0 { (start + 1).copyMemory(from: bytes, byteCount: aad.count) }
            var length: Int32 = 0
            return update(context, nil, &length, start.assumingMemoryBound(to: UInt8.self), Int32(total)) == 1
        }
        if total <= stackAADLimit {
            return withUnsafeTemporaryAllocation(byteCount: total, alignment: 1, feed)
        }
        let heap = UnsafeMutableRawBufferPointer.allocate(byteCount: total, alignment: 1)
        defer { heap.deallocate() }
        return feed(heap)
    }

    /// An octet-string parameter named by a static C string.
    @inline(__always)
    private static func octets(_ name: StaticString, _ data: UnsafeMutableRawPointer?, _ size: Int) -> OSSL_PARAM {
        OSSL_PARAM(key: UnsafeRawPointer(name.utf8Start).assumingMemoryBound(to: CChar.self),
                   data_type: UInt32(OSSL_PARAM_OCTET_STRING), data: data, data_size: size, return_size: Int(bitPattern: UInt.max))
    }

    @inline(__always)
    private func take(encrypting: Bool) throws -> OpaquePointer {
        let taken = encrypting ? encryptSlot.exchange(0, ordering: .acquiring) : decryptSlot.exchange(0, ordering: .acquiring)
        if let context = OpaquePointer(bitPattern: taken) { return context }
        return try takeSlow(encrypting: encrypting)
    }

    /// A context from the pool, or a new one keyed for `encrypting`.
    @inline(never)
    private func takeSlow(encrypting: Bool) throws -> OpaquePointer {
        if let context = mutex.withLock({ encrypting ? encryptors.popLast() : decryptors.popLast() }) { return context }
        guard let cipher = aes256GCM.pointer else { throw Self.failure("EVP_CIPHER_fetch (AES-256-GCM)") }
        guard let context = EVP_CIPHER_CTX_new() else { throw Self.failure("EVP_CIPHER_CTX_new") }
        let ok = key.withUnsafeBufferPointer { keyBytes -> Bool in
            if encrypting {
                return EVP_EncryptInit_ex(context, cipher, nil, keyBytes.baseAddress, nil) == 1
            }
            return EVP_DecryptInit_ex(context, cipher, nil, keyBytes.baseAddress, nil) == 1
        }
        guard ok else {
            EVP_CIPHER_CTX_free(context)
            throw Self.failure("EVP_CipherInit_ex")
        }
        return context
    }

    /// Returns a context to its slot (or, when the slot is taken, the pool), or frees it when an
    /// operation failed half-way.
    @inline(__always)
    private func give(_ context: OpaquePointer, encrypting: Bool, reusable: Bool) {
        guard reusable else {
            EVP_CIPHER_CTX_free(context)
            return
        }
        let address = UInt(bitPattern: Int(bitPattern: context))
        let stored = encrypting
            ? encryptSlot.compareExchange(expected: 0, desired: address, successOrdering: .releasing, failureOrdering: .relaxed).exchanged
            : decryptSlot.compareExchange(expected: 0, desired: address, successOrdering: .releasing, failureOrdering: .relaxed).exchanged
        if !stored { giveSlow(context, encrypting: encrypting) }
    }

    @inline(never)
    private func giveSlow(_ context: OpaquePointer, encrypting: Bool) {
        mutex.withLock {
            if encrypting { encryptors.append(context) } else { decryptors.append(context) }
        }
    }

    /// A `CAESGCM` context: the slot's, the pool's, or a new one.
    @inline(__always)
    private func takeShort() throws -> OpaquePointer {
        if let context = OpaquePointer(bitPattern: shortSlot.exchange(0, ordering: .acquiring)) { return context }
        return try takeShortSlow()
    }

    @inline(never)
    private func takeShortSlow() throws -> OpaquePointer {
        if let context = mutex.withLock({ shortContexts.popLast() }) { return context }
        let wide: Int32 = allowsWidePath ? 1 : 0
        guard let context = key.withUnsafeBufferPointer({ us_gcm_new_options($0.baseAddress, wide) }) else { throw Self.failure("us_gcm_new") }
        return context
    }

    /// Returns a `CAESGCM` context to the slot or the pool, or frees it after a failure or a
    /// refused tag.
    @inline(__always)
    private func giveShort(_ context: OpaquePointer, reusable: Bool) {
        guard reusable else {
            us_gcm_free(context)
            return
        }
        let address = UInt(bitPattern: Int(bitPattern: context))
        if !shortSlot.compareExchange(expected: 0, desired: address, successOrdering: .releasing, failureOrdering: .relaxed).exchanged {
            mutex.withLock { shortContexts.append(context) }
        }
    }

    private static func failure(_ call: String) -> StoreError {
        StoreError.io(operation: "OpenSSL \(call) (error \(ERR_get_error()))", errno: EIO)
    }
}

/// Cryptographic helpers: random bytes, HKDF-SHA256, HMAC-SHA256.
package enum CryptoPrimitives {
    /// `count` bytes from the kernel's CSPRNG (`getrandom(2)`, the source OpenSSL seeds from),
    /// or from OpenSSL's (`RAND_bytes`) where that call is missing. A call into OpenSSL's
    /// generator took ~6 us per call here, one `getrandom` well under 1 us: an encrypted file
    /// draws its salt and nonce prefix with every write (BENCHMARKS.md, "Files").
    package static func randomBytes(_ count: Int) throws -> [UInt8] {
        var bytes = [UInt8](repeating: 0, count: count)
        if count == 0 || us_random_bytes(&bytes, count) == 1 { return bytes }
        guard RAND_bytes(&bytes, Int32(count)) == 1 else {
            throw StoreError.io(operation: "OpenSSL RAND_bytes", errno: EIO)
        }
        return bytes
    }

    /// HMAC-SHA256 of `message` under `key` (RFC 2104), on a SHA-256 fetched once per process:
    /// OpenSSL 3's one-shot `HMAC()` fetches its digest and MAC by name on every call (~21k
    /// instructions for a 32-byte message under callgrind, three of them per encrypted file
    /// written: BENCHMARKS.md, "Files").
    package static func hmacSHA256(key: [UInt8], message: [UInt8]) throws -> [UInt8] {
        guard let digest = sha256Digest.pointer, let context = EVP_MD_CTX_new() else {
            throw StoreError.io(operation: "OpenSSL SHA-256", errno: EIO)
        }
        defer { EVP_MD_CTX_free(context) }
        // A key longer than a block is hashed first; a shorter one is padded with zeros. Every
        // buffer derived from the key is wiped before it is freed (as OpenSSL's HMAC does).
        var block = [UInt8](repeating: 0, count: 64)
        var hashedKey = key.count > 64 ? try sha256(context, digest, key) : []
        let keyBytes = key.count > 64 ? hashedKey : key
        block.replaceSubrange(0 ..< keyBytes.count, with: keyBytes)
        var innerPad = block.map { $0 ^ 0x36 }
        var outerPad = block.map { $0 ^ 0x5C }
        defer {
            wipe(&block)
            wipe(&innerPad)
            wipe(&outerPad)
            wipe(&hashedKey)
        }
        let inner = try sha256(context, digest, innerPad, message)
        return try sha256(context, digest, outerPad, inner)
    }

    /// Zeroes `bytes` in place (key material, before the array is freed).
    private static func wipe(_ bytes: inout [UInt8]) {
        bytes.withUnsafeMutableBytes { raw in
            if let base = raw.baseAddress { memset(base, 0, raw.count) }
        }
    }

    /// SHA-256 of `parts` joined, through `context` (reset here).
    private static func sha256(_ context: OpaquePointer, _ digest: OpaquePointer, _ parts: [UInt8]...) throws -> [UInt8] {
        var out = [UInt8](repeating: 0, count: 32)
        var length: UInt32 = 0
        guard EVP_DigestInit_ex2(context, digest, nil) == 1,
              parts.allSatisfy({ EVP_DigestUpdate(context, $0, $0.count) == 1 }),
              EVP_DigestFinal_ex(context, &out, &length) == 1, length == 32 else {
            throw StoreError.io(operation: "OpenSSL SHA-256", errno: EIO)
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
