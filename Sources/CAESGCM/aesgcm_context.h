// The context shared by CAESGCM's two files (aesgcm.c: key schedule, libcrypto path and the
// API; aesgcm_wide.c: the wide path). Private to the target (not under include/).

#ifndef CAESGCM_CONTEXT_H
#define CAESGCM_CONTEXT_H

#include "CAESGCM.h"

#if defined(__x86_64__)
#include <immintrin.h>
#include <openssl/modes.h>

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

/// One AES-256 block with the round keys at `keys` (FIPS-197, with the AES-NI instructions).
US_AES_TARGET static inline __m128i encrypt_block(const __m128i *keys, __m128i block) {
    block = _mm_xor_si128(block, keys[0]);
    for (int round = 1; round < 14; round++) block = _mm_aesenc_si128(block, keys[round]);
    return _mm_aesenclast_si128(block, keys[14]);
}

/// Whether this CPU (and the OS, for the 256-bit state) runs the wide path.
int us_wide_supported(void);
/// Fills the wide path's tables of a context whose `round_keys` are set.
void us_wide_setup(us_gcm *context);
/// Seal (`decrypting` 0) or open (1) on the wide path; the computed tag goes to `tag`.
void us_wide_crypt(const us_gcm *context, int decrypting, const uint8_t *nonce, int has_prefix, uint8_t prefix,
                   const uint8_t *aad, size_t aad_length, const uint8_t *input, size_t length, uint8_t *output,
                   uint8_t tag[16]);
/// Whether two 16-byte tags are equal, in time independent of where they differ.
int us_wide_tags_equal(const uint8_t *a, const uint8_t *b);

#endif
#endif
