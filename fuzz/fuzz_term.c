/*
 * fuzz/fuzz_term.c: Terminate decode (RFC 5040 §4.8, and siw's
 * nibble-swapped control word). A decoded Terminate must re-encode.
 */
#include "config.h"

#include <stdint.h>
#include <stdlib.h>

#include "ddp/ddp_hdr.h"
#include "iwarp/iwarp.h"
#include "rdmap/rdmap_term.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct rdmap_term t;
	struct ddp_hdr h;
	uint8_t out[RDMAP_TERM_MAX_LEN + 16];

	if (rdmap_term_decode(&t, &h, data, size) == 0) {
		(void)iwarp_term_strerror(t.cause.layer, t.cause.etype,
					  t.cause.ecode);
		(void)rdmap_term_cause_valid(t.cause.layer, t.cause.etype,
					     t.cause.ecode);
		if (!t.siw_nibble_swapped &&
		    rdmap_term_encode(out, sizeof(out), h.msn, &t) < 0)
			abort();
	}
	if (size >= 4)
		rdmap_term_ctrl_decode(&t, data, size & 1);
	if (size >= 4)
		(void)iwarp_strerror(-(int)(data[0] | (data[1] << 8)));
	return 0;
}
