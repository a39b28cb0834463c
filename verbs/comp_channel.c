/*
 * verbs/comp_channel.c: completion channels (ibv_comp_channel semantics).
 *
 * A channel keeps the CQs with a pending event in a FIFO list (at most one
 * entry per CQ: events of a CQ not yet fetched are coalesced). Its fd is an
 * eventfd whose counter is non-zero exactly while the list is non-empty, so
 * poll()/epoll report it readable exactly when iwarp_get_cq_event() has an
 * event to return.
 */
#include "config.h"

#include <errno.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include "util/mem.h"
#include "verbs/verbs.h"
#include "verbs/wait.h"

IWARP_EXPORT struct iwarp_comp_channel *
iwarp_create_comp_channel(struct iwarp_context *ctx)
{
	struct iw_channel *ch;
	int err;

	if (!ctx) {
		errno = EINVAL;
		return NULL;
	}
	err = ctx_count(ctx, &ctx->n_channel, 1, IW_MAX_CHANNEL);
	if (err) {
		errno = -err;
		return NULL;
	}
	ch = iw_calloc(1, sizeof(*ch));
	if (!ch)
		goto err_count;
	ch->pub.context = ctx;
	ch->pub.fd = eventfd(0, EFD_CLOEXEC);
	if (ch->pub.fd < 0)
		goto err_free;
	pthread_mutex_init(&ch->lock, NULL);
	return &ch->pub;

err_free:
	err = errno;
	iw_free(ch);
	errno = err;
err_count:
	err = errno;
	ctx_count(ctx, &ctx->n_channel, -1, 0);
	errno = err;
	return NULL;
}

IWARP_EXPORT int iwarp_destroy_comp_channel(struct iwarp_comp_channel *channel)
{
	struct iw_channel *ch;
	struct iwarp_context *ctx;

	if (!channel)
		return -EINVAL;
	ch = channel_from_pub(channel);
	pthread_mutex_lock(&ch->lock);
	if (channel->refcnt) {
		pthread_mutex_unlock(&ch->lock);
		return -EBUSY;
	}
	pthread_mutex_unlock(&ch->lock);
	ctx = channel->context;
	close(channel->fd);
	pthread_mutex_destroy(&ch->lock);
	iw_free(ch);
	ctx_count(ctx, &ctx->n_channel, -1, 0);
	return 0;
}

void channel_fire(struct iw_cq *cq)
{
	struct iw_channel *ch;

	if (!cq->pub.channel)
		return;
	ch = channel_from_pub(cq->pub.channel);
	pthread_mutex_lock(&ch->lock);
	if (!cq->on_chan_list) {
		cq->on_chan_list = true;
		cq->chan_next = NULL;
		if (ch->tail) {
			ch->tail->chan_next = cq;
		} else {
			ch->head = cq;
			verbs_efd_signal(ch->pub.fd, true);
		}
		ch->tail = cq;
	}
	pthread_mutex_unlock(&ch->lock);
}

void channel_remove_cq(struct iw_cq *cq)
{
	struct iw_channel *ch;
	struct iw_cq **pp, *prev = NULL;

	if (!cq->pub.channel)
		return;
	ch = channel_from_pub(cq->pub.channel);
	pthread_mutex_lock(&ch->lock);
	if (cq->on_chan_list) {
		for (pp = &ch->head; *pp; prev = *pp, pp = &(*pp)->chan_next) {
			if (*pp != cq)
				continue;
			*pp = cq->chan_next;
			if (ch->tail == cq)
				ch->tail = prev;
			break;
		}
		cq->on_chan_list = false;
		if (!ch->head)
			verbs_efd_signal(ch->pub.fd, false);
	}
	pthread_mutex_unlock(&ch->lock);
}

IWARP_EXPORT int iwarp_get_cq_event(struct iwarp_comp_channel *channel,
				    struct iwarp_cq **cq, void **cq_context)
{
	struct iw_channel *ch;
	struct iw_cq *c;
	int err;

	if (!channel || !cq || !cq_context)
		return -EINVAL;
	ch = channel_from_pub(channel);
	for (;;) {
		pthread_mutex_lock(&ch->lock);
		c = ch->head;
		if (c) {
			ch->head = c->chan_next;
			if (!ch->head) {
				ch->tail = NULL;
				verbs_efd_signal(channel->fd, false);
			}
			c->on_chan_list = false;
			c->chan_next = NULL;
			c->events_queued++;
			*cq = &c->pub;
			*cq_context = c->pub.cq_context;
		}
		pthread_mutex_unlock(&ch->lock);
		if (c)
			return 0;
		/* the channel's CQs all belong to its context (create_cq) */
		err = verbs_wait_ctx(channel->context, channel->fd);
		if (err)
			return err;
	}
}

IWARP_EXPORT void iwarp_ack_cq_events(struct iwarp_cq *cq, unsigned int nevents)
{
	struct iw_cq *c;

	if (!cq)
		return;
	c = cq_from_pub(cq);
	if (cq->channel) {
		pthread_mutex_lock(&channel_from_pub(cq->channel)->lock);
		c->events_acked += nevents;
		pthread_mutex_unlock(&channel_from_pub(cq->channel)->lock);
	}
}
