/*
 * tools/decode/rdmap_chk.c: checks and describes one FPDU: MPA CRC and
 * markers (RFC 5044 §5, §6), the DDP header (RFC 5041 §4), MSN/MO/L per
 * untagged queue (RFC 5041 §5.3), TO continuity of tagged messages
 * (RFC 5041 §5.2), the RDMAP header and opcode (RFC 5040 §4), Read
 * Requests against Read Responses (RFC 5040 §4.4, §5.2, RFC 6581 IRD),
 * Terminate (RFC 5040 §4.8), the RFC 7306 messages (Immediate Data, Atomic
 * Request/Response paired by Request Identifier) and tagged access to an
 * STag that a Send with Invalidate of the same direction named.
 */
#include "config.h"

#include <stdio.h>
#include <string.h>

#include "conn.h"
#include "ddp/ddp_hdr.h"
#include "iwarp/iwarp.h"
#include "mpa/mpa_negotiate.h"
#include "rdmap/rdmap_opcode.h"
#include "rdmap/rdmap_rreq.h"
#include "rdmap/rdmap_term.h"
#include "util/bytes.h"
#include "util/mem.h"

/* Appends printf output to the unit text. */
static void add(struct dec_unit *u, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static void add(struct dec_unit *u, const char *fmt, ...)
{
	size_t o = strlen(u->text);
	va_list ap;

	if (o + 1 >= sizeof(u->text))
		return;
	va_start(ap, fmt);
	vsnprintf(u->text + o, sizeof(u->text) - o, fmt, ap);
	va_end(ap);
}

static void check_crc(struct dec_conn *c, int dir, const struct dec_fpdu *f,
		      struct dec_unit *u)
{
	struct dec_half *h = &c->h[dir];

	if (h->crc) {
		u->crc = f->crc_field == f->crc_calc;
#ifndef IWARP_FUZZING
		if (!u->crc)
			dec_report(c, dir, f->off, DEC_ERROR, "crc",
				   "CRC error: field 0x%08x, computed 0x%08x "
				   "(RFC 5044 §6)",
				   f->crc_field, f->crc_calc);
#endif
	} else {
		u->crc = -1;
		if (f->crc_field != 0)
			dec_report(c, dir, f->off, DEC_ERROR, "crc-field",
				   "CRC field 0x%08x is not zero although CRC "
				   "is not in use (RFC 5044 §4.1)",
				   f->crc_field);
	}
}

/* Untagged queue bookkeeping (RFC 5041 §5.1, §5.3). */
static void track_untagged(struct dec_conn *c, int dir, uint64_t off,
			   const struct ddp_hdr *hd, uint32_t plen)
{
	struct dec_half *h = &c->h[dir];
	struct dec_uq *q;

	if (hd->qn >= DEC_NQN)
		return;
	q = &h->uq[hd->qn];
	if (q->in_msg && hd->msn != q->msn) {
		dec_report(c, dir, off, DEC_ERROR, "ddp-l",
			   "QN %u: MSN %u starts while message MSN %u is "
			   "incomplete (no segment with L; RFC 5041 §5.3)",
			   hd->qn, hd->msn, q->msn);
		q->in_msg = false;
		q->next_msn = q->msn + 1;
	}
	if (q->in_msg) {
		if (hd->mo != q->mo)
			dec_report(c, dir, off, DEC_ERROR, "ddp-mo",
				   "QN %u MSN %u: MO %u, expected %u "
				   "(RFC 5041 §5.3)",
				   hd->qn, hd->msn, hd->mo, q->mo);
		if (hd->opcode != q->opcode)
			dec_report(c, dir, off, DEC_ERROR, "rdmap-opcode",
				   "QN %u MSN %u: opcode %u inside a message "
				   "of opcode %u",
				   hd->qn, hd->msn, hd->opcode, q->opcode);
	} else {
		if (hd->msn != q->next_msn)
			dec_report(c, dir, off, DEC_ERROR, "ddp-msn",
				   "QN %u: MSN %u, expected %u (RFC 5041 "
				   "§5.1: starts at 1, +1 per message)",
				   hd->qn, hd->msn, q->next_msn);
		if (hd->mo != 0)
			dec_report(c, dir, off, DEC_ERROR, "ddp-mo",
				   "QN %u MSN %u: first segment with MO %u, "
				   "expected 0 (RFC 5041 §5.3)",
				   hd->qn, hd->msn, hd->mo);
		q->in_msg = true;
		q->msn = hd->msn;
		q->opcode = hd->opcode;
	}
	q->mo = hd->mo + plen;
	if (hd->last) {
		q->in_msg = false;
		q->next_msn = q->msn + 1;
	}
}

/* Tagged message continuity (RFC 5041 §5.2). Returns true on a new message. */
static bool track_tagged(struct dec_conn *c, int dir, uint64_t off,
			 struct dec_tq *t, const struct ddp_hdr *hd,
			 uint32_t plen, const char *what)
{
	bool first = !t->in_msg;

	if (t->in_msg && (hd->stag != t->stag || hd->to != t->to)) {
		dec_report(c, dir, off, DEC_ERROR, "ddp-to",
			   "%s segment STag 0x%08x TO 0x%llx does not continue "
			   "the message in progress (STag 0x%08x, next TO "
			   "0x%llx; RFC 5041 §5.2)",
			   what, hd->stag, (unsigned long long)hd->to, t->stag,
			   (unsigned long long)t->to);
		first = true;
	}
	if (first) {
		t->stag = hd->stag;
		t->len = 0;
	}
	t->in_msg = !hd->last;
	t->to = hd->to + plen;
	t->len += plen;
	return first;
}

/*
 * A tagged access (|what|) to |stag| in direction |dir| after a Send with
 * Invalidate in that direction named it: the peer invalidated that STag
 * (RFC 5040 §4.3, §5.3), so the access fails unless it was registered
 * again in between, which the wire does not show.
 */
static void check_invalidated(struct dec_conn *c, int dir, uint64_t off,
			      uint32_t stag, const char *what)
{
	const struct dec_half *h = &c->h[dir];
	size_t i;

	for (i = 0; i < h->ninv; i++)
		if (h->inv_stag[i] == stag) {
			dec_report(c, dir, off, DEC_WARNING, "stag-invalidated",
				   "%s uses STag 0x%08x, which a Send with "
				   "Invalidate of this direction invalidated "
				   "(RFC 5040 §5.3)",
				   what, stag);
			return;
		}
}

static void note_invalidate(struct dec_conn *c, int dir, uint32_t stag)
{
	struct dec_half *h = &c->h[dir];
	size_t i;

	for (i = 0; i < h->ninv; i++)
		if (h->inv_stag[i] == stag)
			return;
	h->inv_stag[h->inv_next] = stag;
	h->inv_next = (h->inv_next + 1) % DEC_MAX_INV;
	if (h->ninv < DEC_MAX_INV)
		h->ninv++;
}

/* Expected QN of the RFC 7306 opcodes (RFC 7306 §8). */
static uint32_t rfc7306_qn(uint8_t opcode)
{
	switch (opcode) {
	case RDMAP_OP_ATOMIC_REQUEST:
		return 3;
	case RDMAP_OP_ATOMIC_RESPONSE:
		return 4;
	default:
		return DDP_QN_SEND; /* Immediate Data, RFC 7306 §5.1 */
	}
}

static bool is_rfc7306(uint8_t opcode)
{
	return opcode >= RDMAP_OP_IMM_DATA &&
	       opcode <= RDMAP_OP_ATOMIC_RESPONSE;
}

/*
 * RFC 7306 §5: Immediate Data (8 octets), Atomic Request (52 octets:
 * reserved(28) | atomic opcode(4), Request Identifier, Remote STag,
 * Remote TO, Add/Swap Data, Add/Swap Mask, Compare Data, Compare Mask),
 * Atomic Response (12 octets: Original Request Identifier, Original
 * Remote Data Value). Each is one DDP segment.
 */
static void rfc7306_msg(struct dec_conn *c, int dir, const struct dec_fpdu *f,
			const struct ddp_hdr *hd, uint32_t plen,
			struct dec_unit *u)
{
	static const char *const aops[] = {"Fetch and Add", "Swap",
					   "Compare and Swap"};
	struct dec_half *h = &c->h[dir];
	struct dec_half *peer = &c->h[!dir];
	const uint8_t *p = f->ulpdu + DDP_UNTAGGED_HDR_LEN;
	uint32_t want = hd->opcode == RDMAP_OP_ATOMIC_REQUEST	 ? 52
			: hd->opcode == RDMAP_OP_ATOMIC_RESPONSE ? 12
								 : 8;
	uint32_t id, w0, aop;
	size_t i;

	if (hd->tagged)
		return; /* reported by ddp_rdmap() */
	if (!hd->last || hd->mo != 0)
		dec_report(
			c, dir, f->off, DEC_ERROR, "rdmap-7306",
			"%s must be one DDP segment: L=1, MO 0 (RFC 7306 §5)",
			rdmap_opcode_name(hd->opcode));
	if (plen != want) {
		dec_report(c, dir, f->off, DEC_ERROR, "rdmap-7306",
			   "%s carries %u octets, must be %u (RFC 7306 §5)",
			   rdmap_opcode_name(hd->opcode), plen, want);
		return;
	}
	switch (hd->opcode) {
	case RDMAP_OP_IMM_DATA:
	case RDMAP_OP_IMM_DATA_SE:
		add(u, " imm 0x%016llx", (unsigned long long)iw_get_u64be(p));
		break;
	case RDMAP_OP_ATOMIC_REQUEST:
		w0 = iw_get_u32be(p);
		aop = w0 & 0x0fu;
		id = iw_get_u32be(p + 4);
		add(u, " %s id 0x%08x STag 0x%08x TO 0x%llx",
		    aop < 3 ? aops[aop] : "reserved atomic op", id,
		    iw_get_u32be(p + 8),
		    (unsigned long long)iw_get_u64be(p + 12));
		if (aop >= 3)
			dec_report(
				c, dir, f->off, DEC_ERROR, "rdmap-7306",
				"Atomic Request: reserved atomic operation %u "
				"(RFC 7306 §5.2.1)",
				aop);
		if (w0 & ~0x0fu)
			dec_report(c, dir, f->off, DEC_ERROR, "rdmap-reserved",
				   "Atomic Request: reserved bits 0x%07x set "
				   "(RFC 7306 §5.2.1)",
				   w0 >> 4);
		check_invalidated(c, dir, f->off, iw_get_u32be(p + 8),
				  "Atomic Request");
		for (i = 0; i < h->natomic; i++)
			if (h->atomic_id[i] == id)
				dec_report(c, dir, f->off, DEC_WARNING,
					   "atomic-id",
					   "Atomic Request id 0x%08x reused "
					   "while still outstanding (RFC 7306 "
					   "§5.2.1)",
					   id);
		if (h->natomic < DEC_MAX_ATOMIC)
			h->atomic_id[h->natomic++] = id;
		else
			h->atomic_overflow = true;
		break;
	case RDMAP_OP_ATOMIC_RESPONSE:
		id = iw_get_u32be(p);
		add(u, " id 0x%08x orig 0x%016llx", id,
		    (unsigned long long)iw_get_u64be(p + 4));
		for (i = 0; i < peer->natomic; i++)
			if (peer->atomic_id[i] == id)
				break;
		if (i < peer->natomic) {
			memmove(&peer->atomic_id[i], &peer->atomic_id[i + 1],
				(peer->natomic - i - 1) * sizeof(uint32_t));
			peer->natomic--;
		} else if (!peer->atomic_overflow) {
			dec_report(c, dir, f->off, DEC_ERROR, "atomic-unpaired",
				   "Atomic Response id 0x%08x answers no "
				   "outstanding Atomic Request (RFC 7306 "
				   "§5.2.2)",
				   id);
		}
		break;
	default:
		break;
	}
}

static void read_request(struct dec_conn *c, int dir, const struct dec_fpdu *f,
			 struct dec_unit *u)
{
	struct dec_half *h = &c->h[dir];
	const struct dec_half *peer = &c->h[!dir];
	struct rdmap_rreq rr;
	struct dec_rreq *n;
	int rc;

	rc = rdmap_rreq_msg_decode(NULL, &rr, f->ulpdu, f->ulpdu_len);
	if (rc < 0 && rc != IWARP_ERR_DDP_MSG_TOO_LONG &&
	    rc != IWARP_ERR_DDP_MO) {
		dec_report(c, dir, f->off, DEC_ERROR, "rdmap-rreq",
			   "malformed Read Request (ULPDU_Length %u): %s",
			   f->ulpdu_len, iwarp_strerror(rc));
		return;
	}
	if (rc < 0)
		dec_report(c, dir, f->off, DEC_ERROR, "rdmap-rreq",
			   "Read Request: %s (RFC 5040 §4.4: one segment, "
			   "MO 0, L=1, 28-octet header)",
			   iwarp_strerror(rc));
	if (f->ulpdu_len < RDMAP_RREQ_MSG_LEN)
		return;
	add(u, " sink STag 0x%08x TO 0x%llx len %u src STag 0x%08x TO 0x%llx",
	    rr.sink_stag, (unsigned long long)rr.sink_to, rr.size, rr.src_stag,
	    (unsigned long long)rr.src_to);
	check_invalidated(c, dir, f->off, rr.src_stag, "Read Request (source)");
	if (h->rreq_len == h->rreq_cap) {
		size_t cap = h->rreq_cap ? h->rreq_cap * 2 : 8;

		n = iw_realloc(h->rreq, cap * sizeof(*n));
		if (!n)
			return;
		h->rreq = n;
		h->rreq_cap = cap;
	}
	n = &h->rreq[h->rreq_len++];
	n->sink_stag = rr.sink_stag;
	n->sink_to = rr.sink_to;
	n->size = rr.size;
	n->off = f->off;
	/* RFC 6581 §5 / RFC 5040 §5.2: outstanding Reads <= the peer's IRD. */
	if (c->enhanced && peer->have_frame && peer->frame.has_ird_ord &&
	    h->rreq_len > peer->frame.ird)
		dec_report(c, dir, f->off, DEC_ERROR, "rdmap-ird",
			   "%zu Read Requests outstanding, the peer's IRD is "
			   "%u (RFC 6581 §5)",
			   h->rreq_len, peer->frame.ird);
}

static void read_response(struct dec_conn *c, int dir, const struct dec_fpdu *f,
			  const struct ddp_hdr *hd, uint32_t plen)
{
	struct dec_half *h = &c->h[dir];
	struct dec_half *rq = &c->h[!dir]; /* who sent the Read Requests */
	bool first = track_tagged(c, dir, f->off, &h->tq_rresp, hd, plen,
				  "Read Response");
	struct dec_rreq *head;

	if (rq->rreq_len == 0) {
		if (first)
			dec_report(c, dir, f->off, DEC_ERROR, "rdmap-rresp",
				   "Read Response without an outstanding Read "
				   "Request (RFC 5040 §4.4)");
		return;
	}
	head = &rq->rreq[0];
	if (first && (hd->stag != head->sink_stag || hd->to != head->sink_to))
		dec_report(
			c, dir, f->off, DEC_ERROR, "rdmap-rresp",
			"Read Response STag 0x%08x TO 0x%llx does not match "
			"the oldest outstanding Read Request (off %llu: sink "
			"STag 0x%08x TO 0x%llx; RFC 5040 §5.2 in order)",
			hd->stag, (unsigned long long)hd->to,
			(unsigned long long)head->off, head->sink_stag,
			(unsigned long long)head->sink_to);
	if (h->tq_rresp.len > head->size)
		dec_report(c, dir, f->off, DEC_ERROR, "rdmap-rresp",
			   "Read Response longer (%llu) than requested (%u)",
			   (unsigned long long)h->tq_rresp.len, head->size);
	else if (hd->last && h->tq_rresp.len != head->size)
		dec_report(c, dir, f->off, DEC_ERROR, "rdmap-rresp",
			   "Read Response of %llu octets, %u requested",
			   (unsigned long long)h->tq_rresp.len, head->size);
	if (hd->last) {
		memmove(rq->rreq, rq->rreq + 1,
			(rq->rreq_len - 1) * sizeof(*rq->rreq));
		rq->rreq_len--;
	}
}

static void terminate(struct dec_conn *c, int dir, const struct dec_fpdu *f,
		      struct dec_unit *u)
{
	struct rdmap_term t;
	int rc;

	memset(&t, 0, sizeof(t));
	rc = rdmap_term_decode(&t, NULL, f->ulpdu, f->ulpdu_len);
	c->h[dir].sent_terminate = true;
	if (rc < 0) {
		dec_report(c, dir, f->off, DEC_ERROR, "rdmap-term",
			   "malformed Terminate (ULPDU_Length %u): %s",
			   f->ulpdu_len, iwarp_strerror(rc));
		return;
	}
	add(u, " %s",
	    iwarp_term_strerror(t.cause.layer, t.cause.etype, t.cause.ecode));
	add(u, " (layer %u etype %u ecode 0x%02x%s%s%s)", t.cause.layer,
	    t.cause.etype, t.cause.ecode, t.m ? " M" : "", t.d ? " D" : "",
	    t.r ? " R" : "");
	if (t.siw_nibble_swapped)
		add(u, " (siw nibble-swapped control word)");
	dec_report(c, dir, f->off,
		   dec_decoder_terminate_error(c->d) ? DEC_ERROR : DEC_WARNING,
		   "terminate", "Terminate sent: %s%s",
		   iwarp_term_strerror(t.cause.layer, t.cause.etype,
				       t.cause.ecode),
		   t.siw_nibble_swapped ? " (siw nibble-swapped control word)"
					: "");
	if (t.siw_nibble_swapped)
		dec_report(c, dir, f->off, DEC_WARNING, "term-encoding",
			   "Terminate Control word in siw's nibble-swapped "
			   "layout, not RFC 5040 §4.8");
	if (!rdmap_term_cause_valid(t.cause.layer, t.cause.etype,
				    t.cause.ecode))
		dec_report(c, dir, f->off, DEC_ERROR, "rdmap-term",
			   "Terminate with undefined cause layer %u etype %u "
			   "ecode 0x%02x",
			   t.cause.layer, t.cause.etype, t.cause.ecode);
	if (t.rsvd)
		dec_report(c, dir, f->off, DEC_ERROR, "rdmap-reserved",
			   "Terminate reserved bits 0x%04x set (RFC 5040 §4.8)",
			   t.rsvd);
}

/* RFC 6581 §7: the initiator's first FPDU is the negotiated RTR. */
static void check_rtr(struct dec_conn *c, int dir, const struct dec_fpdu *f,
		      const struct ddp_hdr *hd, uint32_t plen)
{
	bool ok;

	if (!c->p2p || !c->rtr || dir != c->initiator || c->h[dir].rtr_checked)
		return;
	c->h[dir].rtr_checked = true;
	switch (c->rtr) {
	case MPA_RTR_SEND:
		ok = !hd->tagged && hd->opcode == RDMAP_OP_SEND && plen == 0;
		break;
	case MPA_RTR_WRITE:
		ok = hd->tagged && hd->opcode == RDMAP_OP_WRITE && plen == 0;
		break;
	case MPA_RTR_READ:
		ok = !hd->tagged && hd->opcode == RDMAP_OP_READ_REQUEST &&
		     f->ulpdu_len >= RDMAP_RREQ_MSG_LEN &&
		     f->ulpdu[DDP_UNTAGGED_HDR_LEN + 12] == 0 &&
		     f->ulpdu[DDP_UNTAGGED_HDR_LEN + 13] == 0 &&
		     f->ulpdu[DDP_UNTAGGED_HDR_LEN + 14] == 0 &&
		     f->ulpdu[DDP_UNTAGGED_HDR_LEN + 15] == 0;
		break;
	default:
		ok = true;
		break;
	}
	if (!ok)
		dec_report(c, dir, f->off, DEC_ERROR, "mpa-rtr",
			   "first FPDU of the initiator is not the negotiated "
			   "zero-length %s RTR (RFC 6581 §7)",
			   mpa_rtr_name((enum mpa_rtr)c->rtr));
}

/* Checks the DDP and RDMAP headers; fills the unit. Returns false if
 * undecodable. */
static bool ddp_rdmap(struct dec_conn *c, int dir, const struct dec_fpdu *f,
		      struct dec_unit *u, struct ddp_hdr *hd, uint32_t *plen)
{
	const struct rdmap_opcode_info *oi;
	int rc, hl;

	hl = f->ulpdu_len >= 2 ? ddp_hdr_decode(hd, f->ulpdu, f->ulpdu_len)
			       : IWARP_ERR_TRUNCATED;
	if (hl < 0) {
		dec_report(c, dir, f->off, DEC_ERROR, "mpa-ulpdu-length",
			   "ULPDU_Length %u is shorter than the DDP header",
			   f->ulpdu_len);
		return false;
	}
	*plen = (uint32_t)(f->ulpdu_len - (size_t)hl);
	u->ddp_valid = true;
	u->tagged = hd->tagged;
	u->last = hd->last;
	u->opcode = hd->opcode;
	if (hd->tagged) {
		u->stag = hd->stag;
		u->to = hd->to;
		add(u, " DDP tagged STag 0x%08x TO 0x%llx%s", hd->stag,
		    (unsigned long long)hd->to, hd->last ? " L" : "");
	} else {
		u->qn = hd->qn;
		u->msn = hd->msn;
		u->mo = hd->mo;
		add(u, " DDP untagged QN %u MSN %u MO %u%s", hd->qn, hd->msn,
		    hd->mo, hd->last ? " L" : "");
	}
	rc = ddp_hdr_check(hd);
	if (rc < 0)
		dec_report(c, dir, f->off, DEC_ERROR, "ddp-version",
			   "DDP version %u, must be 1 (RFC 5041 §4.2)", hd->dv);
	if (hd->ddp_rsvd)
		dec_report(c, dir, f->off, DEC_ERROR, "ddp-reserved",
			   "DDP reserved bits 0x%x set (RFC 5041 §4.2: sent "
			   "as zero)",
			   hd->ddp_rsvd);
	oi = rdmap_opcode_get(hd->opcode);
	add(u, " RDMAP %s", rdmap_opcode_name(hd->opcode));
	rc = rdmap_hdr_check(hd);
	if (is_rfc7306(hd->opcode) && rc != IWARP_ERR_RDMAP_VERSION) {
		/* RFC 7306 §5, §8: judged here, whatever the library's
		 * opcode table says about supporting them */
		rc = 0;
		if (hd->tagged)
			dec_report(c, dir, f->off, DEC_ERROR, "rdmap-opcode",
				   "%s on the tagged buffer model (RFC 7306 "
				   "§8: untagged)",
				   oi->name);
		else if (hd->qn != rfc7306_qn(hd->opcode))
			dec_report(c, dir, f->off, DEC_ERROR, "ddp-qn",
				   "%s on QN %u, must be QN %u (RFC 7306 §8)",
				   oi->name, hd->qn, rfc7306_qn(hd->opcode));
	} else if (!hd->tagged && hd->qn >= 3 && rc == 0) {
		/* QN 3 and 4 only carry RFC 7306 Atomics */
		dec_report(c, dir, f->off, DEC_ERROR, "ddp-qn",
			   "%s on QN %u, must be QN %u (RFC 5040 §5.1)",
			   oi->name, hd->qn, oi->qn);
	}
	if (rc == IWARP_ERR_RDMAP_VERSION)
		dec_report(c, dir, f->off, DEC_ERROR, "rdmap-version",
			   "RDMAP version %u, must be 1 (RFC 5040 §4.2)",
			   hd->rv);
	else if (rc == IWARP_ERR_DDP_QN)
		dec_report(c, dir, f->off, DEC_ERROR, "ddp-qn",
			   "%s on QN %u, must be QN %u (RFC 5040 §5.1)",
			   oi->name, hd->qn, oi->qn);
	else if (rc < 0)
		dec_report(c, dir, f->off, DEC_ERROR, "rdmap-opcode",
			   "%s opcode 0x%x (%s) on the %s buffer model (RFC "
			   "5040 §4.2)",
			   oi->valid ? "unexpected" : "unsupported", hd->opcode,
			   oi->name, hd->tagged ? "tagged" : "untagged");
	if (hd->rdmap_rsv)
		dec_report(c, dir, f->off, DEC_ERROR, "rdmap-reserved",
			   "RDMAP reserved bits 0x%x set (RFC 5040 §4.2)",
			   hd->rdmap_rsv);
	if (!hd->tagged && hd->rsvdulp) {
		if (hd->opcode == RDMAP_OP_SEND_INV ||
		    hd->opcode == RDMAP_OP_SEND_SE_INV) {
			u->inv_stag = hd->rsvdulp;
			add(u, " inv STag 0x%08x", hd->rsvdulp);
		} else {
			dec_report(c, dir, f->off, DEC_ERROR, "rdmap-reserved",
				   "reserved RDMAP word 0x%08x in a %s (RFC "
				   "5040 §4.3: zero)",
				   hd->rsvdulp, oi->name);
		}
	}
	return true;
}

void dec_rdmap_fpdu(struct dec_conn *c, int dir, const struct dec_fpdu *f)
{
	struct dec_half *h = &c->h[dir];
	struct ddp_hdr hd;
	struct dec_unit u;
	uint32_t plen = 0;

	dec_unit_begin(c);
	memset(&u, 0, sizeof(u));
	memset(&hd, 0, sizeof(hd));
	u.dir = (enum dec_dir)dir;
	u.off = f->off;
	u.kind = DEC_UNIT_FPDU;
	u.ulpdu_len = f->ulpdu_len;
	u.markers = f->markers;
	snprintf(u.text, sizeof(u.text), "FPDU len %u", f->ulpdu_len);
	if (f->markers)
		add(&u, " markers %u", f->markers);
	h->nfpdus++;

	if (!h->sent_fpdu && c->initiator >= 0 && dir != c->initiator &&
	    !c->h[c->initiator].sent_fpdu)
		dec_report(c, dir, f->off, DEC_ERROR, "early-fpdu",
			   "responder sent an FPDU before the initiator's "
			   "first FPDU (RFC 5044 §7.1.2)");
	if (h->sent_terminate)
		dec_report(c, dir, f->off, DEC_ERROR, "data-after-end",
			   "FPDU after this side's Terminate (RFC 5040 §5.4)");
	h->sent_fpdu = true;
	check_crc(c, dir, f, &u);
	if (f->marker_bad)
		dec_report(c, dir, f->off, DEC_ERROR, "mpa-marker", "%s",
			   f->marker_text);
	if (!f->lib_agrees)
		dec_report(c, dir, f->off, DEC_WARNING, "lib-mpa-rx",
			   "the library's deframer disagrees: %s", f->lib_text);

	if (ddp_rdmap(c, dir, f, &u, &hd, &plen)) {
		check_rtr(c, dir, f, &hd, plen);
		u.payload_len = plen;
		if (!hd.tagged)
			track_untagged(c, dir, f->off, &hd, plen);
		switch (hd.opcode) {
		case RDMAP_OP_WRITE:
			if (hd.tagged) {
				track_tagged(c, dir, f->off, &h->tq_write, &hd,
					     plen, "Write");
				check_invalidated(c, dir, f->off, hd.stag,
						  "Write");
			}
			add(&u, " len %u", plen);
			break;
		case RDMAP_OP_READ_RESPONSE:
			if (hd.tagged) {
				read_response(c, dir, f, &hd, plen);
				check_invalidated(c, dir, f->off, hd.stag,
						  "Read Response");
			}
			add(&u, " len %u", plen);
			break;
		case RDMAP_OP_READ_REQUEST:
			if (!hd.tagged)
				read_request(c, dir, f, &u);
			break;
		case RDMAP_OP_TERMINATE:
			if (!hd.tagged)
				terminate(c, dir, f, &u);
			break;
		case RDMAP_OP_IMM_DATA:
		case RDMAP_OP_IMM_DATA_SE:
		case RDMAP_OP_ATOMIC_REQUEST:
		case RDMAP_OP_ATOMIC_RESPONSE:
			rfc7306_msg(c, dir, f, &hd, plen, &u);
			break;
		case RDMAP_OP_SEND_INV:
		case RDMAP_OP_SEND_SE_INV:
			if (!hd.tagged && hd.last)
				note_invalidate(c, dir, hd.rsvdulp);
			add(&u, " len %u", plen);
			break;
		default:
			add(&u, " len %u", plen);
			break;
		}
		h->payload[hd.opcode & 0x0f] += plen;
		if (hd.last)
			h->messages[hd.opcode & 0x0f]++;
	}
	if (u.crc == 1)
		add(&u, " crc ok");
	else if (u.crc == 0)
		add(&u, " crc BAD (0x%08x, computed 0x%08x)", f->crc_field,
		    f->crc_calc);
	dec_emit_unit(c, &u);
}

void dec_rdmap_finish(struct dec_conn *c, int dir, bool closed)
{
	struct dec_half *h = &c->h[dir];
	bool term = dec_conn_terminated(c);
	int q;

	(void)closed;
	if (term)
		return; /* a terminated stream ends where it ends */
	for (q = 0; q < DEC_NQN; q++)
		if (h->uq[q].in_msg)
			dec_report(c, dir, UINT64_MAX, DEC_WARNING,
				   "incomplete",
				   "QN %d message MSN %u has no last segment "
				   "(L) at the end",
				   q, h->uq[q].msn);
	if (h->tq_write.in_msg)
		dec_report(c, dir, UINT64_MAX, DEC_WARNING, "incomplete",
			   "Write to STag 0x%08x has no last segment (L) at "
			   "the end",
			   h->tq_write.stag);
	if (h->rreq_len)
		dec_report(c, dir, h->rreq[0].off, DEC_WARNING, "unanswered",
			   "%zu Read Request(s) never answered", h->rreq_len);
	if (h->natomic)
		dec_report(c, dir, UINT64_MAX, DEC_WARNING, "unanswered",
			   "%zu Atomic Request(s) never answered (first id "
			   "0x%08x)",
			   h->natomic, h->atomic_id[0]);
}
