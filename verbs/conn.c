/*
 * verbs/conn.c: qp_conn lifetime, the move to ERR and completions shared by
 * the transmit (conn_tx.c), receive (conn_rx.c) and TERMINATE (conn_term.c)
 * paths.
 */
#include "config.h"

#include <errno.h>
#include <string.h>

#include "util/mem.h"
#include "verbs/conn.h"

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
	return ddp_ulp_hdr_len(first2, len);
}

struct qp_conn *qp_conn_create(struct iw_qp *qp,
			       const struct mpa_neg_result *neg,
			       bool initiator, size_t fpdu_max,
			       qp_conn_close_fn on_close, void *arg)
{
	struct mpa_rx_cfg rcfg;
	struct qp_conn *c;
	enum iwarp_qp_state st;
	int err = ENOMEM;

	if (!qp || !neg) {
		errno = EINVAL;
		return NULL;
	}
	c = iw_calloc(1, sizeof(*c));
	if (!c)
		return NULL;
	c->qp = qp;
	c->ctx = qp->pub.context;
	c->pd = qp->pub.pd;
	c->on_close = on_close;
	c->close_arg = arg;
	c->initiator = initiator;
	c->p2p = neg->p2p && neg->rtr != MPA_RTR_NONE;
	c->rtr = c->p2p ? neg->rtr : MPA_RTR_NONE;
	c->ird = neg->ird > IW_MAX_IRD_ORD ? IW_MAX_IRD_ORD : neg->ird;
	c->ord = neg->ord > IW_MAX_IRD_ORD ? IW_MAX_IRD_ORD : neg->ord;
	c->fpdu_max = fpdu_max;
	/* RFC 5044 §7.1 / RFC 6581 §7: the initiator sends first (its RTR in
	 * P2P mode); the responder waits for the first inbound FPDU */
	c->tx_enabled = initiator;
	c->rtr_pending = initiator && c->p2p;
	c->slots = iw_calloc(CONN_TX_SLOTS, sizeof(*c->slots));
	c->orq_size = conn_pow2(c->ord + 1u); /* + the Read RTR */
	c->orq = iw_calloc(c->orq_size, sizeof(*c->orq));
	c->irq_size = conn_pow2(c->ird ? c->ird : 1u);
	c->irq = iw_calloc(c->irq_size, sizeof(*c->irq));
	c->rxbuf = iw_malloc(CONN_RX_BUF);
	if (!c->slots || !c->orq || !c->irq || !c->rxbuf)
		goto fail;
	err = EINVAL;
	if (mpa_tx_init(&c->mtx, neg->markers_tx, neg->crc, 0))
		goto fail;
	memset(&rcfg, 0, sizeof(rcfg));
	rcfg.markers = neg->markers_rx;
	rcfg.crc = neg->crc;
	rcfg.hdr_len = conn_hdr_len;
	rcfg.ulp = c;
	if (mpa_rx_init(&c->mrx, &rcfg))
		goto fail;
	ddp_tx_queues_init(&c->txq);
	ddp_rx_init(&c->drx);

	pthread_mutex_lock(&qp->lock);
	st = qp->pub.state;
	if (qp->conn || (st != IWARP_QPS_INIT && st != IWARP_QPS_RTR &&
			 st != IWARP_QPS_RTS)) {
		pthread_mutex_unlock(&qp->lock);
		err = EBUSY;
		goto fail;
	}
	qp->conn = c;
	qp->ird = (uint8_t)c->ird;
	qp->ord = (uint8_t)c->ord;
	qp->pub.state = IWARP_QPS_RTS;
	c->sq_sent = qp->sq_next;
	pthread_mutex_unlock(&qp->lock);
	return c;

fail:
	iw_free(c->slots);
	iw_free(c->orq);
	iw_free(c->irq);
	iw_free(c->rxbuf);
	iw_free(c);
	errno = err;
	return NULL;
}

void qp_conn_set_io(struct qp_conn *conn, const struct qp_conn_io *io,
		    void *io_arg)
{
	conn->io = io;
	conn->io_arg = io_arg;
}

/* Detaches from the QP (the QP pointer is not used afterwards). */
static void conn_detach(struct qp_conn *c)
{
	struct iw_qp *qp = c->qp;

	if (!qp)
		return;
	if (c->have_rqe)
		conn_rqe_complete(c, IWARP_WC_WR_FLUSH_ERR, 0, 0, 0, true);
	pthread_mutex_lock(&qp->lock);
	if (qp->conn == c)
		qp->conn = NULL;
	pthread_mutex_unlock(&qp->lock);
	c->qp = NULL;
}

void qp_conn_destroy(struct qp_conn *conn)
{
	if (!conn)
		return;
	if (conn->qp) {
		if (conn->state != CONN_CLOSED)
			qp_set_error(conn->qp, NULL, false);
		conn_detach(conn);
	}
	conn->state = CONN_CLOSED;
	if (conn->glue_free)
		conn->glue_free(conn);
	iw_free(conn->slots);
	iw_free(conn->orq);
	iw_free(conn->irq);
	iw_free(conn->rxbuf);
	iw_free(conn);
}

void conn_tx_kick(struct qp_conn *conn)
{
	if (conn->io && conn->io->kick_tx && qp_conn_tx_pending(conn))
		conn->io->kick_tx(conn->io_arg);
}

void conn_rqe_complete(struct qp_conn *c, enum iwarp_wc_status status,
		       uint32_t byte_len, unsigned int wc_flags,
		       uint32_t inv_rkey, bool solicited)
{
	struct iwarp_wc wc;

	if (!c->have_rqe || !c->qp)
		return;
	memset(&wc, 0, sizeof(wc));
	wc.wr_id = c->rqe.wr_id;
	wc.status = status;
	wc.opcode = IWARP_WC_RECV;
	wc.byte_len = byte_len;
	wc.wc_flags = wc_flags;
	wc.invalidated_rkey = inv_rkey;
	wc.qp_num = c->qp->pub.qp_num;
	if (status != IWARP_WC_SUCCESS && c->cause_valid)
		wc.vendor_err = conn_vendor_err(&c->cause);
	c->have_rqe = false;
	cq_push(cq_from_pub(c->qp->pub.recv_cq), &wc,
		solicited || status != IWARP_WC_SUCCESS);
}

void conn_sq_fail_one(struct qp_conn *c, enum iwarp_wc_status status,
		      uint32_t vendor_err)
{
	struct iw_qp *qp = c->qp;
	struct iwarp_wc wc;
	struct iw_wqe *w;

	pthread_mutex_lock(&qp->lock);
	if (qp->sq_tail == qp->sq_head) {
		pthread_mutex_unlock(&qp->lock);
		return;
	}
	w = qp_sq_wqe(qp, qp->sq_tail);
	memset(&wc, 0, sizeof(wc));
	wc.wr_id = w->wr_id;
	wc.status = status;
	wc.opcode = w->opcode == IWARP_WR_RDMA_READ ? IWARP_WC_RDMA_READ :
		    w->opcode == IWARP_WR_RDMA_WRITE ? IWARP_WC_RDMA_WRITE :
						       IWARP_WC_SEND;
	wc.vendor_err = vendor_err;
	wc.qp_num = qp->pub.qp_num;
	qp->sq_tail++;
	if ((int32_t)(qp->sq_next - qp->sq_tail) < 0)
		qp->sq_next = qp->sq_tail;
	pthread_mutex_unlock(&qp->lock);
	cq_push(cq_from_pub(qp->pub.send_cq), &wc, true);
}

void conn_sq_progress(struct qp_conn *c)
{
	struct iw_qp *qp = c->qp;
	uint32_t tail, upto = c->sq_sent, i;
	struct conn_orq *o;

	if (!qp)
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
	tail = __atomic_load_n(&qp->sq_tail, __ATOMIC_ACQUIRE);
	if (c->loc_err && (int32_t)(c->loc_err_idx - upto) < 0)
		upto = c->loc_err_idx;
	if ((int32_t)(upto - tail) > 0)
		qp_sq_complete(qp, upto, IWARP_WC_SUCCESS);
	if (c->loc_err && c->state == CONN_RUN &&
	    __atomic_load_n(&qp->sq_tail, __ATOMIC_ACQUIRE) == c->loc_err_idx) {
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
		conn_sq_fail_one(c, c->loc_err_status, conn_vendor_err(&lc));
		conn_fail_cause(c, &lc);
	}
}

void conn_finish(struct qp_conn *c, int err, bool async)
{
	struct iw_qp *qp = c->qp;

	if (c->state == CONN_CLOSED)
		return;
	c->state = CONN_CLOSED;
	c->close_err = err;
	if (qp) {
		if (c->have_rqe)
			conn_rqe_complete(c, IWARP_WC_WR_FLUSH_ERR, 0, 0, 0,
					  true);
		conn_sq_progress(c);
		qp_set_error(qp, c->cause_valid ? &c->cause : NULL, async);
	}
	if (c->io && c->io->shutdown)
		c->io->shutdown(c->io_arg);
	if (c->on_close)
		c->on_close(c->close_arg, err,
			    c->cause_valid ? &c->cause : NULL);
}

void qp_conn_closed(struct qp_conn *c, int err)
{
	struct iwarp_term_cause lost = {
		.layer = IWARP_TERM_LAYER_LLP,
		.etype = IWARP_LLP_ETYPE_MPA,
		.ecode = IWARP_LLP_ECODE_STREAM_LOST,
	};

	if (c->state == CONN_CLOSED)
		return;
	if (c->state == CONN_TERM) {
		/* the TERMINATE may not have gone out: end anyway */
		conn_finish(c, c->close_err ? c->close_err : err, true);
		return;
	}
	if (err && !c->cause_valid) {
		/* RFC 5044 §8: TCP stream lost (LLP 0x01) */
		c->cause = lost;
		c->cause_valid = true;
	}
	conn_finish(c, err, err != 0);
}

void qp_conn_app_state(struct qp_conn *c, enum iwarp_qp_state state)
{
	switch (state) {
	case IWARP_QPS_ERR:
		if (c->state == CONN_CLOSED)
			return;
		/* verbs flushes the queues itself after this call */
		c->state = CONN_CLOSED;
		if (c->have_rqe)
			conn_rqe_complete(c, IWARP_WC_WR_FLUSH_ERR, 0, 0, 0,
					  true);
		if (c->io && c->io->shutdown)
			c->io->shutdown(c->io_arg);
		if (c->on_close)
			c->on_close(c->close_arg, 0, NULL);
		return;
	case IWARP_QPS_RESET:
		if (c->state != CONN_CLOSED) {
			c->state = CONN_CLOSED;
			if (c->io && c->io->shutdown)
				c->io->shutdown(c->io_arg);
			conn_detach(c);
			if (c->on_close)
				c->on_close(c->close_arg, 0, NULL);
			return;
		}
		conn_detach(c);
		return;
	case IWARP_QPS_SQD:
		/* conn_tx.c starts no new WQE while the QP is in SQD */
		return;
	case IWARP_QPS_INIT:
	case IWARP_QPS_RTR:
	case IWARP_QPS_RTS:
	case IWARP_QPS_SQE:
		conn_tx_kick(c);
		return;
	}
}

void qp_conn_sq_kick(struct qp_conn *conn)
{
	conn_tx_kick(conn);
}
