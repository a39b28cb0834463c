/* rdmap/rdmap_term.c: Terminate message codec (RFC 5040 §4.8). */
#include "config.h"

#include "rdmap/rdmap_term.h"

#include <errno.h>
#include <string.h>

#include "rdmap/rdmap_opcode.h"
#include "util/bytes.h"

bool rdmap_term_cause_valid(uint8_t layer, uint8_t etype, uint8_t ecode)
{
	switch (layer) {
	case IWARP_TERM_LAYER_RDMAP: /* RFC 5040 §4.8 */
		switch (etype) {
		case IWARP_RDMAP_ETYPE_LOCAL_CATASTROPHIC:
			return ecode == 0x00;
		case IWARP_RDMAP_ETYPE_REMOTE_PROTECTION:
			return ecode <= IWARP_RDMAP_ECODE_TO_WRAP ||
			       ecode == IWARP_RDMAP_ECODE_CANT_INVALIDATE ||
			       ecode == IWARP_RDMAP_ECODE_UNSPECIFIED;
		case IWARP_RDMAP_ETYPE_REMOTE_OPERATION:
			return (ecode >= IWARP_RDMAP_ECODE_INVALID_VERSION &&
				ecode <= IWARP_RDMAP_ECODE_CANT_INVALIDATE) ||
			       ecode == IWARP_RDMAP_ECODE_UNSPECIFIED;
		default:
			return false;
		}
	case IWARP_TERM_LAYER_DDP: /* RFC 5041 §7 */
		switch (etype) {
		case IWARP_DDP_ETYPE_CATASTROPHIC:
			return ecode == 0x00;
		case IWARP_DDP_ETYPE_TAGGED_BUFFER:
			return ecode <= IWARP_DDP_ECODE_T_INVALID_VERSION;
		case IWARP_DDP_ETYPE_UNTAGGED_BUFFER:
			return ecode >= IWARP_DDP_ECODE_UT_INVALID_QN &&
			       ecode <= IWARP_DDP_ECODE_UT_INVALID_VERSION;
		default:
			return false; /* 3: reserved for the LLP */
		}
	case IWARP_TERM_LAYER_LLP: /* RFC 5044 §8, RFC 6581 §6 */
		return etype == IWARP_LLP_ETYPE_MPA &&
		       ecode >= IWARP_LLP_ECODE_STREAM_LOST &&
		       ecode <= IWARP_LLP_ECODE_NO_MATCHING_RTR;
	default:
		return false;
	}
}

int rdmap_term_attach(struct rdmap_term *t, const uint8_t *seg, size_t avail,
		      long seg_len, bool with_rreq)
{
	size_t hl;

	if (seg_len > 0xFFFF)
		return -EINVAL;
	if (avail < 1)
		return IWARP_ERR_TRUNCATED;
	hl = ddp_hdr_len((seg[0] & DDP_CTRL_T) != 0);
	if (with_rreq && hl != DDP_UNTAGGED_HDR_LEN)
		return -EINVAL;
	if (avail < hl + (with_rreq ? RDMAP_RREQ_HDR_LEN : 0))
		return IWARP_ERR_TRUNCATED;
	memcpy(t->ddp_hdr, seg, hl);
	t->ddp_hdr_len = (uint8_t)hl;
	t->d = true;
	t->m = seg_len >= 0;
	t->ddp_seg_len = t->m ? (uint16_t)seg_len : 0;
	t->r = with_rreq;
	if (with_rreq)
		memcpy(t->rdmap_hdr, seg + hl, RDMAP_RREQ_HDR_LEN);
	return 0;
}

/* Length of the optional parts announced by |d| and |r|. */
static size_t term_opt_len(bool d, size_t ddp_len, bool r)
{
	return (d ? RDMAP_TERM_SEGLEN_LEN + ddp_len : 0) +
	       (r ? RDMAP_RREQ_HDR_LEN : 0);
}

size_t rdmap_term_len(const struct rdmap_term *t)
{
	return RDMAP_TERM_BARE_LEN + term_opt_len(t->d, t->ddp_hdr_len, t->r);
}

int rdmap_term_encode(uint8_t *out, size_t cap, uint32_t msn,
		      const struct rdmap_term *t)
{
	struct ddp_hdr h = {
		.tagged = false,
		.last = true,
		.dv = DDP_VERSION,
		.rv = RDMAP_VERSION,
		.opcode = RDMAP_OP_TERMINATE,
		.qn = DDP_QN_TERMINATE,
		.msn = msn,
		.mo = 0,
	};
	uint32_t w;
	uint8_t *p;
	size_t len;

	if (t->cause.layer > RDMAP_TERM_NIBBLE_MASK ||
	    t->cause.etype > RDMAP_TERM_NIBBLE_MASK)
		return -EINVAL;
	/* RFC 5040 §4.8: the Segment Length field exists only with D. */
	if (t->m && !t->d)
		return -EINVAL;
	if (t->d &&
	    t->ddp_hdr_len != ddp_hdr_len((t->ddp_hdr[0] & DDP_CTRL_T) != 0))
		return -EINVAL;
	len = rdmap_term_len(t);
	if (cap < len)
		return -ENOSPC;

	p = out + ddp_hdr_encode(out, &h);
	w = ((uint32_t)t->cause.layer << RDMAP_TERM_LAYER_SHIFT) |
	    ((uint32_t)t->cause.etype << RDMAP_TERM_ETYPE_SHIFT) |
	    ((uint32_t)t->cause.ecode << RDMAP_TERM_ECODE_SHIFT);
	if (t->m)
		w |= RDMAP_TERM_HDRCT_M;
	if (t->d)
		w |= RDMAP_TERM_HDRCT_D;
	if (t->r)
		w |= RDMAP_TERM_HDRCT_R;
	p = iw_put_u32be(p, w);
	if (t->d) {
		p = iw_put_u16be(p, t->m ? t->ddp_seg_len : 0);
		p = iw_put_bytes(p, t->ddp_hdr, t->ddp_hdr_len);
	}
	if (t->r)
		p = iw_put_bytes(p, t->rdmap_hdr, RDMAP_RREQ_HDR_LEN);
	return (int)(p - out);
}

void rdmap_term_ctrl_decode(struct rdmap_term *t, const uint8_t *p, bool siw)
{
	uint32_t w = iw_get_u32be(p);

	t->cause.ecode = (uint8_t)((w >> RDMAP_TERM_ECODE_SHIFT) &
				   RDMAP_TERM_ECODE_MASK);
	t->siw_nibble_swapped = siw;
	if (!siw) {
		t->cause.layer = (uint8_t)(w >> RDMAP_TERM_LAYER_SHIFT);
		t->cause.etype = (uint8_t)((w >> RDMAP_TERM_ETYPE_SHIFT) &
					   RDMAP_TERM_NIBBLE_MASK);
		t->m = (w & RDMAP_TERM_HDRCT_M) != 0;
		t->d = (w & RDMAP_TERM_HDRCT_D) != 0;
		t->r = (w & RDMAP_TERM_HDRCT_R) != 0;
		t->rsvd = (uint16_t)(w & RDMAP_TERM_RSVD_MASK);
		return;
	}
	/*
	 * siw: a little-endian bitfield word {layer:4 etype:4 ecode:8 m:1
	 * d:1 r:1 rsvd:13}: octet 0 = etype << 4 | layer, M/D/R are the
	 * low bits of octet 2, the reserved bits the rest of octets 2-3.
	 */
	t->cause.layer = (uint8_t)((w >> RDMAP_TERM_ETYPE_SHIFT) &
				   RDMAP_TERM_NIBBLE_MASK);
	t->cause.etype = (uint8_t)(w >> RDMAP_TERM_LAYER_SHIFT);
	t->m = (w & RDMAP_TERM_SIW_HDRCT_M) != 0;
	t->d = (w & RDMAP_TERM_SIW_HDRCT_D) != 0;
	t->r = (w & RDMAP_TERM_SIW_HDRCT_R) != 0;
	t->rsvd = (uint16_t)(((w >> 11) & 0x1Fu) | ((w & 0xFFu) << 5));
}

/*
 * Whether the payload after the control word (|rest| octets at |p|) has
 * exactly the length that the D/R bits of |t| announce.
 */
static bool term_len_ok(const struct rdmap_term *t, const uint8_t *p,
			size_t rest)
{
	size_t ddp_len = 0;

	if (t->d) {
		if (rest < RDMAP_TERM_SEGLEN_LEN + 1)
			return false;
		ddp_len = ddp_hdr_len((p[RDMAP_TERM_SEGLEN_LEN] & DDP_CTRL_T) !=
				      0);
	}
	return rest == term_opt_len(t->d, ddp_len, t->r);
}

/* Copies the optional parts (already length-checked) into |t|. */
static void term_opt_decode(struct rdmap_term *t, const uint8_t *p)
{
	t->ddp_seg_len = 0;
	t->ddp_hdr_len = 0;
	if (t->d) {
		t->ddp_seg_len = iw_get_u16be(p);
		p += RDMAP_TERM_SEGLEN_LEN;
		t->ddp_hdr_len = (uint8_t)ddp_hdr_len((p[0] & DDP_CTRL_T) != 0);
		memcpy(t->ddp_hdr, p, t->ddp_hdr_len);
		p += t->ddp_hdr_len;
	}
	if (t->r)
		memcpy(t->rdmap_hdr, p, RDMAP_RREQ_HDR_LEN);
}

static bool term_cause_ok(const struct rdmap_term *t)
{
	return rdmap_term_cause_valid(t->cause.layer, t->cause.etype,
				      t->cause.ecode);
}

int rdmap_term_decode(struct rdmap_term *t, struct ddp_hdr *h,
		      const uint8_t *ulpdu, size_t len)
{
	struct rdmap_term rfc, siw;
	struct ddp_hdr tmp;
	const uint8_t *p;
	size_t rest;
	bool rfc_len, siw_len;
	int rc;

	if (!h)
		h = &tmp;
	rc = ddp_hdr_decode(h, ulpdu, len);
	if (rc < 0)
		return IWARP_ERR_RDMAP_TERMINATE;
	/* RFC 5040 §4.8, §5.1: one untagged segment on QN 2, opcode 7. */
	if (h->tagged || h->opcode != RDMAP_OP_TERMINATE ||
	    h->rv != RDMAP_VERSION || h->qn != DDP_QN_TERMINATE || h->mo != 0 ||
	    !h->last)
		return IWARP_ERR_RDMAP_TERMINATE;
	if (len < RDMAP_TERM_BARE_LEN)
		return IWARP_ERR_RDMAP_TERMINATE;
	p = ulpdu + RDMAP_TERM_BARE_LEN;
	rest = len - RDMAP_TERM_BARE_LEN;

	memset(&rfc, 0, sizeof(rfc));
	memset(&siw, 0, sizeof(siw));
	rdmap_term_ctrl_decode(&rfc, ulpdu + DDP_UNTAGGED_HDR_LEN, false);
	rdmap_term_ctrl_decode(&siw, ulpdu + DDP_UNTAGGED_HDR_LEN, true);
	rfc_len = term_len_ok(&rfc, p, rest);
	siw_len = term_len_ok(&siw, p, rest);

	if (rfc_len && term_cause_ok(&rfc))
		*t = rfc;
	else if (siw_len && term_cause_ok(&siw) && siw.rsvd == 0)
		*t = siw; /* siw zeroes its reserved bits */
	else if (rfc_len)
		*t = rfc; /* well formed, cause undefined: the caller logs it */
	else
		return IWARP_ERR_RDMAP_TERMINATE;
	term_opt_decode(t, p);
	return (int)len;
}
