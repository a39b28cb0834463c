/*
 * verbs/qp_post.c: iwarp_post_send and iwarp_post_recv.
 *
 * States: post_send is accepted in RTS and SQD (queued; SQD does not
 * transmit), post_recv from INIT on (rping pre-posts before accept). In
 * ERR both validate the WR and complete it at once with
 * IWARP_WC_WR_FLUSH_ERR (as ibverbs providers do, which ib_drain_qp-style
 * code relies on); other states give -EINVAL. When that CQ overflowed the
 * completion cannot be queued: -ENOSPC, the WR is not posted.
 * SGE lkeys are not checked here but when the WR is processed (a bad one
 * completes with IWARP_WC_LOC_PROT_ERR), as in ibverbs.
 * A Read on a connected QP whose negotiated ORD is 0 is refused at post
 * time (-EINVAL): RFC 6581 §5 leaves such a connection no outbound Read
 * Request, and the engine would otherwise fail the whole QP for it.
 * RFC 7306 WRs (*_WITH_IMM, atomics) on a connected QP that did not
 * negotiate the extensions are refused at post time (-EOPNOTSUPP): the
 * peer would answer them with a TERMINATE. An atomic names one local SGE
 * of at least 8 octets (the original value lands in its first 8); an
 * unaligned remote_addr is refused by the responder (TERMINATE, error
 * completion), not here; a Send with Immediate carries no payload
 * (RFC 7306 Immediate Data is the 8-octet message alone).
 */
#include "config.h"

#include <errno.h>
#include <string.h>

#include "verbs/verbs.h"

#define SEND_FLAGS_ALL                                                         \
	(IWARP_SEND_FENCE | IWARP_SEND_SIGNALED | IWARP_SEND_SOLICITED |       \
	 IWARP_SEND_INLINE)

enum iwarp_wc_opcode qp_wc_opcode(enum iwarp_wr_opcode op)
{
	switch (op) {
	case IWARP_WR_RDMA_WRITE:
		return IWARP_WC_RDMA_WRITE;
	case IWARP_WR_RDMA_READ:
		return IWARP_WC_RDMA_READ;
	case IWARP_WR_RDMA_WRITE_WITH_IMM:
		return IWARP_WC_RDMA_WRITE;
	case IWARP_WR_ATOMIC_CMP_AND_SWP:
		return IWARP_WC_COMP_SWAP;
	case IWARP_WR_ATOMIC_FETCH_AND_ADD:
		return IWARP_WC_FETCH_ADD;
	case IWARP_WR_MASKED_ATOMIC_CMP_AND_SWP:
		return IWARP_WC_MASKED_COMP_SWAP;
	case IWARP_WR_MASKED_ATOMIC_FETCH_AND_ADD:
		return IWARP_WC_MASKED_FETCH_ADD;
	case IWARP_WR_SEND:
	case IWARP_WR_SEND_WITH_INV:
	case IWARP_WR_SEND_WITH_IMM:
		break;
	case IWARP_WR_BIND_MW:
		return IWARP_WC_BIND_MW;
	case IWARP_WR_LOCAL_INV:
		return IWARP_WC_LOCAL_INV;
	}
	return IWARP_WC_SEND;
}

/* Checks send WR |wr| against |qp|'s caps; *total = its payload length. */
static int send_wr_check(const struct iw_qp *qp, const struct iwarp_send_wr *wr,
			 uint64_t *total, enum iwarp_mw_type bind_type)
{
	uint64_t sum = 0;
	int i;

	switch (wr->opcode) {
	case IWARP_WR_RDMA_WRITE:
	case IWARP_WR_SEND:
	case IWARP_WR_SEND_WITH_INV:
	case IWARP_WR_RDMA_READ:
	case IWARP_WR_RDMA_WRITE_WITH_IMM:
	case IWARP_WR_SEND_WITH_IMM:
	case IWARP_WR_ATOMIC_CMP_AND_SWP:
	case IWARP_WR_ATOMIC_FETCH_AND_ADD:
	case IWARP_WR_MASKED_ATOMIC_CMP_AND_SWP:
	case IWARP_WR_MASKED_ATOMIC_FETCH_AND_ADD:
		break;
	case IWARP_WR_BIND_MW:
	case IWARP_WR_LOCAL_INV:
		/* memory operations (verbs/mw.c): no payload */
		if (wr->send_flags &
		    ~(unsigned int)(IWARP_SEND_SIGNALED | IWARP_SEND_FENCE))
			return -EINVAL;
		if (wr->opcode == IWARP_WR_BIND_MW) {
			int rc = mw_bind_wr_check(qp, &wr->bind_mw.bind_info,
						  wr->bind_mw.mw,
						  wr->bind_mw.rkey, bind_type);
			if (rc)
				return rc;
		}
		break;
	default:
		return -EINVAL;
	}
	if (wr->send_flags & ~(unsigned int)SEND_FLAGS_ALL)
		return -EINVAL;
	if (wr->num_sge < 0 || (uint32_t)wr->num_sge > qp->cap.max_send_sge ||
	    (wr->num_sge && !wr->sg_list))
		return -EINVAL;
	/* RFC 5040 §4.4: a Read Request names one sink buffer (max_sge_rd 1) */
	if (wr->opcode == IWARP_WR_RDMA_READ &&
	    (wr->num_sge != IW_MAX_SGE_RD ||
	     (wr->send_flags & IWARP_SEND_INLINE)))
		return -EINVAL;
	/* RFC 7306: one 8-octet result SGE (the target's alignment is the
	 * responder's check: a TERMINATE, as on hardware) */
	if (rdmap_wr_is_atomic(wr->opcode) &&
	    (wr->num_sge != 1 || wr->sg_list[0].length < 8 ||
	     (wr->send_flags & IWARP_SEND_INLINE)))
		return -EINVAL;
	for (i = 0; i < wr->num_sge; i++)
		sum += wr->sg_list[i].length;
	if (sum > UINT32_MAX)
		return -EINVAL;
	if (wr->opcode == IWARP_WR_SEND_WITH_IMM && sum)
		return -EINVAL;
	if (rdmap_wr_is_atomic(wr->opcode))
		sum = 8;
	if ((wr->send_flags & IWARP_SEND_INLINE) &&
	    sum > qp->cap.max_inline_data)
		return -EINVAL;
	*total = sum;
	return 0;
}

static void send_wqe_fill(struct iw_qp *qp, struct iw_wqe *w,
			  const struct iwarp_send_wr *wr, uint32_t total)
{
	uint32_t off = 0;
	int i;

	w->wr_id = wr->wr_id;
	w->opcode = wr->opcode;
	w->send_flags = wr->send_flags;
	if (qp->sq_sig_all)
		w->send_flags |= IWARP_SEND_SIGNALED;
	w->invalidate_rkey = wr->invalidate_rkey;
	w->imm_data = wr->imm_data;
	if (rdmap_wr_is_atomic(wr->opcode)) {
		w->remote_addr = wr->wr.atomic.remote_addr;
		w->rkey = wr->wr.atomic.rkey;
		w->compare_add = wr->wr.atomic.compare_add;
		w->swap = wr->wr.atomic.swap;
		w->compare_add_mask = wr->wr.atomic.compare_add_mask;
		w->swap_mask = wr->wr.atomic.swap_mask;
	} else {
		w->remote_addr = wr->wr.rdma.remote_addr;
		w->rkey = wr->wr.rdma.rkey;
	}
	w->num_sge = (uint32_t)wr->num_sge;
	w->total_len = total;
	if (wr->opcode == IWARP_WR_BIND_MW ||
	    wr->opcode == IWARP_WR_LOCAL_INV) {
		w->is_inline = false;
		w->num_sge = 0; /* no payload; sg_list is ignored */
		w->total_len = 0;
		mw_bind_wqe_fill(w, wr);
		return;
	}
	/* inline: the payload, copied now (a Read or an atomic asking for
	 * it was refused above: their scatter list names where data goes) */
	w->is_inline = (wr->send_flags & IWARP_SEND_INLINE) != 0;
	if (!w->is_inline) {
		for (i = 0; i < wr->num_sge && (uint32_t)i < RDMAP_MAX_SGE; i++)
			w->sge[i] = wr->sg_list[i];
		return;
	}
	for (i = 0; i < wr->num_sge; i++) {
		if (!wr->sg_list[i].length)
			continue;
		memcpy(w->inline_data + off,
		       (const void *)(uintptr_t)wr->sg_list[i].addr,
		       wr->sg_list[i].length);
		off += wr->sg_list[i].length;
	}
}

/*
 * True when |qp| may not start a Read now: it is connected (the engine set
 * qp->ord from the MPA negotiation) and its ORD is 0 (RFC 6581 §5: no
 * outbound Read Request may be outstanding). qp->lock held.
 */
static bool qp_read_refused(const struct iw_qp *qp)
{
	return qp->conn && qp->ord == 0;
}

/* Completes a WR posted in ERR at once with FLUSH_ERR. Returns 0, or
 * -ENOSPC when |cq| overflowed (the completion could not be queued, so
 * the WR is not posted: the caller fails with it as *bad_wr). */
static int flush_now(struct iwarp_cq *cq, uint64_t wr_id,
		     enum iwarp_wc_opcode op, uint32_t qp_num)
{
	struct iwarp_wc wc;

	memset(&wc, 0, sizeof(wc));
	wc.wr_id = wr_id;
	wc.status = IWARP_WC_WR_FLUSH_ERR;
	wc.opcode = op;
	wc.qp_num = qp_num;
	return cq_push(cq_from_pub(cq), &wc, true);
}

IWARP_EXPORT int iwarp_post_send(struct iwarp_qp *pub, struct iwarp_send_wr *wr,
				 struct iwarp_send_wr **bad_wr)
{
	/* a bind WR posted by the consumer binds a type 2 window */
	return qp_post_send(pub, wr, bad_wr, IWARP_MW_TYPE_2);
}

int qp_post_send(struct iwarp_qp *pub, struct iwarp_send_wr *wr,
		 struct iwarp_send_wr **bad_wr, enum iwarp_mw_type bind_type)
{
	struct iw_qp *qp;
	uint64_t total;
	bool flush, posted = false, reads_only = true;
	int err = 0;

	if (!pub || !wr || !bad_wr)
		return -EINVAL;
	qp = qp_from_pub(pub);
	pthread_mutex_lock(&qp->lock);
	flush = pub->state == IWARP_QPS_ERR;
	if (!flush && pub->state != IWARP_QPS_RTS &&
	    pub->state != IWARP_QPS_SQD)
		err = -EINVAL;
	for (; wr && !err; wr = wr->next) {
		err = send_wr_check(qp, wr, &total, bind_type);
		if (err)
			break;
		if (!flush && wr->opcode == IWARP_WR_RDMA_READ &&
		    qp_read_refused(qp)) {
			err = -EINVAL;
			break;
		}
		/* RFC 7306 needs both sides to have asked (iwarp(7)); atomics
		 * take an ORD credit like a Read */
		if (!flush && rdmap_wr_is_ext(wr->opcode) &&
		    (!qp->rdmap_ext ||
		     (rdmap_wr_is_atomic(wr->opcode) && qp_read_refused(qp)))) {
			err = qp->rdmap_ext ? -EINVAL : -EOPNOTSUPP;
			break;
		}
		if (flush) {
			err = flush_now(pub->send_cq, wr->wr_id,
					qp_wc_opcode(wr->opcode), pub->qp_num);
			if (err)
				break;
			continue;
		}
		if (qp->sq_head -
			    __atomic_load_n(&qp->sq_tail, __ATOMIC_ACQUIRE) >=
		    qp->cap.max_send_wr) {
			err = -ENOMEM;
			break;
		}
		send_wqe_fill(qp, qp_sq_wqe(qp, qp->sq_head), wr,
			      (uint32_t)total);
		__atomic_store_n(&qp->sq_head, qp->sq_head + 1,
				 __ATOMIC_RELEASE);
		posted = true;
		reads_only = reads_only && (wr->opcode == IWARP_WR_RDMA_READ ||
					    rdmap_wr_is_atomic(wr->opcode));
	}
	pthread_mutex_unlock(&qp->lock);
	if (posted)
		engine_qp_kick(qp, reads_only);
	if (err)
		*bad_wr = wr;
	return err;
}

IWARP_EXPORT int iwarp_post_recv(struct iwarp_qp *pub, struct iwarp_recv_wr *wr,
				 struct iwarp_recv_wr **bad_wr)
{
	struct iw_rqe tmp;
	struct iw_qp *qp;
	bool flush, kick;
	int err = 0;

	if (!pub || !wr || !bad_wr)
		return -EINVAL;
	qp = qp_from_pub(pub);
	pthread_mutex_lock(&qp->lock);
	flush = pub->state == IWARP_QPS_ERR;
	if (pub->srq || pub->state == IWARP_QPS_RESET)
		err = -EINVAL; /* an SRQ QP has no RQ */
	for (; wr && !err; wr = wr->next) {
		if (flush) {
			err = verbs_rqe_fill(&tmp, wr, qp->cap.max_recv_sge);
			if (err)
				break;
			err = flush_now(pub->recv_cq, wr->wr_id, IWARP_WC_RECV,
					pub->qp_num);
			if (err)
				break;
			continue;
		}
		if (qp->rq_head -
			    __atomic_load_n(&qp->rq_tail, __ATOMIC_ACQUIRE) >=
		    qp->cap.max_recv_wr) {
			err = -ENOMEM;
			break;
		}
		err = verbs_rqe_fill(qp_rq_rqe(qp, qp->rq_head), wr,
				     qp->cap.max_recv_sge);
		if (err)
			break;
		__atomic_store_n(&qp->rq_head, qp->rq_head + 1,
				 __ATOMIC_RELEASE);
	}
	/* a Send waits for this receive (verbs/qp_conn.c ops_rx_wait) */
	kick = qp->rx_wait &&
	       qp->rq_head != __atomic_load_n(&qp->rq_tail, __ATOMIC_ACQUIRE);
	pthread_mutex_unlock(&qp->lock);
	if (kick)
		engine_qp_kick(qp, false);
	if (err)
		*bad_wr = wr;
	return err;
}
