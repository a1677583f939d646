#ifndef CAESGCM_H
#define CAESGCM_H

#include <stddef.h>
#include <stdint.h>

/// AES-256-GCM without OpenSSL's EVP layer, on one of two paths chosen when a context is made:
/// - the wide path, where the CPU has VAES, VPCLMULQDQ and AVX2: all of GCM written here (SP
///   800-38D), CTR on 16 blocks at a time in 256-bit registers and GHASH aggregated over 16
///   blocks with carry-less multiplication; fast at every length;
/// - the libcrypto path, where the CPU has AES-NI and PCLMULQDQ only: the block cipher with the
///   AES instructions, the GHASH and the GCM bookkeeping from libcrypto's exported
///   `CRYPTO_gcm128_*` functions (worth it for short messages only).
/// The output is standard GCM, byte for byte what EVP's AES-256-GCM gives (LogStore's tests
/// compare them). Input and output may be the same buffer (in place); otherwise they must not
/// overlap.
///
/// A context is keyed once and used by one thread at a time; it holds the state of one
/// operation between `us_gcm_seal`/`us_gcm_open` calls only.
typedef struct us_gcm us_gcm;

/// A context for the 32-byte `key`, or NULL when the CPU lacks AES-NI or PCLMULQDQ, the build
/// is not for x86-64, or memory runs out (the caller then uses EVP).
us_gcm *us_gcm_new(const uint8_t *key);

/// As `us_gcm_new`; `allow_wide` 0 keeps the context on the libcrypto path even where the wide
/// path exists (tests compare the paths).
us_gcm *us_gcm_new_options(const uint8_t *key, int allow_wide);

/// 1 when `context` runs the wide path (VAES, VPCLMULQDQ), 0 otherwise (or for NULL).
int us_gcm_is_wide(const us_gcm *context);

/// Wipes the key schedule and frees the context. NULL is ignored.
void us_gcm_free(us_gcm *context);

/// Encrypts `length` bytes of `input` into `output` and writes the 16-byte tag at
/// `output + length`. The additional data is `prefix` (one byte, when `has_prefix` is set)
/// followed by `aad_length` bytes of `aad`. Returns 1, or 0 when the lengths pass GCM's limits
/// (more than 2^36 - 32 bytes of text per nonce) or libcrypto refused.
int us_gcm_seal(us_gcm *context, const uint8_t *nonce, int has_prefix, uint8_t prefix,
                const uint8_t *aad, size_t aad_length, const uint8_t *input, size_t length, uint8_t *output);

/// Decrypts `length` bytes of `input` into `output` and checks them against `tag`. Returns 1
/// when the tag verifies; otherwise 0, with `output` zeroed (the tag is compared in constant
/// time). -1 (also with `output` zeroed) when the lengths pass GCM's limits or libcrypto refused.
int us_gcm_open(us_gcm *context, const uint8_t *nonce, int has_prefix, uint8_t prefix,
                const uint8_t *aad, size_t aad_length, const uint8_t *input, size_t length,
                const uint8_t *tag, uint8_t *output);

/// Fills `length` bytes at `output` from the kernel's CSPRNG (`getrandom(2)`, retried after
/// a signal). Returns 1, or 0 where the call is missing or fails (the caller then falls back).
int us_random_bytes(uint8_t *output, size_t length);

#endif
