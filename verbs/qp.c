/*
 * verbs/qp.c: queue pair creation, destruction, query and the ibverbs state
 * machine (RESET -> INIT -> RTR -> RTS <-> SQD, any -> ERR, any -> RESET).
 * Posting is in qp_post.c, completion and error paths in qp_complete.c.
 */
#include "config.h"

#include <errno.h>
#include <string.h>

#include "cm/cm_qp.h"
#include "util/mem.h"
#include "verbs/verbs.h"

#define QPS_BIT(s) (1u << (s))
#define QP_ACCESS_ALL                                                          \
	(IWARP_ACCESS_LOCAL_WRITE | IWARP_ACCESS_REMOTE_WRITE |                \
	 IWARP_ACCESS_REMOTE_READ | IWARP_ACCESS_REMOTE_ATOMIC)
#define QP_MASK_ALL                                                            \
	(IWARP_QP_STATE | IWARP_QP_CUR_STATE | IWARP_QP_ACCESS_FLAGS |         \
	 IWARP_QP_MAX_QP_RD_ATOMIC | IWARP_QP_MAX_DEST_RD_ATOMIC |             \
	 IWARP_QP_CAP)
#define QP_MASK_ATTRS                                                          \
	(IWARP_QP_ACCESS_FLAGS | IWARP_QP_MAX_QP_RD_ATOMIC |                   \
	 IWARP_QP_MAX_DEST_RD_ATOMIC)

/* Target states allowed from each state (the ibverbs qp_state_table). */
static const unsigned int qp_next_states[IWARP_QPS_ERR + 1] = {
	[IWARP_QPS_RESET] = QPS_BIT(IWARP_QPS_RESET) | QPS_BIT(IWARP_QPS_INIT) |
			    QPS_BIT(IWARP_QPS_ERR),
	[IWARP_QPS_INIT] = QPS_BIT(IWARP_QPS_RESET) | QPS_BIT(IWARP_QPS_INIT) |
			   QPS_BIT(IWARP_QPS_RTR) | QPS_BIT(IWARP_QPS_ERR),
	[IWARP_QPS_RTR] = QPS_BIT(IWARP_QPS_RESET) | QPS_BIT(IWARP_QPS_RTS) |
			  QPS_BIT(IWARP_QPS_ERR),
	[IWARP_QPS_RTS] = QPS_BIT(IWARP_QPS_RESET) | QPS_BIT(IWARP_QPS_RTS) |
			  QPS_BIT(IWARP_QPS_SQD) | QPS_BIT(IWARP_QPS_ERR),
	[IWARP_QPS_SQD] = QPS_BIT(IWARP_QPS_RESET) | QPS_BIT(IWARP_QPS_RTS) |
			  QPS_BIT(IWARP_QPS_SQD) | QPS_BIT(IWARP_QPS_ERR),
	[IWARP_QPS_SQE] = QPS_BIT(IWARP_QPS_RESET) | QPS_BIT(IWARP_QPS_RTS) |
			  QPS_BIT(IWARP_QPS_ERR),
	[IWARP_QPS_ERR] = QPS_BIT(IWARP_QPS_RESET) | QPS_BIT(IWARP_QPS_ERR),
};

static int qp_check_cap(struct iwarp_qp_cap *cap, bool has_srq)
{
	if (cap->max_send_wr > IW_MAX_QP_WR || cap->max_send_sge > IW_MAX_SGE ||
	    cap->max_inline_data > IW_MAX_INLINE)
		return -EINVAL;
	if (has_srq) {
		cap->max_recv_wr = 0; /* a QP with an SRQ has no RQ */
		cap->max_recv_sge = 0;
	} else if (cap->max_recv_wr > IW_MAX_QP_WR ||
		   cap->max_recv_sge > IW_MAX_SGE) {
		return -EINVAL;
	}
	cap->max_inline_data = IW_MAX_INLINE; /* rounded up to our maximum */
	return 0;
}

IWARP_EXPORT struct iwarp_qp *iwarp_create_qp(struct iwarp_pd *pd,
					      struct iwarp_qp_init_attr *attr)
{
	struct iwarp_context *ctx;
	struct iwarp_qp_cap cap;
	struct iw_qp *qp;
	int err;

	if (!pd || !attr || attr->qp_type != IWARP_QPT_RC || !attr->send_cq ||
	    !attr->recv_cq)
		goto einval;
	ctx = pd->context;
	if (attr->send_cq->context != ctx || attr->recv_cq->context != ctx ||
	    (attr->srq && attr->srq->context != ctx))
		goto einval;
	cap = attr->cap;
	if (qp_check_cap(&cap, attr->srq != NULL))
		goto einval;
	err = ctx_count(ctx, &ctx->n_qp, 1, IW_MAX_QP);
	if (err) {
		errno = -err;
		return NULL;
	}
	qp = iw_calloc(1, sizeof(*qp));
	if (!qp)
		goto err_count;
	/*
	 * The rings are not zeroed: a WQE is written when it is posted
	 * (send_wqe_fill, verbs_rqe_fill) and read only between post and
	 * completion, so a QP that posts little touches few of their pages
	 * (RSS of many idle connected QPs).
	 */
	qp->sq_size = verbs_ring_size(cap.max_send_wr);
	qp->sq = iw_malloc(qp->sq_size * sizeof(*qp->sq));
	if (!qp->sq)
		goto err_free;
	if (!attr->srq) {
		qp->rq_size = verbs_ring_size(cap.max_recv_wr);
		qp->rq = iw_malloc(qp->rq_size * sizeof(*qp->rq));
		if (!qp->rq)
			goto err_free;
	}
	pthread_mutex_init(&qp->lock, NULL);
	pthread_mutex_init(&qp->sq_lock, NULL);
	pthread_mutex_init(&qp->rq_lock, NULL);
	qp->cap = cap;
	qp->sq_sig_all = attr->sq_sig_all != 0;
	qp->pub.context = ctx;
	qp->pub.qp_context = attr->qp_context;
	qp->pub.pd = pd;
	qp->pub.send_cq = attr->send_cq;
	qp->pub.recv_cq = attr->recv_cq;
	qp->pub.srq = attr->srq;
	__atomic_store_n(&qp->pub.state, IWARP_QPS_RESET, __ATOMIC_RELEASE);
	qp->pub.qp_type = IWARP_QPT_RC;
	pthread_mutex_lock(&ctx->lock);
	qp->pub.handle = ctx->next_handle++;
	qp->pub.qp_num = ctx->next_qp_num++;
	pthread_mutex_unlock(&ctx->lock);
	pd_get(pd);
	__atomic_add_fetch(&cq_from_pub(attr->send_cq)->refs, 1,
			   __ATOMIC_RELAXED);
	__atomic_add_fetch(&cq_from_pub(attr->recv_cq)->refs, 1,
			   __ATOMIC_RELAXED);
	if (attr->srq)
		__atomic_add_fetch(&srq_from_pub(attr->srq)->refs, 1,
				   __ATOMIC_RELAXED);
	attr->cap = cap;
	return &qp->pub;

err_free:
	iw_free(qp->sq);
	iw_free(qp);
err_count:
	ctx_count(ctx, &ctx->n_qp, -1, 0);
	errno = ENOMEM;
	return NULL;
einval:
	errno = EINVAL;
	return NULL;
}

IWARP_EXPORT int iwarp_destroy_qp(struct iwarp_qp *pub)
{
	struct iwarp_context *ctx;
	enum iwarp_qp_state st;
	struct iw_qp *qp;

	if (!pub)
		return -EINVAL;
	qp = qp_from_pub(pub);
	/* a QP of a CM id: the id forgets it and its datapath goes first
	 * (librdmacm lets the QP go before rdma_destroy_id) */
	cm_qp_unlink(qp);
	pthread_mutex_lock(&qp->lock);
	st = pub->state;
	pthread_mutex_unlock(&qp->lock);
	if (st != IWARP_QPS_RESET) {
		if (st != IWARP_QPS_ERR)
			engine_qp_state_change(qp, IWARP_QPS_ERR);
		qp_set_error(qp, NULL, false); /* flush what is left */
	}
	engine_qp_state_change(qp, IWARP_QPS_RESET); /* detach */
	ctx = pub->context;
	ctx_async_purge(ctx, pub);
	/* the flushed WRs (and anything not polled yet) go with the QP */
	cq_purge_qp(cq_from_pub(pub->send_cq), pub->qp_num,
		    pub->srq && pub->recv_cq == pub->send_cq);
	if (pub->recv_cq != pub->send_cq)
		cq_purge_qp(cq_from_pub(pub->recv_cq), pub->qp_num,
			    pub->srq != NULL);
	pd_put(pub->pd);
	__atomic_sub_fetch(&cq_from_pub(pub->send_cq)->refs, 1,
			   __ATOMIC_RELEASE);
	__atomic_sub_fetch(&cq_from_pub(pub->recv_cq)->refs, 1,
			   __ATOMIC_RELEASE);
	if (pub->srq)
		__atomic_sub_fetch(&srq_from_pub(pub->srq)->refs, 1,
				   __ATOMIC_RELEASE);
	pthread_mutex_destroy(&qp->rq_lock);
	pthread_mutex_destroy(&qp->sq_lock);
	pthread_mutex_destroy(&qp->lock);
	iw_free(qp->sq);
	iw_free(qp->rq);
	iw_free(qp);
	ctx_count(ctx, &ctx->n_qp, -1, 0);
	return 0;
}

/* Checks |attr|/|mask| for a move from |cur|; returns the target or -EINVAL. */
static int qp_check_modify(enum iwarp_qp_state cur,
			   const struct iwarp_qp_attr *attr, int mask)
{
	unsigned int next;

	if (mask & ~QP_MASK_ALL)
		return -EINVAL;
	if (mask & IWARP_QP_CAP)
		return -EINVAL; /* queues cannot be resized */
	if ((mask & IWARP_QP_CUR_STATE) && attr->cur_qp_state != cur)
		return -EINVAL;
	next = (mask & IWARP_QP_STATE) ? (unsigned int)attr->qp_state
				       : (unsigned int)cur;
	if (next > IWARP_QPS_ERR || !(qp_next_states[cur] & QPS_BIT(next)))
		return -EINVAL;
	if ((next == IWARP_QPS_RESET || next == IWARP_QPS_ERR) &&
	    (mask & QP_MASK_ATTRS))
		return -EINVAL; /* no attributes on a move to RESET or ERR */
	if ((mask & IWARP_QP_ACCESS_FLAGS) &&
	    (attr->qp_access_flags & ~QP_ACCESS_ALL))
		return -EINVAL;
	if ((mask & IWARP_QP_MAX_QP_RD_ATOMIC) &&
	    attr->max_rd_atomic > IW_MAX_IRD_ORD)
		return -EINVAL;
	if ((mask & IWARP_QP_MAX_DEST_RD_ATOMIC) &&
	    attr->max_dest_rd_atomic > IW_MAX_IRD_ORD)
		return -EINVAL;
	return (int)next;
}

IWARP_EXPORT int iwarp_modify_qp(struct iwarp_qp *pub,
				 struct iwarp_qp_attr *attr, int attr_mask)
{
	struct iwarp_async_event ev;
	enum iwarp_qp_state cur, next;
	struct iw_qp *qp;
	bool drained;
	int rc;

	if (!pub || !attr)
		return -EINVAL;
	qp = qp_from_pub(pub);
	pthread_mutex_lock(&qp->lock);
	cur = pub->state;
	rc = qp_check_modify(cur, attr, attr_mask);
	if (rc < 0) {
		pthread_mutex_unlock(&qp->lock);
		return rc;
	}
	next = (enum iwarp_qp_state)rc;
	switch (next) {
	case IWARP_QPS_ERR:
		pthread_mutex_unlock(&qp->lock);
		engine_qp_state_change(qp, IWARP_QPS_ERR);
		qp_set_error(qp, NULL, false);
		return 0;
	case IWARP_QPS_RESET:
		pthread_mutex_unlock(&qp->lock);
		if (cur != IWARP_QPS_RESET)
			engine_qp_state_change(qp, IWARP_QPS_RESET);
		pthread_mutex_lock(&qp->lock);
		/* ibverbs: RESET discards outstanding WRs without completions
		 */
		pthread_mutex_lock(&qp->sq_lock);
		__atomic_store_n(&qp->sq_head, 0, __ATOMIC_RELEASE);
		__atomic_store_n(&qp->sq_next, 0, __ATOMIC_RELEASE);
		__atomic_store_n(&qp->sq_tail, 0, __ATOMIC_RELEASE);
		pthread_mutex_unlock(&qp->sq_lock);
		pthread_mutex_lock(&qp->rq_lock);
		__atomic_store_n(&qp->rq_head, 0, __ATOMIC_RELEASE);
		__atomic_store_n(&qp->rq_tail, 0, __ATOMIC_RELEASE);
		pthread_mutex_unlock(&qp->rq_lock);
		qp->term_valid = false;
		qp->term_received = false;
		memset(&qp->term, 0, sizeof(qp->term));
		__atomic_store_n(&pub->state, IWARP_QPS_RESET,
				 __ATOMIC_RELEASE);
		pthread_mutex_unlock(&qp->lock);
		return 0;
	case IWARP_QPS_INIT:
	case IWARP_QPS_RTR:
	case IWARP_QPS_RTS:
	case IWARP_QPS_SQD:
	case IWARP_QPS_SQE:
		break;
	}
	if (attr_mask & IWARP_QP_ACCESS_FLAGS)
		__atomic_store_n(&qp->access_flags, attr->qp_access_flags,
				 __ATOMIC_RELEASE);
	if (attr_mask & IWARP_QP_MAX_QP_RD_ATOMIC)
		qp->ord = attr->max_rd_atomic;
	if (attr_mask & IWARP_QP_MAX_DEST_RD_ATOMIC)
		qp->ird = attr->max_dest_rd_atomic;
	/* under sq_lock too: either this sees the queue drained or the
	 * completion that drains it sees SQD (qp_sq_complete_rc), not both */
	pthread_mutex_lock(&qp->sq_lock);
	__atomic_store_n(&pub->state, next, __ATOMIC_RELEASE);
	drained = qp->sq_tail == qp->sq_head;
	pthread_mutex_unlock(&qp->sq_lock);
	pthread_mutex_unlock(&qp->lock);
	if (next == IWARP_QPS_SQD && cur != IWARP_QPS_SQD) {
		engine_qp_state_change(qp, IWARP_QPS_SQD);
		if (drained) {
			memset(&ev, 0, sizeof(ev));
			ev.element.qp = pub;
			ev.event_type = IWARP_EVENT_SQ_DRAINED;
			ctx_async_push(pub->context, &ev);
		}
	} else if (next == IWARP_QPS_RTS && cur == IWARP_QPS_SQD) {
		engine_qp_kick(qp, false); /* resume the send queue */
	}
	return 0;
}

IWARP_EXPORT int iwarp_query_qp(struct iwarp_qp *pub,
				struct iwarp_qp_attr *attr, int attr_mask,
				struct iwarp_qp_init_attr *init_attr)
{
	struct iw_qp *qp;

	if (!pub || !attr || !init_attr || (attr_mask & ~QP_MASK_ALL))
		return -EINVAL;
	qp = qp_from_pub(pub);
	memset(attr, 0, sizeof(*attr));
	memset(init_attr, 0, sizeof(*init_attr));
	pthread_mutex_lock(&qp->lock);
	attr->qp_state = pub->state;
	attr->cur_qp_state = pub->state;
	attr->qp_access_flags = qp->access_flags;
	attr->cap = qp->cap;
	attr->max_rd_atomic = qp->ord;
	attr->max_dest_rd_atomic = qp->ird;
	attr->sq_draining =
		pub->state == IWARP_QPS_SQD &&
		__atomic_load_n(&qp->sq_tail, __ATOMIC_ACQUIRE) != qp->sq_head;
	pthread_mutex_unlock(&qp->lock);
	init_attr->qp_context = pub->qp_context;
	init_attr->send_cq = pub->send_cq;
	init_attr->recv_cq = pub->recv_cq;
	init_attr->srq = pub->srq;
	init_attr->cap = qp->cap;
	init_attr->qp_type = pub->qp_type;
	init_attr->sq_sig_all = qp->sq_sig_all;
	return 0;
}
