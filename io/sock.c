/*
 * io/sock.c: the TCP socket backend: one IORING_OP_RECVMSG and one
 * IORING_OP_SENDMSG (gathering all the owner's iovecs) at a time. A
 * direct_io engine's sockets are io/sock_direct.c's instead.
 */
#include "config.h"

#include <errno.h>
#include <liburing.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "io/backend.h"
#include "io/engine_int.h"
#include "io/net.h"
#include "io/sock_int.h"
#include "util/mem.h"
#include "util/tsan.h"

struct sock_be {
	struct io_backend be; /* first */
	int fd;
	struct engine_op rx_op, tx_op;
	struct msghdr rx_msg, tx_msg;
	bool rx_busy, tx_busy;
	bool dying; /* destroy() ran while ops were in flight: free at the end
		     */
#if IW_TSAN
	char *tsan_wire; /* this connection's sync address, see sock_tsan_wire
			  */
#endif
};

#if IW_TSAN
/*
 * The two ends of one TCP connection in this process (loopback tests) sit
 * on different engines: what a sender wrote before its SENDMSG happens
 * before the peer's RECVMSG completion, through the kernel. Both ends name
 * the connection by the sum of the hashes of its two addresses (local and
 * peer), which does not depend on which end computes it, so they pick the
 * same byte (distinct connections may share one: that only adds edges).
 */
static char sock_tsan_table[1024];

static unsigned int sock_tsan_hash(const struct sockaddr_storage *ss,
				   socklen_t len)
{
	const unsigned char *b = (const unsigned char *)ss;
	unsigned int h = 2166136261u;
	socklen_t i;

	for (i = 0; i < len; i++)
		h = (h ^ b[i]) * 16777619u;
	return h;
}

char *sock_tsan_wire(int fd, char **cache)
{
	struct sockaddr_storage a, b;
	socklen_t la = sizeof(a), lb = sizeof(b);

	if (*cache)
		return *cache;
	memset(&a, 0, sizeof(a));
	memset(&b, 0, sizeof(b));
	if (getsockname(fd, (struct sockaddr *)&a, &la) < 0 ||
	    getpeername(fd, (struct sockaddr *)&b, &lb) < 0)
		return &sock_tsan_table[0];
	/* a sum: the same for (local, peer) and (peer, local) */
	*cache = &sock_tsan_table[(sock_tsan_hash(&a, la) +
				   sock_tsan_hash(&b, lb)) %
				  sizeof(sock_tsan_table)];
	return *cache;
}
#endif

#define SOCK_FROM_OP(op, member) io_container_of(op, struct sock_be, member)

static void sock_free(struct sock_be *s)
{
	close(s->fd);
	iw_free(s);
}

static void sock_rx_complete(struct engine_op *op, int res, uint32_t flags)
{
	struct sock_be *s = SOCK_FROM_OP(op, rx_op);

	(void)flags;
	s->rx_busy = false;
#if IW_TSAN
	if (res > 0)
		iw_tsan_acquire(sock_tsan_wire(s->fd, &s->tsan_wire));
#endif
	if (s->dying) {
		if (!s->tx_busy)
			sock_free(s);
		return;
	}
	s->be.up.rx_complete(s->be.up.up, res);
}

static void sock_tx_complete(struct engine_op *op, int res, uint32_t flags)
{
	struct sock_be *s = SOCK_FROM_OP(op, tx_op);

	(void)flags;
	s->tx_busy = false;
	if (s->dying) {
		if (!s->rx_busy)
			sock_free(s);
		return;
	}
	s->be.up.tx_complete(s->be.up.up, res);
}

static int sock_recv(struct io_backend *be, const struct iovec *iov, int cnt)
{
	struct sock_be *s = (struct sock_be *)be;
	struct io_uring_sqe *sqe = engine_sqe(be->eng);

	if (!sqe)
		return -EAGAIN;
	memset(&s->rx_msg, 0, sizeof(s->rx_msg));
	s->rx_msg.msg_iov = (struct iovec *)iov;
	s->rx_msg.msg_iovlen = (size_t)cnt;
	io_uring_prep_recvmsg(sqe, s->fd, &s->rx_msg, 0);
	io_uring_sqe_set_data(sqe, &s->rx_op);
	s->rx_busy = true;
	return 0;
}

static int sock_send(struct io_backend *be, const struct iovec *iov, int cnt)
{
	struct sock_be *s = (struct sock_be *)be;
	struct io_uring_sqe *sqe = engine_sqe(be->eng);

	if (!sqe)
		return -EAGAIN;
	memset(&s->tx_msg, 0, sizeof(s->tx_msg));
	s->tx_msg.msg_iov = (struct iovec *)iov;
	s->tx_msg.msg_iovlen = (size_t)cnt;
#if IW_TSAN
	iw_tsan_release(sock_tsan_wire(s->fd, &s->tsan_wire));
#endif
	io_uring_prep_sendmsg(sqe, s->fd, &s->tx_msg, MSG_NOSIGNAL);
	io_uring_sqe_set_data(sqe, &s->tx_op);
	s->tx_busy = true;
	/* Latency: the send leaves now, not at the end of the loop pass. */
	engine_submit(be->eng);
	return 0;
}

int sock_fd_shutdown_wr(int fd)
{
	if (shutdown(fd, SHUT_WR) < 0 && errno != ENOTCONN)
		return -errno;
	return 0;
}

int sock_fd_mss(int fd)
{
	int mss = 0;
	socklen_t len = sizeof(mss);

	if (getsockopt(fd, IPPROTO_TCP, TCP_MAXSEG, &mss, &len) < 0)
		return -errno;
	return mss;
}

void sock_fd_reset_on_close(int fd)
{
	struct linger lg = {.l_onoff = 1, .l_linger = 0};

	/* RST: the peer learns at once that the stream is gone */
	setsockopt(fd, SOL_SOCKET, SO_LINGER, &lg, sizeof(lg));
}

static int sock_shutdown(struct io_backend *be)
{
	return sock_fd_shutdown_wr(((struct sock_be *)be)->fd);
}

static void sock_cancel(struct io_backend *be)
{
	struct sock_be *s = (struct sock_be *)be;
	struct io_uring_sqe *sqe;

	/* shutdown() wakes a blocked recv (EOF) and send (EPIPE); the cancel
	 * requests cover ops that have not reached the socket yet. */
	shutdown(s->fd, SHUT_RDWR);
	if (s->rx_busy && (sqe = engine_sqe(be->eng))) {
		io_uring_prep_cancel(sqe, &s->rx_op, 0);
		io_uring_sqe_set_data(sqe, NULL);
	}
	if (s->tx_busy && (sqe = engine_sqe(be->eng))) {
		io_uring_prep_cancel(sqe, &s->tx_op, 0);
		io_uring_sqe_set_data(sqe, NULL);
	}
}

static void sock_cancel_rx(struct io_backend *be)
{
	struct sock_be *s = (struct sock_be *)be;
	struct io_uring_sqe *sqe;

	if (s->rx_busy && (sqe = engine_sqe(be->eng))) {
		io_uring_prep_cancel(sqe, &s->rx_op, 0);
		io_uring_sqe_set_data(sqe, NULL);
		engine_submit(be->eng);
	}
}

static void sock_destroy(struct io_backend *be, bool abort)
{
	struct sock_be *s = (struct sock_be *)be;

	if (abort)
		sock_fd_reset_on_close(s->fd);
	if (s->rx_busy || s->tx_busy) {
		s->dying = true;
		sock_cancel(be);
		return;
	}
	sock_free(s);
}

static int sock_mss(struct io_backend *be)
{
	return sock_fd_mss(((struct sock_be *)be)->fd);
}

static const struct io_backend_ops sock_ops = {
	.name = "tcp",
	.recv = sock_recv,
	.send = sock_send,
	.shutdown = sock_shutdown,
	.cancel = sock_cancel,
	.cancel_rx = sock_cancel_rx,
	.destroy = sock_destroy,
	.mss = sock_mss,
};

struct io_backend *io_sock_backend_create(struct engine *eng, int fd)
{
	struct sock_be *s;

	engine_tcp_setup(fd, engine_cc(eng));
	if (engine_direct(eng))
		return io_sock_direct_create(eng, fd);
	s = iw_calloc(1, sizeof(*s));
	if (!s) {
		close(fd);
		return NULL;
	}
	s->be.ops = &sock_ops;
	s->be.eng = eng;
	s->fd = fd;
	s->rx_op.complete = sock_rx_complete;
	s->tx_op.complete = sock_tx_complete;
	return &s->be;
}
