/*
 * verbs/cq.c: completion queues (ibv_cq semantics).
 *
 * The ring is guarded by a spinlock: iwarp_poll_cq() makes no system call
 * when completions are ready (in IWARP_PROGRESS_INLINE mode it first drives
 * the engine). |count| is also published with release stores so that an
 * empty poll is one acquire load, without the lock the engine thread needs
 * to push (a spinning application would otherwise contend with it). A full
 * ring is an overflow (ibverbs semantics), and it is sticky: the push that
 * does not fit sets |overflow| and raises IWARP_EVENT_CQ_ERR (the only
 * time it is raised); that push and every later one return -ENOSPC and
 * their completion is lost, even after polling made room. Completions
 * queued before stay pollable. The callers (qp_complete.c, the engine)
 * move the QP whose completion was lost to ERR (qp_fail_cq_overflow).
 */
#include "config.h"

#include <errno.h>
#include <string.h>

#include "util/mem.h"
#include "verbs/qp_overflow.h"
#include "verbs/verbs.h"

IWARP_EXPORT struct iwarp_cq *
iwarp_create_cq(struct iwarp_context *ctx, int cqe, void *cq_context,
		struct iwarp_comp_channel *channel, int comp_vector)
{
	struct iw_channel *ch;
	struct iw_cq *cq;
	int err;

	if (!ctx || cqe < 1 || cqe > IW_MAX_CQE || comp_vector < 0 ||
	    (channel && channel->context != ctx)) {
		errno = EINVAL;
		return NULL;
	}
	err = ctx_count(ctx, &ctx->n_cq, 1, IW_MAX_CQ);
	if (err) {
		errno = -err;
		return NULL;
	}
	cq = iw_calloc(1, sizeof(*cq));
	if (!cq)
		goto err_count;
	cq->ring = iw_calloc((size_t)cqe, sizeof(*cq->ring));
	if (!cq->ring)
		goto err_free;
	pthread_spin_init(&cq->lock, PTHREAD_PROCESS_PRIVATE);
	cq->size = (uint32_t)cqe;
	cq->pub.context = ctx;
	cq->pub.channel = channel;
	cq->pub.cq_context = cq_context;
	cq->pub.cqe = cqe;
	if (channel) {
		ch = channel_from_pub(channel);
		pthread_mutex_lock(&ch->lock);
		channel->refcnt++;
		pthread_mutex_unlock(&ch->lock);
	}
	return &cq->pub;

err_free:
	iw_free(cq);
err_count:
	ctx_count(ctx, &ctx->n_cq, -1, 0);
	errno = ENOMEM;
	return NULL;
}

IWARP_EXPORT int iwarp_destroy_cq(struct iwarp_cq *cq)
{
	struct iwarp_context *ctx;
	struct iw_channel *ch;
	struct iw_cq *c;

	if (!cq)
		return -EINVAL;
	c = cq_from_pub(cq);
	if (__atomic_load_n(&c->refs, __ATOMIC_ACQUIRE))
		return -EBUSY;
	if (cq->channel) {
		ch = channel_from_pub(cq->channel);
		pthread_mutex_lock(&ch->lock);
		if (c->events_queued != c->events_acked) {
			pthread_mutex_unlock(&ch->lock);
			return -EBUSY; /* ibverbs: ack every event first */
		}
		pthread_mutex_unlock(&ch->lock);
		channel_remove_cq(c);
		pthread_mutex_lock(&ch->lock);
		cq->channel->refcnt--;
		pthread_mutex_unlock(&ch->lock);
	}
	ctx = cq->context;
	ctx_async_purge(ctx, cq);
	pthread_spin_destroy(&c->lock);
	iw_free(c->ring);
	iw_free(c);
	ctx_count(ctx, &ctx->n_cq, -1, 0);
	return 0;
}

IWARP_EXPORT int iwarp_resize_cq(struct iwarp_cq *cq, int cqe)
{
	struct iwarp_wc *ring, *old;
	struct iw_cq *c;
	uint32_t i;

	if (!cq || cqe < 1 || cqe > IW_MAX_CQE)
		return -EINVAL;
	c = cq_from_pub(cq);
	ring = iw_calloc((size_t)cqe, sizeof(*ring));
	if (!ring)
		return -ENOMEM;
	pthread_spin_lock(&c->lock);
	if (c->count > (uint32_t)cqe) {
		pthread_spin_unlock(&c->lock);
		iw_free(ring);
		return -EINVAL; /* would lose pending completions */
	}
	for (i = 0; i < c->count; i++)
		ring[i] = c->ring[(c->head + i) % c->size];
	old = c->ring;
	c->ring = ring;
	c->size = (uint32_t)cqe;
	c->head = 0;
	c->tail = c->count % c->size;
	cq->cqe = cqe;
	pthread_spin_unlock(&c->lock);
	iw_free(old);
	return 0;
}

int cq_push(struct iw_cq *cq, const struct iwarp_wc *wc, bool solicited)
{
	struct iwarp_async_event ev;
	bool fire = false, overflow = false;

	pthread_spin_lock(&cq->lock);
	if (cq->overflow) {
		pthread_spin_unlock(&cq->lock);
		return -ENOSPC;
	}
	if (cq->count == cq->size) {
		__atomic_store_n(&cq->overflow, true, __ATOMIC_RELEASE);
		overflow = true;
	} else {
		cq->ring[cq->tail] = *wc;
		cq->tail = (cq->tail + 1) % cq->size;
		/* release: the entry is visible to a lock-free reader of count
		 */
		__atomic_store_n(&cq->count, cq->count + 1, __ATOMIC_RELEASE);
		if (cq->armed == 1 || (cq->armed == 2 && solicited)) {
			cq->armed = 0;
			fire = true;
		}
	}
	pthread_spin_unlock(&cq->lock);
	if (overflow) {
		memset(&ev, 0, sizeof(ev));
		ev.element.cq = &cq->pub;
		ev.event_type = IWARP_EVENT_CQ_ERR;
		ctx_async_push(cq->pub.context, &ev);
		return -ENOSPC;
	}
	if (fire)
		channel_fire(cq);
	return 0;
}

void cq_purge_qp(struct iw_cq *cq, uint32_t qp_num, bool keep_recv)
{
	uint32_t i, from, to, kept = 0;

	pthread_spin_lock(&cq->lock);
	for (i = 0; i < cq->count; i++) {
		from = (cq->head + i) % cq->size;
		if (cq->ring[from].qp_num == qp_num &&
		    !(keep_recv && (cq->ring[from].opcode & IWARP_WC_RECV)))
			continue;
		to = (cq->head + kept) % cq->size;
		if (to != from)
			cq->ring[to] = cq->ring[from];
		kept++;
	}
	cq->tail = (cq->head + kept) % cq->size;
	__atomic_store_n(&cq->count, kept, __ATOMIC_RELEASE);
	pthread_spin_unlock(&cq->lock);
}

bool cq_has_unflushed(struct iw_cq *cq, uint32_t qp_num)
{
	const struct iwarp_wc *wc;
	bool found = false;
	uint32_t i;

	if (!__atomic_load_n(&cq->count, __ATOMIC_ACQUIRE))
		return false;
	pthread_spin_lock(&cq->lock);
	for (i = 0; i < cq->count && !found; i++) {
		wc = &cq->ring[(cq->head + i) % cq->size];
		found = wc->qp_num == qp_num &&
			wc->status != IWARP_WC_WR_FLUSH_ERR;
	}
	pthread_spin_unlock(&cq->lock);
	return found;
}

bool cq_overflowed(struct iw_cq *cq)
{
	return __atomic_load_n(&cq->overflow, __ATOMIC_ACQUIRE);
}

IWARP_EXPORT int iwarp_poll_cq(struct iwarp_cq *cq, int num_entries,
			       struct iwarp_wc *wc)
{
	struct iw_cq *c;
	uint32_t n, i;
	int err;

	if (!cq || num_entries < 0 || (!wc && num_entries))
		return -EINVAL;
	c = cq_from_pub(cq);
	if (cq->context->attr.progress == IWARP_PROGRESS_INLINE) {
		err = engine_progress(cq->context->engine);
		if (err < 0)
			return err;
	}
	/* Empty (or nothing asked): no lock. A push racing with this load is
	 * seen by the next poll, as if this one had run a moment earlier. */
	if (!num_entries || !__atomic_load_n(&c->count, __ATOMIC_ACQUIRE))
		return 0;
	pthread_spin_lock(&c->lock);
	n = c->count < (uint32_t)num_entries ? c->count : (uint32_t)num_entries;
	for (i = 0; i < n; i++) {
		wc[i] = c->ring[c->head];
		c->head = (c->head + 1) % c->size;
	}
	__atomic_store_n(&c->count, c->count - n, __ATOMIC_RELEASE);
	pthread_spin_unlock(&c->lock);
	return (int)n;
}

IWARP_EXPORT int iwarp_req_notify_cq(struct iwarp_cq *cq, int solicited_only)
{
	struct iw_cq *c;

	if (!cq)
		return -EINVAL;
	c = cq_from_pub(cq);
	pthread_spin_lock(&c->lock);
	/* "next completion" is the wider arm: never narrow it */
	if (!solicited_only)
		c->armed = 1;
	else if (c->armed == 0)
		c->armed = 2;
	pthread_spin_unlock(&c->lock);
	return 0;
}
