/*
 * fuzz/fuzz_decode.c: iwarp_decode's stream follower (TCP reassembly, MPA
 * follower, FPDU framing, DDP/RDMAP checks) on arbitrary segments.
 *
 * Input: records of [dir|flags (1), seq delta (2, BE, signed), len (2, BE)]
 * followed by len payload octets. The first records may carry an MPA
 * Request/Reply; sequence deltas let the fuzzer reorder, overlap and gap.
 */
#include "config.h"

#include <stdint.h>
#include <stdlib.h>

#include "decoder.h"
#include "util/bytes.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct dec_sink sink = {NULL, NULL, NULL, NULL};
	struct dec_decoder *d = dec_decoder_new(&sink);
	uint32_t next[2] = {1000, 500000};
	size_t off = 0;

	if (!d)
		return 0;
	dec_decoder_set_terminate_error(d, size & 1);
	(void)dec_decoder_feed_dir(d, DEC_AB, next[0] - 1, DEC_TCP_SYN, NULL,
				   0);
	(void)dec_decoder_feed_dir(d, DEC_BA, next[1] - 1,
				   DEC_TCP_SYN | DEC_TCP_ACK, NULL, 0);
	while (off + 5 <= size) {
		int dir = data[off] & 1;
		uint8_t flags = (uint8_t)((data[off] >> 1) &
					  (DEC_TCP_FIN | DEC_TCP_RST)) |
				DEC_TCP_ACK;
		int16_t delta = (int16_t)iw_get_u16be(data + off + 1);
		size_t len = iw_get_u16be(data + off + 3);
		uint32_t seq;

		off += 5;
		if (len > size - off)
			len = size - off;
		/* delta 0 = in order; otherwise move around the expected seq */
		seq = next[dir] + (uint32_t)(int32_t)delta;
		(void)dec_decoder_feed_dir(d, dir, seq, flags, data + off, len);
		if (delta == 0)
			next[dir] += (uint32_t)len;
		off += len;
	}
	dec_decoder_finish(d);
	(void)dec_decoder_errors(d);
	dec_decoder_free(d);
	return 0;
}
