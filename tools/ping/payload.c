/*
 * tools/ping/payload.c: rping's ping payload and 16-byte control message.
 *
 * Payload (rping.c rping_test_client): snprintf "rdma-ping-%d: ", then the
 * characters 65..122 ('A'..'z') cycling, starting one character later on
 * every ping, and a NUL in the last byte. The server echoes strlen + 1
 * bytes, so the whole buffer comes back.
 */
#include "config.h"

#include <stdio.h>
#include <string.h>

#include "tools/ping/ping.h"

#define PAYLOAD_FIRST 65  /* 'A' */
#define PAYLOAD_LAST  122 /* 'z' */
#define PAYLOAD_SPAN  (PAYLOAD_LAST - PAYLOAD_FIRST + 1)

/* Writes the prefix of ping |ping| into |buf| (|size| bytes); its length. */
static uint32_t payload_prefix(char *buf, uint32_t size, uint32_t ping)
{
	int n = snprintf(buf, size, "rdma-ping-%u: ", ping);

	if (n < 0)
		return 0;
	/* PING_MIN_SIZE leaves room for any 32-bit number; clamp anyway */
	return (uint32_t)n < size ? (uint32_t)n : size - 1;
}

/* The cycling character at offset |i| of ping |ping| with prefix |cc|. */
static char payload_char(uint32_t ping, uint32_t cc, uint32_t i)
{
	uint32_t start = ping % PAYLOAD_SPAN;

	return (char)(PAYLOAD_FIRST + (start + (i - cc)) % PAYLOAD_SPAN);
}

void ping_payload_fill(char *buf, uint32_t size, uint32_t ping)
{
	uint32_t cc, i;

	if (!size)
		return;
	cc = payload_prefix(buf, size, ping);
	for (i = cc; i < size; i++)
		buf[i] = payload_char(ping, cc, i);
	buf[size - 1] = '\0';
}

long ping_payload_check(const char *buf, uint32_t size, uint32_t ping)
{
	char prefix[32];
	uint32_t cc, i;

	if (!size)
		return -1;
	cc = payload_prefix(
		prefix, size < sizeof(prefix) ? size : (uint32_t)sizeof(prefix),
		ping);
	for (i = 0; i < cc && i < size - 1; i++)
		if (buf[i] != prefix[i])
			return (long)i;
	for (; i < size - 1; i++)
		if (buf[i] != payload_char(ping, cc, i))
			return (long)i;
	return buf[size - 1] == '\0' ? -1 : (long)(size - 1);
}

void ping_ctrl_encode(uint8_t out[PING_CTRL_LEN], uint64_t buf, uint32_t rkey,
		      uint32_t size)
{
	int i;

	for (i = 0; i < 8; i++)
		out[i] = (uint8_t)(buf >> (56 - 8 * i));
	for (i = 0; i < 4; i++) {
		out[8 + i] = (uint8_t)(rkey >> (24 - 8 * i));
		out[12 + i] = (uint8_t)(size >> (24 - 8 * i));
	}
}

void ping_ctrl_decode(const uint8_t in[PING_CTRL_LEN], uint64_t *buf,
		      uint32_t *rkey, uint32_t *size)
{
	uint64_t b = 0;
	uint32_t r = 0, s = 0;
	int i;

	for (i = 0; i < 8; i++)
		b = b << 8 | in[i];
	for (i = 0; i < 4; i++) {
		r = r << 8 | in[8 + i];
		s = s << 8 | in[12 + i];
	}
	*buf = b;
	*rkey = r;
	*size = s;
}
