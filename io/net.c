/*
 * io/net.c: listeners (io_uring ACCEPT, multishot when available) and
 * outgoing connections (io_uring CONNECT with a linked timeout).
 */
#include "config.h"

#include <errno.h>
#include <liburing.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "io/engine_int.h"
#include "io/net.h"
#include "util/mem.h"

int engine_tcp_setup(int fd, const char *cc)
{
	int one = 1;

	if (setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one)) < 0)
		return -errno;
	if (cc && cc[0] &&
	    setsockopt(fd, IPPROTO_TCP, TCP_CONGESTION, cc,
		       (socklen_t)strlen(cc)) < 0)
		return -errno;
	return 0;
}

int engine_tcp_cc(int fd, char *buf, size_t len)
{
	char name[64];
	socklen_t n = sizeof(name) - 1;

	if (!len)
		return -EINVAL;
	memset(name, 0, sizeof(name));
	if (getsockopt(fd, IPPROTO_TCP, TCP_CONGESTION, name, &n) < 0)
		return -errno;
	name[sizeof(name) - 1] = '\0';
	if (strlen(name) >= len)
		return -ENOSPC;
	strcpy(buf, name);
	return 0;
}

/* ---- listeners ---- */

/*
 * Back-off after an accept failed for lack of resources (EMFILE, ENFILE,
 * ENOBUFS, ENOMEM): the connection stays in the kernel's queue, so
 * re-arming at once would fail again at once, a busy loop. Accepting stops
 * for LST_BACKOFF_MIN_MS, doubling up to LST_BACKOFF_MAX_MS while it keeps
 * failing; a successful accept resets it.
 */
#define LST_BACKOFF_MIN_MS 50u
#define LST_BACKOFF_MAX_MS 1000u

struct listener {
	struct engine_obj obj; /* first */
	struct engine *eng;
	int fd;
	engine_accept_cb on_accept;
	void *arg;
	struct engine_op op;
	struct engine_work start;
	bool armed;	/* an accept is in flight */
	bool multishot; /* the kernel has multishot accept */
	bool closing;
	bool failed;  /* a fatal accept error was reported */
	bool in_cb;   /* inside on_accept: close must not free */
	bool waiting; /* backing off: |retry| re-arms */
	unsigned int backoff_ms;
	struct engine_timer retry;
};

static void lst_arm(struct listener *l)
{
	struct io_uring_sqe *sqe = engine_sqe(l->eng);

	if (!sqe)
		return;
	if (l->multishot)
		io_uring_prep_multishot_accept(sqe, l->fd, NULL, NULL,
					       SOCK_CLOEXEC);
	else
		io_uring_prep_accept(sqe, l->fd, NULL, NULL, SOCK_CLOEXEC);
	io_uring_sqe_set_data(sqe, &l->op);
	l->armed = true;
}

static void lst_free(struct listener *l)
{
	engine_timer_cancel(l->eng, &l->retry);
	engine_obj_del(l->eng, &l->obj);
	close(l->fd);
	iw_free(l);
}

static bool lst_resource_err(int res)
{
	return res == -EMFILE || res == -ENFILE || res == -ENOBUFS ||
	       res == -ENOMEM;
}

static void lst_retry(void *arg)
{
	struct listener *l = arg;

	l->waiting = false;
	if (!l->armed && !l->closing && !l->failed)
		lst_arm(l);
}

/* Stops accepting for the back-off (see LST_BACKOFF_MIN_MS). */
static void lst_backoff(struct listener *l)
{
	struct io_uring_sqe *sqe;

	if (l->waiting)
		return;
	l->backoff_ms = l->backoff_ms ? l->backoff_ms * 2 : LST_BACKOFF_MIN_MS;
	if (l->backoff_ms > LST_BACKOFF_MAX_MS)
		l->backoff_ms = LST_BACKOFF_MAX_MS;
	l->waiting = true;
	engine_timer_start(l->eng, &l->retry, l->backoff_ms, lst_retry, l);
	if (l->armed) {
		/* a multishot accept still armed: stop it too */
		sqe = engine_sqe(l->eng);
		if (sqe) {
			io_uring_prep_cancel(sqe, &l->op, 0);
			io_uring_sqe_set_data(sqe, NULL);
		}
	}
}

static void lst_complete(struct engine_op *op, int res, uint32_t flags)
{
	struct listener *l = io_container_of(op, struct listener, op);
	struct sockaddr_storage ss;
	socklen_t len = sizeof(ss);

	if (!(flags & IORING_CQE_F_MORE))
		l->armed = false;
	if (l->closing) {
		if (res >= 0)
			close(res);
		if (!l->armed)
			lst_free(l);
		return;
	}
	if (res >= 0) {
		l->backoff_ms = 0;
		engine_tcp_setup(res, engine_cc(l->eng));
		if (getpeername(res, (struct sockaddr *)&ss, &len) < 0)
			len = 0;
		l->in_cb = true;
		l->on_accept(l->arg, res, len ? (struct sockaddr *)&ss : NULL,
			     len);
		l->in_cb = false;
		if (l->closing) {
			if (!l->armed)
				lst_free(l);
			return;
		}
	} else if (res == -EINVAL && l->multishot) {
		l->multishot = false; /* old kernel: single-shot accepts */
	} else if (lst_resource_err(res)) {
		lst_backoff(l);
	} else if (res == -ECANCELED && l->waiting) {
		/* the multishot accept lst_backoff stopped */
	} else if (res != -EINTR && res != -EAGAIN && res != -ECONNABORTED) {
		if (!l->armed) {
			l->failed = true; /* report once, stop accepting */
			l->in_cb = true;
			l->on_accept(l->arg, res, NULL, 0);
			l->in_cb = false;
			if (l->closing)
				lst_free(l);
			return;
		}
	}
	if (!l->armed && !l->closing && !l->failed && !l->waiting)
		lst_arm(l);
}

static void lst_abort(struct engine_obj *obj)
{
	engine_listener_close((struct listener *)obj);
}

static void lst_start(void *arg)
{
	struct listener *l = arg;

	if (l->closing) {
		lst_free(l);
		return;
	}
	engine_obj_add(l->eng, &l->obj, lst_abort);
	lst_arm(l);
}

/* The port of |addr| (network order; 0 for another family). */
static uint16_t sa_port_of(const struct sockaddr *addr)
{
	if (addr->sa_family == AF_INET)
		return ((const struct sockaddr_in *)(const void *)addr)
			->sin_port;
	if (addr->sa_family == AF_INET6)
		return ((const struct sockaddr_in6 *)(const void *)addr)
			->sin6_port;
	return 0;
}

int engine_tcp_bind(const struct sockaddr *addr, socklen_t addr_len)
{
	int fd, one = 1, rc;

	fd = socket(addr->sa_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	/* SO_REUSEADDR only for a port given: a server restarting on its
	 * port while old connections sit in TIME_WAIT. A port the kernel
	 * picks has none, and without the option nobody else can bind it
	 * (not even with SO_REUSEADDR) while it is held. */
	if ((sa_port_of(addr) &&
	     setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)) < 0) ||
	    bind(fd, addr, addr_len) < 0) {
		rc = -errno;
		close(fd);
		return rc;
	}
	return fd;
}

int engine_listen_fd(struct engine *eng, int fd, int backlog,
		     engine_accept_cb on_accept, void *arg,
		     struct listener **out)
{
	struct listener *l;

	if (listen(fd, backlog) < 0)
		return -errno;
	l = iw_calloc(1, sizeof(*l));
	if (!l)
		return -ENOMEM;
	l->fd = fd;
	if (eng->cc[0])
		setsockopt(l->fd, IPPROTO_TCP, TCP_CONGESTION, eng->cc,
			   (socklen_t)strlen(eng->cc));
	l->eng = eng;
	l->on_accept = on_accept;
	l->arg = arg;
	l->op.complete = lst_complete;
	l->multishot = true;
	engine_timer_init(&l->retry);
	engine_work_init(&l->start, lst_start, l);
	engine_work_queue(eng, &l->start);
	*out = l;
	return 0;
}

int engine_listen(struct engine *eng, const struct sockaddr *addr,
		  socklen_t addr_len, int backlog, engine_accept_cb on_accept,
		  void *arg, struct listener **out)
{
	int fd, rc;

	fd = engine_tcp_bind(addr, addr_len);
	if (fd < 0)
		return fd;
	rc = engine_listen_fd(eng, fd, backlog, on_accept, arg, out);
	if (rc)
		close(fd);
	return rc;
}

int engine_listener_addr(struct listener *lst, struct sockaddr_storage *ss,
			 socklen_t *len)
{
	*len = sizeof(*ss);
	if (getsockname(lst->fd, (struct sockaddr *)ss, len) < 0)
		return -errno;
	return 0;
}

void engine_listener_close(struct listener *l)
{
	struct io_uring_sqe *sqe;

	if (l->closing)
		return;
	l->closing = true;
	if (atomic_load(&l->start.queued))
		return; /* lst_start frees it */
	if (!l->armed) {
		if (!l->in_cb)
			lst_free(l);
		return;
	}
	/* shutdown() makes a pending accept fail at once; the cancel covers
	 * kernels where it does not */
	shutdown(l->fd, SHUT_RDWR);
	sqe = engine_sqe(l->eng);
	if (sqe) {
		io_uring_prep_cancel(sqe, &l->op, 0);
		io_uring_sqe_set_data(sqe, NULL);
	}
}

/* ---- outgoing connections ---- */

struct connect_req {
	struct engine_obj obj; /* first */
	struct engine *eng;
	int fd;
	struct sockaddr_storage dst;
	socklen_t dst_len;
	struct __kernel_timespec ts;
	unsigned int timeout_ms;
	engine_connect_cb cb;
	void *arg;
	struct engine_op op;
	struct engine_work start;
	bool cancelled;
	bool in_flight;
};

static void conn_free(struct connect_req *c)
{
	engine_obj_del(c->eng, &c->obj);
	if (c->fd >= 0)
		close(c->fd);
	iw_free(c);
}

static void conn_complete(struct engine_op *op, int res, uint32_t flags)
{
	struct connect_req *c = io_container_of(op, struct connect_req, op);
	int fd = c->fd;

	(void)flags;
	c->in_flight = false;
	if (c->cancelled) {
		conn_free(c);
		return;
	}
	if (res == -ECANCELED)
		res = -ETIMEDOUT; /* our linked timeout fired */
	if (res == 0) {
		engine_tcp_setup(fd, engine_cc(c->eng));
		c->fd = -1; /* now the callee's */
		res = fd;
	}
	engine_obj_del(c->eng, &c->obj);
	c->cb(c->arg, res);
	conn_free(c);
}

static void conn_abort(struct engine_obj *obj)
{
	engine_connect_cancel((struct connect_req *)obj);
}

static void conn_start(void *arg)
{
	struct connect_req *c = arg;
	struct io_uring_sqe *sqe;

	if (c->cancelled) {
		conn_free(c);
		return;
	}
	engine_obj_add(c->eng, &c->obj, conn_abort);
	sqe = engine_sqe(c->eng);
	if (!sqe) {
		engine_obj_del(c->eng, &c->obj);
		c->cb(c->arg, -EAGAIN);
		conn_free(c);
		return;
	}
	io_uring_prep_connect(sqe, c->fd, (struct sockaddr *)&c->dst,
			      c->dst_len);
	io_uring_sqe_set_data(sqe, &c->op);
	c->in_flight = true;
	if (c->timeout_ms) {
		struct io_uring_sqe *t;

		sqe->flags |= IOSQE_IO_LINK;
		t = engine_sqe(c->eng);
		if (t) {
			c->ts.tv_sec = c->timeout_ms / 1000;
			c->ts.tv_nsec =
				(long long)(c->timeout_ms % 1000) * 1000000;
			io_uring_prep_link_timeout(t, &c->ts, 0);
			io_uring_sqe_set_data(t, NULL);
		} else {
			sqe->flags &= (uint8_t)~IOSQE_IO_LINK;
		}
	}
	engine_submit(c->eng);
}

int engine_connect_fd(struct engine *eng, int fd, const struct sockaddr *dst,
		      socklen_t dst_len, unsigned int timeout_ms,
		      engine_connect_cb on_connected, void *arg,
		      struct connect_req **out)
{
	struct connect_req *c;

	if (dst_len > sizeof(c->dst))
		return -EINVAL;
	c = iw_calloc(1, sizeof(*c));
	if (!c)
		return -ENOMEM;
	c->fd = fd;
	/* before the SYN, so the handshake already uses it */
	engine_tcp_setup(c->fd, engine_cc(eng));
	memcpy(&c->dst, dst, dst_len);
	c->dst_len = dst_len;
	c->eng = eng;
	c->timeout_ms = timeout_ms;
	c->cb = on_connected;
	c->arg = arg;
	c->op.complete = conn_complete;
	engine_work_init(&c->start, conn_start, c);
	if (out)
		*out = c;
	engine_work_queue(eng, &c->start);
	return 0;
}

int engine_connect(struct engine *eng, const struct sockaddr *dst,
		   socklen_t dst_len, const struct sockaddr *src,
		   socklen_t src_len, unsigned int timeout_ms,
		   engine_connect_cb on_connected, void *arg,
		   struct connect_req **out)
{
	int fd, rc;

	fd = socket(dst->sa_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	if (src && bind(fd, src, src_len) < 0) {
		rc = -errno;
		close(fd);
		return rc;
	}
	rc = engine_connect_fd(eng, fd, dst, dst_len, timeout_ms, on_connected,
			       arg, out);
	if (rc)
		close(fd);
	return rc;
}

void engine_connect_cancel(struct connect_req *c)
{
	struct io_uring_sqe *sqe;

	if (c->cancelled)
		return;
	c->cancelled = true;
	if (atomic_load(&c->start.queued))
		return; /* conn_start frees it */
	if (!c->in_flight) {
		conn_free(c);
		return;
	}
	sqe = engine_sqe(c->eng);
	if (sqe) {
		io_uring_prep_cancel(sqe, &c->op, 0);
		io_uring_sqe_set_data(sqe, NULL);
	}
}
