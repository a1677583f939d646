// AES-256-GCM without EVP (see CAESGCM.h). The AES-256 key expansion and block encryption
// follow FIPS-197 using the AES-NI instructions as Intel's AES-NI white paper describes them.
//
// Two paths share the key schedule:
// - The wide path (CPUs with VAES, VPCLMULQDQ and AVX2): all of GCM, in aesgcm_wide.c.
// - The libcrypto path (AES-NI and PCLMULQDQ only): GHASH, the counter handling, the length
//   block and the constant-time tag comparison are libcrypto's (`CRYPTO_gcm128_*`, exported by
//   OpenSSL 1.1 and 3.x), with the block cipher and a 4-block CTR from here.

#include "aesgcm_context.h"

#include <stdlib.h>
#include <string.h>
#include <openssl/modes.h>
#include <openssl/crypto.h>

#if defined(__x86_64__)

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

us_gcm *us_gcm_new(const uint8_t *key) { return us_gcm_new_options(key, 1); }

us_gcm *us_gcm_new_options(const uint8_t *key, int allow_wide) {
    if (!__builtin_cpu_supports("aes") || !__builtin_cpu_supports("pclmul") || !__builtin_cpu_supports("ssse3") || !__builtin_cpu_supports("sse4.1")) return NULL;
    us_gcm *context = aligned_alloc(64, (sizeof(us_gcm) + 63) / 64 * 64);
    if (context == NULL) return NULL;
    memset(context, 0, sizeof *context);
    expand_key(key, context->round_keys);
    if (allow_wide && us_wide_supported()) {
        us_wide_setup(context);
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
        us_wide_crypt(context, 0, nonce, has_prefix, prefix, aad, aad_length, input, length, output, output + length);
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
        us_wide_crypt(context, 1, nonce, has_prefix, prefix, aad, aad_length, input, length, output, computed);
        int equal = us_wide_tags_equal(expected, computed);
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
