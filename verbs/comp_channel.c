/*
 * verbs/comp_channel.c: completion channels (ibv_comp_channel semantics).
 *
 * A channel keeps the CQs with a pending event in a FIFO list (at most one
 * entry per CQ: events of a CQ not yet fetched are coalesced). Its fd is an
 * eventfd whose counter is non-zero while the list is non-empty, so
 * poll()/epoll report it readable when iwarp_get_cq_event() has an event
 * to return.
 *
 * The counter is changed outside the channel's lock. The thread whose
 * write(2) wakes a waiter is usually preempted by it right there (the
 * waker's CPU is where the waiter wakes); had it written under the lock,
 * the waiter's first step, taking the lock in iwarp_get_cq_event, would
 * put it back to sleep until the waker ran again to release it: two more
 * context switches and a futex wake per event. So under the lock a thread
 * only decides whether the list's change is due on the counter
 * (channel_fd_due), and applies it after unlocking (channel_fd_apply). The
 * eventfd counts (EFD_SEMAPHORE): each time the list became non-empty adds
 * one, each time it became empty takes one back, so changes applied out of
 * order still sum to the list's state. While one is in flight the counter
 * lags the list: a raise not yet written (it lands without any lock, and
 * wakes the poller then), or a take-back not yet read (only inside the
 * iwarp_get_cq_event or iwarp_destroy_cq call that owes it). A take-back
 * whose raise is still in flight waits for it.
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
	ch->pub.fd = eventfd(0, EFD_CLOEXEC | EFD_SEMAPHORE);
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

/* The channel the calling thread waits on in iwarp_get_cq_event. */
static __thread struct iw_channel *tls_wait_ch;

/*
 * Which change of the fd's counter the list's state is due (+1, -1 or 0),
 * recorded as done (fd_on). Channel lock held; the caller applies it with
 * channel_fd_apply once it has released the lock.
 */
static int channel_fd_due(struct iw_channel *ch)
{
	bool on = ch->head != NULL;

	if (on == ch->fd_on)
		return 0;
	ch->fd_on = on;
	return on ? 1 : -1;
}

/* Applies |due| from channel_fd_due to the counter. Without the lock. */
static void channel_fd_apply(struct iw_channel *ch, int due)
{
	if (due)
		verbs_efd_step(ch->pub.fd, due > 0);
}

void channel_fire(struct iw_cq *cq)
{
	struct iw_channel *ch;
	int due = 0;

	if (!cq->pub.channel)
		return;
	ch = channel_from_pub(cq->pub.channel);
	pthread_mutex_lock(&ch->lock);
	if (!cq->on_chan_list) {
		cq->on_chan_list = true;
		cq->chan_next = NULL;
		if (ch->tail)
			ch->tail->chan_next = cq;
		else
			ch->head = cq;
		ch->tail = cq;
		/* fired by the thread that waits on it (its engine pass read
		 * the message): it takes the event without the fd round trip,
		 * and syncs the fd when it leaves */
		if (tls_wait_ch != ch)
			due = channel_fd_due(ch);
	}
	pthread_mutex_unlock(&ch->lock);
	channel_fd_apply(ch, due);
}

void channel_remove_cq(struct iw_cq *cq)
{
	struct iw_channel *ch;
	struct iw_cq **pp, *prev = NULL;
	int due = 0;

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
		due = channel_fd_due(ch);
	}
	pthread_mutex_unlock(&ch->lock);
	channel_fd_apply(ch, due);
}

/* True when |arg|'s channel has an event pending. */
static bool channel_pending(void *arg)
{
	struct iw_channel *ch = arg;
	bool r;

	pthread_mutex_lock(&ch->lock);
	r = ch->head != NULL;
	pthread_mutex_unlock(&ch->lock);
	return r;
}

IWARP_EXPORT int iwarp_get_cq_event(struct iwarp_comp_channel *channel,
				    struct iwarp_cq **cq, void **cq_context)
{
	struct iw_channel *ch;
	struct iw_cq *c;
	int err, due;

	if (!channel || !cq || !cq_context)
		return -EINVAL;
	ch = channel_from_pub(channel);
	for (;;) {
		pthread_mutex_lock(&ch->lock);
		c = ch->head;
		due = 0;
		if (c) {
			ch->head = c->chan_next;
			if (!ch->head)
				ch->tail = NULL;
			due = channel_fd_due(ch);
			c->on_chan_list = false;
			c->chan_next = NULL;
			c->events_queued++;
			*cq = &c->pub;
			*cq_context = c->pub.cq_context;
		}
		pthread_mutex_unlock(&ch->lock);
		if (c) {
			channel_fd_apply(ch, due);
			return 0;
		}
		/* the channel's CQs all belong to its context (create_cq) */
		tls_wait_ch = ch;
		err = verbs_wait_ctx_until(channel->context, channel->fd,
					   channel_pending, ch,
					   &ch->fd_watched);
		tls_wait_ch = NULL;
		if (err) {
			/* events this thread fired and left: the fd shows them
			 */
			pthread_mutex_lock(&ch->lock);
			due = channel_fd_due(ch);
			pthread_mutex_unlock(&ch->lock);
			channel_fd_apply(ch, due);
			return err;
		}
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
