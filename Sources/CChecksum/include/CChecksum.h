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

/// A byte flag read by one thread while another may set it (relaxed atomic: the flag orders
/// nothing else). Used for the index snapshot's per-block "checksum verified" marks.
static inline uint8_t cs_flag_load(const uint8_t *flag) { return __atomic_load_n(flag, __ATOMIC_RELAXED); }

/// Sets a byte flag that other threads may read at the same time (relaxed atomic store).
static inline void cs_flag_store(uint8_t *flag, uint8_t value) { __atomic_store_n(flag, value, __ATOMIC_RELAXED); }

/// Asks the CPU to bring the cache line at `address` in for reading (a hint: no fault, no
/// effect on results). Used by walks whose next reads are known ahead but scattered.
static inline void cs_prefetch(const void *address) { __builtin_prefetch(address, 0, 3); }

#endif
