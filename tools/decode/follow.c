/*
 * tools/decode/follow.c: the MPA connection follower.
 *
 * Per direction: find the MPA key at the start of the stream (RFC 5044
 * §7.1), gather and decode the Request/Reply (mpa/mpa_rr.h), check the
 * Reply against the Request (RFC 5044 §7.1, RFC 6581 §5, §9), derive CRC
 * and markers per direction, then frame FPDUs (fpdu.h) and hand them to
 * the DDP/RDMAP checks (rdmap_chk.c). At the end of the capture judge how
 * each direction and the connection ended.
 */
#include "config.h"

#include <stdio.h>
#include <string.h>

#include "conn.h"
#include "iwarp/iwarp.h"
#include "mpa/mpa_negotiate.h"
#include "util/bytes.h"
#include "util/mem.h"

static const uint8_t key_req[MPA_RR_KEY_LEN] = "MPA ID Req Frame";
static const uint8_t key_rep[MPA_RR_KEY_LEN] = "MPA ID Rep Frame";

static void follow(struct dec_conn *c, int dir, uint64_t off,
		   const uint8_t *data, size_t len);

/* ---- key scan ---------------------------------------------------------- */

static bool is_key_prefix(const uint8_t *p, size_t n)
{
	if (n > MPA_RR_KEY_LEN)
		n = MPA_RR_KEY_LEN;
	return memcmp(p, key_req, n) == 0 || memcmp(p, key_rep, n) == 0;
}

/* Offset of the first full key in |p|, or |n| when there is none. */
static size_t find_key(const uint8_t *p, size_t n)
{
	size_t k;

	for (k = 0; k + MPA_RR_KEY_LEN <= n; k++)
		if (p[k] == 'M' && is_key_prefix(p + k, MPA_RR_KEY_LEN))
			return k;
	return n;
}

static void printable(char *out, size_t cap, const uint8_t *p, size_t n)
{
	size_t i, o = 0;

	for (i = 0; i < n && o + 5 < cap; i++) {
		if (p[i] >= 0x20 && p[i] < 0x7f && p[i] != '"' && p[i] != '\\')
			out[o++] = (char)p[i];
		else
			o += (size_t)snprintf(out + o, cap - o, "\\x%02x",
					      p[i]);
	}
	out[o] = '\0';
}

/*
 * HALF_START: gather the first octets of the direction. An MPA key at
 * offset 0 starts the Request/Reply; a key further in means TCP data came
 * before it (an error: nothing may precede the Request, RFC 5044 §7.1);
 * a frame that starts with "MPA" but has neither key is an invalid MPA
 * frame; anything else is not iWARP (after DEC_SCAN_MAX octets).
 * Returns the octets of |data| consumed.
 */
static size_t scan(struct dec_conn *c, int dir, uint64_t off,
		   const uint8_t *data, size_t len)
{
	struct dec_half *h = &c->h[dir];
	size_t take, k;

	if (!h->scan) {
		h->scan = iw_malloc(DEC_SCAN_MAX);
		if (!h->scan) {
			h->state = HALF_IGNORE;
			dec_report(c, dir, off, DEC_ERROR, "nomem",
				   "out of memory: direction not decoded");
			return len;
		}
		h->scan_off = off;
	}
	take = DEC_SCAN_MAX - h->scan_len;
	if (take > len)
		take = len;
	memcpy(h->scan + h->scan_len, data, take);
	h->scan_len += take;

	if (h->scan_len < MPA_RR_KEY_LEN && is_key_prefix(h->scan, h->scan_len))
		return take; /* wait for the whole key */
	k = find_key(h->scan, h->scan_len);
	if (k < h->scan_len) {
		c->iwarp = true;
		h->state = HALF_RR;
		if (k > 0)
			dec_report(c, dir, h->scan_off, DEC_ERROR,
				   "data-before-mpa",
				   "%zu octets of TCP data before the MPA %s "
				   "(RFC 5044 §7.1: the stream starts with it)",
				   k,
				   h->scan[k + 9] == 'q' ? "Request" : "Reply");
		follow(c, dir, h->scan_off + k, h->scan + k, h->scan_len - k);
		return take;
	}
	if (h->scan_len >= MPA_RR_KEY_LEN && memcmp(h->scan, "MPA", 3) == 0) {
		char txt[80];

		c->iwarp = true;
		h->state = HALF_IGNORE;
		printable(txt, sizeof(txt), h->scan, MPA_RR_KEY_LEN);
		dec_report(c, dir, h->scan_off, DEC_ERROR, "mpa-key",
			   "invalid MPA Request/Reply key \"%s\" "
			   "(RFC 5044 §7.1)",
			   txt);
		snprintf(c->end_note, sizeof(c->end_note), "invalid MPA key");
		return take;
	}
	if (h->scan_len == DEC_SCAN_MAX) {
		h->state = HALF_IGNORE;
		if (c->iwarp)
			dec_report(c, dir, h->scan_off, DEC_ERROR, "not-mpa",
				   "data that does not start with an MPA %s",
				   dir == c->initiator ? "Request" : "Reply");
	}
	return take;
}

/* ---- Request / Reply ---------------------------------------------------- */

static void rr_describe(struct dec_unit *u, const struct mpa_rr *fr, bool valid)
{
	size_t o;

	o = (size_t)snprintf(u->text, sizeof(u->text), "MPA %s rev %u%s",
			     fr->kind == MPA_RR_REQUEST ? "Request" : "Reply",
			     fr->rev, fr->enhanced ? " enhanced" : "");
	o += (size_t)snprintf(u->text + o, sizeof(u->text) - o,
			      " crc=%d markers=%d", fr->c, fr->m);
	if (fr->enhanced && fr->has_ird_ord) {
		o += (size_t)snprintf(u->text + o, sizeof(u->text) - o,
				      " ird=%u ord=%u", fr->ird, fr->ord);
		if (fr->p2p || fr->rtr) {
			o += (size_t)snprintf(
				u->text + o, sizeof(u->text) - o,
				" p2p=%d rtr=%s%s%s%s", fr->p2p,
				fr->rtr ? "" : "none",
				fr->rtr & MPA_RTR_SEND ? "S" : "",
				fr->rtr & MPA_RTR_WRITE ? "W" : "",
				fr->rtr & MPA_RTR_READ ? "R" : "");
		}
	}
	o += (size_t)snprintf(u->text + o, sizeof(u->text) - o, " pd=%u",
			      fr->pd_length);
	if (fr->pdata_len) {
		char txt[64];

		printable(txt, sizeof(txt), fr->pdata,
			  fr->pdata_len > 24 ? 24 : fr->pdata_len);
		o += (size_t)snprintf(u->text + o, sizeof(u->text) - o,
				      " ulp_pd=\"%s%s\"", txt,
				      fr->pdata_len > 24 ? "..." : "");
	}
	/* libiwarp's RFC 7306 offer (docs/rdmap-ext.md): a named flag */
	if (fr->rsvd & MPA_RR_FLAG_RDMAP_EXT)
		o += (size_t)snprintf(u->text + o, sizeof(u->text) - o,
				      " rdmap_ext");
	if (fr->rsvd & ~MPA_RR_FLAG_RDMAP_EXT)
		o += (size_t)snprintf(u->text + o, sizeof(u->text) - o,
				      " reserved=0x%02x",
				      fr->rsvd & ~MPA_RR_FLAG_RDMAP_EXT);
	if (fr->r)
		o += (size_t)snprintf(u->text + o, sizeof(u->text) - o,
				      " REJECT");
	if (!valid)
		snprintf(u->text + o, sizeof(u->text) - o, " INVALID");
	u->rr_flags =
		(uint8_t)((fr->m ? MPA_RR_FLAG_M : 0) |
			  (fr->c ? MPA_RR_FLAG_C : 0) |
			  (fr->r ? MPA_RR_FLAG_R : 0) |
			  (fr->enhanced ? MPA_RR_FLAG_ENHANCED : 0) | fr->rsvd);
	u->rr_rev = fr->rev;
	u->pd_len = fr->pd_length;
	u->enhanced = fr->enhanced;
	u->have_ird_ord = fr->enhanced && fr->has_ird_ord;
	u->ird = (uint16_t)(fr->ird | (fr->p2p ? MPA_IRD_A : 0) |
			    (fr->rtr & MPA_RTR_SEND ? MPA_IRD_B : 0));
	u->ord =
		(uint16_t)(fr->ord | (fr->rtr & MPA_RTR_WRITE ? MPA_ORD_C : 0) |
			   (fr->rtr & MPA_RTR_READ ? MPA_ORD_D : 0));
}

/* Starts full operation in direction |dir| after its frame. */
static void start_fpdus(struct dec_conn *c, int dir, bool markers)
{
	struct dec_half *h = &c->h[dir];
	uint64_t base = h->rr_off + h->rr_len;
	int i;

	h->crc = c->crc;
	h->markers = markers;
	for (i = 0; i < DEC_NQN; i++)
		h->uq[i].next_msn = 1; /* RFC 5041 §5.1: MSN starts at 1 */
	if (dec_fpdu_rx_init(&h->fx, base, markers, c->crc) < 0) {
		h->state = HALF_IGNORE;
		dec_report(c, dir, base, DEC_ERROR, "nomem",
			   "out of memory: direction not decoded");
		return;
	}
	h->fx_init = true;
	h->state = HALF_FPDU;
}

/* Releases octets held in |dir| into the state it is now in. */
static void release_hold(struct dec_conn *c, int dir)
{
	struct dec_half *h = &c->h[dir];
	uint8_t *p = h->hold;
	size_t n = h->hold_len;

	if (!p)
		return;
	h->hold = NULL;
	h->hold_len = 0;
	if (n)
		follow(c, dir, h->hold_off, p, n);
	iw_free(p);
}

/* RFC 5044 §7.1 / RFC 6581 §5, §9: the Reply against the Request. */
static void check_reply(struct dec_conn *c, int rdir)
{
	const struct mpa_rr *rq = &c->h[!rdir].frame;
	const struct mpa_rr *rp = &c->h[rdir].frame;
	uint64_t off = c->h[rdir].rr_off;

	if (rp->rev > rq->rev)
		dec_report(c, rdir, off, DEC_ERROR, "mpa-rev",
			   "Reply revision %u above the Request's %u "
			   "(RFC 6581 §5)",
			   rp->rev, rq->rev);
	if (rp->enhanced && !rq->enhanced)
		dec_report(c, rdir, off, DEC_ERROR, "mpa-enhanced",
			   "enhanced Reply to a Request that is not enhanced "
			   "(RFC 6581 §5)");
	if (rq->enhanced && !rp->enhanced && !rp->r)
		dec_report(c, rdir, off, DEC_WARNING, "mpa-enhanced",
			   "enhanced Request answered without the enhanced "
			   "header: no IRD/ORD negotiated");
	if (rp->r)
		return;
	if (!rq->enhanced || !rp->enhanced || !rq->has_ird_ord ||
	    !rp->has_ird_ord)
		return;
	if (rq->p2p && !rp->p2p)
		dec_report(c, rdir, off, DEC_ERROR, "mpa-p2p",
			   "Request sets the peer-to-peer flag A, the Reply "
			   "does not echo it (RFC 6581 §9.2)");
	if (!rq->p2p && rp->p2p)
		dec_report(c, rdir, off, DEC_ERROR, "mpa-p2p",
			   "Reply sets the peer-to-peer flag A the Request did "
			   "not (RFC 6581 §9.2)");
	if (rq->p2p && rp->p2p) {
		uint8_t t = rp->rtr;

		if (t != MPA_RTR_SEND && t != MPA_RTR_WRITE &&
		    t != MPA_RTR_READ)
			dec_report(c, rdir, off, DEC_ERROR, "mpa-rtr",
				   "Reply must choose exactly one RTR type, "
				   "has 0x%x (RFC 6581 §9.2)",
				   t);
		else if (rq->rtr && !(rq->rtr & t))
			dec_report(c, rdir, off, DEC_ERROR, "mpa-rtr",
				   "Reply chooses RTR type %s the Request did "
				   "not offer (RFC 6581 §9.2)",
				   mpa_rtr_name((enum mpa_rtr)t));
		else
			c->rtr = t;
		if (!rq->rtr)
			dec_report(c, !rdir, c->h[!rdir].rr_off, DEC_WARNING,
				   "mpa-rtr",
				   "peer-to-peer Request offers no RTR type");
		c->p2p = true;
	}
	if (rp->ord > rq->ird)
		dec_report(c, rdir, off, DEC_WARNING, "mpa-ird",
			   "Reply ORD %u exceeds the Request's IRD %u "
			   "(RFC 6581 §5)",
			   rp->ord, rq->ird);
}

/* A complete Request/Reply frame of |dir| is in h->rr. */
static void frame_done(struct dec_conn *c, int dir)
{
	struct dec_half *h = &c->h[dir];
	struct mpa_rr *fr = &h->frame;
	struct dec_unit u;
	int rc, rc2 = 0;

	dec_unit_begin(c);
	memset(fr, 0, sizeof(*fr));
	rc = mpa_rr_decode(fr, h->rr, h->rr_len, MPA_RR_DECODE_STRICT);
	if (rc == IWARP_ERR_MPA_RESERVED || rc == IWARP_ERR_MPA_ENHANCED_PD) {
		/* header fields are filled whatever the lax verdict */
		rc2 = mpa_rr_decode(fr, h->rr, h->rr_len, MPA_RR_DECODE_LAX);
		(void)rc2;
	}
	/*
	 * Reserved bit 0x01 alone is libiwarp's offer of the RFC 7306
	 * extensions (MPA_RR_FLAG_RDMAP_EXT): RFC 5044 §7.1 peers send it as
	 * zero and ignore it, so it is no error in a capture. The frame is
	 * judged as if the bit were clear (the lax decode's verdict).
	 */
	if (rc == IWARP_ERR_MPA_RESERVED && fr->rsvd == MPA_RR_FLAG_RDMAP_EXT)
		rc = rc2;
	fr->kind = h->rr[9] == 'q' ? MPA_RR_REQUEST : MPA_RR_REPLY;
	h->have_frame = true;
	h->frame_valid = rc >= 0;
	switch (rc) {
	case IWARP_ERR_MPA_RESERVED:
		dec_report(c, dir, h->rr_off, DEC_ERROR, "mpa-reserved",
			   "reserved flag bits 0x%02x set (RFC 5044 §7.1: "
			   "sent as zero)",
			   fr->rsvd);
		break;
	case IWARP_ERR_MPA_ENHANCED_PD:
		dec_report(c, dir, h->rr_off, DEC_ERROR, "mpa-enhanced",
			   "enhanced (Rev 2, flag 0x10) with PD_Length %u < 4: "
			   "no IRD/ORD header (RFC 6581 §5)",
			   fr->pd_length);
		break;
	case IWARP_ERR_MPA_REV:
		dec_report(c, dir, h->rr_off, DEC_ERROR, "mpa-rev",
			   "unknown MPA revision %u (RFC 5044 §7.1: 1, "
			   "RFC 6581: 2)",
			   h->rr[17]);
		fr->rev = h->rr[17];
		break;
	case IWARP_ERR_MPA_REQ_REP:
		dec_report(c, dir, h->rr_off, DEC_ERROR, "mpa-reject",
			   "R (reject) set in a Request (RFC 5044 §7.1)");
		break;
	default:
		if (rc < 0)
			dec_report(c, dir, h->rr_off, DEC_ERROR, "mpa-frame",
				   "invalid MPA %s: %s",
				   fr->kind == MPA_RR_REQUEST ? "Request"
							      : "Reply",
				   iwarp_strerror(rc));
		break;
	}
	if (rc != IWARP_ERR_MPA_REV && fr->rev == MPA_REV_0)
		dec_report(c, dir, h->rr_off, DEC_ERROR, "mpa-rev",
			   "MPA revision 0 is pre-standard (RFC 5044 §7.1: "
			   "senders set Rev to 1, RFC 6581: 2)");

	memset(&u, 0, sizeof(u));
	u.dir = (enum dec_dir)dir;
	u.off = h->rr_off;
	u.kind = fr->kind == MPA_RR_REQUEST ? DEC_UNIT_MPA_REQ
					    : DEC_UNIT_MPA_REP;
	u.crc = -1;
	rr_describe(&u, fr, h->frame_valid);
	dec_emit_unit(c, &u);

	if (fr->kind == MPA_RR_REQUEST) {
		if (c->have_req) {
			dec_report(c, dir, h->rr_off, DEC_ERROR, "mpa-frame",
				   "a second MPA Request on this connection");
			h->state = HALF_IGNORE;
			return;
		}
		c->have_req = true;
		c->initiator = dir;
		h->state = HALF_HOLD;
		return;
	}
	/* A Reply. */
	if (!c->have_req || c->initiator == dir) {
		dec_report(c, dir, h->rr_off, DEC_ERROR, "mpa-frame",
			   "MPA Reply without a Request from the peer");
		h->state = HALF_IGNORE;
		return;
	}
	if (c->have_rep) {
		h->state = HALF_IGNORE;
		return;
	}
	c->have_rep = true;
	check_reply(c, dir);
	if (fr->r) {
		char ep[64];

		c->rejected = true;
		dec_report(c, dir, h->rr_off, DEC_ERROR, "mpa-reject",
			   "MPA Request rejected by %s (R=1 in the Reply, "
			   "RFC 5044 §7.1)",
			   dec_endpoint_format(&c->ep[dir], ep, sizeof(ep)));
		snprintf(c->end_note, sizeof(c->end_note), "rejected");
		h->state = HALF_DONE;
		c->h[!dir].state = HALF_DONE;
		release_hold(c, !dir);
		return;
	}
	/* RFC 5044 §7.1: CRC when either frame asks; markers toward the
	 * sender of M. */
	c->crc = c->h[!dir].frame.c || fr->c;
	c->enhanced = c->h[!dir].frame.enhanced && fr->enhanced;
	c->established = true;
	start_fpdus(c, !dir, fr->m);
	start_fpdus(c, dir, c->h[!dir].frame.m);
	release_hold(c, !dir);
}

/* HALF_RR: gathers the frame. Returns octets consumed. */
static size_t rr_feed(struct dec_conn *c, int dir, uint64_t off,
		      const uint8_t *data, size_t len)
{
	struct dec_half *h = &c->h[dir];
	size_t need, take;
	int rc;

	if (h->rr_len == 0)
		h->rr_off = off;
	need = MPA_RR_HDR_LEN;
	if (h->rr_len >= MPA_RR_HDR_LEN) {
		rc = mpa_rr_peek(h->rr, h->rr_len);
		if (rc < 0) {
			dec_report(c, dir, h->rr_off, DEC_ERROR, "mpa-frame",
				   "invalid MPA frame header: %s (PD_Length "
				   "%u)",
				   iwarp_strerror(rc),
				   iw_get_u16be(h->rr + 18));
			h->state = HALF_IGNORE;
			return len;
		}
		need = (size_t)rc;
	}
	take = need - h->rr_len;
	if (take > len)
		take = len;
	memcpy(h->rr + h->rr_len, data, take);
	h->rr_len += take;
	if (h->rr_len == MPA_RR_HDR_LEN && need == MPA_RR_HDR_LEN) {
		rc = mpa_rr_peek(h->rr, h->rr_len);
		if (rc < 0) {
			dec_report(c, dir, h->rr_off, DEC_ERROR, "mpa-frame",
				   "invalid MPA frame header: %s (PD_Length "
				   "%u)",
				   iwarp_strerror(rc),
				   iw_get_u16be(h->rr + 18));
			h->state = HALF_IGNORE;
			return len;
		}
		need = (size_t)rc;
	}
	if (h->rr_len == need)
		frame_done(c, dir);
	return take;
}

/* HALF_HOLD: the peer's frame is not known yet. */
static size_t hold_feed(struct dec_conn *c, int dir, uint64_t off,
			const uint8_t *data, size_t len)
{
	struct dec_half *h = &c->h[dir];
	uint8_t *n;

	if (!h->hold_early && dir == c->initiator && !c->have_rep) {
		h->hold_early = true;
		dec_report(c, dir, off, DEC_ERROR, "early-fpdu",
			   "initiator sent data before the MPA Reply "
			   "(RFC 5044 §7.1.2)");
	}
	if (h->hold_len + len > DEC_HOLD_MAX) {
		dec_report(c, dir, off, DEC_ERROR, "overflow",
			   "more than %u octets before the peer's MPA frame: "
			   "not decoded",
			   DEC_HOLD_MAX);
		h->state = HALF_IGNORE;
		return len;
	}
	if (h->hold_len == 0)
		h->hold_off = off;
	n = iw_realloc(h->hold, h->hold_len + len);
	if (!n) {
		h->state = HALF_IGNORE;
		return len;
	}
	memcpy(n + h->hold_len, data, len);
	h->hold = n;
	h->hold_len += len;
	return len;
}

struct fpdu_ctx {
	struct dec_conn *c;
	int dir;
};

static void on_fpdu(void *ctx, const struct dec_fpdu *f)
{
	struct fpdu_ctx *fc = ctx;

	if (fc->c->h[fc->dir].state != HALF_FPDU)
		return;
	dec_rdmap_fpdu(fc->c, fc->dir, f);
}

static void follow(struct dec_conn *c, int dir, uint64_t off,
		   const uint8_t *data, size_t len)
{
	struct dec_half *h = &c->h[dir];
	struct fpdu_ctx fc;
	size_t n;

	while (len > 0) {
		switch (h->state) {
		case HALF_START:
			n = scan(c, dir, off, data, len);
			break;
		case HALF_RR:
			n = rr_feed(c, dir, off, data, len);
			break;
		case HALF_HOLD:
			n = hold_feed(c, dir, off, data, len);
			break;
		case HALF_FPDU:
			fc.c = c;
			fc.dir = dir;
			dec_fpdu_rx_feed(&h->fx, data, len, on_fpdu, &fc);
			n = len;
			break;
		case HALF_DONE:
			dec_report(c, dir, off, DEC_ERROR, "data-after-end",
				   "%zu octets after %s", len,
				   h->sent_terminate ? "this side's Terminate"
						     : "the MPA rejection");
			h->state = HALF_IGNORE;
			n = len;
			break;
		case HALF_IGNORE:
		default:
			n = len;
			break;
		}
		data += n;
		len -= n;
		off += n;
	}
}

void dec_follow_data(struct dec_conn *c, int dir, uint64_t off,
		     const uint8_t *data, size_t len)
{
	c->any_data = true;
	follow(c, dir, off, data, len);
}

/* ---- end of capture ------------------------------------------------------ */

static bool half_closed(const struct dec_half *h)
{
	return h->st.fin || h->st.rst;
}

static void finish_half(struct dec_conn *c, int dir)
{
	struct dec_half *h = &c->h[dir];
	uint64_t goff, glen, after, foff;
	size_t have, need;
	bool closed = half_closed(h);

	if (dec_stream_gap(&h->st, &goff, &glen, &after) &&
	    h->state != HALF_IGNORE) {
		if (h->st.truncated_bytes)
			dec_report(
				c, dir, goff, DEC_ERROR, "snaplen",
				"capture cut by its snap length: %llu octets "
				"missing at this offset, the stream is not "
				"decoded beyond",
				(unsigned long long)glen);
		else
			dec_report(c, dir, goff, DEC_ERROR, "gap",
				   "gap of %llu octets that never filled; %llu "
				   "octets after it not decoded",
				   (unsigned long long)glen,
				   (unsigned long long)after);
		/* what is cut off after the hole is its consequence */
		if (h->state == HALF_START && h->scan_len &&
		    is_key_prefix(h->scan, h->scan_len))
			c->iwarp = true;
		if (h->state == HALF_FPDU)
			dec_rdmap_finish(c, dir, closed);
		return;
	}
	switch (h->state) {
	case HALF_START:
		if (h->scan_len && c->iwarp)
			dec_report(c, dir, h->scan_off, DEC_ERROR, "not-mpa",
				   "%zu octets of data that are not an MPA %s",
				   h->scan_len,
				   dir == c->initiator ? "Request" : "Reply");
		else if (h->scan_len && is_key_prefix(h->scan, h->scan_len)) {
			c->iwarp = true;
			dec_report(c, dir, h->scan_off,
				   closed ? DEC_ERROR : DEC_WARNING, "cut",
				   "stream %s inside an MPA key",
				   closed ? "closed" : "ends (capture)");
		}
		break;
	case HALF_RR:
		dec_report(c, dir, h->rr_off, closed ? DEC_ERROR : DEC_WARNING,
			   "cut",
			   "%s inside the MPA Request/Reply (%zu "
			   "octets)",
			   closed ? "stream closed" : "capture ends",
			   h->rr_len);
		break;
	case HALF_HOLD:
		if (h->hold_len)
			dec_report(
				c, dir, h->hold_off, DEC_ERROR, "no-reply",
				"%zu octets after the Request never decoded: "
				"no MPA Reply",
				h->hold_len);
		break;
	case HALF_FPDU:
		if (dec_fpdu_rx_partial(&h->fx, &foff, &have, &need)) {
			/* After a Terminate the stream is being torn down
			 * (RFC 5040 §5.4): a sender that was inside an FPDU
			 * when its peer's Terminate came closes without
			 * finishing it (siw does; so does any stack whose
			 * abortive close discards what TCP still held). */
			bool term = dec_conn_terminated(c);

			if (closed)
				dec_report(
					c, dir, foff,
					term ? DEC_WARNING : DEC_ERROR, "cut",
					"stream closed (%s) inside an FPDU "
					"(%zu of %zu octets%s; RFC 5044 §8: "
					"stream lost)",
					h->st.rst ? "RST" : "FIN", have, need,
					term ? ", after a Terminate" : "");
			else
				dec_report(c, dir, foff, DEC_WARNING, "cut",
					   "capture ends inside an FPDU (%zu "
					   "of %zu octets)",
					   have, need);
		}
		dec_rdmap_finish(c, dir, closed);
		break;
	case HALF_DONE:
	case HALF_IGNORE:
	default:
		break;
	}
}

static const char *close_text(const struct dec_conn *c, char *buf, size_t n)
{
	const struct dec_half *a = &c->h[DEC_AB], *b = &c->h[DEC_BA];

	if (a->st.rst || b->st.rst)
		snprintf(buf, n, "reset by %s",
			 a->st.rst && b->st.rst ? "both"
			 : a->st.rst		? "A"
						: "B");
	else if (a->st.fin && b->st.fin)
		snprintf(buf, n, "closed (FIN both ways)");
	else if (a->st.fin || b->st.fin)
		snprintf(buf, n, "half-closed by %s at end of capture",
			 a->st.fin ? "A" : "B");
	else
		snprintf(buf, n, "open at end of capture");
	return buf;
}

void dec_follow_finish(struct dec_conn *c)
{
	bool closed = half_closed(&c->h[0]) || half_closed(&c->h[1]);
	char cl[64];
	int i;

	for (i = 0; i < 2; i++)
		finish_half(c, i);
	if (c->iwarp && c->have_req && !c->have_rep) {
		const struct dec_half *ih = &c->h[c->initiator];

		if (!ih->frame_valid)
			snprintf(c->end_note, sizeof(c->end_note),
				 "invalid MPA Request, no Reply");
		else if (closed)
			dec_report(c, -1, UINT64_MAX, DEC_ERROR, "no-reply",
				   "connection closed without an MPA Reply");
		else
			dec_report(c, -1, UINT64_MAX, DEC_WARNING, "no-reply",
				   "capture ends before the MPA Reply");
		if (!c->end_note[0])
			snprintf(c->end_note, sizeof(c->end_note),
				 "no MPA Reply");
	}
	close_text(c, cl, sizeof(cl));
	if (!c->iwarp)
		snprintf(c->end_note, sizeof(c->end_note), "%s", cl);
	else if (c->established) {
		const char *t = c->h[0].sent_terminate	 ? "terminated by A, "
				: c->h[1].sent_terminate ? "terminated by B, "
							 : "";

		snprintf(c->end_note, sizeof(c->end_note), "established, %s%s",
			 t, cl);
	} else {
		char tmp[sizeof(c->end_note) + sizeof(cl) + 4];
		size_t n;

		snprintf(tmp, sizeof(tmp), "%s, %s",
			 c->end_note[0] ? c->end_note : "MPA incomplete", cl);
		n = strlen(tmp);
		if (n >= sizeof(c->end_note))
			n = sizeof(c->end_note) - 1;
		memcpy(c->end_note, tmp, n);
		c->end_note[n] = '\0';
	}
}

void dec_follow_release(struct dec_conn *c)
{
	int i;

	for (i = 0; i < 2; i++) {
		struct dec_half *h = &c->h[i];

		iw_free(h->scan);
		iw_free(h->hold);
		iw_free(h->rreq);
		h->scan = NULL;
		h->hold = NULL;
		h->rreq = NULL;
		if (h->fx_init)
			dec_fpdu_rx_release(&h->fx);
		h->fx_init = false;
	}
}
