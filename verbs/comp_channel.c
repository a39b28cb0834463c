/*
 * verbs/comp_channel.c: completion channels (ibv_comp_channel semantics).
 *
 * A channel keeps the CQs with a pending event in a FIFO list (at most one
 * entry per CQ: events of a CQ not yet fetched are coalesced). Its fd is an
 * eventfd whose counter is non-zero while the list is non-empty, so
 * poll()/epoll report it readable when iwarp_get_cq_event() has an event
 * to return.
 *
 * The write that makes the fd readable is done after the list's lock is
 * released: the woken thread (often on the same core, preempting the
 * writer) then finds the lock free instead of sleeping on it until the
 * writer runs again. A consumer may so take the entry, and drain the
 * counter, before the write lands; the late write leaves the fd readable
 * with nothing pending. Every write adds 1 and only drains (under the
 * lock) read the counter, so |writes| != |drained| says a write is still
 * in flight: the next look at an empty list drains again before it waits
 * (the fd is readable for that moment only; a non-blocking
 * iwarp_get_cq_event returns EAGAIN).
 */
#include "config.h"

#include <errno.h>
#include <poll.h>
#include <sys/eventfd.h>
#include <sys/uio.h>
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

/* Zeroes the fd's counter without blocking (it may be zero already: a
 * write owed by channel_fire has not landed). ch->lock held. */
static void channel_drain(struct iw_channel *ch)
{
	uint64_t v = 0;
	struct iovec iov = {.iov_base = &v, .iov_len = sizeof(v)};
	struct pollfd pfd = {.fd = ch->pub.fd, .events = POLLIN};
	ssize_t r;

	if (ch->drained == ch->writes)
		return; /* nothing written since the last drain */
	do {
		r = preadv2(ch->pub.fd, &iov, 1, -1, RWF_NOWAIT);
	} while (r < 0 && errno == EINTR);
	if (r < 0 && errno != EAGAIN && poll(&pfd, 1, 0) == 1) {
		/* no RWF_NOWAIT for eventfds (old kernel): readable, so the
		 * read does not block (only lock holders read) */
		r = read(ch->pub.fd, &v, sizeof(v));
	}
	if (r == (ssize_t)sizeof(v))
		ch->drained += v;
}

void channel_fire(struct iw_cq *cq)
{
	struct iw_channel *ch;
	bool signal = false;

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
			signal = true;
			ch->writes++;
		}
		ch->tail = cq;
	}
	pthread_mutex_unlock(&ch->lock);
	if (signal)
		verbs_efd_signal(ch->pub.fd, true);
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
			channel_drain(ch);
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
				channel_drain(ch);
			}
			c->on_chan_list = false;
			c->chan_next = NULL;
			c->events_queued++;
			*cq = &c->pub;
			*cq_context = c->pub.cq_context;
		} else {
			channel_drain(ch); /* a late write must not wake us */
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

IWARP_EXPORT void iwarp_ack_cq_events(struct iwarp_cq *cq,
				      unsigned int nevents)
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
