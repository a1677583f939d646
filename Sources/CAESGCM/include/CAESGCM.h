#ifndef CAESGCM_H
#define CAESGCM_H

#include <stddef.h>
#include <stdint.h>

/// AES-256-GCM for short messages without OpenSSL's EVP layer: the block cipher with the CPU's
/// AES instructions (AES-NI), the GHASH and the GCM bookkeeping from libcrypto's exported
/// `CRYPTO_gcm128_*` functions. The output is standard GCM, byte for byte what EVP's
/// AES-256-GCM gives (LogStore's tests compare them).
///
/// A context is keyed once and used by one thread at a time; it holds the state of one
/// operation between `us_gcm_seal`/`us_gcm_open` calls only.
typedef struct us_gcm us_gcm;

/// A context for the 32-byte `key`, or NULL when the CPU lacks AES-NI or PCLMULQDQ, the build
/// is not for x86-64, or memory runs out (the caller then uses EVP).
us_gcm *us_gcm_new(const uint8_t *key);

/// Wipes the key schedule and frees the context. NULL is ignored.
void us_gcm_free(us_gcm *context);

/// Encrypts `length` bytes of `input` into `output` and writes the 16-byte tag at
/// `output + length`. The additional data is `prefix` (one byte, when `has_prefix` is set)
/// followed by `aad_length` bytes of `aad`. Returns 1, or 0 when libcrypto refused.
int us_gcm_seal(us_gcm *context, const uint8_t *nonce, int has_prefix, uint8_t prefix,
                const uint8_t *aad, size_t aad_length, const uint8_t *input, size_t length, uint8_t *output);

/// Decrypts `length` bytes of `input` into `output` and checks them against `tag`. Returns 1
/// when the tag verifies; otherwise 0, with `output` zeroed. -1 (also with `output` zeroed)
/// when libcrypto refused.
int us_gcm_open(us_gcm *context, const uint8_t *nonce, int has_prefix, uint8_t prefix,
                const uint8_t *aad, size_t aad_length, const uint8_t *input, size_t length,
                const uint8_t *tag, uint8_t *output);

#endif
