/*
 * compat/rdmacm/channel.c: event channels (rdma_create_event_channel(3)).
 *
 * The channel's fd is the native channel's fd, so an application that polls
 * it or sets O_NONBLOCK on it gets what rdma_cm(7) promises: readable when
 * an event is pending, and rdma_get_cm_event() failing with EAGAIN when
 * none is and the fd is non-blocking.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "compat/rdmacm/cma.h"

int cma_errno(int ret)
{
	if (ret >= 0)
		return 0;
	if (ret > -1000)
		return -ret;
	if (ret == IWARP_ERR_MPA_REJECTED)
		return ECONNREFUSED;
	if (ret == IWARP_ERR_MPA_STREAM_LOST)
		return ECONNRESET;
	return EPROTO; /* an MPA, DDP or RDMAP protocol error */
}

int cma_ret(int ret)
{
	if (ret >= 0)
		return 0;
	errno = cma_errno(ret);
	return -1;
}

void cma_log(const char *fmt, ...)
{
	const char *v = getenv("IWARP_DEBUG");
	va_list ap;

	if (!v || !*v || !strcmp(v, "0"))
		return;
	va_start(ap, fmt);
	fputs("librdmacm(iwarp): ", stderr);
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
	va_end(ap);
}

int cma_ret_log(const char *what, int ret)
{
	if (ret >= 0)
		return 0;
	cma_log("%s: %d (%s)", what, ret, iwarp_strerror(ret));
	return cma_ret(ret);
}

struct cma_channel *cma_channel_create(void)
{
	struct cma_channel *chan = calloc(1, sizeof(*chan));

	if (!chan)
		return NULL;
	chan->nch = iwarp_cm_create_event_channel();
	if (!chan->nch) {
		int err = errno;

		free(chan);
		errno = err;
		return NULL;
	}
	chan->ch.fd = chan->nch->fd;
	return chan;
}

void cma_channel_destroy(struct cma_channel *chan)
{
	if (!chan)
		return;
	iwarp_cm_destroy_event_channel(chan->nch);
	free(chan);
}

struct rdma_event_channel *rdma_create_event_channel(void)
{
	struct cma_channel *chan;

	/* The device must open (it is what librdmacm checks first). */
	if (!cma_verbs())
		return NULL;
	chan = cma_channel_create();
	return chan ? &chan->ch : NULL;
}

void rdma_destroy_event_channel(struct rdma_event_channel *channel)
{
	if (channel)
		cma_channel_destroy(cma_channel_of(channel));
}
