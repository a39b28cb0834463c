/*
 * util/crc32c_isal.c: CRC-32C through Intel ISA-L's crc32_iscsi.
 *
 * crc32_iscsi takes and returns the un-finalised register, exactly our
 * running state (crc32_iscsi("123456789", 9, 0xFFFFFFFF) == ~0xE3069283;
 * tests/crc32c_test.c checks it on every length). Its length is an int,
 * so large buffers are fed in chunks. Built only with HAVE_ISAL.
 */
#include "config.h"

#include <isa-l/crc.h>

#include "util/crc32c.h"

/* Largest slice per crc32_iscsi call: well inside int, 64-byte aligned. */
#define CRC_ISAL_CHUNK ((size_t)1 << 30)

int crc32c_isal_available(void)
{
	return 1; /* ISA-L dispatches to its best code on any x86-64 */
}

uint32_t crc32c_isal_update(uint32_t crc, const void *buf, size_t len)
{
	/* crc32_iscsi does not write the buffer; its prototype lacks const. */
	unsigned char *p = (unsigned char *)(uintptr_t)buf;
	size_t n;

	while (len) {
		n = len < CRC_ISAL_CHUNK ? len : CRC_ISAL_CHUNK;
		crc = crc32_iscsi(p, (int)n, crc);
		p += n;
		len -= n;
	}
	return crc;
}
