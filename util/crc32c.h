/*
 * util/crc32c.h: streaming CRC-32C (Castagnoli) for MPA (RFC 5044 §6).
 *
 * The caller owns seed and finalisation so one CRC can span partial reads,
 * iovecs and markers:
 *
 *     uint32_t c = CRC32C_SEED;
 *     c = crc32c_update(c, a, alen);
 *     c = crc32c_update(c, b, blen);
 *     uint32_t crc = crc32c_final(c);      // 0xE3069283 for "123456789"
 *
 * On the wire MPA stores |crc| little-endian (iw_put_u32le).
 * The backend (ISA-L, SSE4.2, slicing-by-8) is chosen once, on first use,
 * by CPU feature detection; every backend computes the same function.
 */
#ifndef IWARP_UTIL_CRC32C_H
#define IWARP_UTIL_CRC32C_H

#include <stddef.h>
#include <stdint.h>
#include <sys/uio.h>

#define CRC32C_SEED 0xFFFFFFFFu

/* Advance the running (un-finalised) CRC |crc| over |len| bytes at |buf|. */
uint32_t crc32c_update(uint32_t crc, const void *buf, size_t len);

/* Advance the running CRC over an iovec array. */
uint32_t crc32c_update_iov(uint32_t crc, const struct iovec *iov,
			   size_t iovcnt);

/* Finalise a running CRC into the CRC-32C value. */
static inline uint32_t crc32c_final(uint32_t crc)
{
	return ~crc;
}

/* One-shot convenience: CRC-32C of a buffer. */
static inline uint32_t crc32c(const void *buf, size_t len)
{
	return crc32c_final(crc32c_update(CRC32C_SEED, buf, len));
}

/* A CRC backend: same contract as crc32c_update. */
struct crc32c_backend {
	const char *name;	/* "isal", "sse42", "slice8" */
	int (*available)(void); /* nonzero when usable on this CPU/build */
	uint32_t (*update)(uint32_t crc, const void *buf, size_t len);
};

/* All compiled-in backends (available or not), |*n| set to their count. */
const struct crc32c_backend *crc32c_backends(size_t *n);

/* The backend crc32c_update dispatches to. */
const struct crc32c_backend *crc32c_selected(void);

/*
 * Backend entry points (util/crc32c_slice8.c, crc32c_sse42.c,
 * crc32c_isal.c). Same contract as crc32c_update; call one only when its
 * *_available() returns nonzero (crc32c_slice8_update always works).
 * crc32c_sse42_update falls back to slicing-by-8 on CPUs without SSE4.2.
 * The ISA-L entry points exist only in builds with HAVE_ISAL.
 */
uint32_t crc32c_slice8_update(uint32_t crc, const void *buf, size_t len);
int crc32c_sse42_available(void);
uint32_t crc32c_sse42_update(uint32_t crc, const void *buf, size_t len);
int crc32c_isal_available(void);
uint32_t crc32c_isal_update(uint32_t crc, const void *buf, size_t len);

/*
 * GF(2) algebra of the CRC register (reflected: bit 31 holds x^0).
 *
 * crc32c_mulmod: |a| * |b| mod P, P the Castagnoli polynomial.
 * crc32c_xpow: x^|n| mod P.
 * crc32c_zeros: the running CRC after |n| zero octets starting from |crc|,
 *   in O(log n) (crc32c_update over n zero bytes, without touching memory).
 * crc32c_combine: the running CRC over A||B from |crc_a| (running CRC after
 *   A) and |crc_b| (crc32c_update(0, B, len_b)); the CRC is linear, so
 *   crc32c_update(s, B) == crc32c_zeros(s, len_b) ^ crc32c_update(0, B).
 */
uint32_t crc32c_mulmod(uint32_t a, uint32_t b);
uint32_t crc32c_xpow(uint64_t n);
uint32_t crc32c_zeros(uint32_t crc, uint64_t n);
uint32_t crc32c_combine(uint32_t crc_a, uint32_t crc_b, uint64_t len_b);

#endif /* IWARP_UTIL_CRC32C_H */
