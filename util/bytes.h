/*
 * util/bytes.h: explicit byte-order get/put helpers for wire formats.
 *
 * Every wire field in libiwarp is read and written through these; no code
 * casts raw bytes to structs and no wire struct uses bitfields. The put
 * helpers return the advanced pointer, the get helpers read from |p|.
 * All iWARP fields are big-endian (network order) except the MPA CRC, which
 * is stored little-endian like the iSCSI digest (RFC 5044 §6,
 * docs/interop-notes.md §6.3).
 */
#ifndef IWARP_UTIL_BYTES_H
#define IWARP_UTIL_BYTES_H

#include <stddef.h>
#include <stdint.h>

static inline uint16_t iw_get_u16be(const uint8_t *p)
{
	return (uint16_t)((uint16_t)(p[0] << 8) | p[1]);
}

static inline uint32_t iw_get_u32be(const uint8_t *p)
{
	return ((uint32_t)p[0] << 24) | ((uint32_t)p[1] << 16) |
	       ((uint32_t)p[2] << 8) | (uint32_t)p[3];
}

static inline uint64_t iw_get_u64be(const uint8_t *p)
{
	return ((uint64_t)iw_get_u32be(p) << 32) | iw_get_u32be(p + 4);
}

static inline uint32_t iw_get_u32le(const uint8_t *p)
{
	return ((uint32_t)p[3] << 24) | ((uint32_t)p[2] << 16) |
	       ((uint32_t)p[1] << 8) | (uint32_t)p[0];
}

static inline uint8_t *iw_put_u8(uint8_t *p, uint8_t v)
{
	p[0] = v;
	return p + 1;
}

static inline uint8_t *iw_put_u16be(uint8_t *p, uint16_t v)
{
	p[0] = (uint8_t)(v >> 8);
	p[1] = (uint8_t)v;
	return p + 2;
}

static inline uint8_t *iw_put_u32be(uint8_t *p, uint32_t v)
{
	p[0] = (uint8_t)(v >> 24);
	p[1] = (uint8_t)(v >> 16);
	p[2] = (uint8_t)(v >> 8);
	p[3] = (uint8_t)v;
	return p + 4;
}

static inline uint8_t *iw_put_u64be(uint8_t *p, uint64_t v)
{
	p = iw_put_u32be(p, (uint32_t)(v >> 32));
	return iw_put_u32be(p, (uint32_t)v);
}

static inline uint8_t *iw_put_u32le(uint8_t *p, uint32_t v)
{
	p[0] = (uint8_t)v;
	p[1] = (uint8_t)(v >> 8);
	p[2] = (uint8_t)(v >> 16);
	p[3] = (uint8_t)(v >> 24);
	return p + 4;
}

static inline uint8_t *iw_put_bytes(uint8_t *p, const void *src, size_t len)
{
	const uint8_t *s = src;
	size_t i;

	for (i = 0; i < len; i++)
		p[i] = s[i];
	return p + len;
}

#endif /* IWARP_UTIL_BYTES_H */
