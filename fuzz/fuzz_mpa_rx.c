/*
 * fuzz/fuzz_mpa_rx.c: the FPDU deframer on arbitrary streams (the CRC
 * check is bypassed in fuzzing builds). The first octet picks markers on or
 * off, CRC on or off and the chunking seed; the deframer is then fed the
 * rest in pseudo-random chunks, switching to direct placement after a
 * HEADER event whenever the seed says so. Every event is sanity-checked.
 */
#include "config.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>

#include "ddp/ddp_hdr.h"
#include "rdmap/rdmap_opcode.h"
#include "mpa/mpa_rx.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static size_t hdr_len_cb(void *ulp, const uint8_t *first2, uint16_t ulpdu_len)
{
	(void)ulp;
	return rdmap_hdr_len(first2, ulpdu_len);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static uint8_t dst[65536];
	struct mpa_rx_cfg cfg;
	struct mpa_rx rx;
	struct mpa_rx_event ev;
	uint32_t seed;
	size_t off = 0;

	if (size < 1)
		return 0;
	memset(&cfg, 0, sizeof(cfg));
	cfg.markers = data[0] & 1;
	cfg.crc = data[0] & 2;
	cfg.hdr_len = hdr_len_cb;
	seed = data[0] | 0x100u;
	data++;
	size--;
	if (mpa_rx_init(&rx, &cfg))
		abort();
	while (off < size) {
		size_t chunk;
		ssize_t n;

		seed = seed * 1103515245u + 12345u;
		chunk = 1 + (seed >> 16) % 700;
		if (chunk > size - off)
			chunk = size - off;
		if ((seed & 0x300) == 0x300 &&
		    mpa_rx_get_state(&rx) == MPA_RX_GET_PAYLOAD) {
			/* direct placement: copy what a socket would land */
			struct iovec iov[8];
			int cnt = mpa_rx_payload_iov(&rx, dst, sizeof(dst), iov,
						     8);
			size_t fill = 0;
			int i;

			if (cnt < 0)
				break;
			for (i = 0; i < cnt && fill < chunk; i++) {
				size_t k = iov[i].iov_len < chunk - fill
						   ? iov[i].iov_len
						   : chunk - fill;

				memcpy(iov[i].iov_base, data + off + fill, k);
				fill += k;
			}
			if (cnt > 0 && fill > 0) {
				n = mpa_rx_commit(&rx, fill);
				if (n < 0)
					break;
				off += fill;
				continue;
			}
		}
		n = mpa_rx_process(&rx, data + off, chunk, &ev);
		if (n < 0)
			break;
		if ((size_t)n > chunk)
			abort();
		if (ev.type == MPA_RX_HEADER &&
		    (ev.hdr_len > MPA_RX_HDR_MAX ||
		     ev.hdr_len > ev.ulpdu_len + 2u))
			abort();
		if (ev.type == MPA_RX_PAYLOAD &&
		    (ev.data < data + off ||
		     ev.data + ev.data_len > data + off + chunk))
			abort();
		off += (size_t)n;
	}
	return 0;
}
