/*
 * compat/rdmacm/qp.c: rdma_create_qp(3), rdma_create_qp_ex(3),
 * rdma_destroy_qp(3), rdma_init_qp_attr(3), and SRQs of an id.
 *
 * The QP is made by the native CM (iwarp_cm_create_qp, which connects it
 * when the id connects) and handed to the application wrapped as an ibv_qp
 * of the compat libibverbs (iwc_qp_wrap), so ibv_post_send() and friends
 * work on it. A link shared by the id and the wrapper decides how the
 * native QP goes away: through the id while the id lives, by itself after.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "compat/rdmacm/cma.h"

struct cma_qp_link {
	struct cma_id *cid; /* NULL once the id is destroyed */
	struct iwarp_qp *nqp;
	/* CQs and channels rdma_create_qp made, handed over by an id
	 * destroyed before its QP: they go with the QP */
	struct ibv_cq *own_cq[2];
	struct ibv_comp_channel *own_chan[2];
};

static void cma_free_cq_chan(struct ibv_cq **cq, struct ibv_comp_channel **ch)
{
	if (*cq)
		ibv_destroy_cq(*cq);
	if (*ch)
		ibv_destroy_comp_channel(*ch);
	*cq = NULL;
	*ch = NULL;
}

static pthread_mutex_t cma_link_lock = PTHREAD_MUTEX_INITIALIZER;

/* iwc_qp_wrap's destroy hook: ibv_destroy_qp() on the wrapper. */
static int cma_qp_destroy(void *arg)
{
	struct cma_qp_link *link = arg;
	int ret = 0;

	pthread_mutex_lock(&cma_link_lock);
	if (link->cid) {
		/* A connected QP destroyed without rdma_disconnect()
		 * (perftest's parameter-exchange QP) ends with an orderly TCP
		 * close, FIN after what is queued, as the kernel's iWARP
		 * providers close the socket of a destroyed QP; not with a
		 * reset, which can reach the peer before it has processed our
		 * last messages. Not connected (or already disconnected):
		 * nothing to do. */
		(void)iwarp_cm_disconnect(link->cid->nid);
		iwarp_cm_destroy_qp(link->cid->nid);
		link->cid->link = NULL;
		link->cid->id.qp = NULL;
	} else {
		ret = iwarp_destroy_qp(link->nqp);
	}
	pthread_mutex_unlock(&cma_link_lock);
	if (ret < 0)
		return cma_errno(ret); /* ibverbs convention: positive errno */
	cma_free_cq_chan(&link->own_cq[0], &link->own_chan[0]);
	cma_free_cq_chan(&link->own_cq[1], &link->own_chan[1]);
	free(link);
	return 0;
}

static void cma_free_own_cqs(struct cma_id *cid);

/* The id goes away: CQs rdma_create_qp made for it go now when its QP is
 * gone, else with the QP (the QP still uses them). */
void cma_qp_unlink(struct cma_id *cid)
{
	struct cma_qp_link *link;

	pthread_mutex_lock(&cma_link_lock);
	link = cid->link;
	if (link) {
		link->cid = NULL;
		if (cid->own_send_cq) {
			link->own_cq[0] = cid->id.send_cq;
			link->own_chan[0] = cid->id.send_cq_channel;
		}
		if (cid->own_recv_cq) {
			link->own_cq[1] = cid->id.recv_cq;
			link->own_chan[1] = cid->id.recv_cq_channel;
		}
		cid->own_send_cq = cid->own_recv_cq = 0;
	}
	cid->link = NULL;
	pthread_mutex_unlock(&cma_link_lock);
	if (!link)
		cma_free_own_cqs(cid);
}

static struct ibv_cq *cma_own_cq(struct rdma_cm_id *id, uint32_t wr,
				 struct ibv_comp_channel **chan)
{
	struct ibv_cq *cq;

	*chan = ibv_create_comp_channel(id->verbs);
	if (!*chan)
		return NULL;
	cq = ibv_create_cq(id->verbs, wr ? (int)wr : 1, id, *chan, 0);
	if (!cq) {
		ibv_destroy_comp_channel(*chan);
		*chan = NULL;
	}
	return cq;
}

static void cma_free_own_cqs(struct cma_id *cid)
{
	if (cid->own_send_cq && cid->id.send_cq) {
		ibv_destroy_cq(cid->id.send_cq);
		ibv_destroy_comp_channel(cid->id.send_cq_channel);
		cid->id.send_cq = NULL;
		cid->id.send_cq_channel = NULL;
	}
	if (cid->own_recv_cq && cid->id.recv_cq) {
		ibv_destroy_cq(cid->id.recv_cq);
		ibv_destroy_comp_channel(cid->id.recv_cq_channel);
		cid->id.recv_cq = NULL;
		cid->id.recv_cq_channel = NULL;
	}
	cid->own_send_cq = cid->own_recv_cq = 0;
}

int rdma_create_qp(struct rdma_cm_id *id, struct ibv_pd *pd,
		   struct ibv_qp_init_attr *attr)
{
	struct iwarp_qp_init_attr na;
	struct cma_qp_link *link;
	struct cma_id *cid;
	struct ibv_qp *qp;
	int ret;

	if (!id || !attr) {
		errno = EINVAL;
		return -1;
	}
	cid = cma_id_of(id);
	if (attr->qp_type != IBV_QPT_RC) {
		errno = EOPNOTSUPP; /* iWARP: reliable connected QPs only */
		return -1;
	}
	if (!pd)
		pd = id->pd ? id->pd : cma_default_pd(id->verbs);
	if (!pd)
		return -1;
	if (pd->context != id->verbs) {
		errno = EINVAL;
		return -1;
	}
	/* librdmacm makes the CQs the application leaves out
	 * (rdma_create_qp(3)) */
	if (!attr->send_cq) {
		if (!id->send_cq) {
			id->send_cq = cma_own_cq(id, attr->cap.max_send_wr,
						 &id->send_cq_channel);
			if (!id->send_cq)
				return -1;
			cid->own_send_cq = 1;
		}
		attr->send_cq = id->send_cq;
	}
	if (!attr->recv_cq) {
		if (!id->recv_cq) {
			id->recv_cq = cma_own_cq(id, attr->cap.max_recv_wr,
						 &id->recv_cq_channel);
			if (!id->recv_cq) {
				cma_free_own_cqs(cid);
				return -1;
			}
			cid->own_recv_cq = 1;
		}
		attr->recv_cq = id->recv_cq;
	}
	memset(&na, 0, sizeof(na));
	na.qp_context = attr->qp_context;
	na.send_cq = iwc_native_cq(attr->send_cq);
	na.recv_cq = iwc_native_cq(attr->recv_cq);
	na.srq = attr->srq ? iwc_native_srq(attr->srq) : NULL;
	na.cap.max_send_wr = attr->cap.max_send_wr;
	na.cap.max_recv_wr = attr->cap.max_recv_wr;
	na.cap.max_send_sge = attr->cap.max_send_sge;
	na.cap.max_recv_sge = attr->cap.max_recv_sge;
	na.cap.max_inline_data = attr->cap.max_inline_data;
	na.qp_type = IWARP_QPT_RC;
	na.sq_sig_all = attr->sq_sig_all;
	if (!na.send_cq || !na.recv_cq || (attr->srq && !na.srq)) {
		cma_free_own_cqs(cid);
		errno = EINVAL;
		return -1;
	}
	link = calloc(1, sizeof(*link));
	if (!link) {
		cma_free_own_cqs(cid);
		return -1;
	}
	ret = iwarp_cm_create_qp(cid->nid, iwc_native_pd(pd), &na);
	if (ret < 0) {
		free(link);
		cma_free_own_cqs(cid);
		return cma_ret(ret);
	}
	attr->cap.max_send_wr = na.cap.max_send_wr;
	attr->cap.max_recv_wr = na.cap.max_recv_wr;
	attr->cap.max_send_sge = na.cap.max_send_sge;
	attr->cap.max_recv_sge = na.cap.max_recv_sge;
	attr->cap.max_inline_data = na.cap.max_inline_data;
	link->cid = cid;
	link->nqp = cid->nid->qp;
	qp = iwc_qp_wrap(pd, link->nqp, attr, cma_qp_destroy, link);
	if (!qp) {
		int err = errno;

		iwarp_cm_destroy_qp(cid->nid);
		free(link);
		cma_free_own_cqs(cid);
		errno = err;
		return -1;
	}
	pthread_mutex_lock(&cma_link_lock);
	cid->link = link;
	pthread_mutex_unlock(&cma_link_lock);
	id->qp = qp;
	id->pd = pd;
	return 0;
}

int rdma_create_qp_ex(struct rdma_cm_id *id, struct ibv_qp_init_attr_ex *attr)
{
	struct ibv_qp_init_attr a;
	int ret;

	if (!id || !attr) {
		errno = EINVAL;
		return -1;
	}
	/* only what struct ibv_qp_init_attr can say, plus the PD */
	if (attr->comp_mask & ~(uint32_t)IBV_QP_INIT_ATTR_PD) {
		errno = EOPNOTSUPP;
		return -1;
	}
	memset(&a, 0, sizeof(a));
	a.qp_context = attr->qp_context;
	a.send_cq = attr->send_cq;
	a.recv_cq = attr->recv_cq;
	a.srq = attr->srq;
	a.cap = attr->cap;
	a.qp_type = attr->qp_type;
	a.sq_sig_all = attr->sq_sig_all;
	ret = rdma_create_qp(
		id, (attr->comp_mask & IBV_QP_INIT_ATTR_PD) ? attr->pd : NULL,
		&a);
	if (ret == 0) {
		attr->cap = a.cap;
		attr->send_cq = a.send_cq;
		attr->recv_cq = a.recv_cq;
	}
	return ret;
}

void rdma_destroy_qp(struct rdma_cm_id *id)
{
	if (!id)
		return;
	if (id->qp && ibv_destroy_qp(id->qp) == 0)
		id->qp = NULL;
	cma_free_own_cqs(cma_id_of(id));
}

int rdma_init_qp_attr(struct rdma_cm_id *id, struct ibv_qp_attr *qp_attr,
		      int *qp_attr_mask)
{
	if (!id || !qp_attr || !qp_attr_mask) {
		errno = EINVAL;
		return -1;
	}
	/* What the iWARP CM gives a QP before it connects: INIT with local
	 * write and remote read/write access (RFC 5040 §6.4 access rights). */
	memset(qp_attr, 0, sizeof(*qp_attr));
	qp_attr->qp_state = IBV_QPS_INIT;
	qp_attr->qp_access_flags = IBV_ACCESS_LOCAL_WRITE |
				   IBV_ACCESS_REMOTE_WRITE |
				   IBV_ACCESS_REMOTE_READ;
	qp_attr->port_num = id->port_num;
	*qp_attr_mask = IBV_QP_STATE | IBV_QP_ACCESS_FLAGS | IBV_QP_PORT;
	return 0;
}

int rdma_create_srq(struct rdma_cm_id *id, struct ibv_pd *pd,
		    struct ibv_srq_init_attr *attr)
{
	struct ibv_srq *srq;

	if (!id || !attr) {
		errno = EINVAL;
		return -1;
	}
	if (!pd)
		pd = id->pd ? id->pd : cma_default_pd(id->verbs);
	if (!pd)
		return -1;
	srq = ibv_create_srq(pd, attr);
	if (!srq)
		return -1;
	id->srq = srq;
	id->pd = pd;
	return 0;
}

int rdma_create_srq_ex(struct rdma_cm_id *id, struct ibv_srq_init_attr_ex *attr)
{
	struct ibv_srq_init_attr a;

	if (!id || !attr) {
		errno = EINVAL;
		return -1;
	}
	if ((attr->comp_mask & IBV_SRQ_INIT_ATTR_TYPE) &&
	    attr->srq_type != IBV_SRQT_BASIC) {
		errno = EOPNOTSUPP;
		return -1;
	}
	memset(&a, 0, sizeof(a));
	a.srq_context = attr->srq_context;
	a.attr = attr->attr;
	if (rdma_create_srq(id,
			    (attr->comp_mask & IBV_SRQ_INIT_ATTR_PD) ? attr->pd
								     : NULL,
			    &a))
		return -1;
	attr->attr = a.attr;
	return 0;
}

void rdma_destroy_srq(struct rdma_cm_id *id)
{
	if (id && id->srq && ibv_destroy_srq(id->srq) == 0)
		id->srq = NULL;
}
