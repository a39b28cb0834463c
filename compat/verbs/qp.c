/*
 * compat/verbs/qp.c: queue pairs and shared receive queues of the compat
 * libibverbs, and the wrapper for QPs the connection manager created
 * (iwc_qp_wrap). QP states, WR opcodes, send flags and the SRQ attribute
 * masks have the ibverbs values natively. An iWARP QP is connected by the
 * connection manager (RFC 5044 §7.1), so the InfiniBand path attributes
 * of ibv_modify_qp (address vector, PSNs, MTU, timeouts...) have no
 * meaning here: they are accepted and ignored, as an iWARP RNIC does.
 */
#include "config.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "compat/verbs/iwc.h"

/* send WRs converted per native post: bounds the stack use */
#define IWC_POST_BATCH 16

/* the modify_qp attributes an iWARP QP has (same bits natively) */
#define IWC_QP_MASK                                                            \
	(IBV_QP_STATE | IBV_QP_CUR_STATE | IBV_QP_ACCESS_FLAGS |               \
	 IBV_QP_MAX_QP_RD_ATOMIC | IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_CAP)

_Static_assert(IBV_QP_STATE == (int)IWARP_QP_STATE &&
		       IBV_QP_CUR_STATE == (int)IWARP_QP_CUR_STATE &&
		       IBV_QP_ACCESS_FLAGS == (int)IWARP_QP_ACCESS_FLAGS &&
		       IBV_QP_MAX_QP_RD_ATOMIC ==
			       (int)IWARP_QP_MAX_QP_RD_ATOMIC &&
		       IBV_QP_MAX_DEST_RD_ATOMIC ==
			       (int)IWARP_QP_MAX_DEST_RD_ATOMIC &&
		       IBV_QP_CAP == (int)IWARP_QP_CAP,
	       "QP attribute masks differ");
_Static_assert(IBV_QPS_RESET == (int)IWARP_QPS_RESET &&
		       IBV_QPS_INIT == (int)IWARP_QPS_INIT &&
		       IBV_QPS_RTR == (int)IWARP_QPS_RTR &&
		       IBV_QPS_RTS == (int)IWARP_QPS_RTS &&
		       IBV_QPS_SQD == (int)IWARP_QPS_SQD &&
		       IBV_QPS_SQE == (int)IWARP_QPS_SQE &&
		       IBV_QPS_ERR == (int)IWARP_QPS_ERR,
	       "QP states differ");
_Static_assert(IBV_WR_RDMA_WRITE == (int)IWARP_WR_RDMA_WRITE &&
		       IBV_WR_RDMA_WRITE_WITH_IMM ==
			       (int)IWARP_WR_RDMA_WRITE_WITH_IMM &&
		       IBV_WR_SEND == (int)IWARP_WR_SEND &&
		       IBV_WR_SEND_WITH_IMM == (int)IWARP_WR_SEND_WITH_IMM &&
		       IBV_WR_RDMA_READ == (int)IWARP_WR_RDMA_READ &&
		       IBV_WR_ATOMIC_CMP_AND_SWP ==
			       (int)IWARP_WR_ATOMIC_CMP_AND_SWP &&
		       IBV_WR_ATOMIC_FETCH_AND_ADD ==
			       (int)IWARP_WR_ATOMIC_FETCH_AND_ADD &&
		       IBV_WR_LOCAL_INV == (int)IWARP_WR_LOCAL_INV &&
		       IBV_WR_BIND_MW == (int)IWARP_WR_BIND_MW &&
		       IBV_WR_SEND_WITH_INV == (int)IWARP_WR_SEND_WITH_INV,
	       "WR opcodes differ");
_Static_assert(IBV_SEND_FENCE == (int)IWARP_SEND_FENCE &&
		       IBV_SEND_SIGNALED == (int)IWARP_SEND_SIGNALED &&
		       IBV_SEND_SOLICITED == (int)IWARP_SEND_SOLICITED &&
		       IBV_SEND_INLINE == (int)IWARP_SEND_INLINE,
	       "send flags differ");
/* An SGE list and a receive WR chain are handed to the native library as
 * they are: the layouts are the same. */
_Static_assert(sizeof(struct ibv_sge) == sizeof(struct iwarp_sge) &&
		       offsetof(struct ibv_sge, addr) ==
			       offsetof(struct iwarp_sge, addr) &&
		       offsetof(struct ibv_sge, length) ==
			       offsetof(struct iwarp_sge, length) &&
		       offsetof(struct ibv_sge, lkey) ==
			       offsetof(struct iwarp_sge, lkey),
	       "SGE layouts differ");
_Static_assert(sizeof(struct ibv_recv_wr) == sizeof(struct iwarp_recv_wr) &&
		       offsetof(struct ibv_recv_wr, wr_id) ==
			       offsetof(struct iwarp_recv_wr, wr_id) &&
		       offsetof(struct ibv_recv_wr, next) ==
			       offsetof(struct iwarp_recv_wr, next) &&
		       offsetof(struct ibv_recv_wr, sg_list) ==
			       offsetof(struct iwarp_recv_wr, sg_list) &&
		       offsetof(struct ibv_recv_wr, num_sge) ==
			       offsetof(struct iwarp_recv_wr, num_sge),
	       "receive WR layouts differ");
_Static_assert(sizeof(struct ibv_srq_attr) == sizeof(struct iwarp_srq_attr) &&
		       IBV_SRQ_MAX_WR == (int)IWARP_SRQ_MAX_WR &&
		       IBV_SRQ_LIMIT == (int)IWARP_SRQ_LIMIT,
	       "SRQ attributes differ");

struct iwc_qp *iwc_qp(struct ibv_qp *qp)
{
	struct iwc_qp *q = (struct iwc_qp *)(void *)qp;

	return q && q->magic == IWC_MAGIC_QP ? q : NULL;
}

struct iwc_srq *iwc_srq(struct ibv_srq *srq)
{
	struct iwc_srq *s = (struct iwc_srq *)(void *)srq;

	return s && s->magic == IWC_MAGIC_SRQ ? s : NULL;
}

IWC_EXPORT struct iwarp_qp *iwc_native_qp(struct ibv_qp *qp)
{
	struct iwc_qp *q = iwc_qp(qp);

	if (!q) {
		errno = EINVAL;
		return NULL;
	}
	return q->native;
}

IWC_EXPORT struct iwarp_srq *iwc_native_srq(struct ibv_srq *srq)
{
	struct iwc_srq *s = iwc_srq(srq);

	if (!s) {
		errno = EINVAL;
		return NULL;
	}
	return s->native;
}

/* ---- shared receive queues ---- */

IWC_EXPORT struct ibv_srq *
ibv_create_srq(struct ibv_pd *pd, struct ibv_srq_init_attr *srq_init_attr)
{
	struct iwc_pd *p = iwc_pd(pd);
	struct iwarp_srq_init_attr na;
	struct iwc_srq *s;
	int err;

	if (!p || !srq_init_attr) {
		errno = EINVAL;
		return NULL;
	}
	s = calloc(1, sizeof(*s));
	if (!s) {
		errno = ENOMEM;
		return NULL;
	}
	na.srq_context = s; /* leads back to the wrapper (async events) */
	na.attr.max_wr = srq_init_attr->attr.max_wr;
	na.attr.max_sge = srq_init_attr->attr.max_sge;
	na.attr.srq_limit = srq_init_attr->attr.srq_limit;
	s->native = iwarp_create_srq(p->native, &na);
	if (!s->native) {
		err = errno;
		free(s);
		errno = err;
		return NULL;
	}
	srq_init_attr->attr.max_wr = na.attr.max_wr;
	srq_init_attr->attr.max_sge = na.attr.max_sge;
	s->magic = IWC_MAGIC_SRQ;
	s->srq.context = pd->context;
	s->srq.srq_context = srq_init_attr->srq_context;
	s->srq.pd = pd;
	s->srq.handle = s->native->handle;
	pthread_mutex_init(&s->srq.mutex, NULL);
	pthread_cond_init(&s->srq.cond, NULL);
	return &s->srq;
}

IWC_EXPORT int ibv_modify_srq(struct ibv_srq *srq,
			      struct ibv_srq_attr *srq_attr, int srq_attr_mask)
{
	struct iwc_srq *s = iwc_srq(srq);

	if (!s || !srq_attr)
		return EINVAL;
	return iwc_errno(iwarp_modify_srq(
		s->native, (struct iwarp_srq_attr *)(void *)srq_attr,
		srq_attr_mask));
}

IWC_EXPORT int ibv_query_srq(struct ibv_srq *srq, struct ibv_srq_attr *srq_attr)
{
	struct iwc_srq *s = iwc_srq(srq);

	if (!s || !srq_attr)
		return EINVAL;
	return iwc_errno(iwarp_query_srq(
		s->native, (struct iwarp_srq_attr *)(void *)srq_attr));
}

IWC_EXPORT int ibv_destroy_srq(struct ibv_srq *srq)
{
	struct iwc_srq *s = iwc_srq(srq);
	int ret;

	if (!s)
		return EINVAL;
	ret = iwarp_destroy_srq(s->native);
	if (ret < 0)
		return iwc_errno(ret);
	s->magic = 0;
	pthread_cond_destroy(&srq->cond);
	pthread_mutex_destroy(&srq->mutex);
	free(s);
	return 0;
}

int iwc_op_post_srq_recv(struct ibv_srq *srq, struct ibv_recv_wr *wr,
			 struct ibv_recv_wr **bad_wr)
{
	struct iwc_srq *s = (struct iwc_srq *)(void *)srq;
	struct iwarp_recv_wr *bad = NULL;
	int ret;

	ret = iwarp_post_srq_recv(s->native, (struct iwarp_recv_wr *)(void *)wr,
				  &bad);
	if (ret < 0 && bad_wr)
		*bad_wr = (struct ibv_recv_wr *)(void *)bad;
	return iwc_errno(ret);
}

/* ---- queue pairs ---- */

static struct iwc_qp *qp_fill(struct iwc_qp *q, struct ibv_pd *pd,
			      const struct ibv_qp_init_attr *a)
{
	q->magic = IWC_MAGIC_QP;
	q->qp.context = pd->context;
	q->qp.qp_context = a->qp_context;
	q->qp.pd = pd;
	q->qp.send_cq = a->send_cq;
	q->qp.recv_cq = a->recv_cq;
	q->qp.srq = a->srq;
	q->qp.handle = q->native->handle;
	q->qp.qp_num = q->native->qp_num;
	q->qp.state = (enum ibv_qp_state)q->native->state;
	q->qp.qp_type = IBV_QPT_RC;
	q->cap = a->cap;
	q->sq_sig_all = a->sq_sig_all;
	pthread_mutex_init(&q->qp.mutex, NULL);
	pthread_cond_init(&q->qp.cond, NULL);
	/* the native qp_context leads back to the wrapper (async events) */
	q->native->qp_context = q;
	return q;
}

IWC_EXPORT struct ibv_qp *ibv_create_qp(struct ibv_pd *pd,
					struct ibv_qp_init_attr *qp_init_attr)
{
	struct iwc_pd *p = iwc_pd(pd);
	struct iwarp_qp_init_attr na;
	struct iwc_cq *scq, *rcq;
	struct iwc_srq *srq = NULL;
	struct iwc_qp *q;
	int err;

	if (!p || !qp_init_attr) {
		errno = EINVAL;
		return NULL;
	}
	if (qp_init_attr->qp_type != IBV_QPT_RC) {
		errno = EOPNOTSUPP; /* iWARP has reliable connected QPs only */
		return NULL;
	}
	scq = iwc_cq(qp_init_attr->send_cq);
	rcq = iwc_cq(qp_init_attr->recv_cq);
	if (!scq || !rcq ||
	    (qp_init_attr->srq && !(srq = iwc_srq(qp_init_attr->srq)))) {
		errno = EINVAL;
		return NULL;
	}
	q = calloc(1, sizeof(*q));
	if (!q) {
		errno = ENOMEM;
		return NULL;
	}
	memset(&na, 0, sizeof(na));
	na.qp_context = q;
	na.send_cq = scq->native;
	na.recv_cq = rcq->native;
	na.srq = srq ? srq->native : NULL;
	na.cap.max_send_wr = qp_init_attr->cap.max_send_wr;
	na.cap.max_recv_wr = qp_init_attr->cap.max_recv_wr;
	na.cap.max_send_sge = qp_init_attr->cap.max_send_sge;
	na.cap.max_recv_sge = qp_init_attr->cap.max_recv_sge;
	na.cap.max_inline_data = qp_init_attr->cap.max_inline_data;
	na.qp_type = IWARP_QPT_RC;
	na.sq_sig_all = qp_init_attr->sq_sig_all;
	q->native = iwarp_create_qp(p->native, &na);
	if (!q->native) {
		err = errno;
		free(q);
		errno = err;
		return NULL;
	}
	/* ibv_create_qp(3): cap returns what was granted */
	qp_init_attr->cap.max_send_wr = na.cap.max_send_wr;
	qp_init_attr->cap.max_recv_wr = na.cap.max_recv_wr;
	qp_init_attr->cap.max_send_sge = na.cap.max_send_sge;
	qp_init_attr->cap.max_recv_sge = na.cap.max_recv_sge;
	qp_init_attr->cap.max_inline_data = na.cap.max_inline_data;
	return &qp_fill(q, pd, qp_init_attr)->qp;
}

IWC_EXPORT struct ibv_qp *iwc_qp_wrap(struct ibv_pd *pd, struct iwarp_qp *iqp,
				      const struct ibv_qp_init_attr *attr,
				      int (*destroy)(void *arg), void *arg)
{
	struct iwc_pd *p = iwc_pd(pd);
	struct iwc_qp *q;

	if (!p || !iqp || !attr || !destroy || iqp->pd != p->native) {
		errno = EINVAL;
		return NULL;
	}
	q = calloc(1, sizeof(*q));
	if (!q) {
		errno = ENOMEM;
		return NULL;
	}
	q->native = iqp;
	q->destroy = destroy;
	q->arg = arg;
	return &qp_fill(q, pd, attr)->qp;
}

IWC_EXPORT int ibv_modify_qp(struct ibv_qp *qp, struct ibv_qp_attr *attr,
			     int attr_mask)
{
	struct iwc_qp *q = iwc_qp(qp);
	struct iwarp_qp_attr na;
	int ret;

	if (!q || !attr)
		return EINVAL;
	memset(&na, 0, sizeof(na));
	na.qp_state = (enum iwarp_qp_state)attr->qp_state;
	na.cur_qp_state = (enum iwarp_qp_state)attr->cur_qp_state;
	na.qp_access_flags = (int)attr->qp_access_flags;
	na.cap.max_send_wr = attr->cap.max_send_wr;
	na.cap.max_recv_wr = attr->cap.max_recv_wr;
	na.cap.max_send_sge = attr->cap.max_send_sge;
	na.cap.max_recv_sge = attr->cap.max_recv_sge;
	na.cap.max_inline_data = attr->cap.max_inline_data;
	na.max_rd_atomic = attr->max_rd_atomic;
	na.max_dest_rd_atomic = attr->max_dest_rd_atomic;
	if (!(attr_mask & IWC_QP_MASK))
		return 0; /* only InfiniBand path attributes */
	ret = iwarp_modify_qp(q->native, &na, attr_mask & IWC_QP_MASK);
	qp->state = (enum ibv_qp_state)q->native->state;
	return iwc_errno(ret);
}

IWC_EXPORT int ibv_query_qp(struct ibv_qp *qp, struct ibv_qp_attr *attr,
			    int attr_mask, struct ibv_qp_init_attr *init_attr)
{
	struct iwc_qp *q = iwc_qp(qp);
	struct iwarp_qp_init_attr ni;
	struct iwarp_qp_attr na;
	int ret;

	if (!q || !attr || !init_attr)
		return EINVAL;
	ret = iwarp_query_qp(q->native, &na, attr_mask & IWC_QP_MASK, &ni);
	if (ret < 0)
		return iwc_errno(ret);
	memset(attr, 0, sizeof(*attr));
	attr->qp_state = (enum ibv_qp_state)na.qp_state;
	attr->cur_qp_state = (enum ibv_qp_state)na.cur_qp_state;
	attr->qp_access_flags = (unsigned int)na.qp_access_flags;
	attr->cap.max_send_wr = na.cap.max_send_wr;
	attr->cap.max_recv_wr = na.cap.max_recv_wr;
	attr->cap.max_send_sge = na.cap.max_send_sge;
	attr->cap.max_recv_sge = na.cap.max_recv_sge;
	attr->cap.max_inline_data = na.cap.max_inline_data;
	attr->max_rd_atomic = na.max_rd_atomic;
	attr->max_dest_rd_atomic = na.max_dest_rd_atomic;
	attr->sq_draining = na.sq_draining;
	attr->port_num = 1;
	attr->path_mtu = IBV_MTU_1024;
	memset(init_attr, 0, sizeof(*init_attr));
	init_attr->qp_context = qp->qp_context;
	init_attr->send_cq = qp->send_cq;
	init_attr->recv_cq = qp->recv_cq;
	init_attr->srq = qp->srq;
	init_attr->cap = attr->cap;
	init_attr->qp_type = IBV_QPT_RC;
	init_attr->sq_sig_all = q->sq_sig_all;
	qp->state = attr->qp_state;
	return 0;
}

IWC_EXPORT int ibv_destroy_qp(struct ibv_qp *qp)
{
	struct iwc_qp *q = iwc_qp(qp);
	int ret;

	if (!q)
		return EINVAL;
	ret = q->destroy ? q->destroy(q->arg) : iwarp_destroy_qp(q->native);
	if (ret < 0)
		return iwc_errno(ret);
	if (ret > 0)
		return ret; /* a positive errno from the destroy callback */
	q->magic = 0;
	pthread_cond_destroy(&qp->cond);
	pthread_mutex_destroy(&qp->mutex);
	free(q);
	return 0;
}

/* One ibverbs send WR to the native form; EINVAL for what iWARP has not. */
static int send_wr_convert(const struct ibv_send_wr *s, struct iwarp_send_wr *d)
{
	memset(d, 0, sizeof(*d));
	d->wr_id = s->wr_id;
	d->sg_list = (struct iwarp_sge *)(void *)s->sg_list;
	d->num_sge = s->num_sge;
	d->send_flags = s->send_flags & (IBV_SEND_FENCE | IBV_SEND_SIGNALED |
					 IBV_SEND_SOLICITED | IBV_SEND_INLINE);
	switch ((int)s->opcode) {
	case IBV_WR_RDMA_WRITE:
	case IBV_WR_RDMA_WRITE_WITH_IMM:
	case IBV_WR_RDMA_READ:
		d->wr.rdma.remote_addr = s->wr.rdma.remote_addr;
		d->wr.rdma.rkey = s->wr.rdma.rkey;
		d->imm_data = s->imm_data;
		break;
	case IBV_WR_SEND:
	case IBV_WR_SEND_WITH_IMM:
		d->imm_data = s->imm_data;
		break;
	case IBV_WR_SEND_WITH_INV:
	case IBV_WR_LOCAL_INV:
		d->invalidate_rkey = s->invalidate_rkey;
		break;
	case IBV_WR_ATOMIC_CMP_AND_SWP:
	case IBV_WR_ATOMIC_FETCH_AND_ADD:
		d->wr.atomic.remote_addr = s->wr.atomic.remote_addr;
		d->wr.atomic.compare_add = s->wr.atomic.compare_add;
		d->wr.atomic.swap = s->wr.atomic.swap;
		d->wr.atomic.rkey = s->wr.atomic.rkey;
		break;
	case IBV_WR_BIND_MW: {
		struct iwc_mw *w = iwc_mw(s->bind_mw.mw);
		struct iwc_mr *m = NULL;

		if (!w || (s->bind_mw.bind_info.mr &&
			   !(m = iwc_mr(s->bind_mw.bind_info.mr))))
			return EINVAL;
		d->bind_mw.mw = w->native;
		d->bind_mw.rkey = s->bind_mw.rkey;
		d->bind_mw.bind_info.mr = m ? m->native : NULL;
		d->bind_mw.bind_info.addr = s->bind_mw.bind_info.addr;
		d->bind_mw.bind_info.length = s->bind_mw.bind_info.length;
		d->bind_mw.bind_info.mw_access_flags =
			s->bind_mw.bind_info.mw_access_flags;
		break;
	}
	default:
		return EINVAL; /* TSO, driver and atomic write opcodes */
	}
	d->opcode = (enum iwarp_wr_opcode)s->opcode;
	return 0;
}

/* Posts |n| converted WRs (chained here); on failure *bad_wr is the
 * ibverbs WR of the first one not posted. */
static int post_batch(struct iwc_qp *q, struct iwarp_send_wr *nwr,
		      struct ibv_send_wr **src, int n,
		      struct ibv_send_wr **bad_wr)
{
	struct iwarp_send_wr *bad = NULL;
	int ret;

	for (int i = 0; i + 1 < n; i++)
		nwr[i].next = &nwr[i + 1];
	nwr[n - 1].next = NULL;
	ret = iwarp_post_send(q->native, nwr, &bad);
	if (ret < 0 && bad_wr)
		*bad_wr = bad && bad >= nwr && bad < nwr + n ? src[bad - nwr]
							     : src[0];
	return iwc_errno(ret);
}

int iwc_op_post_send(struct ibv_qp *qp, struct ibv_send_wr *wr,
		     struct ibv_send_wr **bad_wr)
{
	struct iwc_qp *q = (struct iwc_qp *)(void *)qp;
	struct iwarp_send_wr nwr[IWC_POST_BATCH];
	struct ibv_send_wr *src[IWC_POST_BATCH];
	int n = 0, ret;

	for (; wr; wr = wr->next) {
		ret = send_wr_convert(wr, &nwr[n]);
		if (ret) {
			/* post what precedes it, then report it */
			if (n &&
			    (ret = post_batch(q, nwr, src, n, bad_wr)) != 0)
				return ret;
			if (bad_wr)
				*bad_wr = wr;
			return EINVAL;
		}
		src[n++] = wr;
		if (n == IWC_POST_BATCH) {
			ret = post_batch(q, nwr, src, n, bad_wr);
			if (ret)
				return ret;
			n = 0;
		}
	}
	return n ? post_batch(q, nwr, src, n, bad_wr) : 0;
}

int iwc_op_post_recv(struct ibv_qp *qp, struct ibv_recv_wr *wr,
		     struct ibv_recv_wr **bad_wr)
{
	struct iwc_qp *q = (struct iwc_qp *)(void *)qp;
	struct iwarp_recv_wr *bad = NULL;
	int ret;

	ret = iwarp_post_recv(q->native, (struct iwarp_recv_wr *)(void *)wr,
			      &bad);
	if (ret < 0 && bad_wr)
		*bad_wr = (struct ibv_recv_wr *)(void *)bad;
	return iwc_errno(ret);
}
