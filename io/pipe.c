/*
 * io/pipe.c: an in-memory byte pipe between two backends of one engine.
 *
 * Each direction is a ring buffer. Operations only record what the owner
 * asked for; a work item (the "pump") moves bytes and reports completions on
 * a later loop pass, so the endpoint above sees the same asynchronous
 * behaviour as with a socket, deterministically.
 */
#include "config.h"

#include <errno.h>
#include <string.h>

#include "io/backend.h"
#include "io/engine_int.h"
#include "io/testio.h"
#include "util/mem.h"

#define PIPE_CAP_DEFAULT (64 * 1024)

struct pipe_dir {
	uint8_t *buf;
	size_t cap, head, len; /* bytes [head, head + len) mod cap */
	bool fin;	       /* the writer shut down: EOF after the data */
	bool reset;	       /* the writer aborted: -ECONNRESET */
};

struct pipe_shared;

struct pipe_end {
	struct io_backend be; /* first */
	struct pipe_shared *p;
	int side;
	const struct iovec *rx_iov, *tx_iov;
	int rx_cnt, tx_cnt;
	bool rx_busy, tx_busy;
	bool cancelled;
	bool gone; /* destroyed */
};

struct pipe_shared {
	struct engine *eng;
	struct pipe_end end[2];
	struct pipe_dir dir[2]; /* dir[i]: written by end i, read by end 1-i */
	struct engine_work pump;
	bool pumping;
};

static void pipe_kick(struct pipe_shared *p)
{
	engine_work_queue(p->eng, &p->pump);
}

/* Copies up to |max| bytes of |iov| into the ring; returns the count. */
static size_t pipe_write(struct pipe_dir *d, const struct iovec *iov, int cnt)
{
	size_t n = 0;
	int i;

	for (i = 0; i < cnt && d->len < d->cap; i++) {
		const uint8_t *src = iov[i].iov_base;
		size_t left = iov[i].iov_len;

		while (left && d->len < d->cap) {
			size_t pos = (d->head + d->len) % d->cap;
			size_t k = d->cap - pos;

			if (k > d->cap - d->len)
				k = d->cap - d->len;
			if (k > left)
				k = left;
			memcpy(d->buf + pos, src, k);
			src += k;
			left -= k;
			d->len += k;
			n += k;
		}
	}
	return n;
}

/* Copies ring bytes into |iov|; returns the count. */
static size_t pipe_read(struct pipe_dir *d, const struct iovec *iov, int cnt)
{
	size_t n = 0;
	int i;

	for (i = 0; i < cnt && d->len; i++) {
		uint8_t *dst = iov[i].iov_base;
		size_t left = iov[i].iov_len;

		while (left && d->len) {
			size_t k = d->cap - d->head;

			if (k > d->len)
				k = d->len;
			if (k > left)
				k = left;
			memcpy(dst, d->buf + d->head, k);
			dst += k;
			left -= k;
			d->head = (d->head + k) % d->cap;
			d->len -= k;
			n += k;
		}
	}
	return n;
}

static void pipe_free(struct pipe_shared *p)
{
	iw_free(p->dir[0].buf);
	iw_free(p->dir[1].buf);
	iw_free(p);
}

/* One end's pending ops: complete what can complete. */
static bool pipe_pump_end(struct pipe_shared *p, int side)
{
	struct pipe_end *e = &p->end[side];
	struct pipe_dir *out = &p->dir[side], *in = &p->dir[1 - side];
	bool peer_gone = p->end[1 - side].gone;
	bool did = false;

	if (e->tx_busy) {
		ssize_t res = 0;

		if (e->cancelled || out->fin)
			res = -ECANCELED;
		else if (peer_gone)
			res = -EPIPE;
		else
			res = (ssize_t)pipe_write(out, e->tx_iov, e->tx_cnt);
		if (res != 0) {
			e->tx_busy = false;
			did = true;
			e->be.up.tx_complete(e->be.up.up, res);
		}
	}
	if (e->rx_busy && !e->gone) {
		ssize_t res = 0;
		bool done = true;

		if (in->len)
			res = (ssize_t)pipe_read(in, e->rx_iov, e->rx_cnt);
		else if (e->cancelled)
			res = -ECANCELED;
		else if (in->reset)
			res = -ECONNRESET;
		else if (in->fin)
			res = 0;
		else
			done = false;
		if (done) {
			e->rx_busy = false;
			did = true;
			e->be.up.rx_complete(e->be.up.up, res);
		}
	}
	return did;
}

static void pipe_pump(void *arg)
{
	struct pipe_shared *p = arg;
	bool again;

	p->pumping = true;
	/* Completions may free ring space or add data for the other end:
	 * when anything happened, look again on the next pass. */
	again = !p->end[0].gone && pipe_pump_end(p, 0);
	if (!p->end[1].gone)
		again |= pipe_pump_end(p, 1);
	p->pumping = false;
	if (p->end[0].gone && p->end[1].gone && !atomic_load(&p->pump.queued))
		pipe_free(p);
	else if (again)
		pipe_kick(p);
}

static int pipe_recv(struct io_backend *be, const struct iovec *iov, int cnt)
{
	struct pipe_end *e = (struct pipe_end *)be;

	e->rx_iov = iov;
	e->rx_cnt = cnt;
	e->rx_busy = true;
	pipe_kick(e->p);
	return 0;
}

static int pipe_send(struct io_backend *be, const struct iovec *iov, int cnt)
{
	struct pipe_end *e = (struct pipe_end *)be;

	e->tx_iov = iov;
	e->tx_cnt = cnt;
	e->tx_busy = true;
	pipe_kick(e->p);
	return 0;
}

static int pipe_shutdown(struct io_backend *be)
{
	struct pipe_end *e = (struct pipe_end *)be;

	e->p->dir[e->side].fin = true;
	pipe_kick(e->p);
	return 0;
}

static void pipe_cancel(struct io_backend *be)
{
	struct pipe_end *e = (struct pipe_end *)be;

	e->cancelled = true;
	pipe_kick(e->p);
}

static void pipe_destroy(struct io_backend *be, bool abort)
{
	struct pipe_end *e = (struct pipe_end *)be;
	struct pipe_shared *p = e->p;

	e->gone = true;
	e->rx_busy = e->tx_busy = false;
	if (abort)
		p->dir[e->side].reset = true;
	else
		p->dir[e->side].fin = true;
	if (p->end[1 - e->side].gone && !p->pumping &&
	    !atomic_load(&p->pump.queued))
		pipe_free(p);
	else
		pipe_kick(p);
}

static int pipe_mss(struct io_backend *be)
{
	(void)be;
	return 65483; /* as loopback TCP */
}

static const struct io_backend_ops pipe_ops = {
	.name = "pipe",
	.recv = pipe_recv,
	.send = pipe_send,
	.shutdown = pipe_shutdown,
	.cancel = pipe_cancel,
	.destroy = pipe_destroy,
	.mss = pipe_mss,
};

int io_pipe_create(struct engine *eng, size_t cap_ab, size_t cap_ba,
		   struct io_backend **a, struct io_backend **b)
{
	struct pipe_shared *p = iw_calloc(1, sizeof(*p));
	int i;

	if (!p)
		return -ENOMEM;
	p->dir[0].cap = cap_ab ? cap_ab : PIPE_CAP_DEFAULT;
	p->dir[1].cap = cap_ba ? cap_ba : PIPE_CAP_DEFAULT;
	for (i = 0; i < 2; i++) {
		p->dir[i].buf = iw_malloc(p->dir[i].cap);
		if (!p->dir[i].buf) {
			pipe_free(p);
			return -ENOMEM;
		}
		p->end[i].be.ops = &pipe_ops;
		p->end[i].be.eng = eng;
		p->end[i].p = p;
		p->end[i].side = i;
	}
	p->eng = eng;
	engine_work_init(&p->pump, pipe_pump, p);
	*a = &p->end[0].be;
	*b = &p->end[1].be;
	return 0;
}
