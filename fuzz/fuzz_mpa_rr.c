/*
 * fuzz/fuzz_mpa_rr.c: MPA Request/Reply decode (strict and lax) and both
 * negotiation roles on arbitrary bytes. A successful decode must re-encode
 * to a frame of the same length.
 */
#include "config.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "mpa/mpa_negotiate.h"
#include "mpa/mpa_rr.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static uint8_t out[MPA_RR_FRAME_MAX + 64];
	struct mpa_rr rr;
	struct mpa_neg_params p;
	struct mpa_neg_result res;
	struct mpa_neg_reply reply;
	int n;

	(void)mpa_rr_peek(data, size);
	n = mpa_rr_decode(&rr, data, size, MPA_RR_DECODE_STRICT);
	if (n > 0) {
		int m = mpa_rr_encode(out, sizeof(out), &rr);

		if (m != n)
			abort();
	}
	(void)mpa_rr_decode(&rr, data, size, MPA_RR_DECODE_LAX);

	mpa_neg_params_init(&p);
	if (size > 0) {
		/* let the first octet choose the local policy */
		p.crc = (enum mpa_crc_policy)(data[0] % 3);
		p.markers_rx = data[0] & 0x04;
		p.p2p = data[0] & 0x08;
		p.rtr_mask = (uint8_t)((data[0] >> 4) & 7);
		p.rev = (data[0] & 0x80) ? 1 : 2;
		data++;
		size--;
	}
	(void)mpa_neg_initiator_process(&p, data, size, &res);
	if (mpa_neg_responder_process(&p, data, size, &res, &reply) >= 0 &&
	    reply.send)
		(void)mpa_neg_reply_encode(&reply, (const uint8_t *)"x", 1, out,
					   sizeof(out));
	return 0;
}
