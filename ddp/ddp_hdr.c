/* ddp/ddp_hdr.c: DDP segment header codec and checks (RFC 5041 §4). */
#include "config.h"

#include <string.h>

#include "ddp/ddp_hdr.h"
#include "iwarp/iwarp.h"
#include "util/bytes.h"

size_t ddp_hdr_encode(uint8_t *out, const struct ddp_hdr *h)
{
	uint8_t c0, c1;
	uint8_t *p;

	/* RFC 5041 §4.2: T L Rsvd(4) DV(2) */
	c0 = (uint8_t)((h->tagged ? DDP_CTRL_T : 0) |
		       (h->last ? DDP_CTRL_L : 0) |
		       ((h->ddp_rsvd << 2) & DDP_CTRL_RSVD) |
		       (h->dv & DDP_CTRL_DV_MASK));
	/* RFC 5040 §4.1: RV(2) Rsv(2) Opcode(4) in DDP's RsvdULP octet */
	c1 = (uint8_t)(((h->rv << RDMAP_CTRL_RV_SHIFT) & RDMAP_CTRL_RV_MASK) |
		       ((h->rdmap_rsv << 4) & RDMAP_CTRL_RSV_MASK) |
		       (h->opcode & RDMAP_CTRL_OPCODE_MASK));
	p = iw_put_u8(out, c0);
	p = iw_put_u8(p, c1);
	if (h->tagged) {
		/* RFC 5041 §4.3 */
		p = iw_put_u32be(p, h->stag);
		p = iw_put_u64be(p, h->to);
	} else {
		/* RFC 5041 §4.4 */
		p = iw_put_u32be(p, h->rsvdulp);
		p = iw_put_u32be(p, h->qn);
		p = iw_put_u32be(p, h->msn);
		p = iw_put_u32be(p, h->mo);
	}
	return (size_t)(p - out);
}

int ddp_hdr_decode(struct ddp_hdr *h, const uint8_t *buf, size_t len)
{
	size_t hl;
	uint8_t c0, c1;

	if (len < 2)
		return IWARP_ERR_TRUNCATED;
	c0 = buf[0];
	c1 = buf[1];
	hl = ddp_hdr_len((c0 & DDP_CTRL_T) != 0);
	if (len < hl)
		return IWARP_ERR_TRUNCATED;

	memset(h, 0, sizeof(*h));
	h->tagged = (c0 & DDP_CTRL_T) != 0;
	h->last = (c0 & DDP_CTRL_L) != 0;
	h->ddp_rsvd = (uint8_t)((c0 & DDP_CTRL_RSVD) >> 2);
	h->dv = (uint8_t)(c0 & DDP_CTRL_DV_MASK);
	h->rv = (uint8_t)((c1 & RDMAP_CTRL_RV_MASK) >> RDMAP_CTRL_RV_SHIFT);
	h->rdmap_rsv = (uint8_t)((c1 & RDMAP_CTRL_RSV_MASK) >> 4);
	h->opcode = (uint8_t)(c1 & RDMAP_CTRL_OPCODE_MASK);
	if (h->tagged) {
		h->stag = iw_get_u32be(buf + 2);
		h->to = iw_get_u64be(buf + 6);
	} else {
		h->rsvdulp = iw_get_u32be(buf + 2);
		h->qn = iw_get_u32be(buf + 6);
		h->msn = iw_get_u32be(buf + 10);
		h->mo = iw_get_u32be(buf + 14);
	}
	return (int)hl;
}

int ddp_hdr_check(const struct ddp_hdr *h)
{
	/*
	 * RFC 5041 §4.2: DV is 1. A mismatch is reported with the buffer
	 * model's own code (RFC 5041 §7). Rsvd is not checked on receive
	 * (RFC 5041 §4.2), see ddp_hdr.h.
	 */
	if (h->dv != DDP_VERSION)
		return h->tagged ? IWARP_ERR_DDP_TAGGED_VERSION
				 : IWARP_ERR_DDP_UNTAGGED_VERSION;
	return 0;
}
