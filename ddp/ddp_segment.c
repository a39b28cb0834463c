/* ddp/ddp_segment.c: DDP TX MSN allocation and segmentation (RFC 5041 §5). */
#include "config.h"

#include <errno.h>
#include <string.h>

#include "ddp/ddp_segment.h"
#include "iwarp/iwarp.h"

void ddp_tx_queues_init(struct ddp_tx_queues *q)
{
	unsigned int i;

	for (i = 0; i < DDP_NUM_QN; i++)
		q->next_msn[i] = DDP_MSN_FIRST;
}

int ddp_tx_msn_alloc(struct ddp_tx_queues *q, uint32_t qn, uint32_t *msn)
{
	if (qn >= DDP_NUM_QN)
		return IWARP_ERR_DDP_QN;
	/* RFC 5041 §5.3: one MSN per message, wrapping modulo 2^32 */
	*msn = q->next_msn[qn]++;
	return 0;
}

static void seg_iter_reset(struct ddp_seg_iter *it, uint8_t opcode, bool tagged,
			   uint32_t len)
{
	memset(it, 0, sizeof(*it));
	it->hdr.tagged = tagged;
	it->hdr.dv = DDP_VERSION;
	it->hdr.rv = RDMAP_VERSION;
	it->hdr.opcode = opcode;
	it->total = len;
}

int ddp_seg_init_tagged(struct ddp_seg_iter *it, uint8_t opcode, uint32_t stag,
			uint64_t to, uint32_t len)
{
	if (opcode > RDMAP_CTRL_OPCODE_MASK)
		return -EINVAL;
	/* RFC 5041 §7: the last octet must be addressable, TO + len <= 2^64 */
	if (len > 0 && to > UINT64_MAX - (len - 1))
		return IWARP_ERR_DDP_TO_WRAP;
	seg_iter_reset(it, opcode, true, len);
	it->hdr.stag = stag;
	it->to0 = to;
	return 0;
}

int ddp_seg_init_untagged(struct ddp_seg_iter *it, uint8_t opcode, uint32_t qn,
			  uint32_t msn, uint32_t rsvdulp, uint32_t len)
{
	if (opcode > RDMAP_CTRL_OPCODE_MASK)
		return -EINVAL;
	if (qn >= DDP_NUM_QN)
		return IWARP_ERR_DDP_QN;
	seg_iter_reset(it, opcode, false, len);
	it->hdr.qn = qn;
	it->hdr.msn = msn;
	it->hdr.rsvdulp = rsvdulp;
	return 0;
}

int ddp_seg_next(struct ddp_seg_iter *it, size_t mulpdu, struct ddp_seg *seg)
{
	size_t hl = ddp_hdr_len(it->hdr.tagged);
	uint32_t left, room, n;

	if (it->finished)
		return 0;
	if (mulpdu > DDP_MAX_ULPDU)
		mulpdu = DDP_MAX_ULPDU;
	left = it->total - it->done;
	if (mulpdu < hl || (mulpdu == hl && left > 0))
		return -EINVAL;
	room = (uint32_t)(mulpdu - hl);
	n = left < room ? left : room;

	seg->hdr = it->hdr;
	seg->hdr.last = (n == left); /* RFC 5041 §4.2: L on the last only */
	if (it->hdr.tagged)
		seg->hdr.to = it->to0 + it->done; /* RFC 5041 §4.3 */
	else
		seg->hdr.mo = it->done; /* RFC 5041 §4.4 */
	seg->hdr_len = ddp_hdr_encode(seg->hdr_bytes, &seg->hdr);
	seg->offset = it->done;
	seg->len = n;

	it->done += n;
	it->finished = seg->hdr.last;
	return 1;
}
