/*
 * fuzz/fuzz_ddp_rdmap.c: DDP/RDMAP header decode and checks, Read Request
 * decode, and the DDP receive validator fed a stream of arbitrary headers.
 */
#include "config.h"

#include <stdint.h>
#include <stdlib.h>

#include "ddp/ddp_hdr.h"
#include "ddp/ddp_rx.h"
#include "rdmap/rdmap_opcode.h"
#include "rdmap/rdmap_rreq.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct ddp_rx rx;
	struct ddp_hdr h, h2;
	struct ddp_rx_seg seg;
	struct rdmap_rreq rr;
	struct ddp_tagged_buf buf = {DDP_STAG_VALID, 0x1000, 4096};
	uint8_t enc[DDP_UNTAGGED_HDR_LEN];
	size_t off = 0;

	ddp_rx_init(&rx);
	(void)ddp_rx_post(&rx, 0, 1000);
	(void)ddp_rx_post(&rx, 1, 46);
	while (off + 2 <= size) {
		int n = ddp_hdr_decode(&h, data + off, size - off);
		uint32_t len;

		if (n < 0)
			break;
		/* encode/decode round trip of what was decoded */
		if (ddp_hdr_encode(enc, &h) != (size_t)n ||
		    ddp_hdr_decode(&h2, enc, (size_t)n) != n)
			abort();
		(void)ddp_hdr_check(&h);
		(void)rdmap_hdr_check(&h);
		(void)rdmap_hdr_len(data + off, (uint16_t)(size - off));
		len = (uint32_t)(data[off] ^ data[off + 1]) * 16u;
		if (h.tagged)
			(void)ddp_rx_tagged(&rx, &h, len, &buf, &seg);
		else if (ddp_rx_untagged(&rx, &h, len, &seg) == 0 &&
			 seg.complete)
			(void)ddp_rx_post(&rx, h.qn, 1000);
		(void)rdmap_rreq_msg_decode(&h2, &rr, data + off, size - off);
		(void)rdmap_rreq_decode(&rr, data + off, size - off);
		off += (size_t)n;
	}
	return 0;
}
