/*
 * cm/cm_event.c: event channels and CM events (librdmacm semantics).
 *
 * The channel's fd is an eventfd whose counter is non-zero while events
 * are queued, so poll/epoll on it works and a blocking iwarp_cm_get_event()
 * sleeps in poll(). Each delivered event counts against its owner id until
 * acked; iwarp_cm_destroy_id() waits for that (as rdma_destroy_id does). A
 * CONNECT_REQUEST counts against the listener.
 *
 * The push that makes the queue non-empty and the get_event that empties
 * it change the counter after unlocking, as completion channels do
 * (verbs/comp_channel.c): the waiter a write(2) wakes usually preempts the
 * writer on its CPU, and with the write under the lock its first step,
 * taking that lock, would put it back to sleep until the writer ran again.
 * The counter therefore counts (EFD_SEMAPHORE): one up each time the queue
 * became non-empty, one down each time it became empty, so changes applied
 * out of order still sum to the queue's state; a take-back whose raise is
 * still in flight waits for it (verbs_efd_step). Purge and move, which
 * are rare, step the counter under the lock. A raise in flight is
 * counted in |raising|, which the channel's destroy waits out: the id it
 * was for may have moved to another channel meanwhile (cm_channel_move).
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <sched.h>
#include <stdint.h>
#include <string.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include "cm/cm_int.h"
#include "util/log.h"
#include "util/mem.h"
#include "util/thread.h"
#include "verbs/verbs.h"

/* Contexts in INLINE progress mode one get_event call drives at most. */
#define CM_INLINE_MAX 8

IWARP_EXPORT const char *iwarp_cm_event_str(enum iwarp_cm_event_type event)
{
	switch (event) {
	case IWARP_CM_EVENT_ADDR_RESOLVED:
		return "IWARP_CM_EVENT_ADDR_RESOLVED";
	case IWARP_CM_EVENT_ADDR_ERROR:
		return "IWARP_CM_EVENT_ADDR_ERROR";
	case IWARP_CM_EVENT_ROUTE_RESOLVED:
		return "IWARP_CM_EVENT_ROUTE_RESOLVED";
	case IWARP_CM_EVENT_ROUTE_ERROR:
		return "IWARP_CM_EVENT_ROUTE_ERROR";
	case IWARP_CM_EVENT_CONNECT_REQUEST:
		return "IWARP_CM_EVENT_CONNECT_REQUEST";
	case IWARP_CM_EVENT_CONNECT_RESPONSE:
		return "IWARP_CM_EVENT_CONNECT_RESPONSE";
	case IWARP_CM_EVENT_CONNECT_ERROR:
		return "IWARP_CM_EVENT_CONNECT_ERROR";
	case IWARP_CM_EVENT_UNREACHABLE:
		return "IWARP_CM_EVENT_UNREACHABLE";
	case IWARP_CM_EVENT_REJECTED:
		return "IWARP_CM_EVENT_REJECTED";
	case IWARP_CM_EVENT_ESTABLISHED:
		return "IWARP_CM_EVENT_ESTABLISHED";
	case IWARP_CM_EVENT_DISCONNECTED:
		return "IWARP_CM_EVENT_DISCONNECTED";
	case IWARP_CM_EVENT_DEVICE_REMOVAL:
		return "IWARP_CM_EVENT_DEVICE_REMOVAL";
	case IWARP_CM_EVENT_TIMEWAIT_EXIT:
		return "IWARP_CM_EVENT_TIMEWAIT_EXIT";
	default:
		return "IWARP_CM_EVENT_UNKNOWN";
	}
}

IWARP_EXPORT struct iwarp_event_channel *iwarp_cm_create_event_channel(void)
{
	struct cm_channel *ch = iw_calloc(1, sizeof(*ch));
	int err;

	if (!ch)
		return NULL;
	ch->pub.fd = eventfd(0, EFD_CLOEXEC | EFD_SEMAPHORE);
	if (ch->pub.fd < 0) {
		err = errno;
		goto err_free;
	}
	err = pthread_mutex_init(&ch->lock, NULL);
	if (err)
		goto err_fd;
	err = pthread_cond_init(&ch->acked, NULL);
	if (err)
		goto err_lock;
	err = pthread_cond_init(&ch->drove, NULL);
	if (err)
		goto err_cond;
	return &ch->pub;

err_cond:
	pthread_cond_destroy(&ch->acked);
err_lock:
	pthread_mutex_destroy(&ch->lock);
err_fd:
	close(ch->pub.fd);
err_free:
	iw_free(ch);
	errno = err;
	return NULL;
}

IWARP_EXPORT void
iwarp_cm_destroy_event_channel(struct iwarp_event_channel *channel)
{
	struct cm_channel *ch;
	struct cm_event *ev, *next;

	if (!channel)
		return;
	ch = cm_channel_from_pub(channel);
	/* a push that queued its event before its id left may still be
	 * raising the counter: it touches nothing of |ch| after that */
	while (__atomic_load_n(&ch->raising, __ATOMIC_ACQUIRE))
		sched_yield();
	/* librdmacm: every id must be destroyed first; events left are freed */
	for (ev = ch->head; ev; ev = next) {
		next = ev->next;
		iw_free(ev);
	}
	for (ev = ch->spare; ev; ev = next) {
		next = ev->next;
		iw_free(ev);
	}
	pthread_cond_destroy(&ch->drove);
	pthread_cond_destroy(&ch->acked);
	pthread_mutex_destroy(&ch->lock);
	close(ch->pub.fd);
	iw_free(ch);
}

/* The port of |ss| in host order (0 for another family), for the log. */
static unsigned int cm_sa_port(const struct sockaddr_storage *ss)
{
	if (ss->ss_family == AF_INET)
		return ntohs(((const struct sockaddr_in *)ss)->sin_port);
	if (ss->ss_family == AF_INET6)
		return ntohs(((const struct sockaddr_in6 *)ss)->sin6_port);
	return 0;
}

int cm_event_push(struct cm_id *id, struct cm_id *listen_id,
		  enum iwarp_cm_event_type type, int status, const uint8_t *pd,
		  size_t len, uint8_t rr, uint8_t id_depth)
{
	struct cm_channel *ch;
	struct cm_event *ev;
	bool raise;

	if (id->state == CM_S_DEAD)
		return 0;
	iw_log("cm id %p: %s status %d (src port %u, dst port %u)", (void *)id,
	       iwarp_cm_event_str(type), status, cm_sa_port(&id->pub.src_addr),
	       cm_sa_port(&id->pub.dst_addr));
	/* a listener's migration may move |id| (an undelivered child) to
	 * another channel from another engine thread (cm_channel_move) */
	ev = NULL;
	for (;;) {
		ch = __atomic_load_n(&id->ch, __ATOMIC_ACQUIRE);
		pthread_mutex_lock(&ch->lock);
		if (__atomic_load_n(&id->ch, __ATOMIC_RELAXED) == ch) {
			if (!ev && ch->spare) {
				ev = ch->spare;
				ch->spare = ev->next;
				ch->n_spare--;
				memset(ev, 0, sizeof(*ev));
			}
			if (ev)
				break;
		}
		pthread_mutex_unlock(&ch->lock);
		if (!ev) {
			ev = iw_calloc(1, sizeof(*ev));
			if (!ev)
				return -ENOMEM;
		}
	}
	ev->pub.id = &id->pub;
	ev->pub.listen_id = listen_id ? &listen_id->pub : NULL;
	ev->pub.event = type;
	ev->pub.status = status;
	ev->owner = listen_id ? listen_id : id;
	if (len > CM_EVENT_PD_MAX)
		len = CM_EVENT_PD_MAX;
	if (len)
		memcpy(ev->pdata, pd, len);
	ev->pub.param.conn.private_data = len ? ev->pdata : NULL;
	ev->pub.param.conn.private_data_len = (uint8_t)len;
	ev->pub.param.conn.responder_resources = rr;
	ev->pub.param.conn.initiator_depth = id_depth;
	if (ch->tail)
		ch->tail->next = ev;
	else
		ch->head = ev;
	ch->tail = ev;
	raise = ch->head == ev;
	if (raise)
		__atomic_add_fetch(&ch->raising, 1, __ATOMIC_RELAXED);
	pthread_mutex_unlock(&ch->lock);
	if (raise) {
		verbs_efd_step(ch->pub.fd, true);
		__atomic_sub_fetch(&ch->raising, 1, __ATOMIC_RELEASE);
	}
	return 0;
}

/* Waits, with ch->lock held, until no get_event runs an INLINE engine of
 * |ch| (no new run starts while draining is counted). */
static void ch_wait_undriven(struct cm_channel *ch)
{
	if (!ch->driving)
		return;
	ch->draining++;
	while (ch->driving)
		pthread_cond_wait(&ch->drove, &ch->lock);
	ch->draining--;
}

/* Whether |id|'s context is progressed by iwarp_cm_get_event (INLINE). */
static bool id_inline(const struct cm_id *id)
{
	const struct iwarp_context *ctx = id->pub.verbs;

	return ctx && ctx->attr.progress == IWARP_PROGRESS_INLINE;
}

/* Puts |id| at the head of |ch|'s id list (|ch|'s lock held). */
static void ch_link(struct cm_channel *ch, struct cm_id *id)
{
	ch->n_inline += id_inline(id);
	id->ch_prev = NULL;
	id->ch_next = ch->ids;
	if (ch->ids)
		ch->ids->ch_prev = id;
	ch->ids = id;
}

/* Takes |id| off |ch|'s id list, if it is on it (|ch|'s lock held). */
static void ch_unlink(struct cm_channel *ch, struct cm_id *id)
{
	if (!id->ch_prev && ch->ids != id)
		return;
	ch->n_inline -= id_inline(id);
	if (id->ch_prev)
		id->ch_prev->ch_next = id->ch_next;
	else
		ch->ids = id->ch_next;
	if (id->ch_next)
		id->ch_next->ch_prev = id->ch_prev;
	id->ch_prev = id->ch_next = NULL;
}

void cm_channel_add_id(struct cm_id *id)
{
	struct cm_channel *ch = id->ch;

	pthread_mutex_lock(&ch->lock);
	ch_link(ch, id);
	pthread_mutex_unlock(&ch->lock);
}

void cm_channel_del_id(struct cm_id *id)
{
	struct cm_channel *ch = id->ch;

	pthread_mutex_lock(&ch->lock);
	ch_unlink(ch, id);
	/* a get_event may be running |id|'s INLINE engine, found through the
	 * list before we unlinked it: wait (no new run starts meanwhile) */
	ch_wait_undriven(ch);
	pthread_mutex_unlock(&ch->lock);
}

void cm_channel_purge(struct cm_id *id, struct cm_id **children)
{
	struct cm_channel *ch = id->ch;
	struct cm_event **pp, *ev, *dead = NULL;
	bool was_full;

	*children = NULL;
	pthread_mutex_lock(&ch->lock);
	was_full = ch->head != NULL;
	pp = &ch->head;
	ch->tail = NULL;
	while ((ev = *pp)) {
		if (ev->owner != id && ev->pub.id != &id->pub) {
			ch->tail = ev;
			pp = &ev->next;
			continue;
		}
		*pp = ev->next;
		if (ev->pub.event == IWARP_CM_EVENT_CONNECT_REQUEST &&
		    ev->owner == id && ev->pub.id != &id->pub) {
			/* the child was never delivered: the caller frees it */
			struct cm_id *c = cm_id_from_pub(ev->pub.id);

			c->p_next = *children;
			*children = c;
		}
		ev->next = dead;
		dead = ev;
	}
	if (was_full && !ch->head)
		verbs_efd_step(ch->pub.fd, false);
	pthread_mutex_unlock(&ch->lock);
	while (dead) {
		ev = dead->next;
		iw_free(dead);
		dead = ev;
	}
}

void cm_channel_wait_acked(struct cm_id *id)
{
	struct cm_channel *ch = id->ch;

	pthread_mutex_lock(&ch->lock);
	while (id->events_out)
		pthread_cond_wait(&ch->acked, &ch->lock);
	pthread_mutex_unlock(&ch->lock);
}

/* Collects the INLINE-mode contexts of |ch|'s ids (ch->lock held). */
static int channel_inline_ctxs(struct cm_channel *ch,
			       struct iwarp_context **out)
{
	struct cm_id *id;
	int n = 0, i;

	/* most channels have none: no walk over thousands of ids per wait */
	if (!ch->n_inline)
		return 0;
	for (id = ch->ids; id && n < CM_INLINE_MAX; id = id->ch_next) {
		struct iwarp_context *ctx = id->pub.verbs;

		if (!ctx || ctx->attr.progress != IWARP_PROGRESS_INLINE)
			continue;
		for (i = 0; i < n && out[i] != ctx; i++)
			;
		if (i == n)
			out[n++] = ctx;
	}
	return n;
}

static bool channel_has_event(struct cm_channel *ch)
{
	bool any;

	pthread_mutex_lock(&ch->lock);
	any = ch->head != NULL;
	pthread_mutex_unlock(&ch->lock);
	return any;
}

IWARP_EXPORT int iwarp_cm_get_event(struct iwarp_event_channel *channel,
				    struct iwarp_cm_event **event)
{
	struct iwarp_context *inl[CM_INLINE_MAX];
	struct cm_channel *ch;
	struct cm_event *ev;
	struct pollfd pfd;
	int fl, n, i, r;
	bool held;

	if (!channel || !event)
		return -EINVAL;
	ch = cm_channel_from_pub(channel);
	for (;;) {
		pthread_mutex_lock(&ch->lock);
		ev = ch->head;
		if (ev) {
			bool emptied;

			ch->head = ev->next;
			emptied = !ch->head;
			if (emptied)
				ch->tail = NULL;
			ev->next = NULL;
			ev->owner->events_out++;
			pthread_mutex_unlock(&ch->lock);
			if (emptied)
				verbs_efd_step(ch->pub.fd, false);
			*event = &ev->pub;
			return 0;
		}
		held = ch->draining != 0; /* an id goes: retry in 1 ms */
		n = held ? 0 : channel_inline_ctxs(ch, inl);
		if (n)
			ch->driving++;
		pthread_mutex_unlock(&ch->lock);

		/* INLINE progress: nobody else runs those engines */
		for (i = 0; i < n; i++)
			iwarp_progress(inl[i]);
		if (n) {
			pthread_mutex_lock(&ch->lock);
			if (!--ch->driving)
				pthread_cond_broadcast(&ch->drove);
			pthread_mutex_unlock(&ch->lock);
		}
		fl = fcntl(ch->pub.fd, F_GETFL);
		if (fl < 0)
			return -errno;
		if (fl & O_NONBLOCK) {
			if (n && channel_has_event(ch))
				continue;
			return -EAGAIN;
		}
		pfd.fd = ch->pub.fd;
		pfd.events = POLLIN;
		pfd.revents = 0;
		r = poll(&pfd, 1, n || held ? 1 : -1);
		/* a handler without SA_RESTART ends the wait, as it ends
		 * librdmacm's read(2) on the channel fd (util/thread.h) */
		if (r < 0 && (errno != EINTR || iw_wait_interrupted()))
			return -errno;
	}
}

IWARP_EXPORT int iwarp_cm_ack_event(struct iwarp_cm_event *event)
{
	struct cm_event *ev = (struct cm_event *)event;
	struct cm_channel *ch;

	if (!event)
		return -EINVAL;
	ch = ev->owner->ch;
	pthread_mutex_lock(&ch->lock);
	ev->owner->events_out--;
	pthread_cond_broadcast(&ch->acked);
	if (ch->n_spare < CM_CHANNEL_SPARE_MAX) {
		ev->next = ch->spare;
		ch->spare = ev;
		ch->n_spare++;
		ev = NULL;
	}
	pthread_mutex_unlock(&ch->lock);
	iw_free(ev);
	return 0;
}

/* Locks two distinct channels in address order, so that two threads
 * locking the same pair cannot deadlock. */
static void ch_lock_pair(struct cm_channel *a, struct cm_channel *b)
{
	if ((uintptr_t)a > (uintptr_t)b) {
		struct cm_channel *t = a;

		a = b;
		b = t;
	}
	pthread_mutex_lock(&a->lock);
	pthread_mutex_lock(&b->lock);
}

static void ch_unlock_pair(struct cm_channel *a, struct cm_channel *b)
{
	pthread_mutex_unlock(&a->lock);
	pthread_mutex_unlock(&b->lock);
}

/* Moves |id| from its channel's id list to |to|'s (both locks held). */
static void ch_relink(struct cm_id *id, struct cm_channel *to)
{
	ch_unlink(id->ch, id);
	__atomic_store_n(&id->ch, to, __ATOMIC_RELEASE); /* cm_event_push */
	id->pub.channel = &to->pub;
	ch_link(to, id);
}

/* Whether queued event |ev| goes with a migration (both locks held). */
static bool ch_event_moves(const struct cm_event *ev)
{
	return ev->owner->migrating || cm_id_from_pub(ev->pub.id)->migrating;
}

int cm_channel_move(struct cm_id *id, struct cm_channel *to)
{
	struct cm_channel *from = id->ch;
	struct cm_event **pp, *ev, *head = NULL, **tailp = &head, *last = NULL;
	bool from_full, to_full;

	if (from == to)
		return 0;
	ch_lock_pair(from, to);
	if (id->events_out) {
		/* delivered on |from| and not acked: the caller waits */
		ch_unlock_pair(from, to);
		return -EAGAIN;
	}
	/* what moves: |id|'s events, and for a listener the children of its
	 * undelivered CONNECT_REQUESTs with all their events (the
	 * application learns of those children on |to| now) */
	id->migrating = true;
	for (ev = from->head; ev; ev = ev->next)
		if (ev->owner == id && ev->pub.id != &id->pub)
			cm_id_from_pub(ev->pub.id)->migrating = true;
	from_full = from->head != NULL;
	to_full = to->head != NULL;
	pp = &from->head;
	from->tail = NULL;
	while ((ev = *pp)) {
		if (!ch_event_moves(ev)) {
			from->tail = ev;
			pp = &ev->next;
			continue;
		}
		*pp = ev->next; /* unlinked; queued on |to| in the same order */
		ev->next = NULL;
		*tailp = ev;
		tailp = &ev->next;
		last = ev;
	}
	if (head) {
		if (to->tail)
			to->tail->next = head;
		else
			to->head = head;
		to->tail = last;
	}
	if (from_full && !from->head)
		verbs_efd_step(from->pub.fd, false);
	if (!to_full && to->head)
		verbs_efd_step(to->pub.fd, true);
	for (ev = head; ev; ev = ev->next) {
		struct cm_id *c = cm_id_from_pub(ev->pub.id);

		if (c != id && c->migrating) {
			c->migrating = false;
			ch_relink(c, to);
		}
	}
	id->migrating = false;
	ch_relink(id, to);
	ch_unlock_pair(from, to);
	return 0;
}

void cm_channel_settle(struct cm_channel *ch)
{
	pthread_mutex_lock(&ch->lock);
	ch_wait_undriven(ch);
	pthread_mutex_unlock(&ch->lock);
}
