/*
 * verbs/srq.c: shared receive queues (ibv_srq semantics) and the SRQ limit
 * event.
 *
 * The limit is armed by iwarp_modify_srq(IWARP_SRQ_LIMIT) with a non-zero
 * srq_limit; the first pop that leaves fewer than srq_limit WQEs raises
 * IWARP_EVENT_SRQ_LIMIT_REACHED once and disarms it (srq_limit reads back 0).
 * The limit given to iwarp_create_srq() is stored but not armed (ibverbs).
 */
#include "config.h"

#include <errno.h>
#include <string.h>

#include "util/mem.h"
#include "verbs/verbs.h"

/* Smallest power of two >= |n| (and >= 1). */
uint32_t verbs_ring_size(uint32_t n)
{
	uint32_t s = 1;

	while (s < n)
		s <<= 1;
	return s;
}

IWARP_EXPORT struct iwarp_srq *
iwarp_create_srq(struct iwarp_pd *pd, struct iwarp_srq_init_attr *attr)
{
	struct iwarp_context *ctx;
	struct iw_srq *srq;
	int err;

	if (!pd || !attr || attr->attr.max_wr < 1 ||
	    attr->attr.max_wr > IW_MAX_SRQ_WR ||
	    attr->attr.max_sge > IW_MAX_SGE ||
	    attr->attr.srq_limit > attr->attr.max_wr) {
		errno = EINVAL;
		return NULL;
	}
	ctx = pd->context;
	err = ctx_count(ctx, &ctx->n_srq, 1, IW_MAX_SRQ);
	if (err) {
		errno = -err;
		return NULL;
	}
	srq = iw_calloc(1, sizeof(*srq));
	if (!srq)
		goto err_count;
	srq->size = verbs_ring_size(attr->attr.max_wr);
	srq->ring = iw_calloc(srq->size, sizeof(*srq->ring));
	if (!srq->ring)
		goto err_free;
	pthread_spin_init(&srq->lock, PTHREAD_PROCESS_PRIVATE);
	srq->attr = attr->attr;
	srq->pub.context = ctx;
	srq->pub.srq_context = attr->srq_context;
	srq->pub.pd = pd;
	pthread_mutex_lock(&ctx->lock);
	srq->pub.handle = ctx->next_handle++;
	pthread_mutex_unlock(&ctx->lock);
	pd_get(pd);
	return &srq->pub;

err_free:
	iw_free(srq);
err_count:
	ctx_count(ctx, &ctx->n_srq, -1, 0);
	errno = ENOMEM;
	return NULL;
}

IWARP_EXPORT int iwarp_destroy_srq(struct iwarp_srq *srq)
{
	struct iwarp_context *ctx;
	struct iw_srq *s;

	if (!srq)
		return -EINVAL;
	s = srq_from_pub(srq);
	if (__atomic_load_n(&s->refs, __ATOMIC_ACQUIRE))
		return -EBUSY;
	ctx = srq->context;
	ctx_async_purge(ctx, srq);
	pd_put(srq->pd);
	pthread_spin_destroy(&s->lock);
	iw_free(s->ring);
	iw_free(s);
	ctx_count(ctx, &ctx->n_srq, -1, 0);
	return 0;
}

IWARP_EXPORT int iwarp_modify_srq(struct iwarp_srq *srq,
				  struct iwarp_srq_attr *attr, int attr_mask)
{
	struct iw_rqe *ring = NULL, *old = NULL;
	struct iw_srq *s;
	uint32_t size = 0, i, n;
	int err = 0;

	if (!srq || !attr || !attr_mask ||
	    (attr_mask & ~(IWARP_SRQ_MAX_WR | IWARP_SRQ_LIMIT)))
		return -EINVAL;
	s = srq_from_pub(srq);
	if (attr_mask & IWARP_SRQ_MAX_WR) {
		if (attr->max_wr < 1 || attr->max_wr > IW_MAX_SRQ_WR)
			return -EINVAL;
		size = verbs_ring_size(attr->max_wr);
		ring = iw_calloc(size, sizeof(*ring));
		if (!ring)
			return -ENOMEM;
	}
	pthread_spin_lock(&s->lock);
	n = (attr_mask & IWARP_SRQ_MAX_WR) ? attr->max_wr : s->attr.max_wr;
	if ((attr_mask & IWARP_SRQ_MAX_WR) && s->count > attr->max_wr)
		err = -EINVAL; /* would drop posted WQEs */
	else if ((attr_mask & IWARP_SRQ_LIMIT) && attr->srq_limit > n)
		err = -EINVAL;
	if (!err && ring) {
		for (i = 0; i < s->count; i++)
			ring[i] = s->ring[(s->tail + i) & (s->size - 1)];
		old = s->ring;
		s->ring = ring;
		s->size = size;
		s->tail = 0;
		s->head = s->count;
		s->attr.max_wr = attr->max_wr;
		ring = NULL;
	}
	if (!err && (attr_mask & IWARP_SRQ_LIMIT)) {
		s->attr.srq_limit = attr->srq_limit;
		s->limit_armed = attr->srq_limit > 0;
	}
	pthread_spin_unlock(&s->lock);
	iw_free(ring);
	iw_free(old);
	return err;
}

IWARP_EXPORT int iwarp_query_srq(struct iwarp_srq *srq,
				 struct iwarp_srq_attr *attr)
{
	struct iw_srq *s;

	if (!srq || !attr)
		return -EINVAL;
	s = srq_from_pub(srq);
	pthread_spin_lock(&s->lock);
	*attr = s->attr;
	if (!s->limit_armed)
		attr->srq_limit = 0;
	pthread_spin_unlock(&s->lock);
	return 0;
}

/* Validates |wr| against at most |max_sge| SGEs and fills |rqe|. */
int verbs_rqe_fill(struct iw_rqe *rqe, const struct iwarp_recv_wr *wr,
		   uint32_t max_sge)
{
	uint64_t total = 0;
	int i;

	if (wr->num_sge < 0 || (uint32_t)wr->num_sge > max_sge ||
	    (wr->num_sge && !wr->sg_list))
		return -EINVAL;
	for (i = 0; i < wr->num_sge; i++) {
		rqe->sge[i] = wr->sg_list[i];
		total += wr->sg_list[i].length;
	}
	if (total > UINT32_MAX)
		return -EINVAL;
	rqe->wr_id = wr->wr_id;
	rqe->num_sge = (uint32_t)wr->num_sge;
	rqe->total_len = (uint32_t)total;
	return 0;
}

IWARP_EXPORT int iwarp_post_srq_recv(struct iwarp_srq *srq,
				     struct iwarp_recv_wr *wr,
				     struct iwarp_recv_wr **bad_wr)
{
	struct iw_srq *s;
	int err = 0;

	if (!srq || !wr || !bad_wr)
		return -EINVAL;
	s = srq_from_pub(srq);
	pthread_spin_lock(&s->lock);
	for (; wr; wr = wr->next) {
		if (s->count >= s->attr.max_wr) {
			err = -ENOMEM;
			break;
		}
		err = verbs_rqe_fill(&s->ring[s->head & (s->size - 1)], wr,
				     s->attr.max_sge);
		if (err)
			break;
		s->head++;
		s->count++;
	}
	pthread_spin_unlock(&s->lock);
	if (err)
		*bad_wr = wr;
	return err;
}

int srq_pop(struct iw_srq *s, struct iw_rqe *out)
{
	struct iwarp_async_event ev;
	bool fire = false;

	pthread_spin_lock(&s->lock);
	if (!s->count) {
		pthread_spin_unlock(&s->lock);
		return -ENOENT;
	}
	*out = s->ring[s->tail & (s->size - 1)];
	s->tail++;
	s->count--;
	if (s->limit_armed && s->count < s->attr.srq_limit) {
		s->limit_armed = false;
		fire = true;
	}
	pthread_spin_unlock(&s->lock);
	if (fire) {
		memset(&ev, 0, sizeof(ev));
		ev.element.srq = &s->pub;
		ev.event_type = IWARP_EVENT_SRQ_LIMIT_REACHED;
		ctx_async_push(s->pub.context, &ev);
	}
	return 0;
}
