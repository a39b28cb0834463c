/* util/crc32c.c: PLACEHOLDER bytewise CRC-32C so the tree links; replaced by
 * the backend set (ISA-L, SSE4.2, slicing-by-8). */
#include "config.h"

#include "util/crc32c.h"

static uint32_t crc_table[256];
static int crc_table_ready;

static void crc_table_init(void)
{
	uint32_t i, j, c;

	for (i = 0; i < 256; i++) {
		c = i;
		for (j = 0; j < 8; j++)
			c = (c & 1) ? (c >> 1) ^ 0x82F63B78u : c >> 1;
		crc_table[i] = c;
	}
	crc_table_ready = 1;
}

uint32_t crc32c_update(uint32_t crc, const void *buf, size_t len)
{
	const uint8_t *p = buf;

	if (!crc_table_ready)
		crc_table_init();
	while (len--)
		crc = crc_table[(crc ^ *p++) & 0xff] ^ (crc >> 8);
	return crc;
}

uint32_t crc32c_update_iov(uint32_t crc, const struct iovec *iov, size_t iovcnt)
{
	size_t i;

	for (i = 0; i < iovcnt; i++)
		crc = crc32c_update(crc, iov[i].iov_base, iov[i].iov_len);
	return crc;
}
