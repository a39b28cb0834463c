/*
 * verbs/async.c: the context's asynchronous event queue (ibv_get_async_event
 * semantics); its blocking wait (verbs/wait.c) drives an INLINE engine.
 *
 * The eventfd's counter is non-zero exactly while the queue is non-empty:
 * it is written when the queue goes from empty to non-empty and drained
 * when it becomes empty again, both under ctx->lock.
 */
#include "config.h"

#include <errno.h>
#include <poll.h>
#include <stdint.h>
#include <string.h>
#include <unistd.h>

#include "util/mem.h"
#include "verbs/verbs.h"
#include "verbs/wait.h"

struct iw_async_node {
	struct iw_async_node *next;
	struct iwarp_async_event ev;
};

void verbs_efd_step(int fd, bool up)
{
	struct pollfd pfd;
	uint64_t v = 1;
	ssize_t r;

	for (;;) {
		r = up ? write(fd, &v, sizeof(v)) : read(fd, &v, sizeof(v));
		if (r >= 0)
			return;
		if (errno == EINTR)
			continue;
		if (errno != EAGAIN || up)
			return; /* a write fails only on overflow: readable */
		/* a program's O_NONBLOCK fd: the raise this read takes back
		 * is still in flight in another thread */
		pfd.fd = fd;
		pfd.events = POLLIN;
		(void)poll(&pfd, 1, -1);
	}
}

void ctx_async_push(struct iwarp_context *ctx,
		    const struct iwarp_async_event *ev)
{
	struct iw_async_node *n = iw_malloc(sizeof(*n));

	if (!n)
		return; /* nothing better to do: the event is lost */
	n->next = NULL;
	n->ev = *ev;
	pthread_mutex_lock(&ctx->lock);
	if (ctx->async_tail) {
		ctx->async_tail->next = n;
	} else {
		ctx->async_head = n;
		verbs_efd_step(ctx->async_fd, true);
	}
	ctx->async_tail = n;
	pthread_mutex_unlock(&ctx->lock);
}

void ctx_async_purge(struct iwarp_context *ctx, const void *element)
{
	struct iw_async_node **pp, *n, *prev = NULL;
	bool had;

	pthread_mutex_lock(&ctx->lock);
	had = ctx->async_head != NULL;
	pp = &ctx->async_head;
	while ((n = *pp)) {
		/* the union's members share their address */
		if (!element || (const void *)n->ev.element.qp == element) {
			*pp = n->next;
			iw_free(n);
			continue;
		}
		prev = n;
		pp = &n->next;
	}
	ctx->async_tail = prev;
	if (had && !ctx->async_head)
		verbs_efd_step(ctx->async_fd, false);
	pthread_mutex_unlock(&ctx->lock);
}

IWARP_EXPORT int iwarp_async_fd(struct iwarp_context *ctx)
{
	if (!ctx)
		return -EINVAL;
	return ctx->async_fd;
}

IWARP_EXPORT int iwarp_get_async_event(struct iwarp_context *ctx,
				       struct iwarp_async_event *event)
{
	struct iw_async_node *n;
	int err;

	if (!ctx || !event)
		return -EINVAL;
	for (;;) {
		pthread_mutex_lock(&ctx->lock);
		n = ctx->async_head;
		if (n) {
			ctx->async_head = n->next;
			if (!ctx->async_head) {
				ctx->async_tail = NULL;
				verbs_efd_step(ctx->async_fd, false);
			}
		}
		pthread_mutex_unlock(&ctx->lock);
		if (n)
			break;
		err = verbs_wait_ctx(ctx, ctx->async_fd);
		if (err)
			return err;
	}
	*event = n->ev;
	iw_free(n);
	return 0;
}

IWARP_EXPORT void iwarp_ack_async_event(struct iwarp_async_event *event)
{
	/* Events hold no reference: the element stays valid until the
	 * application destroys it (queued events for it are then dropped). */
	(void)event;
}
