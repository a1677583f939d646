#include "CChecksum.h"

#include <string.h>

#if defined(__x86_64__) || defined(__i386__)
#include <nmmintrin.h>
#define CS_HAVE_X86 1
#endif

// ---- CRC-32C ---------------------------------------------------------------------------

static uint32_t crc_table[8][256];
static int crc_table_ready = 0;

static void crc_table_init(void) {
    for (uint32_t n = 0; n < 256; n++) {
        uint32_t c = n;
        for (int k = 0; k < 8; k++) c = (c & 1) ? (c >> 1) ^ 0x82F63B78u : c >> 1;
        crc_table[0][n] = c;
    }
    for (uint32_t n = 0; n < 256; n++) {
        uint32_t c = crc_table[0][n];
        for (int t = 1; t < 8; t++) {
            c = crc_table[0][c & 0xFF] ^ (c >> 8);
            crc_table[t][n] = c;
        }
    }
    __atomic_store_n(&crc_table_ready, 1, __ATOMIC_RELEASE);
}

static inline uint64_t load_le64(const uint8_t *p) {
    uint64_t v;
    memcpy(&v, p, 8);
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
    v = __builtin_bswap64(v);
#endif
    return v;
}

uint32_t cs_crc32c_extend_portable(uint32_t crc, const void *data, size_t length) {
    // Building the table twice from two threads is harmless: both write the same values.
    if (!__atomic_load_n(&crc_table_ready, __ATOMIC_ACQUIRE)) crc_table_init();
    const uint8_t *p = data;
    uint32_t c = ~crc;
    while (length >= 8) {
        uint64_t word = load_le64(p) ^ c;
        c = crc_table[7][word & 0xFF] ^ crc_table[6][(word >> 8) & 0xFF] ^
            crc_table[5][(word >> 16) & 0xFF] ^ crc_table[4][(word >> 24) & 0xFF] ^
            crc_table[3][(word >> 32) & 0xFF] ^ crc_table[2][(word >> 40) & 0xFF] ^
            crc_table[1][(word >> 48) & 0xFF] ^ crc_table[0][word >> 56];
        p += 8;
        length -= 8;
    }
    while (length--) c = crc_table[0][(c ^ *p++) & 0xFF] ^ (c >> 8);
    return ~c;
}

// CRC combination (as zlib's crc32_combine): for the reflected polynomial, the CRC of A then B
// is multmodp(x^(8 |B|) mod P, crc(A)) XOR crc(B), so independent parts of a long buffer can
// be checksummed by interleaved streams and joined.

// a * b modulo the CRC-32C polynomial, both reflected (bit 31 is x^0).
static uint32_t crc_multmodp(uint32_t a, uint32_t b) {
    uint32_t m = 1u << 31, p = 0;
    for (;;) {
        if (a & m) {
            p ^= b;
            if ((a & (m - 1)) == 0) break;
        }
        m >>= 1;
        b = (b & 1) ? (b >> 1) ^ 0x82F63B78u : b >> 1;
    }
    return p;
}

// x^(8 n) modulo the polynomial, reflected: the operator that shifts a CRC past n zero bytes.
static uint32_t crc_shift_operator(size_t n) {
    uint32_t power = 1u << 30;      // x^1, then x^2, x^4, ... by squaring
    uint32_t result = 1u << 31;     // x^0
    n *= 8;
    while (n) {
        if (n & 1) result = crc_multmodp(power, result);
        power = crc_multmodp(power, power);
        n >>= 1;
    }
    return result;
}

#ifdef CS_HAVE_X86
// Bytes per stream of the three-way loop. The crc32 instruction has a latency of 3 cycles and
// a throughput of 1 per cycle, so one dependent chain runs at a third of the speed three
// independent ones reach; joining three streams costs two crc_multmodp calls per 3 x 4 KiB.
#define CRC_STREAM 4096

__attribute__((target("sse4.2")))
static uint32_t crc32c_sse42(uint32_t crc, const uint8_t *p, size_t length) {
    // Unaligned 8-byte steps: x86 loads do not care, and a byte loop to alignment costs more
    // than it saves on the short records this mostly sees.
    uint64_t c = ~crc;
    if (length >= 3 * CRC_STREAM) {
        static uint32_t shift = 0;
        uint32_t op = __atomic_load_n(&shift, __ATOMIC_RELAXED);
        if (op == 0) {
            op = crc_shift_operator(CRC_STREAM);
            __atomic_store_n(&shift, op, __ATOMIC_RELAXED);
        }
        while (length >= 3 * CRC_STREAM) {
            uint64_t a = c, b = 0xFFFFFFFFu, d = 0xFFFFFFFFu;
            for (size_t i = 0; i < CRC_STREAM; i += 8) {
                uint64_t wa, wb, wd;
                memcpy(&wa, p + i, 8);
                memcpy(&wb, p + CRC_STREAM + i, 8);
                memcpy(&wd, p + 2 * CRC_STREAM + i, 8);
                a = _mm_crc32_u64(a, wa);
                b = _mm_crc32_u64(b, wb);
                d = _mm_crc32_u64(d, wd);
            }
            // The three parts' CRCs (complemented as finished CRCs are), joined, then back to
            // the running form.
            uint32_t joined = crc_multmodp(op, crc_multmodp(op, ~(uint32_t)a) ^ ~(uint32_t)b) ^ ~(uint32_t)d;
            c = ~joined;
            p += 3 * CRC_STREAM;
            length -= 3 * CRC_STREAM;
        }
    }
    while (length >= 8) {
        uint64_t word;
        memcpy(&word, p, 8);
        c = _mm_crc32_u64(c, word);
        p += 8;
        length -= 8;
    }
    uint32_t c32 = (uint32_t)c;
    if (length >= 4) {
        uint32_t word;
        memcpy(&word, p, 4);
        c32 = _mm_crc32_u32(c32, word);
        p += 4;
        length -= 4;
    }
    if (length >= 2) {
        uint16_t word;
        memcpy(&word, p, 2);
        c32 = _mm_crc32_u16(c32, word);
        p += 2;
        length -= 2;
    }
    if (length) c32 = _mm_crc32_u8(c32, *p);
    return ~c32;
}
#endif

uint32_t cs_crc32c_extend(uint32_t crc, const void *data, size_t length) {
#ifdef CS_HAVE_X86
    static int has_sse42 = -1;
    int have = __atomic_load_n(&has_sse42, __ATOMIC_RELAXED);
    if (have < 0) {
        __builtin_cpu_init();
        have = __builtin_cpu_supports("sse4.2") ? 1 : 0;
        __atomic_store_n(&has_sse42, have, __ATOMIC_RELAXED);
    }
    if (have) return crc32c_sse42(crc, (const uint8_t *)data, length);
#endif
    return cs_crc32c_extend_portable(crc, data, length);
}

// ---- 64-bit hash -----------------------------------------------------------------------
// Multiply-fold mixing: each 16-byte block is folded through a 64x64->128 multiply. The
// constants are odd 64-bit numbers with well-spread bits (golden ratio and friends).

static const uint64_t K0 = 0x9E3779B97F4A7C15ull;
static const uint64_t K1 = 0xC2B2AE3D27D4EB4Full;
static const uint64_t K2 = 0x165667B19E3779F9ull;
static const uint64_t K3 = 0xD6E8FEB86659FD93ull;

static inline uint64_t fold(uint64_t a, uint64_t b) {
    __uint128_t r = (__uint128_t)a * b;
    return (uint64_t)r ^ (uint64_t)(r >> 64);
}

static inline uint32_t load_le32(const uint8_t *p) {
    uint32_t v;
    memcpy(&v, p, 4);
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
    v = __builtin_bswap32(v);
#endif
    return v;
}

// The n bytes at p (n in 0...8), little-endian, zero-padded to 8: two overlapping 4-byte loads
// or three single bytes, since a memcpy of a variable length was a call to libc's memcpy on
// every key hashed.
static inline uint64_t load_tail(const uint8_t *p, size_t n) {  // n in 0...8
    if (n >= 4) return (uint64_t)load_le32(p) | ((uint64_t)load_le32(p + n - 4) << (8 * (n - 4)));
    if (n == 0) return 0;
    return (uint64_t)p[0] | ((uint64_t)p[n >> 1] << (8 * (n >> 1))) | ((uint64_t)p[n - 1] << (8 * (n - 1)));
}

uint64_t cs_hash64(const void *data, size_t length, uint64_t seed) {
    const uint8_t *p = data;
    size_t n = length;
    uint64_t h = seed ^ fold(K0 ^ (uint64_t)length, K1);
    while (n > 16) {
        h = fold(load_le64(p) ^ K1, load_le64(p + 8) ^ h);
        p += 16;
        n -= 16;
    }
    uint64_t a, b;
    if (n > 8) { a = load_le64(p); b = load_tail(p + 8, n - 8); }
    else { a = load_tail(p, n); b = 0; }
    h = fold(a ^ K2, b ^ h ^ K3);
    return fold(h ^ K0, (uint64_t)length ^ K1);
}
