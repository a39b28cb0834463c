/*
 * rdmap/rdmap_conn_rx.c: the RDMAP engine's receive path. Stream octets go
 * through the MPA deframer (RFC 5044 §4-6); each DDP segment's header is
 * validated (RFC 5041 §7, RFC 5040 §7-8) before any of its payload is placed,
 * payload is placed in order at its destination (the MR at the tagged offset,
 * or the receive WQE at the message offset), and messages complete only after
 * the CRC of their last FPDU was verified.
 */
#include "config.h"

#include <errno.h>
#include <string.h>

#include "rdmap/rdmap_opcode.h"
#include "rdmap/rdmap_conn_int.h"
#include "util/mem.h"
#include "util/tsan.h"

/* Content octets between two markers (RFC 5044 §5). */
#define MPA_MARKER_SPAN (MPA_MARKER_INTERVAL - MPA_MARKER_LEN)

/* Locates message offset |off| in the RQE: pointer and octets to its SGE end.
 */
static uint8_t *rqe_locate(const struct rdmap_rqe *r, uint64_t off,
			   size_t *room)
{
	uint32_t i;

	for (i = 0; i < r->num_sge; i++) {
		if (off < r->sge[i].length) {
			*room = (size_t)(r->sge[i].length - off);
			return (uint8_t *)(uintptr_t)(r->sge[i].addr + off);
		}
		off -= r->sge[i].length;
	}
	*room = 0;
	return NULL;
}

/* Scatters |len| octets at message offset |off| over the RQE's SGEs. */
static void rqe_place(const struct rdmap_rqe *r, uint64_t off,
		      const uint8_t *src, size_t len)
{
	size_t room, take;
	uint8_t *dst;

	while (len) {
		dst = rqe_locate(r, off, &room);
		if (!dst)
			return; /* bounds were checked by ddp_rx_untagged */
		take = len < room ? len : room;
		memcpy(dst, src, take);
		src += take;
		off += take;
		len -= take;
	}
}

/* rx_take_rqe: the message waits for a receive WQE (rdmap_conn_set_rx_wait) */
#define RX_WAIT 1

/*
 * Takes the receive WQE for a new Send-queue message: 0, RX_WAIT when the
 * owner lets it wait for one, or no buffer (RFC 5041 §7.2, untagged 0x02).
 */
static int rx_take_rqe(struct rdmap_conn *c)
{
	int tries, rc;

	if (!c->bound)
		return IWARP_ERR_DDP_MSN_NO_BUFFER;
	for (tries = 0; tries < 2; tries++) {
		if (!c->ops->recv_take(c->owner, &c->rqe))
			return 0;
		if (!c->rx_wait_ok)
			break;
		rc = c->ops->rx_wait(c->owner, true);
		if (!rc)
			return RX_WAIT;
		if (rc != -EAGAIN)
			break; /* the owner cannot wait now */
	}
	return IWARP_ERR_DDP_MSN_NO_BUFFER;
}

/* Send family (QN 0, RFC 5040 §5.3): binds a receive WQE to a new message. */
static int rx_send(struct rdmap_conn *c, struct rdmap_rx_cur *cur,
		   const uint8_t *hdr)
{
	const struct ddp_hdr *h = &cur->h;
	const struct ddp_rx_queue *q = &c->drx.q[DDP_QN_SEND];
	uint32_t i;
	int rc;

	(void)hdr;
	if (!q->in_msg && h->msn == q->msn && !c->have_rqe) {
		/* RFC 6581 §7: the responder's first inbound message may be
		 * the zero-length Send RTR; it consumes no receive WQE */
		if (c->rtr == MPA_RTR_SEND && !c->initiator && !c->first_rx &&
		    cur->pay_len == 0 && h->last) {
			ddp_rx_post(&c->drx, DDP_QN_SEND, 0);
			rc = ddp_rx_untagged(&c->drx, h, 0, &cur->seg);
			if (rc)
				return rc;
			cur->kind = RXK_SEND_RTR;
			return 0;
		}
		/* RFC 5041 §7: no buffer for the message -> untagged 0x02 */
		rc = rx_take_rqe(c);
		if (rc)
			return rc;
		c->have_rqe = true;
		for (i = 0; i < c->rqe.num_sge; i++)
			if (c->ops->mem_check_local(c->owner, &c->rqe.sge[i],
						    IWARP_ACCESS_LOCAL_WRITE)) {
				cur->rqe_status = IWARP_WC_LOC_PROT_ERR;
				return -EFAULT; /* local error */
			}
		ddp_rx_post(&c->drx, DDP_QN_SEND, c->rqe.total_len);
	}
	rc = ddp_rx_untagged(&c->drx, h, cur->pay_len, &cur->seg);
	if (rc == IWARP_ERR_DDP_MSG_TOO_LONG)
		cur->rqe_status = IWARP_WC_LOC_LEN_ERR;
	if (rc)
		return rc;
	if (!c->have_rqe)
		return IWARP_ERR_DDP_MSN_RANGE;
	cur->kind = RXK_SEND;
	return 0;
}

/*
 * Checks a tagged segment's target (|access| on the MR at TO, RFC 5040 §8)
 * and its place in the tagged message (RFC 5041 §5), then records where its
 * payload goes. A zero-length segment accesses no memory, so its STag is
 * not validated (RFC 5040 §4.3; the RFC 6581 RTRs carry STag 1).
 */
static int rx_tagged_target(struct rdmap_conn *c, struct rdmap_rx_cur *cur,
			    int access, enum rdmap_rx_kind kind)
{
	const struct ddp_hdr *h = &cur->h;
	struct ddp_tagged_buf buf;
	int rc;

	if (cur->pay_len) {
		/* held until the segment's payload is placed (or dropped) */
		rc = c->ops->mem_get(c->owner, h->stag, access, h->to,
				     cur->pay_len, true, &cur->dst);
		if (rc)
			return rc;
	}
	buf.state = DDP_STAG_VALID;
	buf.base = h->to;
	buf.len = cur->pay_len;
	rc = ddp_rx_tagged(&c->drx, h, cur->pay_len, &buf, &cur->seg);
	if (rc)
		return rc;
	cur->kind = kind;
	return 0;
}

/*
 * True when the QP itself allows the remote operation |access| (its
 * qp_access_flags, set by iwarp_modify_qp; the CM grants remote Read and
 * Write as rdma_create_qp does). RFC 5040 §8: an RNIC checks the access
 * rights of the stream as well as those of the STag.
 */
static bool rx_qp_allows(const struct rdmap_conn *c, int access)
{
	return c->bound && c->ops->stream_allows(c->owner, access);
}

/* RDMA Write segment (RFC 5040 §4.3, §8.1: remote write access). A
 * zero-length Write (the RFC 6581 RTR) touches no memory. */
static int rx_write(struct rdmap_conn *c, struct rdmap_rx_cur *cur,
		    const uint8_t *hdr)
{
	(void)hdr;
	if (cur->pay_len && !rx_qp_allows(c, IWARP_ACCESS_REMOTE_WRITE))
		return IWARP_ERR_RDMAP_ACCESS;
	return rx_tagged_target(c, cur, IWARP_ACCESS_REMOTE_WRITE, RXK_WRITE);
}

/* Read Response segment: must match the ORQ head (RFC 5040 §4.5, §5.2). */
static int rx_read_response(struct rdmap_conn *c, struct rdmap_rx_cur *cur,
			    const uint8_t *hdr)
{
	const struct ddp_hdr *h = &cur->h;
	struct rdmap_orq *o;

	(void)hdr;
	o = &c->orq[c->orq_head & (c->orq_size - 1)];
	if (o->atomic)
		return IWARP_ERR_RDMAP_RESPONSE; /* an Atomic Response is due */
	if (h->stag != o->sink_stag)
		return IWARP_ERR_DDP_STAG;
	if (h->to != o->sink_to + o->got || cur->pay_len > o->size - o->got ||
	    (h->last && o->got + cur->pay_len != o->size))
		return IWARP_ERR_DDP_BOUNDS;
	/* the sink MR may carry LOCAL_WRITE or REMOTE_WRITE
	 * (docs/interop-notes.md §0.8; mr_check_remote grants LOCAL_WRITE
	 * for either) */
	return rx_tagged_target(c, cur, IWARP_ACCESS_LOCAL_WRITE, RXK_RRESP);
}

/* RDMA Read Request (QN 1, RFC 5040 §4.4, §5.2; IRD, RFC 6581 §5). */
static int rx_read_request(struct rdmap_conn *c, struct rdmap_rx_cur *cur,
			   const uint8_t *hdr)
{
	size_t hdr_len = cur->hdr_len;
	struct rdmap_mem m;
	int rc;

	if (cur->ulpdu_len > RDMAP_RREQ_MSG_LEN)
		return IWARP_ERR_DDP_MSG_TOO_LONG;
	if (hdr_len < RDMAP_RREQ_MSG_LEN)
		return IWARP_ERR_TRUNCATED;
	rc = rdmap_rreq_decode(&cur->rr, hdr + DDP_UNTAGGED_HDR_LEN,
			       RDMAP_RREQ_HDR_LEN);
	if (rc < 0)
		return rc;
	ddp_rx_post(&c->drx, DDP_QN_READ_REQUEST, RDMAP_RREQ_HDR_LEN);
	rc = ddp_rx_untagged(&c->drx, &cur->h, RDMAP_RREQ_HDR_LEN, &cur->seg);
	if (rc)
		return rc;
	if (c->irq_tail - c->irq_head >= c->ird)
		return IWARP_ERR_RDMAP_IRD;
	if (cur->rr.size) {
		if (!rx_qp_allows(c, IWARP_ACCESS_REMOTE_READ))
			return IWARP_ERR_RDMAP_ACCESS;
		/* validated now (RFC 5040 §8); every Read Response segment
		 * takes its own reference when it is framed */
		rc = c->ops->mem_get(c->owner, cur->rr.src_stag,
				     IWARP_ACCESS_REMOTE_READ, cur->rr.src_to,
				     cur->rr.size, false, &m);
		if (rc)
			return rc;
		c->ops->mem_put(c->owner, m.ref);
	}
	cur->kind = RXK_RREQ;
	return 0;
}

/*
 * RFC 7306 Immediate Data [with SE] (QN 0, one segment of 8 octets): takes
 * a receive WQE like a Send (none posted: DDP untagged 0x02, RFC 5041 §7)
 * and completes it with the value; nothing is placed into its buffers.
 */
static int rx_imm(struct rdmap_conn *c, struct rdmap_rx_cur *cur,
		  const uint8_t *hdr)
{
	const struct ddp_hdr *h = &cur->h;
	const struct ddp_rx_queue *q = &c->drx.q[DDP_QN_SEND];
	int rc;

	(void)hdr;
	if (cur->ulpdu_len > DDP_UNTAGGED_HDR_LEN + RDMAP_IMM_LEN)
		return IWARP_ERR_DDP_MSG_TOO_LONG;
	if (cur->hdr_len < DDP_UNTAGGED_HDR_LEN + RDMAP_IMM_LEN)
		return IWARP_ERR_TRUNCATED;
	if (!q->in_msg && h->msn == q->msn && !c->have_rqe) {
		rc = rx_take_rqe(c);
		if (rc)
			return rc;
		c->have_rqe = true;
		ddp_rx_post(&c->drx, DDP_QN_SEND, RDMAP_IMM_LEN);
	}
	rc = ddp_rx_untagged(&c->drx, h, RDMAP_IMM_LEN, &cur->seg);
	if (rc)
		return rc;
	if (!c->have_rqe)
		return IWARP_ERR_DDP_MSN_RANGE;
	if (!cur->seg.complete)
		return IWARP_ERR_DDP_MO; /* one segment (L=1, MO 0) */
	cur->kind = RXK_IMM;
	return 0;
}

/*
 * RFC 7306 Atomic Request (QN 3): counted against IRD like a Read Request
 * (RFC 6581 §5), its opcode, alignment and target (remote atomic access of
 * the stream and of the STag, RFC 5040 §8) checked now; executed when it
 * reaches the IRQ head (rdmap_conn_tx.c).
 */
static int rx_atomic_request(struct rdmap_conn *c, struct rdmap_rx_cur *cur,
			     const uint8_t *hdr)
{
	struct rdmap_mem m;
	int rc;

	if (cur->ulpdu_len > DDP_UNTAGGED_HDR_LEN + RDMAP_ATOMIC_REQ_LEN)
		return IWARP_ERR_DDP_MSG_TOO_LONG;
	if (cur->hdr_len < DDP_UNTAGGED_HDR_LEN + RDMAP_ATOMIC_REQ_LEN)
		return IWARP_ERR_TRUNCATED;
	rc = rdmap_atomic_req_decode(&cur->ar, hdr + DDP_UNTAGGED_HDR_LEN,
				     RDMAP_ATOMIC_REQ_LEN);
	if (rc < 0)
		return rc;
	ddp_rx_post(&c->drx, RDMAP_QN_ATOMIC_REQUEST, RDMAP_ATOMIC_REQ_LEN);
	rc = ddp_rx_untagged(&c->drx, &cur->h, RDMAP_ATOMIC_REQ_LEN, &cur->seg);
	if (rc)
		return rc;
	if (c->irq_tail - c->irq_head >= c->ird)
		return IWARP_ERR_RDMAP_IRD;
	if (!rdmap_atomic_op_valid(cur->ar.op))
		return IWARP_ERR_RDMAP_ATOMIC_OP;
	if (cur->ar.to & 7u)
		return IWARP_ERR_RDMAP_ATOMIC_ALIGN;
	if (!rx_qp_allows(c, IWARP_ACCESS_REMOTE_ATOMIC))
		return IWARP_ERR_RDMAP_ACCESS;
	rc = c->ops->mem_get(c->owner, cur->ar.stag, IWARP_ACCESS_REMOTE_ATOMIC,
			     cur->ar.to, 8, false, &m);
	if (rc)
		return rc;
	if ((uintptr_t)m.ptr & 7u)
		rc = IWARP_ERR_RDMAP_ATOMIC_ALIGN;
	c->ops->mem_put(c->owner, m.ref);
	if (rc)
		return rc;
	cur->kind = RXK_AREQ;
	return 0;
}

/* RFC 7306 Atomic Response (QN 4): answers the oldest outstanding request,
 * which must be the Atomic Request it names (responses come in request
 * order). */
static int rx_atomic_response(struct rdmap_conn *c, struct rdmap_rx_cur *cur,
			      const uint8_t *hdr)
{
	const struct rdmap_orq *o;
	int rc;

	if (cur->ulpdu_len > DDP_UNTAGGED_HDR_LEN + RDMAP_ATOMIC_RESP_LEN)
		return IWARP_ERR_DDP_MSG_TOO_LONG;
	if (cur->hdr_len < DDP_UNTAGGED_HDR_LEN + RDMAP_ATOMIC_RESP_LEN)
		return IWARP_ERR_TRUNCATED;
	rc = rdmap_atomic_resp_decode(&cur->are, hdr + DDP_UNTAGGED_HDR_LEN,
				      RDMAP_ATOMIC_RESP_LEN);
	if (rc < 0)
		return rc;
	ddp_rx_post(&c->drx, RDMAP_QN_ATOMIC_RESPONSE, RDMAP_ATOMIC_RESP_LEN);
	rc = ddp_rx_untagged(&c->drx, &cur->h, RDMAP_ATOMIC_RESP_LEN,
			     &cur->seg);
	if (rc)
		return rc;
	o = &c->orq[c->orq_head & (c->orq_size - 1)];
	if (!o->atomic || o->req_id != cur->are.req_id)
		return IWARP_ERR_RDMAP_RESPONSE;
	cur->kind = RXK_ARESP;
	return 0;
}

/* Terminate (QN 2, RFC 5040 §4.8): gathered whole, decoded when done. */
static int rx_terminate(struct rdmap_conn *c, struct rdmap_rx_cur *cur,
			const uint8_t *hdr)
{
	if (cur->ulpdu_len > RDMAP_TERM_MAX_LEN)
		return IWARP_ERR_RDMAP_TERMINATE;
	ddp_rx_post(&c->drx, DDP_QN_TERMINATE, RDMAP_CONN_TERM_BODY);
	if (ddp_rx_untagged(&c->drx, &cur->h, cur->pay_len, &cur->seg))
		return IWARP_ERR_RDMAP_TERMINATE;
	memcpy(c->term_buf, hdr, DDP_UNTAGGED_HDR_LEN);
	cur->kind = RXK_TERM;
	return 0;
}

/* When an opcode may arrive (the dispatcher's "allowed-when" column). */
enum rx_when {
	RX_ALWAYS, /* any time in full operation */
	RX_ORQ,	   /* only while a Read Request of ours is outstanding */
};

/*
 * The receive dispatcher: one row per RFC 5040 §4.2 opcode. The header
 * length and the queue number of each opcode are the rows of
 * rdmap_opcode_table (rdmap_hdr_len, rdmap_hdr_check); this table adds
 * the handler that validates the segment and decides where its payload
 * goes, and when the opcode may arrive at all. Rows left empty are the
 * reserved opcodes rdmap_hdr_check_ext refuses.
 */
static const struct rx_row {
	int (*handler)(struct rdmap_conn *c, struct rdmap_rx_cur *cur,
		       const uint8_t *hdr);
	enum rx_when when;
	int refused; /* the error when not allowed now */
} rx_table[RDMAP_OPCODE_COUNT] = {
	[RDMAP_OP_WRITE] = {rx_write, RX_ALWAYS, 0},		   /* §4.3 */
	[RDMAP_OP_READ_REQUEST] = {rx_read_request, RX_ALWAYS, 0}, /* §4.4 */
	/* §4.5: a Read Response answers our oldest outstanding Read */
	[RDMAP_OP_READ_RESPONSE] = {rx_read_response, RX_ORQ,
				    IWARP_ERR_RDMAP_RESPONSE},
	[RDMAP_OP_SEND] = {rx_send, RX_ALWAYS, 0}, /* §4.6 */
	[RDMAP_OP_SEND_INV] = {rx_send, RX_ALWAYS, 0},
	[RDMAP_OP_SEND_SE] = {rx_send, RX_ALWAYS, 0},
	[RDMAP_OP_SEND_SE_INV] = {rx_send, RX_ALWAYS, 0},
	[RDMAP_OP_TERMINATE] = {rx_terminate, RX_ALWAYS, 0}, /* §4.8 */
	/* RFC 7306 §5.1 (rdmap_hdr_check_ext refuses them unless
	 * negotiated) */
	[RDMAP_OP_IMM_DATA] = {rx_imm, RX_ALWAYS, 0},
	[RDMAP_OP_IMM_DATA_SE] = {rx_imm, RX_ALWAYS, 0},
	[RDMAP_OP_ATOMIC_REQUEST] = {rx_atomic_request, RX_ALWAYS, 0},
	[RDMAP_OP_ATOMIC_RESPONSE] = {rx_atomic_response, RX_ORQ,
				      IWARP_ERR_RDMAP_RESPONSE},
};

/* A HEADER event: decode and validate, decide where the payload goes. */
static void rx_header(struct rdmap_conn *c, const struct mpa_rx_event *ev)
{
	struct rdmap_rx_cur *cur = &c->cur;
	const struct rx_row *row;
	int rc;

	conn_rx_release(c);
	memset(cur, 0, sizeof(*cur));
	cur->kind = RXK_DISCARD;
	cur->rqe_status = IWARP_WC_WR_FLUSH_ERR;
	cur->ulpdu_len = ev->ulpdu_len;
	cur->hdr_len =
		ev->hdr_len < sizeof(cur->hdr) ? ev->hdr_len : sizeof(cur->hdr);
	memcpy(cur->hdr, ev->hdr, cur->hdr_len);
	cur->pay_len = (uint32_t)(ev->ulpdu_len - ev->hdr_len);
	/* large FPDUs stream in place (rdmap_conn_rx_iov) */
	if (cur->pay_len >= RDMAP_CONN_DP_BIG)
		c->rx_big = RDMAP_CONN_RX_BIG_CREDIT;
	else if (c->rx_big)
		c->rx_big--;
	rc = ddp_hdr_decode(&cur->h, ev->hdr, ev->hdr_len);
	if (rc < 0)
		goto err;
	rc = ddp_hdr_check(&cur->h);
	if (rc)
		goto err;
	if (!cur->h.tagged && cur->h.qn == DDP_QN_SEND)
		c->rx_untagged = RDMAP_CONN_RX_UNTAGGED_CREDIT;
	else if (c->rx_untagged)
		c->rx_untagged--;
	rc = rdmap_hdr_check_ext(&cur->h, c->ext);
	if (rc)
		goto err;
	row = &rx_table[cur->h.opcode & RDMAP_CTRL_OPCODE_MASK];
	if (!row->handler) {
		rc = IWARP_ERR_RDMAP_OPCODE; /* rdmap_hdr_check refused it */
		goto err;
	}
	if (row->when == RX_ORQ && c->orq_head == c->orq_tail) {
		rc = row->refused;
		goto err;
	}
	rc = row->handler(c, cur, ev->hdr);
	if (!rc)
		return;
	if (rc == RX_WAIT) {
		/* the receive pauses here; rdmap_conn_rx_resume runs the
		 * handler again */
		c->rx_waiting = true;
		return;
	}
err:
	/* reported once the FPDU's CRC is verified; nothing is placed */
	cur->err = rc;
	cur->kind = RXK_DISCARD;
}

/* A PAYLOAD event: place in order. */
static void rx_payload(struct rdmap_conn *c, const struct mpa_rx_event *ev)
{
	struct rdmap_rx_cur *cur = &c->cur;
	size_t off;

	switch (cur->kind) {
	case RXK_WRITE:
	case RXK_RRESP:
		if (cur->dst.ptr) {
			/* the network writes the region (util/tsan.h) */
			iw_tsan_net_begin();
			memcpy(cur->dst.ptr + ev->data_off, ev->data,
			       ev->data_len);
			iw_tsan_net_end();
		}
		break;
	case RXK_SEND:
		rqe_place(&c->rqe, cur->seg.offset + ev->data_off, ev->data,
			  ev->data_len);
		break;
	case RXK_TERM:
		off = DDP_UNTAGGED_HDR_LEN + ev->data_off;
		if (off + ev->data_len <= sizeof(c->term_buf))
			memcpy(c->term_buf + off, ev->data, ev->data_len);
		break;
	case RXK_NONE:
	case RXK_DISCARD:
	case RXK_SEND_RTR:
	case RXK_RREQ:
	case RXK_IMM:
	case RXK_AREQ:
	case RXK_ARESP:
		break;
	}
}

/* The Send message completed (RFC 5040 §5.3, §6.4 for the Invalidate). */
static void rx_send_complete(struct rdmap_conn *c, struct rdmap_rx_cur *cur)
{
	const struct rdmap_opcode_info *oi = rdmap_opcode_get(cur->h.opcode);
	unsigned int flags = 0;
	uint32_t inv = 0;
	int rc;

	if (oi->solicited)
		flags |= IWARP_WC_WITH_SE;
	if (oi->invalidate) {
		inv = cur->h.rsvdulp;
		rc = c->ops->invalidate(c->owner, inv);
		if (rc) {
			/* RDMAP 0x09: STag cannot be invalidated (remote
			 * operation error, or remote protection error for
			 * an STag of another stream) */
			cur->rqe_status = IWARP_WC_LOC_PROT_ERR;
			conn_fail(c,
				  rc == IWARP_ERR_RDMAP_INVALIDATE_OP
					  ? rc
					  : IWARP_ERR_RDMAP_INVALIDATE,
				  true);
			return;
		}
		flags |= IWARP_WC_WITH_INV;
	}
	conn_rqe_complete(c, IWARP_WC_SUCCESS, (uint32_t)cur->seg.msg_len,
			  flags, inv, oi->solicited);
}

/* RFC 7306 Immediate Data completes its receive WQE. The receiver cannot
 * tell a Send with Immediate from an RDMA Write with Immediate (both end
 * with the same message): right after an inbound RDMA Write message it is
 * reported as IWARP_WC_RECV_RDMA_WITH_IMM (docs/rdmap-ext.md). */
static void rx_imm_complete(struct rdmap_conn *c, struct rdmap_rx_cur *cur)
{
	const struct rdmap_opcode_info *oi = rdmap_opcode_get(cur->h.opcode);
	uint32_t imm;

	memcpy(&imm, cur->hdr + DDP_UNTAGGED_HDR_LEN, sizeof(imm));
	conn_rqe_complete_imm(c,
			      c->rx_after_write ? IWARP_WC_RECV_RDMA_WITH_IMM
						: IWARP_WC_RECV,
			      imm, oi->solicited);
}

/* RFC 7306 Atomic Response: the original value goes to the WQE's SGE
 * (host order, as ibverbs), then the WQE may complete. */
static void rx_atomic_done(struct rdmap_conn *c, struct rdmap_rx_cur *cur)
{
	struct rdmap_orq *o = &c->orq[c->orq_head & (c->orq_size - 1)];
	struct rdmap_mem m = {NULL, 0};
	uint64_t v = cur->are.orig;

	/* the sink was checked when the request was sent; it may have been
	 * deregistered since: a local failure */
	if (c->ops->mem_get(c->owner, o->sink.lkey, IWARP_ACCESS_LOCAL_WRITE,
			    o->sink.addr, 8, false, &m)) {
		struct iwarp_term_cause lc = {
			.layer = IWARP_TERM_LAYER_RDMAP,
			.etype = IWARP_RDMAP_ETYPE_LOCAL_CATASTROPHIC,
			.ecode = 0,
		};

		conn_fail_cause(c, &lc);
		return;
	}
	memcpy(m.ptr, &v, sizeof(v));
	conn_mem_put(c, &m);
	c->orq_head++;
	conn_sq_progress(c);
}

/* An FPDU_DONE event: the CRC matched; deliver. */
static void rx_fpdu_done(struct rdmap_conn *c)
{
	struct rdmap_rx_cur *cur = &c->cur;
	struct rdmap_term t;
	struct rdmap_orq *o;
	struct rdmap_irq *e;
	bool rtr;

	if (cur->err) {
		conn_rx_release(c);
		conn_fail(c, cur->err, true);
		return;
	}
	/* the RFC 6581 Write RTR is no RDMA Write of the application */
	rtr = !c->first_rx && !c->initiator && c->rtr == MPA_RTR_WRITE;
	if (!c->first_rx) {
		/* RFC 5044 §7.1 / RFC 6581 §7: the responder may send now */
		c->first_rx = true;
		c->tx_enabled = true;
	}
	switch (cur->kind) {
	case RXK_SEND:
		if (cur->seg.complete) {
			c->rx_after_write = false;
			rx_send_complete(c, cur);
		}
		break;
	case RXK_IMM:
		rx_imm_complete(c, cur);
		c->rx_after_write = false;
		break;
	case RXK_AREQ:
		e = &c->irq[c->irq_tail++ & (c->irq_size - 1)];
		memset(&e->rr, 0, sizeof(e->rr));
		e->atomic = true;
		e->ar = cur->ar;
		c->rx_after_write = false;
		break;
	case RXK_ARESP:
		rx_atomic_done(c, cur);
		break;
	case RXK_WRITE:
		if (cur->h.last)
			c->rx_after_write = !rtr;
		break;
	case RXK_RRESP:
		o = &c->orq[c->orq_head & (c->orq_size - 1)];
		o->got += cur->pay_len;
		if (cur->seg.complete) {
			c->orq_head++;
			conn_sq_progress(c);
		}
		break;
	case RXK_RREQ:
		e = &c->irq[c->irq_tail++ & (c->irq_size - 1)];
		e->rr = cur->rr;
		e->atomic = false;
		c->rx_after_write = false;
		break;
	case RXK_TERM:
		if (rdmap_term_decode(&t, NULL, c->term_buf, cur->ulpdu_len) <
		    0) {
			/* never answer a malformed Terminate (RFC 5040 §4.8) */
			conn_fail(c, IWARP_ERR_RDMAP_TERMINATE, false);
			return;
		}
		conn_term_received(c, &t);
		return;
	case RXK_NONE:
	case RXK_DISCARD:
	case RXK_SEND_RTR:
		break;
	}
	conn_rx_release(c);
	cur->kind = RXK_NONE;
}

/*
 * Keeps the |len| octets received behind the header of a message that
 * waits for a receive WQE (the bulk memory may be the owner's, shared with
 * other connections). They are parsed when the wait ends.
 */
static void rx_stash(struct rdmap_conn *c, const uint8_t *buf, size_t len)
{
	if (!len)
		return;
	c->rx_stash = iw_malloc(len);
	if (!c->rx_stash) {
		conn_rx_wait_end(c);
		conn_fail(c, -ENOMEM, false);
		return;
	}
	memcpy(c->rx_stash, buf, len);
	c->rx_stash_len = len;
}

/* Bulk mode: parse |len| received octets in place. */
static void conn_rx_bulk(struct rdmap_conn *c, const uint8_t *buf, size_t len)
{
	struct mpa_rx_event ev;
	ssize_t r;

	while (len > 0 && c->state == RDMAP_CONN_RUN) {
		r = mpa_rx_process(&c->mrx, buf, len, &ev);
		if (r < 0) {
			/* LLP errors (CRC 0x02, marker 0x03), RFC 5044 §8 */
			conn_fail(c, (int)r, false);
			return;
		}
		buf += r;
		len -= (size_t)r;
		switch (ev.type) {
		case MPA_RX_HEADER:
			rx_header(c, &ev);
			if (c->rx_waiting) {
				rx_stash(c, buf, len);
				return;
			}
			break;
		case MPA_RX_PAYLOAD:
			rx_payload(c, &ev);
			break;
		case MPA_RX_FPDU_DONE:
			rx_fpdu_done(c);
			break;
		case MPA_RX_NEED_MORE:
			break;
		}
	}
}

/*
 * A connection that is behind reads the whole bulk buffer (fewer, larger
 * receives, at the price of copying the payloads out of it), unless its
 * owner's CPU serves other incoming streams as well: then the copy costs
 * more than the receives it saves.
 */
static bool rx_whole_buffer(const struct rdmap_conn *c)
{
	return c->rx_behind && !c->rx_shared;
}

/*
 * Octets a bulk receive asks for. While large FPDUs arrive (rx_big), it
 * ends a little past the current FPDU's trailer, so that the next header
 * is parsed from it and that FPDU's payload is then received in place;
 * otherwise the whole buffer.
 */
static size_t rx_bulk_len(const struct rdmap_conn *c)
{
	const struct mpa_rx *m = &c->mrx;
	size_t len = RDMAP_CONN_RX_LOOKAHEAD;

	if (!c->rx_big || rx_whole_buffer(c))
		return RDMAP_CONN_RX_BUF;
	if (mpa_rx_get_state(m) == MPA_RX_GET_PAYLOAD) {
		len += m->pay_len - m->pay_got + m->pad_len + MPA_CRC_LEN;
		/* markers: one per 508 content octets, rounded up */
		if (m->markers)
			len += MPA_MARKER_LEN * (len / MPA_MARKER_SPAN + 1);
	}
	return len < RDMAP_CONN_RX_BUF ? len : RDMAP_CONN_RX_BUF;
}

/*
 * Direct placement layout for the rest of the current payload, if it is
 * large: iovecs into |iov| (at most |cap|) and their octet total in |*total|.
 * Returns the iovec count, or 0 when the payload goes through the bulk
 * buffer.
 */
static int rx_dp_iov(struct rdmap_conn *c, struct iovec *iov, int cap,
		     size_t *total)
{
	struct rdmap_rx_cur *cur = &c->cur;
	size_t left, room = 0, off;
	uint8_t *dst = NULL;
	int n, i;

	if (c->state != RDMAP_CONN_RUN || cur->err ||
	    mpa_rx_get_state(&c->mrx) != MPA_RX_GET_PAYLOAD ||
	    c->mrx.pay_len - c->mrx.pay_got < RDMAP_CONN_DP_MIN)
		return 0;
	left = c->mrx.pay_len - c->mrx.pay_got;
	off = c->mrx.pay_got;
	switch (cur->kind) {
	case RXK_WRITE:
	case RXK_RRESP:
		if (cur->dst.ptr) {
			dst = cur->dst.ptr + off;
			room = left;
		}
		break;
	case RXK_SEND:
		dst = rqe_locate(&c->rqe, cur->seg.offset + off, &room);
		if (room > left)
			room = left;
		break;
	case RXK_NONE:
	case RXK_DISCARD:
	case RXK_SEND_RTR:
	case RXK_RREQ:
	case RXK_TERM:
	case RXK_IMM:
	case RXK_AREQ:
	case RXK_ARESP:
		break;
	}
	if (!dst || !room)
		return 0;
	n = mpa_rx_payload_iov(&c->mrx, dst, room, iov, (size_t)cap);
	if (n <= 0)
		return 0;
	*total = 0;
	for (i = 0; i < n; i++)
		*total += iov[i].iov_len;
	return n;
}

/*
 * Where bulk octets go: the owner's provided memory (NULL base,
 * rdmap_conn_set_rx_provided), else the connection's own buffer, allocated
 * at the first receive. False when that allocation failed (the connection
 * then fails: RDMAP local catastrophic, RFC 5040 §5.4).
 */
static bool rx_bulk_base(struct rdmap_conn *c, uint8_t **base)
{
	*base = NULL;
	if (c->rx_provided)
		return true;
	if (!c->rxbuf)
		c->rxbuf = iw_malloc(RDMAP_CONN_RX_BUF);
	if (!c->rxbuf) {
		conn_fail(c, -ENOMEM, false);
		return false;
	}
	*base = c->rxbuf;
	return true;
}

int rdmap_conn_rx_iov(struct rdmap_conn *c, struct iovec *iov, int cap)
{
	size_t total = 0;
	uint8_t *base;
	int n;

	c->dp_active = false;
	c->dp_len = 0;
	if (c->state == RDMAP_CONN_CLOSED || cap <= 0 || c->rx_waiting)
		return 0;
	if (!rx_bulk_base(c, &base))
		return 0;
	/* direct placement: a large payload goes straight to its target,
	 * and the bulk buffer after it takes the trailer and what follows */
	n = rx_dp_iov(c, iov, cap, &total);
	if (n > 0) {
		c->dp_active = true;
		c->dp_len = total;
		if (n < cap) {
			iov[n].iov_base = base;
			iov[n].iov_len = RDMAP_CONN_RX_BUF;
			if (c->rx_big && !rx_whole_buffer(c))
				iov[n].iov_len = RDMAP_CONN_RX_LOOKAHEAD;
			total += iov[n++].iov_len;
		}
		c->rx_req = total;
		return n;
	}
	iov[0].iov_base = base;
	iov[0].iov_len = rx_bulk_len(c);
	c->rx_req = iov[0].iov_len;
	return 1;
}

void rdmap_conn_rx_done(struct rdmap_conn *c, size_t n)
{
	rdmap_conn_rx_done_at(c, n, c->rx_provided ? NULL : c->rxbuf);
}

void rdmap_conn_rx_done_at(struct rdmap_conn *c, size_t n, const uint8_t *bulk)
{
	size_t k;
	ssize_t r;

	if (c->state == RDMAP_CONN_CLOSED || n == 0) {
		/* over, or a cancelled receive (memory revoked) */
		c->dp_active = false;
		conn_rx_release(c);
		return;
	}
	/* a bounded receive that was filled means the receiver is behind:
	 * then fewer, larger receives beat avoiding the copy */
	c->rx_behind = n >= c->rx_req && c->rx_req < RDMAP_CONN_RX_BUF;
	k = 0;
	if (c->dp_active) {
		c->dp_active = false;
		k = n < c->dp_len ? n : c->dp_len;
		r = mpa_rx_commit(&c->mrx, k);
		if (r < 0 && c->state == RDMAP_CONN_RUN)
			conn_fail(c, (int)r, false);
	}
	if (n > k && c->state == RDMAP_CONN_RUN) {
		if (bulk)
			conn_rx_bulk(c, bulk, n - k);
		else /* the owner lost the octets it was given room for */
			conn_fail(c, -EFAULT, false);
	}
	if (c->state != RDMAP_CONN_RUN)
		conn_rx_release(c);
	conn_tx_kick(c);
}

int rdmap_conn_rx_prefill(struct rdmap_conn *c, const void *buf, size_t len)
{
	if (c->state == RDMAP_CONN_CLOSED)
		return -EPIPE;
	conn_rx_bulk(c, buf, len);
	conn_tx_kick(c);
	return 0;
}

void rdmap_conn_set_rx_wait(struct rdmap_conn *c, bool on)
{
	c->rx_wait_ok = on && c->ops->rx_wait && c->ops->kick_rx;
}

bool rdmap_conn_rx_waiting(const struct rdmap_conn *c)
{
	return c->rx_waiting;
}

void conn_rx_wait_end(struct rdmap_conn *c)
{
	if (!c->rx_waiting)
		return;
	c->rx_waiting = false;
	iw_free(c->rx_stash);
	c->rx_stash = NULL;
	c->rx_stash_len = 0;
	if (c->bound)
		c->ops->rx_wait(c->owner, false);
}

/* True while a message waits on a running connection; a wait that outlived
 * its connection ends here. */
static bool rx_wait_live(struct rdmap_conn *c)
{
	if (!c->rx_waiting)
		return false;
	if (c->state == RDMAP_CONN_RUN)
		return true;
	conn_rx_wait_end(c);
	return false;
}

/* The wait ended with |rc| from the message's handler (0: it has its WQE;
 * an error: it fails): parses what was kept and receives on. */
static void rx_wait_done(struct rdmap_conn *c, int rc)
{
	struct rdmap_rx_cur *cur = &c->cur;
	uint8_t *stash = c->rx_stash;
	size_t len = c->rx_stash_len;

	c->rx_waiting = false;
	c->rx_stash = NULL;
	c->rx_stash_len = 0;
	c->ops->rx_wait(c->owner, false);
	if (rc) {
		/* reported once the FPDU's CRC is verified (rx_header) */
		cur->err = rc;
		cur->kind = RXK_DISCARD;
	}
	if (len)
		conn_rx_bulk(c, stash, len); /* may wait again: stashes anew */
	iw_free(stash);
	if (c->state != RDMAP_CONN_RUN)
		conn_rx_release(c);
	else if (!c->rx_waiting)
		c->ops->kick_rx(c->owner);
	conn_tx_kick(c);
}

void rdmap_conn_rx_resume(struct rdmap_conn *c)
{
	struct rdmap_rx_cur *cur = &c->cur;
	int rc;

	if (!rx_wait_live(c))
		return;
	rc = rx_table[cur->h.opcode & RDMAP_CTRL_OPCODE_MASK].handler(c, cur,
								      cur->hdr);
	if (rc == RX_WAIT)
		return; /* still none posted (the owner keeps its bound) */
	rx_wait_done(c, rc);
}

void rdmap_conn_rx_wait_expired(struct rdmap_conn *c)
{
	if (rx_wait_live(c))
		rx_wait_done(c, IWARP_ERR_DDP_MSN_NO_BUFFER);
}
