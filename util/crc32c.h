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
uint32_t crc32c_update_iov(uint32_t crc, const struct iovec *iov, size_t iovcnt);

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
	const char *name;                 /* "isal", "sse42", "slice8" */
	int (*available)(void);           /* nonzero when usable on this CPU/build */
	uint32_t (*update)(uint32_t crc, const void *buf, size_t len);
};

/* All compiled-in backends (available or not), |*n| set to their count. */
const struct crc32c_backend *crc32c_backends(size_t *n);

/* The backend crc32c_update dispatches to. */
const struct crc32c_backend *crc32c_selected(void);

#endif /* IWARP_UTIL_CRC32C_H */
