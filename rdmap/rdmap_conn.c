/*
 * rdmap/rdmap_conn.c: rdmap_conn lifetime, completions, and the end of a
 * connection, shared by the receive (rdmap_conn_rx.c), transmit
 * (rdmap_conn_tx.c) and TERMINATE (rdmap_conn_term.c) paths.
 */
#include "config.h"

#include <errno.h>
#include <string.h>

#include "ddp/ddp_hdr.h"
#include "rdmap/rdmap_conn_int.h"
#include "rdmap/rdmap_opcode.h"
#include "util/mem.h"

/* Smallest power of two >= |n|, at least 1. */
static uint32_t conn_pow2(uint32_t n)
{
	uint32_t s = 1;

	while (s < n)
		s <<= 1;
	return s;
}

/* Deframer callback: the DDP/RDMAP header length (RFC 5041 §4, RFC 5040
 * §4.4), so the whole header is gathered before any payload. */
static size_t conn_hdr_len(void *ulp, const uint8_t *first2, uint16_t len)
{
	(void)ulp;
	return rdmap_hdr_len(first2, len);
}

struct rdmap_conn *rdmap_conn_create(const struct rdmap_conn_cfg *cfg,
				     const struct rdmap_ops *ops, void *owner)
{
	struct mpa_rx_cfg rcfg;
	struct rdmap_conn *c;
	int err = ENOMEM;

	if (!cfg || !ops || !ops->mem_get || !ops->mem_put ||
	    !ops->mem_check_local || !ops->invalidate || !ops->stream_allows ||
	    !ops->recv_take || !ops->recv_complete || !ops->sq_next ||
	    !ops->sq_started || !ops->sq_pending || !ops->sq_oldest ||
	    !ops->sq_complete || !ops->sq_fail_one || !ops->set_error ||
	    !ops->closed) {
		errno = EINVAL;
		return NULL;
	}
	c = iw_calloc(1, sizeof(*c));
	if (!c)
		return NULL;
	c->ops = ops;
	c->owner = owner;
	c->bound = true;
	c->initiator = cfg->initiator;
	c->p2p = cfg->p2p && cfg->rtr != MPA_RTR_NONE;
	c->rtr = c->p2p ? cfg->rtr : MPA_RTR_NONE;
	c->ird = cfg->ird > RDMAP_CONN_MAX_IRD_ORD ? RDMAP_CONN_MAX_IRD_ORD
						   : cfg->ird;
	c->ord = cfg->ord > RDMAP_CONN_MAX_IRD_ORD ? RDMAP_CONN_MAX_IRD_ORD
						   : cfg->ord;
	c->fpdu_max = cfg->fpdu_max;
	c->ext = cfg->rdmap_ext;
	c->sq_sent = cfg->sq_first;
	/* RFC 5044 §7.1 / RFC 6581 §7: the initiator sends first (its RTR in
	 * P2P mode); the responder waits for the first inbound FPDU */
	c->tx_enabled = cfg->initiator;
	c->rtr_pending = cfg->initiator && c->p2p;
	/*
	 * Neither is zeroed: an idle connection keeps their pages untouched
	 * (RSS). conn_frame writes every field of a slot it takes, and only
	 * slots in [slot_head, slot_tail) are read.
	 */
	c->slots = iw_malloc(RDMAP_CONN_TX_SLOTS * sizeof(*c->slots));
	c->slot_cap = c->slot_cap_next = RDMAP_CONN_TX_SLOTS_FEW;
	c->iov_cap = RDMAP_CONN_TX_IOVS_FOR(c->slot_cap);
	c->iovs = iw_malloc(RDMAP_CONN_TX_IOVS * sizeof(*c->iovs));
	if (cfg->markers_tx) {
		c->marks = iw_malloc(MPA_MAX_FPDU_MARKERS * sizeof(*c->marks));
		c->stage_iov = iw_malloc(MPA_TX_IOV_MAX(RDMAP_MAX_SGE + 1u,
							MPA_MAX_FPDU_MARKERS) *
					 sizeof(*c->stage_iov));
		c->stage = iw_malloc(RDMAP_CONN_TX_STAGE);
	}
	/* the rings' units start just short of their wrap, so every
	 * connection crosses it early (as the kernel's jiffies do) */
	c->iov_head = c->iov_tail = 0u - c->iov_cap;
	c->stage_head = c->stage_tail = 0u - RDMAP_CONN_TX_STAGE;
	c->orq_size = conn_pow2(c->ord + 1u); /* + the Read RTR */
	atomic_init(&c->orq_owed, false);
	c->orq = iw_calloc(c->orq_size, sizeof(*c->orq));
	c->irq_size = conn_pow2(c->ird ? c->ird : 1u);
	c->irq = iw_calloc(c->irq_size, sizeof(*c->irq));
	if (!c->slots || !c->iovs || !c->orq || !c->irq ||
	    (cfg->markers_tx && (!c->marks || !c->stage_iov || !c->stage)))
		goto fail;
	err = EINVAL;
	if (mpa_tx_init(&c->mtx, cfg->markers_tx, cfg->crc, 0))
		goto fail;
	memset(&rcfg, 0, sizeof(rcfg));
	rcfg.markers = cfg->markers_rx;
	rcfg.crc = cfg->crc;
	rcfg.hdr_len = conn_hdr_len;
	rcfg.ulp = c;
	if (mpa_rx_init(&c->mrx, &rcfg))
		goto fail;
	ddp_tx_queues_init(&c->txq);
	ddp_rx_init(&c->drx);
	return c;

fail:
	iw_free(c->slots);
	iw_free(c->marks);
	iw_free(c->stage_iov);
	iw_free(c->stage);
	iw_free(c->iovs);
	iw_free(c->orq);
	iw_free(c->irq);
	iw_free(c->rxbuf);
	iw_free(c);
	errno = err;
	return NULL;
}

void rdmap_conn_set_rx_provided(struct rdmap_conn *c)
{
	c->rx_provided = true;
	iw_free(c->rxbuf);
	c->rxbuf = NULL;
}

void rdmap_conn_set_rx_shared(struct rdmap_conn *c, bool shared)
{
	c->rx_shared = shared;
}

bool rdmap_conn_rx_untagged(const struct rdmap_conn *c)
{
	return c->rx_untagged > 0;
}

bool rdmap_conn_response_owed(const struct rdmap_conn *c)
{
	return atomic_load(&c->orq_owed);
}

void rdmap_conn_set_fpdu_max(struct rdmap_conn *c, size_t fpdu_max)
{
	c->fpdu_max = fpdu_max;
}

void conn_mem_put(struct rdmap_conn *c, struct rdmap_mem *m)
{
	if (m->ref)
		c->ops->mem_put(c->owner, m->ref);
	m->ref = 0;
	m->ptr = NULL;
}

void conn_rx_release(struct rdmap_conn *c)
{
	/* a receive in flight may still place into it: kept until it ends */
	if (!c->dp_active)
		conn_mem_put(c, &c->cur.dst);
}

/* Gives back the references of framed FPDUs [from, slot_tail). */
void conn_slots_release(struct rdmap_conn *c, uint32_t from)
{
	struct rdmap_slot *sl;
	uint32_t i;

	for (i = from; i != c->slot_tail; i++) {
		sl = conn_slot(c, i);
		if (sl->mem_ref)
			c->ops->mem_put(c->owner, sl->mem_ref);
		sl->mem_ref = 0;
	}
}

void rdmap_conn_detach(struct rdmap_conn *c)
{
	conn_rx_wait_end(c);
	if (!c->bound)
		return;
	if (c->have_rqe)
		conn_rqe_complete(c, IWARP_WC_WR_FLUSH_ERR, 0, 0, 0, true);
	c->bound = false;
	c->state = RDMAP_CONN_CLOSED;
}

void rdmap_conn_destroy(struct rdmap_conn *c)
{
	if (!c)
		return;
	rdmap_conn_detach(c);
	c->dp_active = false;
	conn_rx_release(c);
	conn_slots_release(c, c->slot_head);
	iw_free(c->slots);
	iw_free(c->marks);
	iw_free(c->stage_iov);
	iw_free(c->stage);
	iw_free(c->iovs);
	iw_free(c->orq);
	iw_free(c->irq);
	iw_free(c->rxbuf);
	iw_free(c);
}

void conn_tx_kick(struct rdmap_conn *c)
{
	if (c->ops->kick_tx && rdmap_conn_tx_pending(c))
		c->ops->kick_tx(c->owner);
}

void conn_cq_overflow(struct rdmap_conn *c)
{
	struct iwarp_term_cause lc = {
		.layer = IWARP_TERM_LAYER_RDMAP,
		.etype = IWARP_RDMAP_ETYPE_LOCAL_CATASTROPHIC,
		.ecode = 0,
	};

	if (c->state == RDMAP_CONN_RUN)
		conn_fail_cause(c, &lc);
}

void conn_rqe_complete(struct rdmap_conn *c, enum iwarp_wc_status status,
		       uint32_t byte_len, unsigned int wc_flags,
		       uint32_t inv_rkey, bool solicited)
{
	struct iwarp_wc wc;

	if (!c->have_rqe || !c->bound)
		return;
	memset(&wc, 0, sizeof(wc));
	wc.wr_id = c->rqe.wr_id;
	wc.status = status;
	wc.opcode = IWARP_WC_RECV;
	wc.byte_len = byte_len;
	wc.wc_flags = wc_flags;
	wc.invalidated_rkey = inv_rkey;
	if (status != IWARP_WC_SUCCESS && c->cause_valid)
		wc.vendor_err = rdmap_vendor_err(&c->cause);
	c->have_rqe = false;
	if (c->ops->recv_complete(c->owner, &wc,
				  solicited || status != IWARP_WC_SUCCESS))
		conn_cq_overflow(c);
}

void conn_rqe_complete_imm(struct rdmap_conn *c, enum iwarp_wc_opcode opcode,
			   uint32_t imm, bool solicited)
{
	struct iwarp_wc wc;

	if (!c->have_rqe || !c->bound)
		return;
	memset(&wc, 0, sizeof(wc));
	wc.wr_id = c->rqe.wr_id;
	wc.status = IWARP_WC_SUCCESS;
	wc.opcode = opcode;
	wc.wc_flags = IWARP_WC_WITH_IMM | (solicited ? IWARP_WC_WITH_SE : 0u);
	wc.imm_data = imm;
	c->have_rqe = false;
	if (c->ops->recv_complete(c->owner, &wc, solicited))
		conn_cq_overflow(c);
}

void conn_sq_fail_one(struct rdmap_conn *c, enum iwarp_wc_status status,
		      uint32_t vendor_err)
{
	if (!c->bound)
		return;
	if (c->ops->sq_fail_one(c->owner, status, vendor_err))
		conn_cq_overflow(c);
}

void conn_sq_progress(struct rdmap_conn *c)
{
	uint32_t oldest, upto = c->sq_sent, i;
	struct rdmap_orq *o;

	conn_orq_publish(c); /* callers move the ORQ's head first */
	if (!c->bound)
		return;
	/* a Read completes when its response arrived (RFC 5040 §5.2);
	 * completions stay in SQ order */
	for (i = c->orq_head; i != c->orq_tail; i++) {
		o = &c->orq[i & (c->orq_size - 1)];
		if (!o->in_sq)
			continue;
		if ((int32_t)(o->sq_idx - upto) < 0)
			upto = o->sq_idx;
		break;
	}
	oldest = c->ops->sq_oldest(c->owner);
	if (c->loc_err && (int32_t)(c->loc_err_idx - upto) < 0)
		upto = c->loc_err_idx;
	if ((int32_t)(upto - oldest) > 0 &&
	    c->ops->sq_complete(c->owner, upto)) {
		conn_cq_overflow(c);
		return;
	}
	if (c->loc_err && c->state == RDMAP_CONN_RUN &&
	    c->ops->sq_oldest(c->owner) == c->loc_err_idx) {
		struct iwarp_term_cause lc = {
			.layer = IWARP_TERM_LAYER_RDMAP,
			.etype = IWARP_RDMAP_ETYPE_LOCAL_CATASTROPHIC,
			.ecode = 0,
		};

		/* the failed WQE completes in order, then the QP fails
		 * (ibverbs local protection error; siw terminates with an
		 * RDMAP local catastrophic error) */
		c->loc_err = false;
		c->cause = lc;
		c->cause_valid = true;
		conn_sq_fail_one(c, c->loc_err_status, rdmap_vendor_err(&lc));
		conn_fail_cause(c, &lc);
	}
}

/*
 * The connection is over: WQEs that were not answered cannot complete
 * successfully any more. A Read whose Read Response did not (fully)
 * arrive fails (RFC 5040 §5.2: it completes only with its response), and
 * so does everything after it; what was sent before it completes.
 */
static void conn_fail_unanswered(struct rdmap_conn *c)
{
	uint32_t i;

	for (i = c->orq_head; i != c->orq_tail; i++) {
		struct rdmap_orq *o = &c->orq[i & (c->orq_size - 1)];

		if (!o->in_sq)
			continue;
		/* never past an unanswered Read: conn_sq_progress stops there
		 */
		c->orq_head = i;
		conn_sq_progress(c);
		c->orq_head = c->orq_tail;
		return;
	}
	c->orq_head = c->orq_tail;
	conn_sq_progress(c);
}

void conn_finish(struct rdmap_conn *c, int err, bool async)
{
	if (c->state == RDMAP_CONN_CLOSED)
		return;
	c->state = RDMAP_CONN_CLOSED;
	c->close_err = err;
	conn_orq_publish(c);
	conn_rx_wait_end(c);
	if (c->bound) {
		if (c->have_rqe)
			conn_rqe_complete(c, IWARP_WC_WR_FLUSH_ERR, 0, 0, 0,
					  true);
		conn_fail_unanswered(c);
		c->ops->set_error(c->owner, c->cause_valid ? &c->cause : NULL,
				  c->cause_received, async);
	}
	if (c->ops->shutdown)
		c->ops->shutdown(c->owner);
	if (c->bound)
		c->ops->closed(c->owner, err,
			       c->cause_valid ? &c->cause : NULL);
}

/* True when the stream stopped inside an FPDU or a DDP message. */
static bool conn_rx_mid_message(const struct rdmap_conn *c)
{
	unsigned int q;

	if (c->mrx.in_fpdu || c->drx.tagged.in_msg)
		return true;
	for (q = 0; q < DDP_NUM_QN; q++)
		if (c->drx.q[q].in_msg)
			return true;
	return false;
}

void rdmap_conn_closed(struct rdmap_conn *c, int err)
{
	struct iwarp_term_cause lost = {
		.layer = IWARP_TERM_LAYER_LLP,
		.etype = IWARP_LLP_ETYPE_MPA,
		.ecode = IWARP_LLP_ECODE_STREAM_LOST,
	};

	/* no transport operation is in flight any more (io/ep.h) */
	c->tx_busy = false;
	c->dp_active = false;
	conn_rx_release(c);
	conn_slots_release(c, c->slot_head);
	c->slot_tail = c->slot_head;
	c->iov_tail = c->iov_head;
	c->head_off = 0;
	if (c->state == RDMAP_CONN_CLOSED)
		return;
	if (c->state == RDMAP_CONN_TERM) {
		/* the TERMINATE may not have gone out: end anyway */
		conn_finish(c, c->close_err ? c->close_err : err, true);
		return;
	}
	if (!err && c->state == RDMAP_CONN_RUN && conn_rx_mid_message(c))
		/* a FIN inside an FPDU or a message is no orderly end: the
		 * stream was lost (RFC 5044 §8, LLP 0x01) */
		err = IWARP_ERR_MPA_STREAM_LOST;
	if (err && !c->cause_valid) {
		/* RFC 5044 §8: TCP stream lost (LLP 0x01) */
		c->cause = lost;
		c->cause_valid = true;
	}
	conn_finish(c, err, err != 0);
}

void rdmap_conn_app_state(struct rdmap_conn *c, enum iwarp_qp_state state)
{
	switch (state) {
	case IWARP_QPS_ERR:
		if (c->state == RDMAP_CONN_CLOSED)
			return;
		/* the owner flushes the queues itself after this call */
		c->state = RDMAP_CONN_CLOSED;
		conn_rx_wait_end(c);
		if (c->have_rqe)
			conn_rqe_complete(c, IWARP_WC_WR_FLUSH_ERR, 0, 0, 0,
					  true);
		if (c->ops->shutdown)
			c->ops->shutdown(c->owner);
		c->ops->closed(c->owner, 0, NULL);
		return;
	case IWARP_QPS_RESET:
		if (c->state != RDMAP_CONN_CLOSED) {
			c->state = RDMAP_CONN_CLOSED;
			conn_rx_wait_end(c);
			if (c->ops->shutdown)
				c->ops->shutdown(c->owner);
			/* closed while still bound: after detach only mem_put
			 */
			c->ops->closed(c->owner, 0, NULL);
			rdmap_conn_detach(c);
			return;
		}
		rdmap_conn_detach(c);
		return;
	case IWARP_QPS_SQD:
		/* rdmap_conn_tx.c starts no new WQE while the QP is in SQD */
		return;
	case IWARP_QPS_INIT:
	case IWARP_QPS_RTR:
	case IWARP_QPS_RTS:
	case IWARP_QPS_SQE:
		conn_tx_kick(c);
		return;
	}
}

void rdmap_conn_sq_kick(struct rdmap_conn *c)
{
	if (!c->tx_enabled)
		conn_sq_local_head(c);
	conn_tx_kick(c);
}

bool rdmap_conn_mem_revoke(struct rdmap_conn *c, uint32_t ref)
{
	bool held = false, sending = false;
	uint32_t i;

	if (!ref)
		return false;
	/* the segment being received: discarded, then TERMINATE (RFC 5041
	 * §7: tagged buffer, invalid STag) once its CRC was checked */
	if (c->cur.dst.ref == ref) {
		if (c->dp_active) {
			/* the kernel may still write there: cancel, and give
			 * the reference back when the receive ends */
			if (c->ops->cancel_rx)
				c->ops->cancel_rx(c->owner);
		} else {
			conn_mem_put(c, &c->cur.dst);
		}
		if (!c->cur.err)
			c->cur.err = IWARP_ERR_DDP_STAG;
		c->cur.kind = RXK_DISCARD;
	}
	/* Read Response FPDUs that read from it (RFC 5040 §7: invalid STag) */
	for (i = c->slot_head; i != c->slot_tail; i++)
		if (conn_slot(c, i)->mem_ref == ref)
			sending = true;
	if (sending) {
		if (c->state == RDMAP_CONN_RUN)
			conn_fail(c, IWARP_ERR_RDMAP_STAG, false);
		else if (!c->tx_busy)
			conn_tx_drop_unsent(c);
	}
	if (c->cur.dst.ref == ref)
		held = true;
	for (i = c->slot_head; i != c->slot_tail; i++)
		if (conn_slot(c, i)->mem_ref == ref)
			held = true;
	return held;
}
