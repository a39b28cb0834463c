/*
 * iwarp_bw control channel: perftest's rdma_cm "Data ex. method" and its
 * binary exchanges (see the fact list in bw.h).
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "tools/bw/bw.h"
#include "tools/common/stop.h"

static void put32(uint8_t *p, uint32_t v)
{
	p[0] = (uint8_t)(v >> 24);
	p[1] = (uint8_t)(v >> 16);
	p[2] = (uint8_t)(v >> 8);
	p[3] = (uint8_t)v;
}

static void put64(uint8_t *p, uint64_t v)
{
	put32(p, (uint32_t)(v >> 32));
	put32(p + 4, (uint32_t)v);
}

static uint32_t get32(const uint8_t *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 |
	       (uint32_t)p[2] << 8 | p[3];
}

static uint64_t get64(const uint8_t *p)
{
	return (uint64_t)get32(p) << 32 | get32(p + 4);
}

static uint64_t dbl_bits(double v)
{
	uint64_t u;

	memcpy(&u, &v, sizeof(u));
	return u;
}

static double bits_dbl(uint64_t u)
{
	double v;

	memcpy(&v, &u, sizeof(v));
	return v;
}

void bw_dest_encode(const struct bw_dest *d, uint8_t *out)
{
	memset(out, 0, BW_DEST_SIZE);
	put32(out + 0, (uint32_t)d->lid);
	put32(out + 4, (uint32_t)d->out_reads);
	put32(out + 8, d->qpn);
	put32(out + 12, d->psn);
	put32(out + 16, d->rkey);
	put64(out + 24, d->vaddr);
	memcpy(out + 32, d->gid, 16);
	put32(out + 48, d->srqn);
	put32(out + 52, (uint32_t)d->gid_index);
}

int bw_dest_decode(const uint8_t *in, size_t len, struct bw_dest *d)
{
	memset(d, 0, sizeof(*d));
	if (len < 32)
		return -EBADMSG;
	d->lid = (int32_t)get32(in);
	d->out_reads = (int32_t)get32(in + 4);
	d->qpn = get32(in + 8);
	d->psn = get32(in + 12);
	d->rkey = get32(in + 16);
	d->vaddr = get64(in + 24);
	if (len >= 48)
		memcpy(d->gid, in + 32, 16);
	/* perftest's reader leaves srqn and gid_index unconverted. */
	return 0;
}

uint64_t bw_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/*
 * Completion waits busy-poll for BW_SPIN_NS (perftest never stops polling; a
 * latency round trip is far shorter), then back off so a long wait (a
 * handshake during the peer's run) does not burn a core:
 *  - threaded modes: sleep 10 us, doubling up to 1 ms (the engine thread
 *    keeps the connection going meanwhile). main() sets a 1 us timer slack
 *    so the sleeps are not stretched by the default 50 us.
 *  - INLINE mode: sched_yield() only. This process is the only one driving
 *    its engine, i.e. it is the "RNIC": a passive side (the Read latency
 *    server, the Write BW server waiting in a handshake) must keep answering
 *    Read Requests and draining the socket, and any sleep would show up in
 *    the peer's figures (Read latency 122 us instead of ~40 us with sleeps).
 */
#define BW_SPIN_NS	  10000000u /* 10 ms of busy polling */
#define BW_BACKOFF_MIN_NS 10000u    /* first sleep: 10 us */
#define BW_BACKOFF_MAX_NS 1000000u  /* at most 1 ms */

static uint64_t stop_deadline; /* teardown after a signal: end of the waits */

int bw_stopping(void)
{
	return tool_stop_signal() && !stop_deadline;
}

void bw_stop_teardown(void)
{
	stop_deadline = bw_now_ns() + (uint64_t)BW_STOP_CLOSE_MS * 1000000u;
}

void bw_backoff_init(struct bw_backoff *b, int inline_progress)
{
	b->start = 0;
	b->sleep_ns = 0;
	b->spins = 0;
	b->yield_only = inline_progress;
}

void bw_backoff(struct bw_backoff *b)
{
	struct timespec ts;

	/* read the clock only every 256 empty polls */
	if ((++b->spins & 255u) != 0)
		return;
	if (!b->start) {
		b->start = bw_now_ns();
		return;
	}
	if (!b->sleep_ns) {
		if (bw_now_ns() - b->start < BW_SPIN_NS)
			return;
		b->sleep_ns = BW_BACKOFF_MIN_NS;
	}
	if (b->yield_only) {
		sched_yield();
		return;
	}
	ts.tv_sec = 0;
	ts.tv_nsec = (long)b->sleep_ns;
	nanosleep(&ts, NULL);
	b->spins = 255u; /* after a sleep, sleep again on the next empty poll */
	if (b->sleep_ns < BW_BACKOFF_MAX_NS) {
		b->sleep_ns *= 2;
		if (b->sleep_ns > BW_BACKOFF_MAX_NS)
			b->sleep_ns = BW_BACKOFF_MAX_NS;
	}
}

int bw_poll_one(struct iwarp_cq *cq, int inline_progress, struct iwarp_wc *wc)
{
	struct bw_backoff b;
	int n;

	bw_backoff_init(&b, inline_progress);
	for (;;) {
		/* iwarp_poll_cq drives the engine itself in INLINE mode */
		n = iwarp_poll_cq(cq, 1, wc);
		if (n != 0)
			return n < 0 ? n : 0;
		if (bw_stopping())
			return -EINTR;
		bw_backoff(&b);
	}
}

int bw_fd_nonblock(int fd)
{
	int fl = fcntl(fd, F_GETFL);

	if (fl < 0 || fcntl(fd, F_SETFL, fl | O_NONBLOCK) < 0)
		return -errno;
	return 0;
}

int bw_cm_next(struct iwarp_event_channel *ch, int inline_progress, int ms,
	       struct iwarp_cm_event **ev)
{
	uint64_t deadline = bw_now_ns() + (uint64_t)ms * 1000000u;

	if (stop_deadline && deadline > stop_deadline)
		deadline = stop_deadline;
	for (;;) {
		/* [1]: the SIGINT/SIGTERM self-pipe, left out in the teardown
		 * (it stays readable) */
		struct pollfd pfd[2] = {
			{.fd = ch->fd, .events = POLLIN},
			{.fd = tool_stop_fd(), .events = POLLIN},
		};
		uint64_t now;
		int rc, tmo;

		if (bw_stopping())
			return -EINTR;

		/*
		 * The channel is non-blocking: iwarp_cm_get_event returns
		 * -EAGAIN when nothing is queued, after running the engine of
		 * the INLINE-mode contexts on the channel once. In INLINE mode
		 * nothing else drives the engine (it owns no thread), so
		 * poll(2) on the channel fd would wait for an event that never
		 * comes: wake up every millisecond to drive it again.
		 */
		rc = iwarp_cm_get_event(ch, ev);
		if (rc != -EAGAIN)
			return rc;
		now = bw_now_ns();
		if (now >= deadline)
			return -ETIMEDOUT;
		tmo = (int)((deadline - now) / 1000000u) + 1;
		if (inline_progress)
			tmo = 1;
		rc = poll(pfd, stop_deadline || pfd[1].fd < 0 ? 1 : 2, tmo);
		if (rc < 0 && errno != EINTR)
			return -errno;
	}
}

int bw_cm_failed(struct iwarp_cm_event *e, const char *waiting_for)
{
	int rc;

	switch (e->event) {
	case IWARP_CM_EVENT_ADDR_ERROR:
	case IWARP_CM_EVENT_ROUTE_ERROR:
	case IWARP_CM_EVENT_CONNECT_ERROR:
	case IWARP_CM_EVENT_UNREACHABLE:
	case IWARP_CM_EVENT_REJECTED:
	case IWARP_CM_EVENT_DEVICE_REMOVAL:
		rc = e->status < 0 ? e->status : -ECONNREFUSED;
		fprintf(stderr, " iwarp_bw: CM event %s (waiting for %s): %s\n",
			iwarp_cm_event_str(e->event), waiting_for,
			iwarp_strerror(rc));
		iwarp_cm_ack_event(e);
		return rc;
	case IWARP_CM_EVENT_ADDR_RESOLVED:
	case IWARP_CM_EVENT_ROUTE_RESOLVED:
	case IWARP_CM_EVENT_CONNECT_REQUEST:
	case IWARP_CM_EVENT_CONNECT_RESPONSE:
	case IWARP_CM_EVENT_ESTABLISHED:
	case IWARP_CM_EVENT_DISCONNECTED:
	case IWARP_CM_EVENT_TIMEWAIT_EXIT:
	default:
		return 0;
	}
}

int bw_cm_wait(struct iwarp_event_channel *ch, int inline_progress,
	       enum iwarp_cm_event_type want, int ms,
	       struct iwarp_cm_event **ev)
{
	struct iwarp_cm_event *e;
	int rc;

	for (;;) {
		rc = bw_cm_next(ch, inline_progress, ms, &e);
		if (rc < 0)
			return rc;
		if (e->event == want) {
			*ev = e;
			return 0;
		}
		rc = bw_cm_failed(e, iwarp_cm_event_str(want));
		if (rc)
			return rc;
		iwarp_cm_ack_event(e);
	}
}

static int comm_post_recv(struct bw_comm *c)
{
	struct iwarp_sge sge = {
		.addr = (uintptr_t)c->buf,
		.length = BW_CTRL_BUF,
		.lkey = c->mr->lkey,
	};
	struct iwarp_recv_wr wr = {
		.wr_id = BW_SYNC_WRID, .sg_list = &sge, .num_sge = 1};
	struct iwarp_recv_wr *bad;
	int rc = iwarp_post_recv(c->id->qp, &wr, &bad);

	if (rc)
		fprintf(stderr, " iwarp_bw: iwarp_post_recv (control QP): %s\n",
			iwarp_strerror(rc));
	return rc;
}

/* Creates PD, CQs, MR and QP on |id| and posts the one receive. */
static int comm_resources(struct bw_comm *c)
{
	struct iwarp_qp_init_attr qa;
	int rc;

	c->pd = iwarp_alloc_pd(c->ctx);
	c->scq = c->pd ? iwarp_create_cq(c->ctx, 4, NULL, NULL, 0) : NULL;
	c->rcq = c->scq ? iwarp_create_cq(c->ctx, 4, NULL, NULL, 0) : NULL;
	c->buf = c->rcq ? calloc(2, BW_CTRL_BUF) : NULL;
	c->mr = c->buf ? iwarp_reg_mr(c->pd, c->buf, 2 * BW_CTRL_BUF,
				      IWARP_ACCESS_LOCAL_WRITE)
		       : NULL;
	if (!c->mr) {
		rc = -errno;
		fprintf(stderr, " iwarp_bw: control resources (pd/cq/mr): %s\n",
			iwarp_strerror(rc));
		return rc ? rc : -ENOMEM;
	}
	memset(&qa, 0, sizeof(qa));
	qa.send_cq = c->scq;
	qa.recv_cq = c->rcq;
	qa.qp_type = IWARP_QPT_RC;
	qa.cap.max_send_wr = 2;
	qa.cap.max_recv_wr = 2;
	qa.cap.max_send_sge = 1;
	qa.cap.max_recv_sge = 1;
	rc = iwarp_cm_create_qp(c->id, c->pd, &qa);
	if (rc) {
		fprintf(stderr, " iwarp_bw: iwarp_cm_create_qp (control): %s\n",
			iwarp_strerror(rc));
		return rc;
	}
	return comm_post_recv(c);
}

static void comm_conn_param(struct iwarp_conn_param *p)
{
	memset(p, 0, sizeof(*p));
	/* The control QP is a SEND QP: no Read resources (conn params of
	 * rdma_client_connect with verb SEND). */
	p->retry_count = 7;
	p->rnr_retry_count = 7;
}

static int comm_client(struct bw_comm *c, const struct bw_opts *o)
{
	struct sockaddr_storage dst;
	struct iwarp_conn_param cp;
	struct iwarp_cm_event *ev;
	int rc;

	rc = iwarp_cm_getaddr(o->server, o->port, &dst);
	if (rc) {
		fprintf(stderr, " iwarp_bw: cannot resolve %s: %s\n", o->server,
			iwarp_strerror(rc));
		return rc;
	}
	rc = iwarp_cm_create_id(c->ch, c->ctx, &c->id, c, IWARP_PS_TCP);
	if (rc)
		goto fail;
	rc = iwarp_cm_resolve_addr(c->id, NULL, (struct sockaddr *)&dst, 2000);
	if (rc || (rc = bw_cm_wait(c->ch, c->inline_progress,
				   IWARP_CM_EVENT_ADDR_RESOLVED, 3000, &ev)))
		goto fail;
	iwarp_cm_ack_event(ev);
	rc = iwarp_cm_resolve_route(c->id, 2000);
	if (rc || (rc = bw_cm_wait(c->ch, c->inline_progress,
				   IWARP_CM_EVENT_ROUTE_RESOLVED, 3000, &ev)))
		goto fail;
	iwarp_cm_ack_event(ev);
	rc = comm_resources(c);
	if (rc)
		return rc;
	comm_conn_param(&cp);
	rc = tool_tls_apply(&o->tls, c->id, false, "iwarp_bw");
	if (rc)
		return rc;
	rc = iwarp_cm_connect(c->id, &cp);
	if (rc || (rc = bw_cm_wait(c->ch, c->inline_progress,
				   IWARP_CM_EVENT_ESTABLISHED, 15000, &ev)))
		goto fail;
	iwarp_cm_ack_event(ev);
	return 0;
fail:
	if (rc != -EINTR) /* SIGINT/SIGTERM: main says so */
		fprintf(stderr,
			" iwarp_bw: control connection to %s:%u failed: %s\n",
			o->server, (unsigned int)o->port, iwarp_strerror(rc));
	return rc;
}

static int comm_server(struct bw_comm *c, const struct bw_opts *o)
{
	struct sockaddr_storage src;
	struct iwarp_cm_id *listen_id = NULL;
	struct iwarp_conn_param cp;
	struct iwarp_cm_event *ev;
	int rc;

	rc = iwarp_cm_getaddr(o->bind_addr ? o->bind_addr : "0.0.0.0", o->port,
			      &src);
	if (rc)
		goto fail;
	rc = iwarp_cm_create_id(c->ch, c->ctx, &listen_id, c, IWARP_PS_TCP);
	if (rc)
		goto fail;
	rc = iwarp_cm_bind_addr(listen_id, (struct sockaddr *)&src);
	if (rc)
		goto fail;
	rc = tool_tls_apply(&o->tls, listen_id, true, "iwarp_bw");
	if (rc)
		goto fail;
	rc = iwarp_cm_listen(listen_id, o->num_qps);
	if (rc)
		goto fail;
	rc = bw_cm_wait(c->ch, c->inline_progress,
			IWARP_CM_EVENT_CONNECT_REQUEST, 24 * 3600 * 1000, &ev);
	if (rc)
		goto fail;
	c->id = ev->id;
	iwarp_cm_ack_event(ev);
	rc = comm_resources(c);
	if (rc)
		goto out;
	comm_conn_param(&cp);
	rc = iwarp_cm_accept(c->id, &cp);
	if (rc || (rc = bw_cm_wait(c->ch, c->inline_progress,
				   IWARP_CM_EVENT_ESTABLISHED, 15000, &ev)))
		goto fail;
	iwarp_cm_ack_event(ev);
	iwarp_cm_destroy_id(listen_id);
	return 0;
fail:
	if (rc != -EINTR) /* SIGINT/SIGTERM: main says so */
		fprintf(stderr,
			" iwarp_bw: control connection (server, port %u) failed: %s\n",
			(unsigned int)o->port, iwarp_strerror(rc));
out:
	if (listen_id)
		iwarp_cm_destroy_id(listen_id);
	return rc;
}

int bw_comm_establish(struct bw_comm *c, struct iwarp_context *ctx,
		      const struct bw_opts *o)
{
	int rc;

	memset(c, 0, sizeof(*c));
	c->ctx = ctx;
	c->client = o->server != NULL;
	c->inline_progress = o->progress == IWARP_PROGRESS_INLINE;
	c->ch = iwarp_cm_create_event_channel();
	if (!c->ch) {
		rc = errno ? -errno : -ENOMEM;

		fprintf(stderr,
			" iwarp_bw: iwarp_cm_create_event_channel: %s\n",
			iwarp_strerror(rc));
		return rc;
	}
	rc = bw_fd_nonblock(c->ch->fd);
	if (rc) {
		fprintf(stderr, " iwarp_bw: event channel: %s\n",
			iwarp_strerror(rc));
		return rc;
	}
	return c->client ? comm_client(c, o) : comm_server(c, o);
}

static int comm_send(struct bw_comm *c, const void *data, size_t len)
{
	uint8_t *sbuf = c->buf + BW_CTRL_BUF;
	struct iwarp_sge sge = {.addr = (uintptr_t)sbuf,
				.length = (uint32_t)len,
				.lkey = c->mr->lkey};
	struct iwarp_send_wr wr = {
		.wr_id = BW_SYNC_WRID,
		.sg_list = &sge,
		.num_sge = 1,
		.opcode = IWARP_WR_SEND,
		.send_flags = IWARP_SEND_SIGNALED,
	};
	struct iwarp_send_wr *bad;
	struct iwarp_wc wc;
	int rc;

	memcpy(sbuf, data, len);
	rc = iwarp_post_send(c->id->qp, &wr, &bad);
	if (rc) {
		fprintf(stderr, " iwarp_bw: iwarp_post_send (control): %s\n",
			iwarp_strerror(rc));
		return rc;
	}
	rc = bw_poll_one(c->scq, c->inline_progress, &wc);
	if (rc)
		return rc;
	if (wc.status != IWARP_WC_SUCCESS || wc.opcode != IWARP_WC_SEND ||
	    wc.wr_id != BW_SYNC_WRID) {
		fprintf(stderr, " iwarp_bw: control Send completion: %s\n",
			iwarp_wc_status_str(wc.status));
		return -EIO;
	}
	return 0;
}

static int comm_recv(struct bw_comm *c, void *out, size_t cap)
{
	struct iwarp_wc wc;
	size_t n;
	int rc;

	rc = bw_poll_one(c->rcq, c->inline_progress, &wc);
	if (rc)
		return rc;
	if (wc.status != IWARP_WC_SUCCESS || !(wc.opcode & IWARP_WC_RECV) ||
	    wc.wr_id != BW_SYNC_WRID) {
		fprintf(stderr, " iwarp_bw: control receive completion: %s\n",
			iwarp_wc_status_str(wc.status));
		return -EIO;
	}
	n = wc.byte_len < cap ? wc.byte_len : cap;
	memcpy(out, c->buf, n);
	rc = comm_post_recv(c);
	return rc ? rc : (int)wc.byte_len;
}

int bw_comm_xchg(struct bw_comm *c, const void *mine, size_t len, void *theirs,
		 size_t cap)
{
	int rc;

	if (c->client) {
		rc = comm_send(c, mine, len);
		return rc ? rc : comm_recv(c, theirs, cap);
	}
	rc = comm_recv(c, theirs, cap);
	if (rc < 0)
		return rc;
	return comm_send(c, mine, len) ? -EIO : rc;
}

int bw_comm_handshake(struct bw_comm *c, const struct bw_dest *mine,
		      struct bw_dest *theirs)
{
	uint8_t out[BW_DEST_SIZE], in[BW_CTRL_BUF];
	int rc;

	bw_dest_encode(mine, out);
	rc = bw_comm_xchg(c, out, sizeof(out), in, sizeof(in));
	if (rc < 0)
		return rc;
	return bw_dest_decode(in, (size_t)rc, theirs);
}

static int xchg_u64(struct bw_comm *c, uint64_t mine, uint64_t *theirs,
		    size_t width)
{
	uint8_t out[8], in[BW_CTRL_BUF];
	int rc;

	if (width == 8)
		put64(out, mine);
	else
		put32(out, (uint32_t)mine);
	rc = bw_comm_xchg(c, out, width, in, sizeof(in));
	if (rc < 0)
		return rc;
	if ((size_t)rc < width)
		return -EBADMSG;
	*theirs = width == 8 ? get64(in) : get32(in);
	return 0;
}

int bw_comm_xchg_report(struct bw_comm *c, const struct bw_report *mine,
			struct bw_report *theirs)
{
	uint64_t v;
	int rc;

	memset(theirs, 0, sizeof(*theirs));
	rc = xchg_u64(c, mine->size, &theirs->size, 8);
	if (!rc)
		rc = xchg_u64(c, mine->iters, &theirs->iters,
			      c->rem_ver >= 5.33 ? 8 : 4);
	if (!rc && !(rc = xchg_u64(c, dbl_bits(mine->bw_peak), &v, 8)))
		theirs->bw_peak = bits_dbl(v);
	if (!rc && !(rc = xchg_u64(c, dbl_bits(mine->bw_avg), &v, 8)))
		theirs->bw_avg = bits_dbl(v);
	if (!rc && !(rc = xchg_u64(c, dbl_bits(mine->msg_rate), &v, 8)))
		theirs->msg_rate = bits_dbl(v);
	return rc;
}

int bw_comm_preamble(struct bw_comm *c, int *mtu)
{
	char ver[BW_MAX_VERSION] = BW_PERFTEST_VERSION;
	char in[BW_CTRL_BUF];
	uint64_t v;
	int rc, rem_mtu;

	/* exchange_versions */
	rc = bw_comm_xchg(c, ver, sizeof(ver), in, sizeof(in));
	if (rc < 0)
		return rc;
	memcpy(c->rem_version, in, BW_MAX_VERSION);
	c->rem_version[BW_MAX_VERSION - 1] = '\0';
	c->rem_ver = atof(c->rem_version);
	/* check_sys_data: cycle buffer, cache line size (take the max; we
	 * never cycle addresses, so only the exchange matters) */
	if (c->rem_ver >= 5.32) {
		rc = xchg_u64(c, BW_CYCLE_BUFFER, &v, 4);
		if (!rc)
			rc = xchg_u64(c, BW_CACHE_LINE, &v, 4);
		if (rc)
			return rc;
	}
	/* check_mtu */
	*mtu = BW_MTU_ENUM;
	if (c->rem_ver >= 5.1) {
		char cur[4] = {0};
		size_t len = c->rem_ver >= 5.31 ? 2 : 4;

		cur[0] = (char)('0' + BW_MTU_ENUM);
		rc = bw_comm_xchg(c, cur, len, in, sizeof(in));
		if (rc < 0)
			return rc;
		in[rc < (int)sizeof(in) ? rc : (int)sizeof(in) - 1] = '\0';
		rem_mtu = atoi(in);
		if (rem_mtu >= 1 && rem_mtu <= 5 && rem_mtu < *mtu)
			*mtu = rem_mtu;
	}
	return 0;
}

int bw_comm_wait_peer_close(struct bw_comm *c, int ms)
{
	struct iwarp_cm_event *ev;
	int rc;

	if (!c->ch || !c->id)
		return -ENOTCONN;
	rc = bw_cm_wait(c->ch, c->inline_progress, IWARP_CM_EVENT_DISCONNECTED,
			ms, &ev);
	if (!rc)
		iwarp_cm_ack_event(ev);
	return rc;
}

void bw_comm_close(struct bw_comm *c)
{
	if (c->id) {
		iwarp_cm_disconnect(c->id);
		if (c->id->qp)
			iwarp_cm_destroy_qp(c->id);
		iwarp_cm_destroy_id(c->id);
	}
	if (c->mr)
		iwarp_dereg_mr(c->mr);
	if (c->scq)
		iwarp_destroy_cq(c->scq);
	if (c->rcq)
		iwarp_destroy_cq(c->rcq);
	if (c->pd)
		iwarp_dealloc_pd(c->pd);
	if (c->ch)
		iwarp_cm_destroy_event_channel(c->ch);
	free(c->buf);
	memset(c, 0, sizeof(*c));
}
