// CAESGCM's wide path: AES-256-GCM for CPUs with VAES, VPCLMULQDQ and AVX2, written from NIST
// SP 800-38D (the GCM construction: J0, inc32, GHASH over the padded additional data and
// ciphertext and the length block, the tag) and from Intel's white paper "Carry-Less
// Multiplication and its Usage for Computing the GCM Mode" (GHASH in the bit-reflected form: each
// block byte-reversed, H premultiplied by x^-1 so the reflected product needs no shift, a
// two-step reduction by the reflected polynomial, products aggregated before one reduction).
// CTR runs on 16 blocks at a time in eight 256-bit registers (two AES blocks per instruction);
// GHASH multiplies two blocks per instruction by the precomputed powers H^16...H^1 and reduces
// once per group; each group's AES is interleaved with the GHASH of 16 blocks.

#include "aesgcm_context.h"

#if defined(__x86_64__)
#include <string.h>
#include <openssl/crypto.h>

#define US_WIDE_TARGET __attribute__((target("aes,pclmul,ssse3,sse4.1,avx,avx2,vaes,vpclmulqdq")))

int us_wide_supported(void) {
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
US_WIDE_TARGET void us_wide_setup(us_gcm *context) {
    for (int round = 0; round < 15; round++) context->wide_keys[round] = _mm256_broadcastsi128_si256(context->round_keys[round]);
    context->powers[0] = _mm_setzero_si128();
    context->powers[1] = hash_key(encrypt_block(context->round_keys, _mm_setzero_si128()));
    for (int k = 2; k <= 16; k++) context->powers[k] = field_multiply(context->powers[k - 1], context->powers[1]);
    for (int j = 0; j < 8; j++) {
        context->pairs[j] = _mm256_set_m128i(context->powers[15 - 2 * j], context->powers[16 - 2 * j]);
        context->pair_halves[j] = _mm256_xor_si256(context->pairs[j], _mm256_shuffle_epi32(context->pairs[j], 0x4e));
    }
}

/// Karatsuba sums of one group of eight 256-bit multiplies, kept unreduced until `fold`.
typedef struct { __m256i lo, hi, mid; } us_products;

/// Adds the products of the pair of blocks `j` of a group (two blocks at `data + 32 * j`, `y`
/// xored into the first block of pair 0) and the matching pair of powers of H.
US_WIDE_TARGET static inline void multiply_pair(const us_gcm *context, int j, const uint8_t *data, __m128i y, us_products *sums) {
    const __m256i reverse = _mm256_broadcastsi128_si256(US_REVERSE_BYTES);
    __m256i x = _mm256_shuffle_epi8(_mm256_loadu_si256((const __m256i *)(data + 32 * j)), reverse);
    if (j == 0) x = _mm256_xor_si256(x, _mm256_zextsi128_si256(y));
    __m256i h = context->pairs[j];
    __m256i halves = _mm256_xor_si256(x, _mm256_shuffle_epi32(x, 0x4e));
    sums->lo = _mm256_xor_si256(sums->lo, _mm256_clmulepi64_epi128(x, h, 0x00));
    sums->hi = _mm256_xor_si256(sums->hi, _mm256_clmulepi64_epi128(x, h, 0x11));
    sums->mid = _mm256_xor_si256(sums->mid, _mm256_clmulepi64_epi128(halves, context->pair_halves[j], 0x00));
}

/// The group's GHASH value: both lanes' sums added, the middle term recovered, one reduction.
US_WIDE_TARGET static inline __m128i fold(us_products sums) {
    __m128i l = _mm_xor_si128(_mm256_castsi256_si128(sums.lo), _mm256_extracti128_si256(sums.lo, 1));
    __m128i m = _mm_xor_si128(_mm256_castsi256_si128(sums.mid), _mm256_extracti128_si256(sums.mid, 1));
    __m128i h = _mm_xor_si128(_mm256_castsi256_si128(sums.hi), _mm256_extracti128_si256(sums.hi, 1));
    m = _mm_xor_si128(m, _mm_xor_si128(l, h));
    return reduce(_mm_xor_si128(l, _mm_slli_si128(m, 8)), _mm_xor_si128(h, _mm_srli_si128(m, 8)));
}

/// GHASH of one group of 16 blocks at `data` into `y`: (y + X1) H^16 + X2 H^15 + ... + X16 H,
/// two blocks per 256-bit multiply. Karatsuba's three multiplications per block (lo*lo, hi*hi,
/// (lo+hi)*(lo+hi), whose sum with the other two is the middle term) are summed unreduced over
/// the group, the middle term recovered and the whole reduced once.
US_WIDE_TARGET static inline __m128i hash_group(const us_gcm *context, __m128i y, const uint8_t *data) {
    us_products sums = { _mm256_setzero_si256(), _mm256_setzero_si256(), _mm256_setzero_si256() };
    for (int j = 0; j < 8; j++) multiply_pair(context, j, data, y, &sums);
    return fold(sums);
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

/// The first step of a group of 16 CTR blocks: the counter blocks from `*counter` (two counter
/// blocks, bytes 12...15 swapped, lanes n and n+1) xored with round key 0 into eight 256-bit
/// states; `*counter` moves on by 16.
US_WIDE_TARGET static inline void start_group(const us_gcm *context, __m256i *counter, __m256i s[8]) {
    const __m256i swap = _mm256_broadcastsi128_si256(US_SWAP_COUNTER);
    const __m256i two = _mm256_set_epi32(2, 0, 0, 0, 2, 0, 0, 0);
    __m256i c = *counter;
    for (int j = 0; j < 8; j++) {
        s[j] = _mm256_xor_si256(_mm256_shuffle_epi8(c, swap), context->wide_keys[0]);
        c = _mm256_add_epi32(c, two);
    }
    *counter = c;
}

/// The last AES round of the eight states, their key stream xored with `in` into `out`.
US_WIDE_TARGET static inline void finish_group(const us_gcm *context, __m256i s[8], const uint8_t *in, uint8_t *out) {
    for (int j = 0; j < 8; j++) {
        __m256i stream = _mm256_aesenclast_epi128(s[j], context->wide_keys[14]);
        __m256i text = _mm256_loadu_si256((const __m256i *)(in + 32 * j));
        _mm256_storeu_si256((__m256i *)(out + 32 * j), _mm256_xor_si256(text, stream));
    }
}

/// CTR over one group of 16 blocks, eight 256-bit states in flight.
US_WIDE_TARGET static inline void ctr_group(const us_gcm *context, __m256i *counter, const uint8_t *in, uint8_t *out) {
    __m256i s[8];
    start_group(context, counter, s);
    for (int round = 1; round < 14; round++) {
        __m256i key = context->wide_keys[round];
        for (int j = 0; j < 8; j++) s[j] = _mm256_aesenc_epi128(s[j], key);
    }
    finish_group(context, s, in, out);
}

/// One group of CTR (16 blocks, `in` to `out`) stitched with the GHASH of 16 other blocks at
/// `hashed` into `y`: one 256-bit multiply step after each of the first eight AES rounds, so the
/// carry-less multiplies run beside the AES rounds instead of after them. `hashed` is read
/// before `out` is written (opening in place hashes the group it decrypts).
US_WIDE_TARGET static inline __m128i stitched_group(const us_gcm *context, __m256i *counter, __m128i y, const uint8_t *hashed,
                                                    const uint8_t *in, uint8_t *out) {
    __m256i s[8];
    start_group(context, counter, s);
    us_products sums = { _mm256_setzero_si256(), _mm256_setzero_si256(), _mm256_setzero_si256() };
    for (int round = 1; round < 14; round++) {
        __m256i key = context->wide_keys[round];
        for (int j = 0; j < 8; j++) s[j] = _mm256_aesenc_epi128(s[j], key);
        if (round <= 8) multiply_pair(context, round - 1, hashed, y, &sums);
    }
    // The GHASH above read `hashed` in full before this writes `out` (in place when opening).
    finish_group(context, s, in, out);
    return fold(sums);
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
US_WIDE_TARGET void us_wide_crypt(const us_gcm *context, int decrypting, const uint8_t *nonce, int has_prefix, uint8_t prefix,
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

US_WIDE_TARGET int us_wide_tags_equal(const uint8_t *a, const uint8_t *b) {
    __m128i difference = _mm_xor_si128(_mm_loadu_si128((const __m128i *)a), _mm_loadu_si128((const __m128i *)b));
    return _mm_testz_si128(difference, difference);
}

#endif
