/*
 * io/sock_direct.c: the TCP socket backend of a direct_io engine
 * (engine.h): recvmsg(2) and sendmsg(2) with MSG_DONTWAIT, on the
 * readiness edges of the engine's epoll set, by whichever thread holds the
 * engine (the progress thread, a thread waiting for a completion, a
 * poster). No io_uring operation is ever in flight, so nothing outlives
 * destroy() but a queued work item.
 */
#include "config.h"

#include <errno.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <unistd.h>

#include "io/backend.h"
#include "io/engine_int.h"
#include "io/net.h"
#include "io/sock_int.h"
#include "util/mem.h"
#include "util/tsan.h"

struct sockd_be {
	struct io_backend be; /* first */
	int fd;
	struct engine_pollee pe;
	struct engine_work work; /* does the pending I/O, reports it */
	struct msghdr rx_msg, tx_msg;
	size_t rx_len;		 /* octets the receive asks for */
	bool rx_want, tx_want;	 /* an op started, not completed */
	bool readable, writable; /* no EAGAIN since the last edge */
	bool rx_cancel;		 /* cancel_rx: end the receive empty */
	bool hup;		 /* FIN or error seen: reads never block */
	bool in_work, dying;	 /* destroy() inside the work / done */
#if IW_TSAN
	char *tsan_wire;
#endif
};

static void sockd_free_mem(struct engine_pollee *pe)
{
	iw_free(io_container_of(pe, struct sockd_be, pe));
}

static void sockd_free(struct sockd_be *s)
{
	engine_pollee_del(s->be.eng, s->fd);
	close(s->fd);
	engine_pollee_release(s->be.eng, &s->pe, sockd_free_mem);
}

static void sockd_queue(struct sockd_be *s)
{
	engine_work_queue(s->be.eng, &s->work);
}

/* Sends what the owner gave; false when the socket is full (wait for the
 * next edge). */
static bool sockd_do_send(struct sockd_be *s)
{
	ssize_t n;

#if IW_TSAN
	iw_tsan_send_begin(sock_tsan_wire(s->fd, &s->tsan_wire),
			   s->tx_msg.msg_iov, s->tx_msg.msg_iovlen);
#endif
	n = sendmsg(s->fd, &s->tx_msg, MSG_DONTWAIT | MSG_NOSIGNAL);
	iw_tsan_send_end();
	if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
		s->writable = false;
		return false;
	}
	if (n < 0 && errno == EINTR)
		return false; /* the work item is queued again below */
	s->tx_want = false;
	s->be.up.tx_complete(s->be.up.up, n < 0 ? -errno : n);
	return true;
}

static bool sockd_do_recv(struct sockd_be *s)
{
	ssize_t n;

	if (s->rx_cancel) {
		s->rx_cancel = false;
		s->rx_want = false;
		s->be.up.rx_complete(s->be.up.up, -ECANCELED);
		return true;
	}
	n = recvmsg(s->fd, &s->rx_msg, MSG_DONTWAIT);
	if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
		s->readable = false;
		return false;
	}
	if (n < 0 && errno == EINTR)
		return false;
#if IW_TSAN
	if (n > 0)
		iw_tsan_acquire(sock_tsan_wire(s->fd, &s->tsan_wire));
#endif
	/* less than asked: the socket is empty now; new data brings a new
	 * edge (EPOLLET queues one per arrival), so skip the EAGAIN call.
	 * Not once the peer's FIN or an error was seen: its edge may have
	 * come with the data just read, and no other follows. */
	if (n > 0 && (size_t)n < s->rx_len && !s->hup)
		s->readable = false;
	s->rx_want = false;
	s->be.up.rx_complete(s->be.up.up, n < 0 ? -errno : n);
	return true;
}

/* The work item: one send and one receive if they can go now. A callback
 * may start the next op (which queues this item again) or destroy us. */
static void sockd_work(void *arg)
{
	struct sockd_be *s = arg;
	bool again = false;

	s->in_work = true;
	if (!s->dying && s->tx_want && s->writable && !sockd_do_send(s))
		again = s->writable; /* EINTR: try again */
	if (!s->dying && s->rx_want && (s->readable || s->rx_cancel) &&
	    !sockd_do_recv(s))
		again = again || s->readable;
	s->in_work = false;
	if (s->dying) {
		if (!atomic_load(&s->work.queued))
			sockd_free(s);
		return;
	}
	if (again)
		sockd_queue(s);
}

static void sockd_ready(struct engine_pollee *pe, uint32_t events)
{
	struct sockd_be *s = io_container_of(pe, struct sockd_be, pe);

	if (s->dying)
		return; /* an edge a driver took before we went (released) */
	if (events & (EPOLLIN | EPOLLRDHUP | EPOLLHUP | EPOLLERR))
		s->readable = true;
	if (events & (EPOLLRDHUP | EPOLLHUP | EPOLLERR))
		s->hup = true;
	if (events & (EPOLLOUT | EPOLLHUP | EPOLLERR))
		s->writable = true;
	if ((s->rx_want && s->readable) || (s->tx_want && s->writable))
		sockd_queue(s);
}

static int sockd_recv(struct io_backend *be, const struct iovec *iov, int cnt)
{
	struct sockd_be *s = (struct sockd_be *)be;

	memset(&s->rx_msg, 0, sizeof(s->rx_msg));
	s->rx_msg.msg_iov = (struct iovec *)iov;
	s->rx_msg.msg_iovlen = (size_t)cnt;
	s->rx_len = 0;
	while (cnt > 0)
		s->rx_len += iov[--cnt].iov_len;
	s->rx_want = true;
	if (s->readable)
		sockd_queue(s);
	return 0;
}

static int sockd_send(struct io_backend *be, const struct iovec *iov, int cnt)
{
	struct sockd_be *s = (struct sockd_be *)be;

	memset(&s->tx_msg, 0, sizeof(s->tx_msg));
	s->tx_msg.msg_iov = (struct iovec *)iov;
	s->tx_msg.msg_iovlen = (size_t)cnt;
	s->tx_want = true;
	if (s->writable)
		sockd_queue(s);
	return 0;
}

static int sockd_shutdown(struct io_backend *be)
{
	return sock_fd_shutdown_wr(((struct sockd_be *)be)->fd);
}

static void sockd_cancel(struct io_backend *be)
{
	struct sockd_be *s = (struct sockd_be *)be;

	/* the pending ops then end at once: EOF for the receive, EPIPE for
	 * the send */
	shutdown(s->fd, SHUT_RDWR);
	s->readable = s->writable = true;
	if (s->rx_want || s->tx_want)
		sockd_queue(s);
}

static void sockd_cancel_rx(struct io_backend *be)
{
	struct sockd_be *s = (struct sockd_be *)be;

	if (!s->rx_want)
		return;
	s->rx_cancel = true;
	sockd_queue(s);
}

static void sockd_destroy(struct io_backend *be, bool abort)
{
	struct sockd_be *s = (struct sockd_be *)be;

	if (abort)
		sock_fd_reset_on_close(s->fd);
	s->dying = true;
	if (s->in_work || atomic_load(&s->work.queued))
		return; /* the work item frees */
	sockd_free(s);
}

static int sockd_mss(struct io_backend *be)
{
	return sock_fd_mss(((struct sockd_be *)be)->fd);
}

static const struct io_backend_ops sockd_ops = {
	.name = "tcp-direct",
	.recv = sockd_recv,
	.send = sockd_send,
	.shutdown = sockd_shutdown,
	.cancel = sockd_cancel,
	.cancel_rx = sockd_cancel_rx,
	.destroy = sockd_destroy,
	.mss = sockd_mss,
	.recv_sync = true, /* recvmsg(2), then rx_complete, in sockd_work */
};

struct io_backend *io_sock_direct_create(struct engine *eng, int fd)
{
	struct sockd_be *s = iw_calloc(1, sizeof(*s));
	int rc;

	if (!s) {
		close(fd);
		return NULL;
	}
	s->be.ops = &sockd_ops;
	s->be.eng = eng;
	s->fd = fd;
	s->pe.ready = sockd_ready;
	/* try at once; EAGAIN clears these until the next edge */
	s->readable = s->writable = true;
	engine_work_init(&s->work, sockd_work, s);
	rc = engine_pollee_add(eng, fd, &s->pe);
	if (rc < 0) {
		close(fd);
		iw_free(s);
		errno = -rc;
		return NULL;
	}
	return &s->be;
}
