/*
 * util/crc32c_slice8.c: portable CRC-32C, slicing-by-8 tables.
 *
 * crc_tab[0] is the classic byte table for the reflected Castagnoli
 * polynomial; crc_tab[k][b] is the register contribution of byte b
 * followed by k zero bytes, so eight input bytes fold in with eight
 * independent lookups. Runs on any CPU and byte order.
 */
#include "config.h"

#include <pthread.h>

#include "util/crc32c.h"

#define CRC32C_POLY_REFLECTED 0x82F63B78u

static uint32_t crc_tab[8][256];
static pthread_once_t crc_tab_once = PTHREAD_ONCE_INIT;

static void crc_tab_init(void)
{
	uint32_t i, j, c;

	for (i = 0; i < 256; i++) {
		c = i;
		for (j = 0; j < 8; j++)
			c = (c & 1) ? (c >> 1) ^ CRC32C_POLY_REFLECTED : c >> 1;
		crc_tab[0][i] = c;
	}
	for (i = 0; i < 256; i++)
		for (j = 1; j < 8; j++)
			crc_tab[j][i] = (crc_tab[j - 1][i] >> 8) ^
					crc_tab[0][crc_tab[j - 1][i] & 0xff];
}

/* Little-endian 64-bit load of any alignment (one mov on x86). */
static inline uint64_t crc_load_le64(const uint8_t *p)
{
	return (uint64_t)p[0] | (uint64_t)p[1] << 8 | (uint64_t)p[2] << 16 |
	       (uint64_t)p[3] << 24 | (uint64_t)p[4] << 32 |
	       (uint64_t)p[5] << 40 | (uint64_t)p[6] << 48 |
	       (uint64_t)p[7] << 56;
}

uint32_t crc32c_slice8_update(uint32_t crc, const void *buf, size_t len)
{
	const uint8_t *p = buf;
	uint64_t w;

	pthread_once(&crc_tab_once, crc_tab_init);
	while (len >= 8) {
		w = crc_load_le64(p) ^ crc;
		crc = crc_tab[7][w & 0xff] ^ crc_tab[6][(w >> 8) & 0xff] ^
		      crc_tab[5][(w >> 16) & 0xff] ^
		      crc_tab[4][(w >> 24) & 0xff] ^
		      crc_tab[3][(w >> 32) & 0xff] ^
		      crc_tab[2][(w >> 40) & 0xff] ^
		      crc_tab[1][(w >> 48) & 0xff] ^ crc_tab[0][w >> 56];
		p += 8;
		len -= 8;
	}
	while (len--)
		crc = crc_tab[0][(crc ^ *p++) & 0xff] ^ (crc >> 8);
	return crc;
}
