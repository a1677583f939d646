// AES-256-GCM without EVP (see CAESGCM.h). The AES-256 key expansion and block encryption
// follow FIPS-197 using the AES-NI instructions as Intel's AES-NI white paper describes them.
//
// Two paths share the key schedule:
// - The wide path (CPUs with VAES, VPCLMULQDQ and AVX2): GCM written here from NIST SP 800-38D,
//   GHASH with carry-less multiplication in the bit-reflected form of Intel's white paper
//   "Carry-Less Multiplication and its Usage for Computing the GCM Mode" (each block
//   byte-reversed, H premultiplied by x^-1 so the reflected product needs no shift, a two-step
//   reduction by the reflected polynomial), aggregated over 16 blocks with the precomputed
//   powers H^1..H^16 and one reduction per group, and CTR with 16 blocks in flight in 256-bit
//   registers (two AES blocks per instruction).
// - The libcrypto path (AES-NI and PCLMULQDQ only): GHASH, the counter handling, the length
//   block and the constant-time tag comparison are libcrypto's (`CRYPTO_gcm128_*`, exported by
//   OpenSSL 1.1 and 3.x), with the block cipher and a 4-block CTR from here.

#include "CAESGCM.h"

#include <stdlib.h>
#include <string.h>
#include <openssl/modes.h>
#include <openssl/crypto.h>

#if defined(__x86_64__)
#include <immintrin.h>

struct us_gcm {
    /// The wide path's tables: each round key in both 128-bit lanes, and the H powers paired
    /// for a 16-block group (`pairs[j]` holds H^(16-2j) in its low lane, H^(15-2j) in its high).
    __m256i wide_keys[15];
    __m256i pairs[8];
    /// Per lane of `pairs[j]`, the xor of its power's two 64-bit halves (in both halves): the
    /// middle factor of Karatsuba's three-multiplication product.
    __m256i pair_halves[8];
    __m128i round_keys[15];
    /// `powers[k]` is H^k for k = 1...16 in GHASH's reflected form (see `hash_key`); 0 unused.
    __m128i powers[17];
    /// The libcrypto path's state; NULL on the wide path.
    GCM128_CONTEXT *gcm;
    /// 1 on the wide path.
    int wide;
};

/// GCM's plaintext limit per nonce, 2^39 - 256 bits (SP 800-38D, 5.2.1.1), in bytes.
#define US_GCM_MAX_TEXT ((((uint64_t)1) << 36) - 32)
/// The additional data's limit, 2^64 - 1 bits, in bytes, less the prefix byte.
#define US_GCM_MAX_AAD ((((uint64_t)1) << 61) - 2)

#define US_AES_TARGET __attribute__((target("aes,pclmul,ssse3,sse4.1")))

/// Each 32-bit word of the previous round key xored with the words below it (w0, w0^w1, ...):
/// the chaining of FIPS-197's key expansion, four words at once.
US_AES_TARGET static __m128i running_xor(__m128i words) {
    __m128i shifted = _mm_slli_si128(words, 4);
    words = _mm_xor_si128(words, shifted);
    shifted = _mm_slli_si128(shifted, 4);
    words = _mm_xor_si128(words, shifted);
    shifted = _mm_slli_si128(shifted, 4);
    return _mm_xor_si128(words, shifted);
}

/// The next even round key: `assisted` is aeskeygenassist of the odd key, whose word 3 is
/// SubWord(RotWord(w)) ^ Rcon of that key's last word.
US_AES_TARGET static __m128i expand_even(__m128i previous, __m128i assisted) {
    return _mm_xor_si128(running_xor(previous), _mm_shuffle_epi32(assisted, 0xff));
}

/// The next odd round key: SubWord of the even key's last word, no rotation and no Rcon
/// (AES-256's extra step; word 2 of aeskeygenassist).
US_AES_TARGET static __m128i expand_odd(__m128i even, __m128i previous) {
    return _mm_xor_si128(running_xor(previous), _mm_shuffle_epi32(_mm_aeskeygenassist_si128(even, 0x00), 0xaa));
}

#define US_EXPAND(index, rcon)                                                              \
    even = expand_even(even, _mm_aeskeygenassist_si128(odd, rcon));                         \
    keys[index] = even;                                                                     \
    if (index < 14) { odd = expand_odd(even, odd); keys[index + 1] = odd; }

US_AES_TARGET static void expand_key(const uint8_t *key, __m128i *keys) {
    __m128i even = _mm_loadu_si128((const __m128i *)key);
    __m128i odd = _mm_loadu_si128((const __m128i *)(key + 16));
    keys[0] = even;
    keys[1] = odd;
    US_EXPAND(2, 0x01)
    US_EXPAND(4, 0x02)
    US_EXPAND(6, 0x04)
    US_EXPAND(8, 0x08)
    US_EXPAND(10, 0x10)
    US_EXPAND(12, 0x20)
    US_EXPAND(14, 0x40)
}

US_AES_TARGET static inline __m128i encrypt_block(const __m128i *keys, __m128i block) {
    block = _mm_xor_si128(block, keys[0]);
    for (int round = 1; round < 14; round++) block = _mm_aesenc_si128(block, keys[round]);
    return _mm_aesenclast_si128(block, keys[14]);
}

/// `block128_f` for libcrypto: one block with the schedule at `key`.
US_AES_TARGET static void block_function(const unsigned char in[16], unsigned char out[16], const void *key) {
    _mm_storeu_si128((__m128i *)out, encrypt_block((const __m128i *)key, _mm_loadu_si128((const __m128i *)in)));
}

/// `ctr128_f` for libcrypto: `blocks` blocks of CTR mode from the counter block `ivec`, whose
/// last four bytes are a big-endian counter incremented per block (mod 2^32, as GCM's inc32).
/// The counter is kept byte-swapped in a register (lane 3) so one add steps it; four blocks at
/// a time keep the AES units busy.
US_AES_TARGET static void ctr32_function(const unsigned char *in, unsigned char *out, size_t blocks, const void *key,
                                         const unsigned char ivec[16]) {
    const __m128i *keys = (const __m128i *)key;
    // Reverses bytes 12...15 (the counter), keeps 0...11 (the nonce part).
    const __m128i swap = _mm_set_epi8(12, 13, 14, 15, 11, 10, 9, 8, 7, 6, 5, 4, 3, 2, 1, 0);
    const __m128i one = _mm_set_epi32(1, 0, 0, 0);
    __m128i counter = _mm_shuffle_epi8(_mm_loadu_si128((const __m128i *)ivec), swap);
    while (blocks >= 4) {
        __m128i c1 = _mm_add_epi32(counter, one);
        __m128i c2 = _mm_add_epi32(c1, one);
        __m128i c3 = _mm_add_epi32(c2, one);
        __m128i s0 = _mm_xor_si128(_mm_shuffle_epi8(counter, swap), keys[0]);
        __m128i s1 = _mm_xor_si128(_mm_shuffle_epi8(c1, swap), keys[0]);
        __m128i s2 = _mm_xor_si128(_mm_shuffle_epi8(c2, swap), keys[0]);
        __m128i s3 = _mm_xor_si128(_mm_shuffle_epi8(c3, swap), keys[0]);
        counter = _mm_add_epi32(c3, one);
        for (int round = 1; round < 14; round++) {
            s0 = _mm_aesenc_si128(s0, keys[round]);
            s1 = _mm_aesenc_si128(s1, keys[round]);
            s2 = _mm_aesenc_si128(s2, keys[round]);
            s3 = _mm_aesenc_si128(s3, keys[round]);
        }
        s0 = _mm_aesenclast_si128(s0, keys[14]);
        s1 = _mm_aesenclast_si128(s1, keys[14]);
        s2 = _mm_aesenclast_si128(s2, keys[14]);
        s3 = _mm_aesenclast_si128(s3, keys[14]);
        _mm_storeu_si128((__m128i *)out, _mm_xor_si128(_mm_loadu_si128((const __m128i *)in), s0));
        _mm_storeu_si128((__m128i *)(out + 16), _mm_xor_si128(_mm_loadu_si128((const __m128i *)(in + 16)), s1));
        _mm_storeu_si128((__m128i *)(out + 32), _mm_xor_si128(_mm_loadu_si128((const __m128i *)(in + 32)), s2));
        _mm_storeu_si128((__m128i *)(out + 48), _mm_xor_si128(_mm_loadu_si128((const __m128i *)(in + 48)), s3));
        in += 64;
        out += 64;
        blocks -= 4;
    }
    while (blocks > 0) {
        __m128i stream = encrypt_block(keys, _mm_shuffle_epi8(counter, swap));
        _mm_storeu_si128((__m128i *)out, _mm_xor_si128(_mm_loadu_si128((const __m128i *)in), stream));
        counter = _mm_add_epi32(counter, one);
        in += 16;
        out += 16;
        blocks -= 1;
    }
}

// MARK: - The wide path (VAES, VPCLMULQDQ, AVX2)

#define US_WIDE_TARGET __attribute__((target("aes,pclmul,ssse3,sse4.1,avx,avx2,vaes,vpclmulqdq")))

/// Whether this CPU (and the OS, for the 256-bit state) runs the wide path.
static int wide_supported(void) {
    return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("vaes") && __builtin_cpu_supports("vpclmulqdq");
}

/// Reverses the 16 bytes of a block: GCM's first byte holds the coefficients of x^0...x^7
/// (x^0 in its top bit), so after the reversal bit i of the 128-bit integer is the coefficient
/// of x^(127-i), the reflected form in which carry-less products need no bit reversal.
#define US_REVERSE_BYTES _mm_set_epi8(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15)
/// Reverses bytes 12...15 of a counter block so its 32-bit counter (big-endian in GCM) is a
/// little-endian lane that one add steps; inc32 wraps mod 2^32 like the 32-bit add.
#define US_SWAP_COUNTER _mm_set_epi8(12, 13, 14, 15, 11, 10, 9, 8, 7, 6, 5, 4, 3, 2, 1, 0)

/// The reduction of a 256-bit reflected product `hi:lo` to 128 bits: two folds by the low
/// 64 bits of the reflected polynomial (x^128 + x^7 + x^2 + x + 1 reflected and without its top
/// term is 0xC2000000000000000000000000000001; x^128 = 1 under the fold, which is the swap).
/// Each fold clears 64 low bits by adding a multiple of the polynomial; the result is the
/// product times x^-128 shifted into the high half, which the x^-1 premultiplied into H's
/// powers (see `hash_key`) turns into exactly a*b.
US_WIDE_TARGET static inline __m128i reduce(__m128i lo, __m128i hi) {
    const __m128i poly = _mm_set_epi64x(0, (long long)0xC200000000000000ULL);
    __m128i fold = _mm_xor_si128(_mm_shuffle_epi32(lo, 0x4e), _mm_clmulepi64_si128(lo, poly, 0x00));
    __m128i second = _mm_clmulepi64_si128(fold, poly, 0x00);
    return _mm_xor_si128(_mm_xor_si128(hi, _mm_shuffle_epi32(fold, 0x4e)), second);
}

/// a * b in the field, both in the reflected form, b a premultiplied power (see `hash_key`).
US_WIDE_TARGET static inline __m128i field_multiply(__m128i a, __m128i b) {
    __m128i lo = _mm_clmulepi64_si128(a, b, 0x00);
    __m128i hi = _mm_clmulepi64_si128(a, b, 0x11);
    __m128i mid = _mm_xor_si128(_mm_clmulepi64_si128(a, b, 0x01), _mm_clmulepi64_si128(a, b, 0x10));
    lo = _mm_xor_si128(lo, _mm_slli_si128(mid, 8));
    hi = _mm_xor_si128(hi, _mm_srli_si128(mid, 8));
    return reduce(lo, hi);
}

/// H (the encrypted zero block) as the multiplier: reflected and multiplied by x^-1, which in
/// the reflected form is a shift left by one bit, with x^-1 = x^127 + x^6 + x + 1
/// (0xC2...01) added when the bit shifted out (the x^0 coefficient) was set. Constant time.
US_WIDE_TARGET static __m128i hash_key(__m128i encrypted_zero) {
    __m128i h = _mm_shuffle_epi8(encrypted_zero, US_REVERSE_BYTES);
    __m128i carries = _mm_srli_epi64(h, 63);
    __m128i shifted = _mm_or_si128(_mm_slli_epi64(h, 1), _mm_slli_si128(carries, 8));
    __m128i top = _mm_srai_epi32(_mm_shuffle_epi32(h, 0xff), 31);
    const __m128i inverse_x = _mm_set_epi64x((long long)0xC200000000000000ULL, 1);
    return _mm_xor_si128(shifted, _mm_and_si128(top, inverse_x));
}

/// Fills the wide path's tables: round keys in both lanes, H^1...H^16 and their pairs. The
/// products keep the x^-1 factor: (H^a x^-1)(H^b x^-1) reduced is H^(a+b) x^-1.
US_WIDE_TARGET static void wide_setup(us_gcm *context) {
    for (int round = 0; round < 15; round++) context->wide_keys[round] = _mm256_broadcastsi128_si256(context->round_keys[round]);
    context->powers[0] = _mm_setzero_si128();
    context->powers[1] = hash_key(encrypt_block(context->round_keys, _mm_setzero_si128()));
    for (int k = 2; k <= 16; k++) context->powers[k] = field_multiply(context->powers[k - 1], context->powers[1]);
    for (int j = 0; j < 8; j++) {
        context->pairs[j] = _mm256_set_m128i(context->powers[15 - 2 * j], context->powers[16 - 2 * j]);
        context->pair_halves[j] = _mm256_xor_si256(context->pairs[j], _mm256_shuffle_epi32(context->pairs[j], 0x4e));
    }
}

/// GHASH of one group of 16 blocks at `data` into `y`: (y + X1) H^16 + X2 H^15 + ... + X16 H,
/// two blocks per 256-bit multiply. Karatsuba's three multiplications per block (lo*lo, hi*hi,
/// (lo+hi)*(lo+hi), whose sum with the other two is the middle term) are summed unreduced over
/// the group, the middle term recovered and the whole reduced once.
US_WIDE_TARGET static inline __m128i hash_group(const us_gcm *context, __m128i y, const uint8_t *data) {
    const __m256i reverse = _mm256_broadcastsi128_si256(US_REVERSE_BYTES);
    __m256i lo = _mm256_setzero_si256(), hi = _mm256_setzero_si256(), mid = _mm256_setzero_si256();
    for (int j = 0; j < 8; j++) {
        __m256i x = _mm256_shuffle_epi8(_mm256_loadu_si256((const __m256i *)(data + 32 * j)), reverse);
        if (j == 0) x = _mm256_xor_si256(x, _mm256_zextsi128_si256(y));
        __m256i h = context->pairs[j];
        __m256i halves = _mm256_xor_si256(x, _mm256_shuffle_epi32(x, 0x4e));
        lo = _mm256_xor_si256(lo, _mm256_clmulepi64_epi128(x, h, 0x00));
        hi = _mm256_xor_si256(hi, _mm256_clmulepi64_epi128(x, h, 0x11));
        mid = _mm256_xor_si256(mid, _mm256_clmulepi64_epi128(halves, context->pair_halves[j], 0x00));
    }
    __m128i l = _mm_xor_si128(_mm256_castsi256_si128(lo), _mm256_extracti128_si256(lo, 1));
    __m128i m = _mm_xor_si128(_mm256_castsi256_si128(mid), _mm256_extracti128_si256(mid, 1));
    __m128i h = _mm_xor_si128(_mm256_castsi256_si128(hi), _mm256_extracti128_si256(hi, 1));
    m = _mm_xor_si128(m, _mm_xor_si128(l, h));
    return reduce(_mm_xor_si128(l, _mm_slli_si128(m, 8)), _mm_xor_si128(h, _mm_srli_si128(m, 8)));
}

/// GHASH of `length` bytes (fewer than 256) into `y`, the last partial block padded with
/// zeros: the k blocks aggregated with H^k...H^1 and reduced once.
US_WIDE_TARGET static __m128i hash_tail(const us_gcm *context, __m128i y, const uint8_t *data, size_t length) {
    size_t full = length / 16, rest = length % 16, count = full + (rest > 0);
    if (count == 0) return y;
    uint8_t padded[16] = {0};
    if (rest > 0) memcpy(padded, data + 16 * full, rest);
    __m128i lo = _mm_setzero_si128(), hi = _mm_setzero_si128(), mid = _mm_setzero_si128();
    for (size_t i = 0; i < count; i++) {
        __m128i x = _mm_loadu_si128((const __m128i *)(i < full ? data + 16 * i : padded));
        x = _mm_shuffle_epi8(x, US_REVERSE_BYTES);
        if (i == 0) x = _mm_xor_si128(x, y);
        __m128i h = context->powers[count - i];
        lo = _mm_xor_si128(lo, _mm_clmulepi64_si128(x, h, 0x00));
        hi = _mm_xor_si128(hi, _mm_clmulepi64_si128(x, h, 0x11));
        mid = _mm_xor_si128(mid, _mm_xor_si128(_mm_clmulepi64_si128(x, h, 0x01), _mm_clmulepi64_si128(x, h, 0x10)));
    }
    // The padded copy may hold plaintext (the AAD or an opened block).
    OPENSSL_cleanse(padded, sizeof padded);
    return reduce(_mm_xor_si128(lo, _mm_slli_si128(mid, 8)), _mm_xor_si128(hi, _mm_srli_si128(mid, 8)));
}

/// GHASH of `length` bytes into `y`; only the end may be a partial (zero-padded) block.
US_WIDE_TARGET static __m128i hash_bytes(const us_gcm *context, __m128i y, const uint8_t *data, size_t length) {
    while (length >= 256) {
        y = hash_group(context, y, data);
        data += 256;
        length -= 256;
    }
    return hash_tail(context, y, data, length);
}

/// GHASH of the additional data: `prefix` (when `has_prefix`) then `aad`. The prefix shifts
/// every block boundary by one byte, so the first 512 bytes of that stream are joined on the
/// stack; the rest of `aad` then starts on a block boundary of the stream and is hashed in place.
US_WIDE_TARGET static __m128i hash_additional(const us_gcm *context, int has_prefix, uint8_t prefix, const uint8_t *aad,
                                              size_t aad_length) {
    __m128i y = _mm_setzero_si128();
    if (!has_prefix) return aad_length > 0 ? hash_bytes(context, y, aad, aad_length) : y;
    uint8_t joined[512];
    size_t head = aad_length < sizeof joined - 1 ? aad_length : sizeof joined - 1;
    joined[0] = prefix;
    if (head > 0) memcpy(joined + 1, aad, head);
    y = hash_bytes(context, y, joined, head + 1);
    if (aad_length > head) y = hash_bytes(context, y, aad + head, aad_length - head);
    return y;
}

/// CTR over one group of 16 blocks from the counter `*counter` (two counter blocks, byte 12...15
/// swapped, lanes n and n+1), eight 256-bit states in flight; `*counter` moves on by 16.
US_WIDE_TARGET static inline void ctr_group(const us_gcm *context, __m256i *counter, const uint8_t *in, uint8_t *out) {
    const __m256i swap = _mm256_broadcastsi128_si256(US_SWAP_COUNTER);
    const __m256i two = _mm256_set_epi32(2, 0, 0, 0, 2, 0, 0, 0);
    __m256i s[8];
    __m256i c = *counter;
    for (int j = 0; j < 8; j++) {
        s[j] = _mm256_xor_si256(_mm256_shuffle_epi8(c, swap), context->wide_keys[0]);
        c = _mm256_add_epi32(c, two);
    }
    *counter = c;
    for (int round = 1; round < 14; round++) {
        __m256i key = context->wide_keys[round];
        for (int j = 0; j < 8; j++) s[j] = _mm256_aesenc_epi128(s[j], key);
    }
    for (int j = 0; j < 8; j++) {
        s[j] = _mm256_aesenclast_epi128(s[j], context->wide_keys[14]);
        __m256i text = _mm256_loadu_si256((const __m256i *)(in + 32 * j));
        _mm256_storeu_si256((__m256i *)(out + 32 * j), _mm256_xor_si256(text, s[j]));
    }
}

/// One group of CTR (16 blocks, `in` to `out`) stitched with the GHASH of 16 other blocks at
/// `hashed` into `y`: one 256-bit multiply step after each of the first eight AES rounds, so the
/// carry-less multiplies run beside the AES rounds instead of after them. `hashed` is read
/// before `out` is written (opening in place hashes the group it decrypts).
US_WIDE_TARGET static inline __m128i stitched_group(const us_gcm *context, __m256i *counter, __m128i y, const uint8_t *hashed,
                                                    const uint8_t *in, uint8_t *out) {
    const __m256i swap = _mm256_broadcastsi128_si256(US_SWAP_COUNTER);
    const __m256i reverse = _mm256_broadcastsi128_si256(US_REVERSE_BYTES);
    const __m256i two = _mm256_set_epi32(2, 0, 0, 0, 2, 0, 0, 0);
    __m256i s[8];
    __m256i c = *counter;
    for (int j = 0; j < 8; j++) {
        s[j] = _mm256_xor_si256(_mm256_shuffle_epi8(c, swap), context->wide_keys[0]);
        c = _mm256_add_epi32(c, two);
    }
    *counter = c;
    __m256i lo = _mm256_setzero_si256(), hi = _mm256_setzero_si256(), mid = _mm256_setzero_si256();
    for (int round = 1; round < 14; round++) {
        __m256i key = context->wide_keys[round];
        for (int j = 0; j < 8; j++) s[j] = _mm256_aesenc_epi128(s[j], key);
        if (round <= 8) {
            int j = round - 1;
            __m256i x = _mm256_shuffle_epi8(_mm256_loadu_si256((const __m256i *)(hashed + 32 * j)), reverse);
            if (j == 0) x = _mm256_xor_si256(x, _mm256_zextsi128_si256(y));
            __m256i h = context->pairs[j];
            __m256i halves = _mm256_xor_si256(x, _mm256_shuffle_epi32(x, 0x4e));
            lo = _mm256_xor_si256(lo, _mm256_clmulepi64_epi128(x, h, 0x00));
            hi = _mm256_xor_si256(hi, _mm256_clmulepi64_epi128(x, h, 0x11));
            mid = _mm256_xor_si256(mid, _mm256_clmulepi64_epi128(halves, context->pair_halves[j], 0x00));
        }
    }
    for (int j = 0; j < 8; j++) {
        s[j] = _mm256_aesenclast_epi128(s[j], context->wide_keys[14]);
        __m256i text = _mm256_loadu_si256((const __m256i *)(in + 32 * j));
        _mm256_storeu_si256((__m256i *)(out + 32 * j), _mm256_xor_si256(text, s[j]));
    }
    __m128i l = _mm_xor_si128(_mm256_castsi256_si128(lo), _mm256_extracti128_si256(lo, 1));
    __m128i m = _mm_xor_si128(_mm256_castsi256_si128(mid), _mm256_extracti128_si256(mid, 1));
    __m128i h = _mm_xor_si128(_mm256_castsi256_si128(hi), _mm256_extracti128_si256(hi, 1));
    m = _mm_xor_si128(m, _mm_xor_si128(l, h));
    return reduce(_mm_xor_si128(l, _mm_slli_si128(m, 8)), _mm_xor_si128(h, _mm_srli_si128(m, 8)));
}

/// CTR over the last `length` bytes (fewer than 256): the key stream for the blocks left is
/// made two blocks at a time into a stack buffer, xored in, and wiped.
US_WIDE_TARGET static void ctr_tail(const us_gcm *context, __m256i counter, const uint8_t *in, uint8_t *out, size_t length) {
    if (length == 0) return;
    const __m256i swap = _mm256_broadcastsi128_si256(US_SWAP_COUNTER);
    const __m256i two = _mm256_set_epi32(2, 0, 0, 0, 2, 0, 0, 0);
    uint8_t stream[256];
    size_t pairs = (length + 31) / 32;
    for (size_t j = 0; j < pairs; j++) {
        __m256i state = _mm256_xor_si256(_mm256_shuffle_epi8(counter, swap), context->wide_keys[0]);
        counter = _mm256_add_epi32(counter, two);
        for (int round = 1; round < 14; round++) state = _mm256_aesenc_epi128(state, context->wide_keys[round]);
        _mm256_storeu_si256((__m256i *)(stream + 32 * j), _mm256_aesenclast_epi128(state, context->wide_keys[14]));
    }
    size_t done = 0;
    for (; done + 16 <= length; done += 16) {
        __m128i text = _mm_loadu_si128((const __m128i *)(in + done));
        _mm_storeu_si128((__m128i *)(out + done), _mm_xor_si128(text, _mm_loadu_si128((const __m128i *)(stream + done))));
    }
    for (; done < length; done++) out[done] = in[done] ^ stream[done];
    OPENSSL_cleanse(stream, pairs * 32);
}

/// Seal (`decrypting` 0) or open (1) on the wide path; the computed tag goes to `tag`. Works in
/// place (`input` == `output`): each group is hashed from ciphertext that is read before it is overwritten (opening) or after it
/// is written (sealing).
US_WIDE_TARGET static void wide_crypt(const us_gcm *context, int decrypting, const uint8_t *nonce, int has_prefix, uint8_t prefix,
                                      const uint8_t *aad, size_t aad_length, const uint8_t *input, size_t length, uint8_t *output,
                                      uint8_t tag[16]) {
    // J0 = nonce || 0x00000001 for a 96-bit nonce (SP 800-38D, 7.1 step 2); the text starts at
    // inc32(J0).
    uint8_t block[16];
    memcpy(block, nonce, 12);
    block[12] = 0; block[13] = 0; block[14] = 0; block[15] = 1;
    __m128i j0 = _mm_loadu_si128((const __m128i *)block);
    __m128i first = _mm_add_epi32(_mm_shuffle_epi8(j0, US_SWAP_COUNTER), _mm_set_epi32(1, 0, 0, 0));
    __m256i counter = _mm256_add_epi32(_mm256_broadcastsi128_si256(first), _mm256_set_epi32(1, 0, 0, 0, 0, 0, 0, 0));

    __m128i y = hash_additional(context, has_prefix, prefix, aad, aad_length);
    size_t done = 0;
    if (decrypting) {
        for (; done + 256 <= length; done += 256) y = stitched_group(context, &counter, y, input + done, input + done, output + done);
    } else if (length >= 256) {
        // Sealing hashes what it wrote: each group's AES runs beside the GHASH of the one before.
        ctr_group(context, &counter, input, output);
        for (done = 256; done + 256 <= length; done += 256) {
            y = stitched_group(context, &counter, y, output + done - 256, input + done, output + done);
        }
        y = hash_group(context, y, output + done - 256);
    }
    if (decrypting) y = hash_tail(context, y, input + done, length - done);
    ctr_tail(context, counter, input + done, output + done, length - done);
    if (!decrypting) y = hash_tail(context, y, output + done, length - done);

    // The length block: len(A) || len(C) in bits, 64-bit big-endian each, as the last GHASH block.
    uint64_t aad_bits = (uint64_t)(aad_length + (has_prefix ? 1 : 0)) * 8, text_bits = (uint64_t)length * 8;
    __m128i lengths = _mm_set_epi64x((long long)aad_bits, (long long)text_bits);
    y = field_multiply(_mm_xor_si128(y, lengths), context->powers[1]);
    __m128i mask = encrypt_block(context->round_keys, j0);
    _mm_storeu_si128((__m128i *)tag, _mm_xor_si128(_mm_shuffle_epi8(y, US_REVERSE_BYTES), mask));
}

/// Whether two tags are equal, in time independent of where they differ.
US_WIDE_TARGET static int tags_equal(const uint8_t *a, const uint8_t *b) {
    __m128i difference = _mm_xor_si128(_mm_loadu_si128((const __m128i *)a), _mm_loadu_si128((const __m128i *)b));
    return _mm_testz_si128(difference, difference);
}

us_gcm *us_gcm_new(const uint8_t *key) { return us_gcm_new_options(key, 1); }

us_gcm *us_gcm_new_options(const uint8_t *key, int allow_wide) {
    if (!__builtin_cpu_supports("aes") || !__builtin_cpu_supports("pclmul") || !__builtin_cpu_supports("ssse3") || !__builtin_cpu_supports("sse4.1")) return NULL;
    us_gcm *context = aligned_alloc(64, (sizeof(us_gcm) + 63) / 64 * 64);
    if (context == NULL) return NULL;
    memset(context, 0, sizeof *context);
    expand_key(key, context->round_keys);
    if (allow_wide && wide_supported()) {
        wide_setup(context);
        context->wide = 1;
        return context;
    }
    context->gcm = CRYPTO_gcm128_new(context->round_keys, block_function);
    if (context->gcm == NULL) {
        OPENSSL_cleanse(context, sizeof *context);
        free(context);
        return NULL;
    }
    return context;
}

int us_gcm_is_wide(const us_gcm *context) { return context != NULL && context->wide; }

void us_gcm_free(us_gcm *context) {
    if (context == NULL) return;
    if (context->gcm != NULL) CRYPTO_gcm128_release(context->gcm);
    // The round keys and the powers of H are all key material.
    OPENSSL_cleanse(context, sizeof *context);
    free(context);
}

/// Nonce and additional data, shared by both directions. Returns 1 on success. The prefix
/// byte and the additional data go in as one call when they fit a stack buffer: libcrypto
/// takes the bytes of a partial block one at a time, and a lone prefix byte would leave every
/// later block partial.
static int begin(us_gcm *context, const uint8_t *nonce, int has_prefix, uint8_t prefix, const uint8_t *aad, size_t aad_length) {
    CRYPTO_gcm128_setiv(context->gcm, nonce, 12);
    if (has_prefix && aad_length < 512) {
        uint8_t joined[512];
        joined[0] = prefix;
        if (aad_length > 0) memcpy(joined + 1, aad, aad_length);
        return CRYPTO_gcm128_aad(context->gcm, joined, aad_length + 1) == 0;
    }
    if (has_prefix && CRYPTO_gcm128_aad(context->gcm, &prefix, 1) != 0) return 0;
    if (aad_length > 0 && CRYPTO_gcm128_aad(context->gcm, aad, aad_length) != 0) return 0;
    return 1;
}

int us_gcm_seal(us_gcm *context, const uint8_t *nonce, int has_prefix, uint8_t prefix,
                const uint8_t *aad, size_t aad_length, const uint8_t *input, size_t length, uint8_t *output) {
    if ((uint64_t)length > US_GCM_MAX_TEXT || (uint64_t)aad_length > US_GCM_MAX_AAD) return 0;
    if (context->wide) {
        wide_crypt(context, 0, nonce, has_prefix, prefix, aad, aad_length, input, length, output, output + length);
        return 1;
    }
    if (!begin(context, nonce, has_prefix, prefix, aad, aad_length)) return 0;
    if (length > 0 && CRYPTO_gcm128_encrypt_ctr32(context->gcm, input, output, length, ctr32_function) != 0) return 0;
    CRYPTO_gcm128_tag(context->gcm, output + length, 16);
    return 1;
}

int us_gcm_open(us_gcm *context, const uint8_t *nonce, int has_prefix, uint8_t prefix,
                const uint8_t *aad, size_t aad_length, const uint8_t *input, size_t length,
                const uint8_t *tag, uint8_t *output) {
    if ((uint64_t)length > US_GCM_MAX_TEXT || (uint64_t)aad_length > US_GCM_MAX_AAD) {
        // Nothing was written; wiped all the same, as every failure leaves `output` zeroed.
        if (length > 0) OPENSSL_cleanse(output, length);
        return -1;
    }
    if (context->wide) {
        // The expected tag is read before any output is written (the caller's `output` may
        // reach it).
        uint8_t expected[16], computed[16];
        memcpy(expected, tag, 16);
        wide_crypt(context, 1, nonce, has_prefix, prefix, aad, aad_length, input, length, output, computed);
        int equal = tags_equal(expected, computed);
        if (!equal && length > 0) OPENSSL_cleanse(output, length);
        return equal ? 1 : 0;
    }
    if (!begin(context, nonce, has_prefix, prefix, aad, aad_length)) return -1;
    if (length > 0 && CRYPTO_gcm128_decrypt_ctr32(context->gcm, input, output, length, ctr32_function) != 0) {
        // libcrypto refuses before it writes (a length past GCM's limit); wiped all the same,
        // so no unauthenticated byte can be left in `output` on any failure.
        OPENSSL_cleanse(output, length);
        return -1;
    }
    // Constant-time comparison inside libcrypto; 0 means the tag matches.
    if (CRYPTO_gcm128_finish(context->gcm, tag, 16) != 0) {
        if (length > 0) OPENSSL_cleanse(output, length);
        return 0;
    }
    return 1;
}

#else

us_gcm *us_gcm_new(const uint8_t *key) { (void)key; return NULL; }
us_gcm *us_gcm_new_options(const uint8_t *key, int allow_wide) { (void)key; (void)allow_wide; return NULL; }
int us_gcm_is_wide(const us_gcm *context) { (void)context; return 0; }
void us_gcm_free(us_gcm *context) { (void)context; }
int us_gcm_seal(us_gcm *context, const uint8_t *nonce, int has_prefix, uint8_t prefix,
                const uint8_t *aad, size_t aad_length, const uint8_t *input, size_t length, uint8_t *output) {
    (void)context; (void)nonce; (void)has_prefix; (void)prefix; (void)aad; (void)aad_length; (void)input; (void)length; (void)output;
    return 0;
}
int us_gcm_open(us_gcm *context, const uint8_t *nonce, int has_prefix, uint8_t prefix,
                const uint8_t *aad, size_t aad_length, const uint8_t *input, size_t length,
                const uint8_t *tag, uint8_t *output) {
    (void)context; (void)nonce; (void)has_prefix; (void)prefix; (void)aad; (void)aad_length; (void)input; (void)length; (void)tag; (void)output;
    return -1;
}

#endif
