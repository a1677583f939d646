// Speed of CAESGCM's paths beside OpenSSL's EVP AES-256-GCM, one thread, per message length
// (BENCHMARKS.md, "AES-256-GCM with VAES and VPCLMULQDQ"). Not part of the package build:
//
//   clang -O2 -I Sources/CAESGCM/include Sources/CAESGCM/aesgcm.c Sources/CAESGCM/aesgcm_wide.c tools/aesgcm_speed.c \
//         -lcrypto -o /tmp/aesgcm-speed
//   /tmp/aesgcm-speed
//
// Every call has 72 bytes of additional data after a one-byte prefix (a file segment's shape).
// EVP runs with one keyed context per direction, reused, as LogStore's AESGCM does; the EVP
// calls are the classic ones (Init with the nonce, Update, Final, ctrl for the tag). Figures:
// nanoseconds per call and GB/s of plaintext, the median of 5 rounds of about 0.1 s each.
// Before timing, each path's output is checked against EVP's for every length measured.

#include "CAESGCM.h"

#include <openssl/evp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

enum { ROUNDS = 5 };

static double now(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

static uint8_t key[32], nonce[12], aad[73], *plain, *sealed, *opened;
static EVP_CIPHER_CTX *encryptor, *decryptor;

static int evp_seal(size_t length) {
    int out = 0;
    return EVP_EncryptInit_ex(encryptor, NULL, NULL, NULL, nonce) == 1 && EVP_EncryptUpdate(encryptor, NULL, &out, aad, 73) == 1 &&
           (length == 0 || EVP_EncryptUpdate(encryptor, sealed, &out, plain, (int)length) == 1) &&
           EVP_EncryptFinal_ex(encryptor, sealed + length, &out) == 1 &&
           EVP_CIPHER_CTX_ctrl(encryptor, EVP_CTRL_GCM_GET_TAG, 16, sealed + length) == 1;
}

static int evp_open(size_t length) {
    int out = 0;
    return EVP_DecryptInit_ex(decryptor, NULL, NULL, NULL, nonce) == 1 &&
           EVP_CIPHER_CTX_ctrl(decryptor, EVP_CTRL_GCM_SET_TAG, 16, sealed + length) == 1 &&
           EVP_DecryptUpdate(decryptor, NULL, &out, aad, 73) == 1 &&
           (length == 0 || EVP_DecryptUpdate(decryptor, opened, &out, sealed, (int)length) == 1) &&
           EVP_DecryptFinal_ex(decryptor, opened + length, &out) == 1;
}

static int compare_doubles(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/// Median nanoseconds per call of `kind` (0: seal, 1: open) on `context` (NULL: EVP).
static double time_calls(us_gcm *context, int kind, size_t length) {
    long calls = (long)(1e8 / ((double)length + 300.0)) + 1;
    double rounds[ROUNDS];
    for (int round = 0; round < ROUNDS; round++) {
        double start = now();
        int ok = 1;
        for (long i = 0; i < calls; i++) {
            if (context == NULL) ok &= kind == 0 ? evp_seal(length) : evp_open(length);
            else if (kind == 0) ok &= us_gcm_seal(context, nonce, 1, aad[0], aad + 1, 72, plain, length, sealed);
            else ok &= us_gcm_open(context, nonce, 1, aad[0], aad + 1, 72, sealed, length, sealed + length, opened) == 1;
        }
        if (!ok) {
            fprintf(stderr, "a call failed\n");
            exit(1);
        }
        rounds[round] = (now() - start) / (double)calls * 1e9;
    }
    qsort(rounds, ROUNDS, sizeof rounds[0], compare_doubles);
    return rounds[ROUNDS / 2];
}

int main(void) {
    const size_t lengths[] = {64, 100, 1024, 4096, 65536, 1 << 20};
    const size_t count = sizeof lengths / sizeof lengths[0], largest = 1 << 20;
    plain = malloc(largest);
    sealed = malloc(largest + 16);
    opened = malloc(largest);
    uint8_t *expected = malloc(largest + 16);
    if (plain == NULL || sealed == NULL || opened == NULL || expected == NULL) return 1;
    for (size_t i = 0; i < sizeof key; i++) key[i] = (uint8_t)(i * 7 + 1);
    for (size_t i = 0; i < sizeof nonce; i++) nonce[i] = (uint8_t)(i * 13 + 5);
    for (size_t i = 0; i < sizeof aad; i++) aad[i] = (uint8_t)(i * 3);
    for (size_t i = 0; i < largest; i++) plain[i] = (uint8_t)(i * 31 + (i >> 8));
    encryptor = EVP_CIPHER_CTX_new();
    decryptor = EVP_CIPHER_CTX_new();
    if (encryptor == NULL || decryptor == NULL || EVP_EncryptInit_ex(encryptor, EVP_aes_256_gcm(), NULL, key, NULL) != 1 ||
        EVP_DecryptInit_ex(decryptor, EVP_aes_256_gcm(), NULL, key, NULL) != 1) return 1;
    us_gcm *wide = us_gcm_new_options(key, 1), *old = us_gcm_new_options(key, 0);
    printf("wide path: %s; libcrypto path: %s\n", us_gcm_is_wide(wide) ? "yes" : "no (not measured)",
           old != NULL ? "yes" : "no (not measured)");
    us_gcm *paths[2] = {us_gcm_is_wide(wide) ? wide : NULL, old};
    for (size_t index = 0; index < count; index++) {
        if (!evp_seal(lengths[index])) return 1;
        memcpy(expected, sealed, lengths[index] + 16);
        for (int path = 0; path < 2; path++) {
            if (paths[path] == NULL) continue;
            if (us_gcm_seal(paths[path], nonce, 1, aad[0], aad + 1, 72, plain, lengths[index], sealed) != 1 ||
                memcmp(sealed, expected, lengths[index] + 16) != 0) {
                fprintf(stderr, "path %d differs from EVP at %zu bytes\n", path, lengths[index]);
                return 1;
            }
        }
    }
    // Warm-up (clock frequency, caches): about 0.3 s of 4 KiB seals.
    for (long i = 0; i < 300000; i++) {
        if (paths[0] != NULL) us_gcm_seal(paths[0], nonce, 1, aad[0], aad + 1, 72, plain, 4096, sealed);
        else evp_seal(4096);
    }
    printf("%8s | %-21s | %-21s | %-21s | %-21s | %-21s | %-21s\n", "bytes", "wide seal", "wide open", "libcrypto-path seal",
           "libcrypto-path open", "EVP seal", "EVP open");
    for (size_t index = 0; index < count; index++) {
        size_t length = lengths[index];
        printf("%8zu", length);
        us_gcm *contexts[3] = {paths[0], paths[1], NULL};
        for (int which = 0; which < 3; which++) {
            for (int kind = 0; kind < 2; kind++) {
                if (which < 2 && contexts[which] == NULL) {
                    printf(" | %-21s", "-");
                    continue;
                }
                // The sealed buffer must hold this length's valid message before opens.
                if (!evp_seal(length)) return 1;
                double nanoseconds = time_calls(contexts[which], kind, length);
                char cell[32];
                snprintf(cell, sizeof cell, "%.0f ns %.2f GB/s", nanoseconds, (double)length / nanoseconds);
                printf(" | %-21s", cell);
            }
        }
        printf("\n");
    }
    us_gcm_free(wide);
    us_gcm_free(old);
    EVP_CIPHER_CTX_free(encryptor);
    EVP_CIPHER_CTX_free(decryptor);
    free(plain);
    free(sealed);
    free(opened);
    free(expected);
    return 0;
}
