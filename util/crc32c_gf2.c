/*
 * util/crc32c_gf2.c: GF(2) polynomial arithmetic on the CRC-32C register.
 *
 * The register is reflected: bit 31 holds the coefficient of x^0, bit 0
 * that of x^31. Feeding one zero bit multiplies the register by x modulo
 * the Castagnoli polynomial P (0x1EDC6F41, reflected 0x82F63B78), so
 * feeding n zero octets multiplies it by x^(8n) mod P. That gives the
 * zero-run and combine operators, and the lane-merge constants of the
 * SSE4.2 backend (util/crc32c_sse42.c) are values of crc32c_xpow().
 */
#include "config.h"

#include "util/crc32c.h"

#define CRC32C_POLY_REFLECTED 0x82F63B78u
#define CRC32C_X0	      0x80000000u /* the polynomial 1 */

uint32_t crc32c_mulmod(uint32_t a, uint32_t b)
{
	uint32_t m = CRC32C_X0;
	uint32_t p = 0;

	/* Over the coefficients of a, low degree first, while b runs
	 * through b * x^k mod P; stops after the highest set one. */
	while (a) {
		if (a & m)
			p ^= b;
		a &= ~m;
		m >>= 1;
		b = (b & 1) ? (b >> 1) ^ CRC32C_POLY_REFLECTED : b >> 1;
	}
	return p;
}

uint32_t crc32c_xpow(uint64_t n)
{
	uint32_t r = CRC32C_X0;
	uint32_t sq = CRC32C_X0 >> 1; /* x^1, then x^2, x^4, ... */

	while (n) {
		if (n & 1)
			r = crc32c_mulmod(r, sq);
		sq = crc32c_mulmod(sq, sq);
		n >>= 1;
	}
	return r;
}

uint32_t crc32c_zeros(uint32_t crc, uint64_t n)
{
	/* n octets are 8n bits; split the shift so 8n cannot overflow. */
	uint32_t k = crc32c_mulmod(crc32c_xpow(n), crc32c_xpow(n));

	k = crc32c_mulmod(k, k);
	return crc32c_mulmod(crc, crc32c_mulmod(k, k));
}

uint32_t crc32c_combine(uint32_t crc_a, uint32_t crc_b, uint64_t len_b)
{
	return crc32c_zeros(crc_a, len_b) ^ crc_b;
}
