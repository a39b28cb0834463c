/*
 * io/ep.c: endpoints: the owner's iovec providers on top of a backend.
 *
 * One receive and one send at most in flight. After each completion the
 * owner is asked again (rx_iov / tx_iov), so partial sends and pauses need no
 * special path. Kicks from inside a callback are folded into the running
 * pump (no recursion).
 */
#include "config.h"

#include <errno.h>
#include <string.h>

#include "io/backend.h"
#include "io/engine_int.h"
#include "io/ep.h"
#include "util/mem.h"

struct endpoint {
	struct engine_obj obj; /* first: engine_destroy aborts leftovers */
	struct engine *eng;
	struct io_backend *be;
	const struct ep_ops *ops;
	void *owner;

	/* EP_IOV_MAX each, not zeroed: an idle endpoint keeps the pages of
	 * what it never used untouched */
	struct iovec *rx_iov;
	struct iovec *tx_iov;
	uint8_t *rx_prov; /* provided memory of the receive set (or NULL) */
	uint8_t *rx_own;  /* provided memory of a non-sync backend */
	bool rx_busy, tx_busy;	     /* an op is in flight */
	bool rx_pumping, tx_pumping; /* inside ep_rx_pump / ep_tx_pump */
	bool rx_again, tx_again;     /* kicked while pumping */
	bool shut_req, shut_sent;
	bool dead;		    /* closed() delivered (or about to be) */
	bool peer_eof;		    /* the peer closed cleanly (FIN) */
	bool closing;		    /* ep_close() called */
	bool closed_pending;	    /* closed() waits for I/O in flight */
	int fail_err;		    /* what closed() reports */
	unsigned int depth;	    /* callbacks running */
	void (*drained)(void *arg); /* ep_close_then: runs at the free */
	void *drained_arg;

	/* bytes handed over by ep_set_owner, delivered before new ones */
	uint8_t *carry;
	size_t carry_len, carry_off;

	struct engine_work kick; /* deferred start (create, set_owner) */
};

static void ep_rx_pump(struct endpoint *ep);
static void ep_tx_pump(struct endpoint *ep);

/* Frees |ep| once the owner let go and the backend has nothing in flight. */
static void ep_maybe_free(struct endpoint *ep)
{
	if (!ep->closing || ep->depth || ep->rx_busy || ep->tx_busy ||
	    atomic_load(&ep->kick.queued))
		return;
	/* Answer a peer's FIN with ours (orderly close); reset only a
	 * connection that neither side closed cleanly. */
	ep->be->ops->destroy(ep->be, !ep->shut_sent && !ep->peer_eof);
	engine_obj_del(ep->eng, &ep->obj);
	iw_free(ep->carry);
	/* no receive or send runs any more: the owner's buffers are free */
	if (ep->drained)
		ep->drained(ep->drained_arg);
	iw_free(ep->rx_iov);
	iw_free(ep->tx_iov);
	iw_free(ep->rx_own);
	iw_free(ep);
}

/* Delivers closed() once no receive or send is in flight any more. */
static void ep_deliver_closed(struct endpoint *ep)
{
	if (!ep->closed_pending || ep->closing || ep->rx_busy || ep->tx_busy)
		return;
	ep->closed_pending = false;
	ep->depth++;
	ep->ops->closed(ep->owner, ep->fail_err);
	ep->depth--;
}

/* The stream ended (EOF or error): tell the owner once, stop all I/O. */
static void ep_fail(struct endpoint *ep, int err)
{
	if (ep->dead || ep->closing)
		return;
	ep->dead = true;
	ep->peer_eof = err == 0;
	ep->fail_err = err;
	ep->closed_pending = true;
	if (ep->rx_busy || ep->tx_busy)
		ep->be->ops->cancel(ep->be);
	ep_deliver_closed(ep);
	ep_maybe_free(ep);
}

static bool ep_active(const struct endpoint *ep)
{
	return !ep->dead && !ep->closing;
}

/*
 * Gives the provided entry of the receive set rx_iov[0..cnt) its memory
 * (EP_RX_PROVIDED): the engine's shared scratch when the octets are
 * consumed at once (|sync|), else the endpoint's own buffer. 0 or -ENOMEM.
 */
static int ep_rx_provide(struct endpoint *ep, int cnt, bool sync)
{
	struct iovec *last = &ep->rx_iov[cnt - 1];

	ep->rx_prov = NULL;
	if (last->iov_base)
		return 0;
	if (last->iov_len > EP_RX_PROVIDED_MAX)
		last->iov_len = EP_RX_PROVIDED_MAX;
	if (sync) {
		ep->rx_prov = engine_rx_scratch(ep->eng);
	} else {
		if (!ep->rx_own)
			ep->rx_own = iw_malloc(EP_RX_PROVIDED_MAX);
		ep->rx_prov = ep->rx_own;
	}
	if (!ep->rx_prov)
		return -ENOMEM;
	last->iov_base = ep->rx_prov;
	return 0;
}

/* The owner's rx_done (or rx_done_at with the provided memory). */
static void ep_owner_rx_done(struct endpoint *ep, size_t n)
{
	if (ep->ops->rx_done_at)
		ep->ops->rx_done_at(ep->owner, n, ep->rx_prov);
	else
		ep->ops->rx_done(ep->owner, n);
}

/* Hands carried bytes to the owner; false when it paused or went away. */
static bool ep_rx_carry(struct endpoint *ep)
{
	while (ep->carry && ep_active(ep)) {
		size_t left = ep->carry_len - ep->carry_off, n = 0;
		int cnt, i;

		cnt = ep->ops->rx_iov(ep->owner, ep->rx_iov, EP_IOV_MAX);
		if (cnt <= 0 || !ep_active(ep))
			return false;
		if (cnt > EP_IOV_MAX)
			cnt = EP_IOV_MAX;
		if (ep_rx_provide(ep, cnt, true)) {
			ep_fail(ep, -ENOMEM);
			return false;
		}
		for (i = 0; i < cnt && n < left; i++) {
			size_t k = ep->rx_iov[i].iov_len;

			if (k > left - n)
				k = left - n;
			memcpy(ep->rx_iov[i].iov_base,
			       ep->carry + ep->carry_off + n, k);
			n += k;
		}
		if (n == 0)
			return false; /* the owner offered no room */
		ep->carry_off += n;
		if (ep->carry_off == ep->carry_len) {
			iw_free(ep->carry);
			ep->carry = NULL;
			ep->carry_len = ep->carry_off = 0;
		}
		ep_owner_rx_done(ep, n);
	}
	return ep_active(ep);
}

static void ep_rx_pump(struct endpoint *ep)
{
	if (ep->rx_pumping) {
		ep->rx_again = true;
		return;
	}
	ep->rx_pumping = true;
	ep->depth++;
	do {
		size_t total;
		int cnt, rc, i;

		ep->rx_again = false;
		if (!ep_active(ep) || ep->rx_busy)
			break;
		if (ep->carry && !ep_rx_carry(ep))
			continue; /* paused: a kick inside sets rx_again */
		cnt = ep->ops->rx_iov(ep->owner, ep->rx_iov, EP_IOV_MAX);
		if (cnt <= 0 || !ep_active(ep))
			continue;
		if (cnt > EP_IOV_MAX)
			cnt = EP_IOV_MAX;
		for (i = 0, total = 0; i < cnt; i++)
			total += ep->rx_iov[i].iov_len;
		if (!total)
			continue; /* no room: a 0-byte receive would read as EOF
				   */
		rc = ep_rx_provide(ep, cnt, ep->be->ops->recv_sync);
		if (!rc)
			rc = ep->be->ops->recv(ep->be, ep->rx_iov, cnt);
		if (rc < 0) {
			ep->rx_pumping = false;
			ep->depth--;
			ep_fail(ep, rc);
			return;
		}
		ep->rx_busy = true;
	} while (ep->rx_again);
	ep->rx_pumping = false;
	ep->depth--;
	ep_maybe_free(ep);
}

static void ep_tx_pump(struct endpoint *ep)
{
	if (ep->tx_pumping) {
		ep->tx_again = true;
		return;
	}
	ep->tx_pumping = true;
	ep->depth++;
	do {
		size_t total = 0;
		int cnt, rc = 0, i;

		ep->tx_again = false;
		if (!ep_active(ep) || ep->tx_busy || ep->shut_sent)
			break;
		cnt = ep->ops->tx_iov(ep->owner, ep->tx_iov, EP_IOV_MAX);
		if (!ep_active(ep))
			break;
		if (cnt > EP_IOV_MAX)
			cnt = EP_IOV_MAX;
		for (i = 0; i < cnt; i++)
			total += ep->tx_iov[i].iov_len;
		if (cnt <= 0 || total == 0) {
			if (ep->shut_req) {
				rc = ep->be->ops->shutdown(ep->be);
				ep->shut_sent = true;
			}
		} else {
			rc = ep->be->ops->send(ep->be, ep->tx_iov, cnt);
			if (rc == 0)
				ep->tx_busy = true;
		}
		if (rc < 0) {
			ep->tx_pumping = false;
			ep->depth--;
			ep_fail(ep, rc);
			return;
		}
	} while (ep->tx_again);
	ep->tx_pumping = false;
	ep->depth--;
	ep_maybe_free(ep);
}

/* Calls the owner's rx_done(|n|); |depth| keeps |ep| alive across it. */
static void ep_rx_done(struct endpoint *ep, size_t n)
{
	ep->depth++;
	ep_owner_rx_done(ep, n);
	ep->depth--;
}

/* Hands the owner |n| octets a receive brought, counting the receive for
 * the engine's batch accounting. */
static void ep_rx_deliver(struct endpoint *ep, size_t n)
{
	engine_rx_count(ep_engine(ep));
	ep_rx_done(ep, n);
}

/* Tells the owner the transport accepted |n| octets of its send. */
static void ep_tx_deliver(struct endpoint *ep, size_t n)
{
	ep->depth++;
	ep->ops->tx_done(ep->owner, n);
	ep->depth--;
}

static void ep_rx_complete(void *up, ssize_t res)
{
	struct endpoint *ep = up;

	ep->rx_busy = false;
	if (!ep_active(ep)) {
		/* the stream ended (a send failed, a reset) while this receive
		 * was in flight: octets it brought arrived before the end, as
		 * a read(2) would have returned them, so the owner places them
		 * before closed() (the peer's last message may be among them)
		 */
		if (!ep->closing && res > 0)
			ep_rx_deliver(ep, (size_t)res);
		ep_deliver_closed(ep);
		ep_maybe_free(ep);
		return;
	}
	if (res == -ECANCELED) {
		/* ep_cancel_rx: nothing landed; ask the owner again */
		ep_rx_done(ep, 0);
		ep_rx_pump(ep);
		return;
	}
	if (res == 0) {
		ep_fail(ep, 0);
		return;
	}
	if (res < 0 && res != -EAGAIN && res != -EINTR) {
		ep_fail(ep, (int)res);
		return;
	}
	if (res > 0)
		ep_rx_deliver(ep, (size_t)res);
	ep_rx_pump(ep);
}

static void ep_tx_complete(void *up, ssize_t res)
{
	struct endpoint *ep = up;

	ep->tx_busy = false;
	if (!ep_active(ep)) {
		/* the stream ended (peer EOF, an error) while this send was
		 * in flight: what the transport accepted still counts (a Send
		 * completes once handed to TCP, and the peer may well have
		 * it), so the owner hears of it before closed() */
		if (!ep->closing && res > 0)
			ep_tx_deliver(ep, (size_t)res);
		ep_deliver_closed(ep);
		ep_maybe_free(ep);
		return;
	}
	if (res == 0)
		res = -EPIPE; /* we never send 0 bytes: the stream is gone */
	if (res < 0 && res != -EAGAIN && res != -EINTR) {
		ep_fail(ep, (int)res);
		return;
	}
	if (res > 0)
		ep_tx_deliver(ep, (size_t)res);
	ep_tx_pump(ep);
}

static void ep_kick_work(void *arg)
{
	struct endpoint *ep = arg;

	ep->depth++; /* a pump must not free |ep| under the other */
	ep_rx_pump(ep);
	ep_tx_pump(ep);
	ep->depth--;
	ep_maybe_free(ep);
}

static void ep_abort(struct engine_obj *obj)
{
	ep_close((struct endpoint *)obj);
}

struct endpoint *ep_create(struct engine *eng, struct io_backend *be,
			   const struct ep_ops *ops, void *owner)
{
	struct endpoint *ep = iw_calloc(1, sizeof(*ep));
	struct io_backend_up up = {ep_rx_complete, ep_tx_complete, ep};

	if (ep) {
		ep->rx_iov = iw_malloc(EP_IOV_MAX * sizeof(*ep->rx_iov));
		ep->tx_iov = iw_malloc(EP_IOV_MAX * sizeof(*ep->tx_iov));
		if (!ep->rx_iov || !ep->tx_iov) {
			iw_free(ep->rx_iov);
			iw_free(ep->tx_iov);
			iw_free(ep);
			ep = NULL;
		}
	}
	if (!ep) {
		be->ops->destroy(be, true);
		return NULL;
	}
	up.up = ep;
	ep->eng = eng;
	ep->be = be;
	ep->ops = ops;
	ep->owner = owner;
	io_backend_set_up(be, &up);
	engine_work_init(&ep->kick, ep_kick_work, ep);
	engine_obj_add(eng, &ep->obj, ep_abort);
	engine_work_queue(eng, &ep->kick);
	return ep;
}

struct endpoint *ep_create_fd(struct engine *eng, int fd,
			      const struct ep_ops *ops, void *owner)
{
	struct io_backend *be = io_sock_backend_create(eng, fd);

	if (!be)
		return NULL;
	return ep_create(eng, be, ops, owner);
}

void ep_kick_tx(struct endpoint *ep)
{
	ep_tx_pump(ep);
}

void ep_kick_rx(struct endpoint *ep)
{
	ep_rx_pump(ep);
}

void ep_shutdown(struct endpoint *ep)
{
	ep->shut_req = true;
	ep_tx_pump(ep);
}

void ep_close_then(struct endpoint *ep, void (*drained)(void *arg), void *arg)
{
	ep->drained = drained;
	ep->drained_arg = arg;
	ep_close(ep);
}

void ep_cancel_rx(struct endpoint *ep)
{
	if (ep->rx_busy && ep->be->ops->cancel_rx)
		ep->be->ops->cancel_rx(ep->be);
}

void ep_close(struct endpoint *ep)
{
	if (ep->closing)
		return;
	ep->closing = true;
	if (ep->rx_busy || ep->tx_busy)
		ep->be->ops->cancel(ep->be);
	ep_maybe_free(ep);
}

int ep_mss(struct endpoint *ep)
{
	return ep->be->ops->mss(ep->be);
}

bool ep_idle(const struct endpoint *ep)
{
	return !ep->rx_busy && !ep->tx_busy;
}

bool ep_rx_scratch(const struct endpoint *ep)
{
	return ep->be->ops->recv_sync;
}

struct engine *ep_engine(const struct endpoint *ep)
{
	return ep->eng;
}

int ep_set_owner(struct endpoint *ep, const struct ep_ops *ops, void *owner,
		 const void *carry, size_t len)
{
	if (!ep_active(ep))
		return -EPIPE;
	if (ep->rx_busy || ep->tx_busy)
		return -EBUSY;
	if (len) {
		size_t old = ep->carry ? ep->carry_len - ep->carry_off : 0;
		uint8_t *buf = iw_malloc(len + old);

		if (!buf)
			return -ENOMEM;
		memcpy(buf, carry, len);
		if (old)
			memcpy(buf + len, ep->carry + ep->carry_off, old);
		iw_free(ep->carry);
		ep->carry = buf;
		ep->carry_len = len + old;
		ep->carry_off = 0;
	}
	ep->ops = ops;
	ep->owner = owner;
	engine_work_queue(ep->eng, &ep->kick);
	return 0;
}
