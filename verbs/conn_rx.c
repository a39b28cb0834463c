/*
 * verbs/conn_rx.c: qp_conn receive path. Stream octets go through the MPA
 * deframer (RFC 5044 §4-6); each DDP segment's header is validated (RFC 5041
 * §7, RFC 5040 §7-8) before any of its payload is placed, payload is placed
 * in order at its destination (the MR at the tagged offset, or the receive
 * WQE at the message offset), and messages complete only after the CRC of
 * their last FPDU was verified.
 */
#include "config.h"

#include <errno.h>
#include <string.h>

#include "rdmap/rdmap_opcode.h"
#include "verbs/conn.h"

/* Content octets between two markers (RFC 5044 §5). */
#define MPA_MARKER_SPAN (MPA_MARKER_INTERVAL - MPA_MARKER_LEN)

/* Locates message offset |off| in the RQE: pointer and octets to its SGE end. */
static uint8_t *rqe_locate(const struct iw_rqe *r, uint64_t off, size_t *room)
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
static void rqe_place(const struct iw_rqe *r, uint64_t off, const uint8_t *src,
		      size_t len)
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

/* Send family (QN 0, RFC 5040 §5.3): binds a receive WQE to a new message. */
static int rx_send(struct qp_conn *c, struct conn_rx_cur *cur)
{
	const struct ddp_hdr *h = &cur->h;
	const struct ddp_rx_queue *q = &c->drx.q[DDP_QN_SEND];
	uint32_t i;
	int rc;

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
		if (!c->qp || qp_rq_pop(c->qp, &c->rqe))
			return IWARP_ERR_DDP_MSN_NO_BUFFER;
		c->have_rqe = true;
		for (i = 0; i < c->rqe.num_sge; i++)
			if (mr_check_local(c->ctx, &c->rqe.sge[i], c->pd,
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
static int rx_tagged_target(struct qp_conn *c, struct conn_rx_cur *cur,
			    int access, enum conn_rx_kind kind)
{
	const struct ddp_hdr *h = &cur->h;
	struct ddp_tagged_buf buf;
	uint8_t *dst = NULL;
	int rc;

	if (cur->pay_len) {
		rc = mr_check_remote(c->ctx, h->stag, c->pd, access, h->to,
				     cur->pay_len, true, &dst);
		if (rc)
			return rc;
	}
	buf.state = DDP_STAG_VALID;
	buf.base = h->to;
	buf.len = cur->pay_len;
	rc = ddp_rx_tagged(&c->drx, h, cur->pay_len, &buf, &cur->seg);
	if (rc)
		return rc;
	cur->dst = dst;
	cur->kind = kind;
	return 0;
}

/*
 * True when the QP itself allows the remote operation |access| (its
 * qp_access_flags, set by iwarp_modify_qp; the CM grants remote Read and
 * Write as rdma_create_qp does). RFC 5040 §8: an RNIC checks the access
 * rights of the stream as well as those of the STag.
 */
static bool rx_qp_allows(const struct qp_conn *c, int access)
{
	return c->qp && (__atomic_load_n(&c->qp->access_flags,
					 __ATOMIC_RELAXED) &
			 access) == access;
}

/* RDMA Write segment (RFC 5040 §4.3, §8.1: remote write access). A
 * zero-length Write (the RFC 6581 RTR) touches no memory. */
static int rx_write(struct qp_conn *c, struct conn_rx_cur *cur)
{
	if (cur->pay_len && !rx_qp_allows(c, IWARP_ACCESS_REMOTE_WRITE))
		return IWARP_ERR_RDMAP_ACCESS;
	return rx_tagged_target(c, cur, IWARP_ACCESS_REMOTE_WRITE, RXK_WRITE);
}

/* Read Response segment: must match the ORQ head (RFC 5040 §4.5, §5.2). */
static int rx_read_response(struct qp_conn *c, struct conn_rx_cur *cur)
{
	const struct ddp_hdr *h = &cur->h;
	struct conn_orq *o;

	if (c->orq_head == c->orq_tail)
		return IWARP_ERR_RDMAP_RESPONSE;
	o = &c->orq[c->orq_head & (c->orq_size - 1)];
	if (h->stag != o->sink_stag)
		return IWARP_ERR_DDP_STAG;
	if (h->to != o->sink_to + o->got || cur->pay_len > o->size - o->got ||
	    (h->last && o->got + cur->pay_len != o->size))
		return IWARP_ERR_DDP_BOUNDS;
	/* the sink MR may carry LOCAL_WRITE or REMOTE_WRITE (RFC-FACTS §0.8;
	 * mr_check_remote grants LOCAL_WRITE for either) */
	return rx_tagged_target(c, cur, IWARP_ACCESS_LOCAL_WRITE, RXK_RRESP);
}

/* RDMA Read Request (QN 1, RFC 5040 §4.4, §5.2; IRD, RFC 6581 §5). */
static int rx_read_request(struct qp_conn *c, struct conn_rx_cur *cur,
			   const uint8_t *hdr, size_t hdr_len)
{
	const uint8_t *src = NULL;
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
		uint8_t *p = NULL;

		if (!rx_qp_allows(c, IWARP_ACCESS_REMOTE_READ))
			return IWARP_ERR_RDMAP_ACCESS;
		rc = mr_check_remote(c->ctx, cur->rr.src_stag, c->pd,
				     IWARP_ACCESS_REMOTE_READ, cur->rr.src_to,
				     cur->rr.size, false, &p);
		if (rc)
			return rc;
		src = p;
	}
	cur->src = src;
	cur->kind = RXK_RREQ;
	return 0;
}

/* Terminate (QN 2, RFC 5040 §4.8): gathered whole, decoded when done. */
static int rx_terminate(struct qp_conn *c, struct conn_rx_cur *cur,
			const uint8_t *hdr)
{
	if (cur->ulpdu_len > RDMAP_TERM_MAX_LEN)
		return IWARP_ERR_RDMAP_TERMINATE;
	ddp_rx_post(&c->drx, DDP_QN_TERMINATE, CONN_TERM_BODY);
	if (ddp_rx_untagged(&c->drx, &cur->h, cur->pay_len, &cur->seg))
		return IWARP_ERR_RDMAP_TERMINATE;
	memcpy(c->term_buf, hdr, DDP_UNTAGGED_HDR_LEN);
	cur->kind = RXK_TERM;
	return 0;
}

/* A HEADER event: decode and validate, decide where the payload goes. */
static void rx_header(struct qp_conn *c, const struct mpa_rx_event *ev)
{
	struct conn_rx_cur *cur = &c->cur;
	int rc;

	memset(cur, 0, sizeof(*cur));
	cur->kind = RXK_DISCARD;
	cur->rqe_status = IWARP_WC_WR_FLUSH_ERR;
	cur->ulpdu_len = ev->ulpdu_len;
	cur->hdr_len = ev->hdr_len < sizeof(cur->hdr) ? ev->hdr_len :
							sizeof(cur->hdr);
	memcpy(cur->hdr, ev->hdr, cur->hdr_len);
	cur->pay_len = (uint32_t)(ev->ulpdu_len - ev->hdr_len);
	/* large FPDUs stream in place (qp_conn_rx_iov) */
	if (cur->pay_len >= CONN_DP_BIG)
		c->rx_big = CONN_RX_BIG_CREDIT;
	else if (c->rx_big)
		c->rx_big--;
	rc = ddp_hdr_decode(&cur->h, ev->hdr, ev->hdr_len);
	if (rc < 0)
		goto err;
	rc = ddp_hdr_check(&cur->h);
	if (rc)
		goto err;
	rc = rdmap_hdr_check(&cur->h);
	if (rc)
		goto err;
	if (cur->h.tagged) {
		rc = cur->h.opcode == RDMAP_OP_WRITE ? rx_write(c, cur) :
						       rx_read_response(c, cur);
	} else {
		switch (cur->h.qn) {
		case DDP_QN_SEND:
			rc = rx_send(c, cur);
			break;
		case DDP_QN_READ_REQUEST:
			rc = rx_read_request(c, cur, ev->hdr, ev->hdr_len);
			break;
		case DDP_QN_TERMINATE:
		default:
			rc = rx_terminate(c, cur, ev->hdr);
			break;
		}
	}
	if (!rc)
		return;
err:
	/* reported once the FPDU's CRC is verified; nothing is placed */
	cur->err = rc;
	cur->kind = RXK_DISCARD;
}

/* A PAYLOAD event: place in order. */
static void rx_payload(struct qp_conn *c, const struct mpa_rx_event *ev)
{
	struct conn_rx_cur *cur = &c->cur;
	size_t off;

	switch (cur->kind) {
	case RXK_WRITE:
	case RXK_RRESP:
		if (cur->dst)
			memcpy(cur->dst + ev->data_off, ev->data,
			       ev->data_len);
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
		break;
	}
}

/* The Send message completed (RFC 5040 §5.3, §6.4 for the Invalidate). */
static void rx_send_complete(struct qp_conn *c, struct conn_rx_cur *cur)
{
	const struct rdmap_opcode_info *oi = rdmap_opcode_get(cur->h.opcode);
	unsigned int flags = 0;
	uint32_t inv = 0;
	int rc;

	if (oi->solicited)
		flags |= IWARP_WC_WITH_SE;
	if (oi->invalidate) {
		inv = cur->h.rsvdulp;
		rc = mr_invalidate(c->ctx, inv, c->pd);
		if (rc) {
			/* RDMAP 0x09: STag cannot be invalidated */
			cur->rqe_status = IWARP_WC_LOC_PROT_ERR;
			conn_fail(c, IWARP_ERR_RDMAP_INVALIDATE, true);
			return;
		}
		flags |= IWARP_WC_WITH_INV;
	}
	conn_rqe_complete(c, IWARP_WC_SUCCESS, (uint32_t)cur->seg.msg_len,
			  flags, inv, oi->solicited);
}

/* An FPDU_DONE event: the CRC matched; deliver. */
static void rx_fpdu_done(struct qp_conn *c)
{
	struct conn_rx_cur *cur = &c->cur;
	struct rdmap_term t;
	struct conn_orq *o;
	struct conn_irq *e;

	if (cur->err) {
		conn_fail(c, cur->err, true);
		return;
	}
	if (!c->first_rx) {
		/* RFC 5044 §7.1 / RFC 6581 §7: the responder may send now */
		c->first_rx = true;
		c->tx_enabled = true;
	}
	switch (cur->kind) {
	case RXK_SEND:
		if (cur->seg.complete)
			rx_send_complete(c, cur);
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
		e->src = cur->src;
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
	case RXK_WRITE:
	case RXK_SEND_RTR:
		break;
	}
	cur->kind = RXK_NONE;
}

/* Bulk mode: parse |len| received octets in place. */
static void conn_rx_bulk(struct qp_conn *c, const uint8_t *buf, size_t len)
{
	struct mpa_rx_event ev;
	ssize_t r;

	while (len > 0 && c->state == CONN_RUN) {
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
 * Octets a bulk receive asks for. While large FPDUs arrive (rx_big), it
 * ends a little past the current FPDU's trailer, so that the next header
 * is parsed from it and that FPDU's payload is then received in place;
 * otherwise the whole buffer.
 */
static size_t rx_bulk_len(const struct qp_conn *c)
{
	const struct mpa_rx *m = &c->mrx;
	size_t len = CONN_RX_LOOKAHEAD;

	if (!c->rx_big || c->rx_behind)
		return CONN_RX_BUF;
	if (mpa_rx_get_state(m) == MPA_RX_GET_PAYLOAD) {
		len += m->pay_len - m->pay_got + m->pad_len + MPA_CRC_LEN;
		/* markers: one per 508 content octets, rounded up */
		if (m->markers)
			len += MPA_MARKER_LEN * (len / MPA_MARKER_SPAN + 1);
	}
	return len < CONN_RX_BUF ? len : CONN_RX_BUF;
}

/*
 * Direct placement layout for the rest of the current payload, if it is
 * large: iovecs into |iov| (at most |cap|) and their octet total in |*total|.
 * Returns the iovec count, or 0 when the payload goes through the bulk
 * buffer.
 */
static int rx_dp_iov(struct qp_conn *c, struct iovec *iov, int cap,
		     size_t *total)
{
	struct conn_rx_cur *cur = &c->cur;
	size_t left, room = 0, off;
	uint8_t *dst = NULL;
	int n, i;

	if (c->state != CONN_RUN || cur->err ||
	    mpa_rx_get_state(&c->mrx) != MPA_RX_GET_PAYLOAD ||
	    c->mrx.pay_len - c->mrx.pay_got < CONN_DP_MIN)
		return 0;
	left = c->mrx.pay_len - c->mrx.pay_got;
	off = c->mrx.pay_got;
	switch (cur->kind) {
	case RXK_WRITE:
	case RXK_RRESP:
		if (cur->dst) {
			dst = cur->dst + off;
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

int qp_conn_rx_iov(struct qp_conn *c, struct iovec *iov, int cap)
{
	size_t total = 0;
	int n;

	c->dp_active = false;
	c->dp_len = 0;
	if (c->state == CONN_CLOSED || cap <= 0)
		return 0;
	/* direct placement: a large payload goes straight to its target,
	 * and the bulk buffer after it takes the trailer and what follows */
	n = rx_dp_iov(c, iov, cap, &total);
	if (n > 0) {
		c->dp_active = true;
		c->dp_len = total;
		if (n < cap) {
			iov[n].iov_base = c->rxbuf;
			iov[n].iov_len = CONN_RX_BUF;
			if (c->rx_big && !c->rx_behind)
				iov[n].iov_len = CONN_RX_LOOKAHEAD;
			total += iov[n++].iov_len;
		}
		c->rx_req = total;
		return n;
	}
	iov[0].iov_base = c->rxbuf;
	iov[0].iov_len = rx_bulk_len(c);
	c->rx_req = iov[0].iov_len;
	return 1;
}

void qp_conn_rx_done(struct qp_conn *c, size_t n)
{
	size_t k;
	ssize_t r;

	if (c->state == CONN_CLOSED)
		return;
	/* a bounded receive that was filled means the receiver is behind:
	 * then fewer, larger receives beat avoiding the copy */
	c->rx_behind = n >= c->rx_req && c->rx_req < CONN_RX_BUF;
	if (c->dp_active) {
		c->dp_active = false;
		k = n < c->dp_len ? n : c->dp_len;
		r = mpa_rx_commit(&c->mrx, k);
		if (r < 0) {
			if (c->state == CONN_RUN)
				conn_fail(c, (int)r, false);
		} else if (n > k) {
			conn_rx_bulk(c, c->rxbuf, n - k);
		}
	} else {
		conn_rx_bulk(c, c->rxbuf, n);
	}
	conn_tx_kick(c);
}

int qp_conn_rx_prefill(struct qp_conn *c, const void *buf, size_t len)
{
	if (c->state == CONN_CLOSED)
		return -EPIPE;
	conn_rx_bulk(c, buf, len);
	conn_tx_kick(c);
	return 0;
}
