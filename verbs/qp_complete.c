/*
 * verbs/qp_complete.c: the engine-facing QP paths: receive WQE pop, send
 * completion, and the move to ERR with flushing (ibverbs semantics: every
 * outstanding WR completes with IWARP_WC_WR_FLUSH_ERR, in posting order).
 *
 * Lock order: qp->lock, then qp->sq_lock or qp->rq_lock, then a CQ's
 * spinlock; channel and context locks are only taken after the CQ lock is
 * released (in cq_push).
 *
 * CQ overflow (ibverbs semantics): a completion that does not fit is lost,
 * the CQ raises IWARP_EVENT_CQ_ERR once (cq.c) and every QP that tried to
 * complete into it must go to ERR. The paths here report the loss to their
 * caller (-ENOSPC); the engine then calls qp_fail_cq_overflow().
 */
#include "config.h"

#include <errno.h>
#include <string.h>

#include "verbs/qp_overflow.h"
#include "verbs/verbs.h"

int qp_rq_pop(struct iw_qp *qp, struct iw_rqe *out)
{
	if (qp->pub.srq)
		return srq_pop(srq_from_pub(qp->pub.srq), out);
	/* rq_lock, not qp->lock: posting goes on meanwhile (verbs.h) */
	pthread_mutex_lock(&qp->rq_lock);
	if (qp->rq_tail == __atomic_load_n(&qp->rq_head, __ATOMIC_ACQUIRE)) {
		pthread_mutex_unlock(&qp->rq_lock);
		return -ENOENT;
	}
	*out = *qp_rq_rqe(qp, qp->rq_tail);
	/* the slot is the poster's again once the entry is copied out */
	__atomic_store_n(&qp->rq_tail, qp->rq_tail + 1, __ATOMIC_RELEASE);
	pthread_mutex_unlock(&qp->rq_lock);
	return 0;
}

static void qp_event(struct iw_qp *qp, enum iwarp_event_type type,
		     const struct iwarp_term_cause *term)
{
	struct iwarp_async_event ev;

	memset(&ev, 0, sizeof(ev));
	ev.element.qp = &qp->pub;
	ev.event_type = type;
	if (term) {
		ev.term = *term;
		ev.term_received = qp->term_received;
	}
	ctx_async_push(qp->pub.context, &ev);
}

int qp_sq_complete_rc(struct iw_qp *qp, uint32_t upto,
		      enum iwarp_wc_status status)
{
	struct iwarp_wc wc;
	struct iw_wqe *w;
	bool drained, completed, signaled;
	uint32_t head;
	int32_t n;
	int rc = 0;

	/* sq_lock, not qp->lock: posting goes on meanwhile (verbs.h) */
	pthread_mutex_lock(&qp->sq_lock);
	head = __atomic_load_n(&qp->sq_head, __ATOMIC_ACQUIRE);
	if ((int32_t)(upto - head) > 0)
		upto = head;
	n = (int32_t)(upto - qp->sq_tail);
	completed = n > 0;
	for (; n > 0; n--) {
		w = qp_sq_wqe(qp, qp->sq_tail);
		signaled = status != IWARP_WC_SUCCESS ||
			   (w->send_flags & IWARP_SEND_SIGNALED);
		if (signaled) {
			memset(&wc, 0, sizeof(wc));
			wc.wr_id = w->wr_id;
			wc.status = status;
			wc.opcode = qp_wc_opcode(w->opcode);
			wc.byte_len = w->total_len;
			wc.qp_num = qp->pub.qp_num;
		}
		/* the slot is free before its CQE can be polled; a poster
		 * may reuse it from here on */
		__atomic_store_n(&qp->sq_tail, qp->sq_tail + 1,
				 __ATOMIC_RELEASE);
		if (signaled && cq_push(cq_from_pub(qp->pub.send_cq), &wc,
					status != IWARP_WC_SUCCESS) == -ENOSPC)
			rc = -ENOSPC;
	}
	if ((int32_t)(qp->sq_next - qp->sq_tail) < 0)
		__atomic_store_n(&qp->sq_next, qp->sq_tail, __ATOMIC_RELEASE);
	drained = completed &&
		  __atomic_load_n(&qp->pub.state, __ATOMIC_ACQUIRE) ==
			  IWARP_QPS_SQD &&
		  qp->sq_tail == head;
	pthread_mutex_unlock(&qp->sq_lock);
	if (drained)
		qp_event(qp, IWARP_EVENT_SQ_DRAINED, NULL);
	return rc;
}

int qp_sq_complete(struct iw_qp *qp, uint32_t upto, enum iwarp_wc_status status)
{
	return qp_sq_complete_rc(qp, upto, status);
}

/* The async event for a QP that failed with TERMINATE cause |t|. */
static enum iwarp_event_type qp_error_event(const struct iwarp_term_cause *t)
{
	if (!t)
		return IWARP_EVENT_QP_FATAL;
	if (t->layer == IWARP_TERM_LAYER_RDMAP &&
	    t->etype == IWARP_RDMAP_ETYPE_REMOTE_PROTECTION)
		return IWARP_EVENT_QP_ACCESS_ERR;
	if (t->layer == IWARP_TERM_LAYER_DDP &&
	    t->etype == IWARP_DDP_ETYPE_TAGGED_BUFFER)
		return IWARP_EVENT_QP_ACCESS_ERR;
	if ((t->layer == IWARP_TERM_LAYER_RDMAP &&
	     t->etype == IWARP_RDMAP_ETYPE_REMOTE_OPERATION) ||
	    (t->layer == IWARP_TERM_LAYER_DDP &&
	     t->etype == IWARP_DDP_ETYPE_UNTAGGED_BUFFER))
		return IWARP_EVENT_QP_REQ_ERR;
	return IWARP_EVENT_QP_FATAL;
}

int qp_set_error_rc(struct iw_qp *qp, const struct iwarp_term_cause *term,
		    bool async)
{
	struct iwarp_wc wc;
	struct iw_wqe *w;
	bool was_err;
	int rc = 0;

	pthread_mutex_lock(&qp->lock);
	was_err = qp->pub.state == IWARP_QPS_ERR;
	__atomic_store_n(&qp->pub.state, IWARP_QPS_ERR, __ATOMIC_RELEASE);
	if (term && !qp->term_valid) {
		qp->term = *term;
		qp->term_valid = true;
	}
	memset(&wc, 0, sizeof(wc));
	wc.status = IWARP_WC_WR_FLUSH_ERR;
	wc.qp_num = qp->pub.qp_num;
	pthread_mutex_lock(&qp->sq_lock);
	for (; qp->sq_tail != qp->sq_head; __atomic_store_n(
		     &qp->sq_tail, qp->sq_tail + 1, __ATOMIC_RELEASE)) {
		w = qp_sq_wqe(qp, qp->sq_tail);
		wc.wr_id = w->wr_id;
		wc.opcode = qp_wc_opcode(w->opcode);
		if (cq_push(cq_from_pub(qp->pub.send_cq), &wc, true) == -ENOSPC)
			rc = -ENOSPC;
	}
	__atomic_store_n(&qp->sq_next, qp->sq_tail, __ATOMIC_RELEASE);
	pthread_mutex_unlock(&qp->sq_lock);
	wc.opcode = IWARP_WC_RECV;
	pthread_mutex_lock(&qp->rq_lock);
	for (; !qp->pub.srq && qp->rq_tail != qp->rq_head; __atomic_store_n(
		     &qp->rq_tail, qp->rq_tail + 1, __ATOMIC_RELEASE)) {
		wc.wr_id = qp_rq_rqe(qp, qp->rq_tail)->wr_id;
		if (cq_push(cq_from_pub(qp->pub.recv_cq), &wc, true) == -ENOSPC)
			rc = -ENOSPC;
	}
	pthread_mutex_unlock(&qp->rq_lock);
	pthread_mutex_unlock(&qp->lock);
	if (!async || was_err)
		return rc;
	qp_event(qp, qp_error_event(qp->term_valid ? &qp->term : NULL),
		 qp->term_valid ? &qp->term : NULL);
	if (qp->pub.srq)
		qp_event(qp, IWARP_EVENT_QP_LAST_WQE_REACHED, NULL);
	return rc;
}

void qp_set_error(struct iw_qp *qp, const struct iwarp_term_cause *term,
		  bool async)
{
	(void)qp_set_error_rc(qp, term, async);
}

int qp_cq_overflowed(struct iw_qp *qp)
{
	if (cq_overflowed(cq_from_pub(qp->pub.send_cq)) ||
	    cq_overflowed(cq_from_pub(qp->pub.recv_cq)))
		return -ENOSPC;
	return 0;
}

void qp_fail_cq_overflow(struct iw_qp *qp)
{
	enum iwarp_qp_state st;

	pthread_mutex_lock(&qp->lock);
	st = qp->pub.state;
	pthread_mutex_unlock(&qp->lock);
	if (st == IWARP_QPS_ERR || st == IWARP_QPS_RESET)
		return; /* already failed, or nothing to complete */
	/* the application's path to ERR (iwarp_modify_qp): the engine stops
	 * the connection (in place on the engine thread), then the queues
	 * are flushed; their completions are lost in the overflowed CQ too */
	engine_qp_state_change(qp, IWARP_QPS_ERR);
	(void)qp_set_error_rc(qp, NULL, true);
}
