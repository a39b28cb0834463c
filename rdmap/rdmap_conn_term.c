/*
 * rdmap/rdmap_conn_term.c: RDMAP engine TERMINATE handling (RFC 5040 §4.8,
 * §5.4, RFC 5041 §7, RFC 5044 §8): sending one for a violation we detected,
 * and acting on one the peer sent.
 */
#include "config.h"

#include <errno.h>
#include <string.h>

#include "rdmap/rdmap_opcode.h"
#include "rdmap/rdmap_conn_int.h"

/* Stops normal operation and queues the TERMINATE in c->term. */
static void conn_start_term(struct rdmap_conn *c)
{
	c->state = RDMAP_CONN_TERM;
	c->cause = c->term.cause;
	c->cause_valid = true;
	conn_rx_release(c); /* input is discarded from now on */
	/* a receive WQE bound to the failed message completes now, with the
	 * status of the failure (e.g. LOC_LEN_ERR for "message too long") */
	if (c->have_rqe)
		conn_rqe_complete(c, c->cur.rqe_status, 0, 0, 0, true);
	if (c->tx_busy)
		c->drop_unsent = true;
	else
		conn_tx_drop_unsent(c);
	if (c->ops->kick_tx)
		c->ops->kick_tx(c->owner);
	/* RFC 5040 §5.4 asks for the TERMINATE to be sent "if possible";
	 * it must not keep the QP out of ERR when the peer stopped reading */
	if (c->state == RDMAP_CONN_TERM && c->ops->term_queued)
		c->ops->term_queued(c->owner);
}

void rdmap_conn_term_expired(struct rdmap_conn *c)
{
	if (c->state != RDMAP_CONN_TERM)
		return;
	conn_finish(c, c->close_err, true);
}

void conn_fail(struct rdmap_conn *c, int err, bool attach)
{
	struct iwarp_term_cause cause;
	struct rdmap_rx_cur *cur = &c->cur;
	bool rreq;

	if (c->state != RDMAP_CONN_RUN)
		return;
	c->close_err = err;
	if (err == IWARP_ERR_RDMAP_TERMINATE) {
		/* a malformed Terminate is never answered (RFC 5040 §4.8) */
		conn_finish(c, err, true);
		return;
	}
	if (iwarp_error_to_term(err, &cause)) {
		if (err == -EPROTO || err == IWARP_ERR_TRUNCATED) {
			/* malformed, no specific RFC code */
			cause.layer = IWARP_TERM_LAYER_RDMAP;
			cause.etype = IWARP_RDMAP_ETYPE_REMOTE_OPERATION;
			cause.ecode = IWARP_RDMAP_ECODE_UNSPECIFIED;
		} else {
			/* a local error: RDMAP local catastrophic */
			cause.layer = IWARP_TERM_LAYER_RDMAP;
			cause.etype = IWARP_RDMAP_ETYPE_LOCAL_CATASTROPHIC;
			cause.ecode = 0;
		}
	}
	memset(&c->term, 0, sizeof(c->term));
	c->term.cause = cause;
	/* RFC 5040 §4.8: attach the offending DDP header with its segment
	 * length; for RDMAP errors in a Read Request also its RDMAP header */
	if (attach && cause.layer != IWARP_TERM_LAYER_LLP &&
	    cur->hdr_len >= 2 &&
	    cur->hdr_len >= ddp_hdr_len((cur->hdr[0] & DDP_CTRL_T) != 0)) {
		rreq = !(cur->hdr[0] & DDP_CTRL_T) &&
		       (cur->hdr[1] & RDMAP_CTRL_OPCODE_MASK) ==
			       RDMAP_OP_READ_REQUEST &&
		       cause.layer == IWARP_TERM_LAYER_RDMAP &&
		       cur->hdr_len >= RDMAP_RREQ_MSG_LEN;
		if (rdmap_term_attach(&c->term, cur->hdr, cur->hdr_len,
				      cur->ulpdu_len, rreq))
			memset(&c->term, 0, sizeof(c->term));
		c->term.cause = cause;
	}
	conn_start_term(c);
}

void conn_fail_cause(struct rdmap_conn *c, const struct iwarp_term_cause *cause)
{
	if (c->state != RDMAP_CONN_RUN)
		return;
	memset(&c->term, 0, sizeof(c->term));
	c->term.cause = *cause;
	c->close_err = -ECONNABORTED;
	conn_start_term(c);
}

/* Protection errors fail a Read with REM_ACCESS_ERR, others REM_OP_ERR. */
static enum iwarp_wc_status term_status(const struct iwarp_term_cause *t)
{
	if ((t->layer == IWARP_TERM_LAYER_RDMAP &&
	     t->etype == IWARP_RDMAP_ETYPE_REMOTE_PROTECTION) ||
	    (t->layer == IWARP_TERM_LAYER_DDP &&
	     t->etype == IWARP_DDP_ETYPE_TAGGED_BUFFER))
		return IWARP_WC_REM_ACCESS_ERR;
	return IWARP_WC_REM_OP_ERR;
}

void conn_term_received(struct rdmap_conn *c, const struct rdmap_term *t)
{
	enum iwarp_wc_status status = term_status(&t->cause);
	struct rdmap_orq *o = NULL;
	bool reads = true;
	uint32_t i, oldest;

	if (c->state != RDMAP_CONN_RUN)
		return;
	c->cause = t->cause;
	c->cause_valid = true;
	c->cause_received = true;
	/* which Read the TERMINATE answers: the attached header when it is a
	 * tagged or Send header names no Read; otherwise the oldest Read */
	if (t->d && (t->ddp_hdr[0] & DDP_CTRL_T))
		reads = false;
	if (t->d && !(t->ddp_hdr[0] & DDP_CTRL_T) &&
	    (t->ddp_hdr[1] & RDMAP_CTRL_OPCODE_MASK) != RDMAP_OP_READ_REQUEST &&
	    (t->ddp_hdr[1] & RDMAP_CTRL_OPCODE_MASK) != RDMAP_OP_ATOMIC_REQUEST)
		reads = false; /* an RFC 7306 Atomic Request holds an ORQ slot
				  too */
	for (i = c->orq_head; reads && i != c->orq_tail; i++) {
		if (c->orq[i & (c->orq_size - 1)].in_sq) {
			o = &c->orq[i & (c->orq_size - 1)];
			break;
		}
	}
	if (c->bound) {
		/* what was answered before completes; the first unanswered
		 * Read stops it (RFC 5040 §5.2) */
		if (o)
			c->orq_head = i;
		conn_sq_progress(c);
		oldest = c->ops->sq_oldest(c->owner);
		/*
		 * The oldest WQE still uncompleted is the one the peer's
		 * error ends: the Read it names, else the oldest Read still
		 * unanswered or the message being sent. It completes with
		 * the remote status and the cause in vendor_err (RFC 5040
		 * §5.4); what follows is flushed. A WQE never sent is only
		 * flushed.
		 */
		if (o ? oldest == o->sq_idx
		      : (int32_t)(c->sq_sent - oldest) > 0 ||
				    (c->sq_active && c->sq_idx == oldest)) {
			conn_sq_fail_one(c, status,
					 rdmap_vendor_err(&t->cause));
			/* what follows the failed WQE is flushed */
			c->sq_sent = oldest + 1;
			if (o) {
				o->in_sq = false;
				c->orq_head = i + 1;
			}
		}
	}
	if (c->have_rqe)
		conn_rqe_complete(c, IWARP_WC_WR_FLUSH_ERR, 0, 0, 0, true);
	/* RFC 5040 §5.4: the stream is terminated; no reply */
	conn_finish(c, -ECONNABORTED, true);
}
