#ifndef CCHECKSUM_H
#define CCHECKSUM_H

#include <stddef.h>
#include <stdint.h>

/// Extends a finished CRC-32C (Castagnoli, reflected polynomial 0x82F63B78) with `length` bytes.
/// Start with 0; the result of the empty input is 0 and of "123456789" is 0xE3069283.
/// Uses the SSE4.2 crc32 instruction when the CPU has it, a slicing-by-8 table otherwise.
uint32_t cs_crc32c_extend(uint32_t crc, const void *data, size_t length);

/// The portable (table) implementation, exposed so tests can check both paths agree.
uint32_t cs_crc32c_extend_portable(uint32_t crc, const void *data, size_t length);

/// A fast non-cryptographic 64-bit hash, stable across runs, processes and machines
/// (little-endian reads whatever the host), so it may be persisted in index snapshots.
uint64_t cs_hash64(const void *data, size_t length, uint64_t seed);

#endif
