/*
 * util/crc32c_sse42.c: CRC-32C with the SSE4.2 crc32 instruction.
 *
 * The crc32 instruction computes exactly our running register (reflected
 * Castagnoli, no inversion). One instruction has a latency of 3 cycles
 * but a throughput of one per cycle, so large buffers are cut into blocks
 * of three equal lanes computed in parallel: lane 0 from the running CRC,
 * lanes 1 and 2 from zero. The CRC is linear over GF(2), so for lanes
 * A, B, C of |lane| octets each
 *
 *     update(s, A||B||C) = shift(update(s, A), 2 lane)
 *                        ^ shift(update(0, B), lane) ^ update(0, C)
 *
 * where shift(r, n) = r * x^(8n) mod P (util/crc32c_gf2.c). shift is one
 * carry-less multiply by a constant K and one crc32 reduction:
 * crc32_u64(0, clmul(r, K)) = r * K * x^33 mod P (the 63-bit product
 * sits one bit low in a 64-bit reflected word, and the crc32 step
 * multiplies by x^32), so K = x^(8n - 33) mod P; both shifts share the
 * reduction. Needs SSE4.2 and PCLMULQDQ; x86-64 only.
 */
#include "config.h"

#include "util/crc32c.h"

#if defined(__x86_64__)

#include <nmmintrin.h>
#include <string.h>
#include <wmmintrin.h>

#define CRC_TARGET __attribute__((target("sse4.2,pclmul")))

/*
 * Block tiers, longest first: per-lane length and the merge constants
 * K2 = x^(16 lane - 33) mod P, K1 = x^(8 lane - 33) mod P, as given by
 * crc32c_xpow(); a wrong one would break every length from 3 lanes up,
 * which tests/crc32c_test.c covers for each tier.
 */
#define CRC_LANE_L 8192
#define CRC_K2_L   0x1DC403CCu
#define CRC_K1_L   0x54A86326u
#define CRC_LANE_M 1024
#define CRC_K2_M   0xA51B6135u
#define CRC_K1_M   0x170076FAu
#define CRC_LANE_S 256
#define CRC_K2_S   0xDD7E3B0Cu
#define CRC_K1_S   0xB9E02B86u
#define CRC_LANE_T 64
#define CRC_K2_T   0x0D3B6092u
#define CRC_K1_T   0x9E4ADDF8u

int crc32c_sse42_available(void)
{
	__builtin_cpu_init();
	return __builtin_cpu_supports("sse4.2") &&
	       __builtin_cpu_supports("pclmul");
}

static inline uint64_t crc_ld64(const uint8_t *p)
{
	uint64_t v;

	memcpy(&v, p, sizeof(v));
	return v;
}

/* One lane over |len| octets of any alignment. */
CRC_TARGET static inline uint32_t crc_1way(uint64_t c, const uint8_t *p,
					   size_t len)
{
	uint32_t c32;
	uint32_t v32;
	uint16_t v16;

	while (len >= 32) {
		c = _mm_crc32_u64(c, crc_ld64(p));
		c = _mm_crc32_u64(c, crc_ld64(p + 8));
		c = _mm_crc32_u64(c, crc_ld64(p + 16));
		c = _mm_crc32_u64(c, crc_ld64(p + 24));
		p += 32;
		len -= 32;
	}
	while (len >= 8) {
		c = _mm_crc32_u64(c, crc_ld64(p));
		p += 8;
		len -= 8;
	}
	c32 = (uint32_t)c;
	if (len & 4) {
		memcpy(&v32, p, sizeof(v32));
		c32 = _mm_crc32_u32(c32, v32);
		p += 4;
	}
	if (len & 2) {
		memcpy(&v16, p, sizeof(v16));
		c32 = _mm_crc32_u16(c32, v16);
		p += 2;
	}
	if (len & 1)
		c32 = _mm_crc32_u8(c32, *p);
	return c32;
}

/* shift(a, 2 lane) ^ shift(b, lane) with one shared reduction. */
CRC_TARGET static inline uint64_t crc_merge(uint64_t a, uint32_t k2, uint64_t b,
					    uint32_t k1)
{
	__m128i pa = _mm_clmulepi64_si128(_mm_cvtsi64_si128((long long)a),
					  _mm_cvtsi32_si128((int)k2), 0x00);
	__m128i pb = _mm_clmulepi64_si128(_mm_cvtsi64_si128((long long)b),
					  _mm_cvtsi32_si128((int)k1), 0x00);

	return _mm_crc32_u64(
		0, (uint64_t)_mm_cvtsi128_si64(_mm_xor_si128(pa, pb)));
}

/*
 * Blocks of three lanes of |lane| octets (a multiple of 8) while |*len|
 * allows; inlined per tier so the lane length is a constant.
 */
CRC_TARGET static inline __attribute__((always_inline)) uint64_t
crc_3way(uint64_t c0, const uint8_t **pp, size_t *len, size_t lane, uint32_t k2,
	 uint32_t k1)
{
	const uint8_t *p = *pp;
	const uint8_t *end;
	uint64_t c1, c2;

	while (*len >= 3 * lane) {
		end = p + lane;
		c1 = 0;
		c2 = 0;
		do {
			c0 = _mm_crc32_u64(c0, crc_ld64(p));
			c1 = _mm_crc32_u64(c1, crc_ld64(p + lane));
			c2 = _mm_crc32_u64(c2, crc_ld64(p + 2 * lane));
			p += 8;
		} while (p < end);
		c0 = crc_merge(c0, k2, c1, k1) ^ c2;
		p += 2 * lane;
		*len -= 3 * lane;
	}
	*pp = p;
	return c0;
}

CRC_TARGET uint32_t crc32c_sse42_update(uint32_t crc, const void *buf,
					size_t len)
{
	const uint8_t *p = buf;
	uint64_t c = crc;

	if (len >= 3 * CRC_LANE_T) {
		c = crc_3way(c, &p, &len, CRC_LANE_L, CRC_K2_L, CRC_K1_L);
		c = crc_3way(c, &p, &len, CRC_LANE_M, CRC_K2_M, CRC_K1_M);
		c = crc_3way(c, &p, &len, CRC_LANE_S, CRC_K2_S, CRC_K1_S);
		c = crc_3way(c, &p, &len, CRC_LANE_T, CRC_K2_T, CRC_K1_T);
	}
	return crc_1way(c, p, len);
}

#else /* !__x86_64__ */

int crc32c_sse42_available(void)
{
	return 0;
}

uint32_t crc32c_sse42_update(uint32_t crc, const void *buf, size_t len)
{
	return crc32c_slice8_update(crc, buf, len);
}

#endif /* __x86_64__ */
