/*
 * iwarp_bw measurement loops: perftest's run_iter_bw, run_iter_bw_server,
 * run_iter_bi, run_iter_lat_write, run_iter_lat and run_iter_lat_send
 * re-derived from the behaviour listed in bw.h.
 */
#include <errno.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "tools/bw/bw.h"
#include "tools/bw/idle.h"
#include "tools/common/stop.h"

#define BW_POLL_BATCH 16

/*
 * wr_id of a data WR: QP index in bits 0-15, WRs covered (at most cq_mod,
 * 1,024) in bits 16-31, and in bits 32-63 when the first WR it covers was
 * posted, in BW_TICK_NS units since the start of the run (76 hours).
 */
#define BW_TICK_NS 64000u

static uint64_t mk_wrid_at(int qp, uint64_t covered, uint64_t tick)
{
	return tick << 32 | (covered & 0xffffu) << 16 |
	       (uint64_t)(unsigned int)qp;
}

static uint64_t mk_wrid(int qp, uint64_t covered)
{
	return mk_wrid_at(qp, covered, 0);
}

static int wrid_qp(uint64_t wr_id)
{
	return (int)(wr_id & 0xffffu);
}

static uint64_t wrid_cnt(uint64_t wr_id)
{
	return (wr_id >> 16) & 0xffffu;
}

static uint64_t wrid_tick(uint64_t wr_id)
{
	return wr_id >> 32;
}

#define BW_SLEEP_MS 10 /* bound of one completion-channel sleep */

/*
 * Idle policy (tools/bw/idle.c): a BW loop that may sleep on the
 * completion channel (bw_data.chan) busy-polls for the spin window, then
 * arms the CQs, polls them once more (a completion pushed before the arm
 * fires no event), and only then sleeps; a Send sender blocked on credits
 * naps instead. On 2 cores the application thread that spins takes a core
 * from the engine threads that produce the completions (its own and the
 * peer's).
 */
static void idle_init(struct bw_idle *w, const struct bw_opts *o)
{
	bw_idle_init(w, o->cq_wait == BW_WAIT_EVENT
				? 0
				: (uint64_t)o->cq_spin_us * 1000u);
}

static int chan_wait(struct bw_data *d);

/* Poll of the channel fd, then drains and acknowledges its events; or,
 * on a blocking channel (chan_block), one blocking wait for an event. */
static int chan_sleep(struct bw_data *d, int ms)
{
	/* [1]: SIGINT/SIGTERM wake us at once (the caller checks) */
	struct pollfd p[2] = {
		{.fd = d->chan->fd, .events = POLLIN},
		{.fd = tool_stop_fd(), .events = POLLIN},
	};
	struct iwarp_cq *cq;
	void *ctx;

	if (d->chan_block)
		return chan_wait(d);
	if (poll(p, p[1].fd < 0 ? 1 : 2, ms) < 0 && errno != EINTR)
		return -errno;
	/* non-blocking fd: -EAGAIN once the channel is empty */
	while (iwarp_get_cq_event(d->chan, &cq, &ctx) == 0)
		iwarp_ack_cq_events(cq, 1);
	return 0;
}

/*
 * One step of the idle logic after a pass of a BW loop: |busy| when the pass
 * posted or reaped something, |can_sleep| when a completion on |cq1| or
 * |cq2| (may be NULL) is bound to come and nothing else can wake us,
 * |credit_wait| when a Send sender waits for its peer's credit.
 * Returns 0 or < 0.
 */
static int idle_step(struct bw_data *d, struct bw_idle *w, int busy,
		     int can_sleep, int credit_wait, struct iwarp_cq *cq1,
		     struct iwarp_cq *cq2)
{
	struct timespec nap = {0, BW_CREDIT_NAP_US * 1000L};
	uint64_t now = 0;
	int rc;

	/* the clock only where the policy looks at it: not on busy passes */
	if (bw_idle_may_wait(busy, d->chan != NULL, can_sleep, credit_wait))
		now = bw_now_ns();
	switch (bw_idle_next(w, now, busy, d->chan != NULL, can_sleep,
			     credit_wait)) {
	case BW_IDLE_SLEEP:
		return chan_sleep(d, BW_SLEEP_MS);
	case BW_IDLE_ARM:
		rc = iwarp_req_notify_cq(cq1, 0);
		if (!rc && cq2)
			rc = iwarp_req_notify_cq(cq2, 0);
		w->armed = !rc;
		return rc;
	case BW_IDLE_NAP:
		nanosleep(&nap, NULL); /* EINTR: the caller checks for a stop */
		return 0;
	case BW_IDLE_SPIN:
	default:
		return 0;
	}
}

/* Duration state (-D): warm-up margin, sample window, end. */
struct bw_clock {
	uint64_t start, sample_from, sample_to, end;
	int duration;
};

static void clock_init(struct bw_clock *k, const struct bw_opts *o)
{
	uint64_t s = 1000000000u;

	k->duration = o->duration > 0;
	k->start = bw_now_ns();
	k->sample_from = k->start + (uint64_t)o->margin * s;
	k->sample_to = k->start + (uint64_t)(o->duration - o->margin) * s;
	k->end = k->start + (uint64_t)o->duration * s;
}

static int wc_ok(const struct iwarp_wc *wc, const char *what)
{
	if (wc->status == IWARP_WC_SUCCESS)
		return 0;
	fprintf(stderr,
		" iwarp_bw: %s completion with error: %s (vendor_err 0x%x)\n",
		what, iwarp_wc_status_str(wc->status), wc->vendor_err);
	return -EIO;
}

/* Fills |wr| and |sge| for one data WR of |size| octets on QP |i|. */
static void fill_data_wr(struct bw_data *d, const struct bw_opts *o, int i,
			 uint64_t size, unsigned int flags, uint64_t wr_id,
			 uint64_t seq, struct iwarp_send_wr *wr,
			 struct iwarp_sge *sge)
{
	struct bw_qp *q = &d->q[i];

	sge->addr = (uintptr_t)(d->buf + (size_t)i * d->buff);
	sge->length = (uint32_t)size;
	sge->lkey = d->mr->lkey;
	memset(wr, 0, sizeof(*wr));
	wr->wr_id = wr_id;
	wr->sg_list = sge;
	wr->num_sge = 1;
	wr->send_flags = flags;
	switch (o->verb) {
	case BW_WRITE:
		wr->opcode = IWARP_WR_RDMA_WRITE;
		break;
	case BW_READ:
		wr->opcode = IWARP_WR_RDMA_READ;
		break;
	case BW_SEND:
	default:
		wr->opcode = IWARP_WR_SEND;
		break;
	}
	if (o->verb != BW_SEND) {
		wr->wr.rdma.remote_addr = q->rem_addr;
		wr->wr.rdma.rkey = q->rem_rkey;
	}
	if (o->verb != BW_READ && size <= (uint64_t)o->inline_size &&
	    size <= d->max_inline)
		wr->send_flags |= IWARP_SEND_INLINE;
	if (bw_ext_used(o)) /* RFC 7306: seq is the WR's number on QP i */
		bw_ext_fill_wr(o, seq, q->rem_addr, q->rem_rkey, wr, sge);
}

/* Posts the chain starting at |wr| (linked by next) on QP |i|. */
static int post_chain(struct bw_data *d, int i, struct iwarp_send_wr *wr)
{
	struct iwarp_send_wr *bad;
	int rc = iwarp_post_send(d->q[i].qp, wr, &bad);

	if (rc)
		fprintf(stderr,
			" iwarp_bw: iwarp_post_send (QP %d, scnt %llu): %s\n",
			i, (unsigned long long)d->q[i].scnt,
			iwarp_strerror(rc));
	if (rc)
		bw_ext_post_error(rc);
	return rc;
}

/* Posts one data WR on QP |i|. */
static int post_data(struct bw_data *d, const struct bw_opts *o, int i,
		     uint64_t size, unsigned int flags, uint64_t wr_id,
		     uint64_t seq)
{
	struct iwarp_sge sge;
	struct iwarp_send_wr wr;

	fill_data_wr(d, o, i, size, flags, wr_id, seq, &wr, &sge);
	return post_chain(d, i, &wr);
}

/* Sends the receive count of QP |i| to the peer's credit word. */
static int post_credit(struct bw_data *d, const struct bw_opts *o, int i)
{
	struct bw_qp *q = &d->q[i];
	/*
	 * The source octets of a posted Write must not change until it
	 * completes: the engine sends (and CRCs) them from the MR later, so
	 * rewriting one word for every credit (as perftest does) gave the
	 * peer FPDUs whose MPA CRC no longer matched (TERMINATE "CRC error").
	 * Each of the at most tx_depth outstanding credit Writes of a QP has
	 * its own slot; completions of one QP come in order.
	 */
	uint32_t *slot = &d->ctrl_buf[(size_t)(2 * d->n) +
				      (size_t)i * (size_t)o->tx_depth +
				      (size_t)(q->credits_posted %
					       (uint64_t)o->tx_depth)];
	struct iwarp_sge sge = {
		.addr = (uintptr_t)slot,
		.length = sizeof(uint32_t),
		.lkey = d->ctrl_mr->lkey,
	};
	struct iwarp_send_wr wr, *bad;
	struct iwarp_wc wc[BW_POLL_BATCH];
	int rc, n, k;

	/* keep at most tx_depth credit Writes outstanding */
	while (q->credits_out >= (uint64_t)o->tx_depth) {
		if (bw_stopping())
			return -EINTR;
		n = iwarp_poll_cq(d->scq, BW_POLL_BATCH, wc);
		if (n < 0)
			return n;
		for (k = 0; k < n; k++) {
			if (wc_ok(&wc[k], "credit"))
				return -EIO;
			d->q[wrid_qp(wc[k].wr_id)].credits_out--;
		}
		if (n == 0 && d->inline_progress)
			iwarp_progress(d->ctx);
	}
	*slot = (uint32_t)q->rcnt; /* host order, as perftest */
	d->ctrl_buf[i] = *slot;
	memset(&wr, 0, sizeof(wr));
	wr.wr_id = mk_wrid(i, 0);
	wr.sg_list = &sge;
	wr.num_sge = 1;
	wr.opcode = IWARP_WR_RDMA_WRITE;
	wr.send_flags = IWARP_SEND_SIGNALED;
	wr.wr.rdma.remote_addr = q->rem_addr;
	wr.wr.rdma.rkey = q->rem_rkey;
	rc = iwarp_post_send(q->qp, &wr, &bad);
	if (rc) {
		fprintf(stderr, " iwarp_bw: credit Write (QP %d): %s\n", i,
			iwarp_strerror(rc));
		return rc;
	}
	q->credits_out++;
	q->credits_posted++;
	return 0;
}

static int post_one_recv(struct bw_data *d, int i, uint64_t size)
{
	struct iwarp_sge sge = {
		.addr = (uintptr_t)(d->buf + (size_t)(d->n + i) * d->buff),
		.length = (uint32_t)size,
		.lkey = d->mr->lkey,
	};
	struct iwarp_recv_wr wr = {
		.wr_id = mk_wrid(i, 1), .sg_list = &sge, .num_sge = 1};
	struct iwarp_recv_wr *bad;
	int rc = iwarp_post_recv(d->q[i].qp, &wr, &bad);

	if (rc)
		fprintf(stderr, " iwarp_bw: iwarp_post_recv (QP %d): %s\n", i,
			iwarp_strerror(rc));
	else
		d->q[i].rposted++;
	return rc;
}

int bw_post_recvs(struct bw_data *d, const struct bw_opts *o, uint64_t size)
{
	uint64_t want = (uint64_t)o->rx_depth;
	int i, rc;

	if (o->duration == 0 && o->iters < want)
		want = o->iters;
	/* latency tests run on QP 0 only; the others stay idle */
	for (i = 0; i < (o->latency ? 1 : d->n); i++) {
		d->q[i].rposted = 0;
		d->q[i].rcnt = 0;
		while (d->q[i].rposted < want) {
			rc = post_one_recv(d, i, size);
			if (rc)
				return rc;
		}
	}
	return 0;
}

/* Handles receive completions of a Send test; returns how many or < 0. */
static int reap_recvs(struct bw_data *d, const struct bw_opts *o, uint64_t size,
		      const struct bw_clock *k, uint64_t *counted)
{
	struct iwarp_wc wc[BW_POLL_BATCH];
	int n, j, rc;

	n = iwarp_poll_cq(d->rcq, BW_POLL_BATCH, wc);
	if (n <= 0)
		return n;
	for (j = 0; j < n; j++) {
		int i = wrid_qp(wc[j].wr_id);
		struct bw_qp *q = &d->q[i];
		uint64_t now;

		if (wc_ok(&wc[j], "receive"))
			return -EIO;
		rc = bw_ext_check_recv(o, i, q->rcnt, &wc[j]);
		if (rc)
			return rc;
		q->rcnt++;
		now = k->duration ? bw_now_ns() : 0;
		if (!k->duration ||
		    (now >= k->sample_from && now < k->sample_to))
			(*counted)++;
		if (k->duration || q->rposted < o->iters) {
			rc = post_one_recv(d, i, size);
			if (rc)
				return rc;
		}
		if (d->send_credit &&
		    (q->rcnt % (uint64_t)o->rx_depth) % d->credit_cnt == 0) {
			rc = post_credit(d, o, i);
			if (rc)
				return rc;
		}
	}
	return n;
}

/*
 * BW peak: the highest rate of completed octets over a measured interval
 * of at least BW_PEAK_WIN_NS. An interval runs from the end of the
 * previous one to a completion instant, and it is stretched back to the
 * post time of the oldest WR it counts: the octets of a WR can only have
 * moved between its post and its completion, so the peak never exceeds
 * what was transferred. With many QPs and cq_mod, one completion reports
 * a batch posted long before (100 QPs x 100 WRs of 64 KiB: ~0.4 s), and
 * counting it in a 10 ms interval read 8-13 GB/s "peaks" on a link doing
 * 0.3-1.5 GB/s; stretched, such a peak falls back to about the average.
 * A run shorter than one interval reports its average (bw_make_report).
 */
#define BW_PEAK_WIN_NS 20000000u /* 20 ms */

struct bw_peak {
	uint64_t mark_ns;   /* end of the previous interval */
	uint64_t oldest_ns; /* oldest post time counted since mark_ns */
	uint64_t bytes;	    /* octets completed since mark_ns */
	double peak;	    /* octets per second */
};

static void peak_init(struct bw_peak *p, uint64_t start)
{
	memset(p, 0, sizeof(*p));
	p->mark_ns = start;
	p->oldest_ns = start;
}

/* |bytes| completed at |now|, the oldest of them posted at |posted|. */
static void peak_add(struct bw_peak *p, uint64_t now, uint64_t bytes,
		     uint64_t posted)
{
	uint64_t from;

	p->bytes += bytes;
	if (posted < p->oldest_ns)
		p->oldest_ns = posted;
	from = p->oldest_ns < p->mark_ns ? p->oldest_ns : p->mark_ns;
	if (now - p->mark_ns >= BW_PEAK_WIN_NS && now > from) {
		double bps = (double)p->bytes * 1e9 / (double)(now - from);

		if (bps > p->peak)
			p->peak = bps;
		p->mark_ns = now;
		p->oldest_ns = now;
		p->bytes = 0;
	}
}

/* Handles send-queue completions; returns how many or < 0. */
static int reap_sends(struct bw_data *d, const struct bw_clock *k,
		      uint64_t size, struct bw_peak *pk, uint64_t *counted)
{
	struct iwarp_wc wc[BW_POLL_BATCH];
	uint64_t now, done = 0, oldest = UINT64_MAX;
	int n, j;

	n = iwarp_poll_cq(d->scq, BW_POLL_BATCH, wc);
	if (n <= 0)
		return n;
	now = bw_now_ns();
	for (j = 0; j < n; j++) {
		int i = wrid_qp(wc[j].wr_id);
		uint64_t c = wrid_cnt(wc[j].wr_id);
		uint64_t posted =
			k->start + wrid_tick(wc[j].wr_id) * BW_TICK_NS;

		if (wc_ok(&wc[j], "send queue"))
			return -EIO;
		if (c == 0) { /* a credit Write */
			d->q[i].credits_out--;
			continue;
		}
		d->q[i].ccnt += c;
		done += c;
		if (posted < oldest)
			oldest = posted;
		if (!k->duration ||
		    (now >= k->sample_from && now < k->sample_to))
			*counted += c;
	}
	if (done)
		peak_add(pk, now, done * size, oldest);
	return n;
}

/*
 * Posts on QP |i| as many WRs as its send queue, its iterations and (Send
 * tests) its credits allow, in chains of up to post_list WRs (perftest -l)
 * from |wr|/|sge| (post_list entries each). Every cq_mod-th WR and a QP's
 * last one are signaled; a signaled WR's wr_id says how many it covers.
 * *|credit_wait| is set when a Send test waits for a credit. Returns the
 * number of WRs posted or < 0.
 */
static int post_some(struct bw_data *d, const struct bw_opts *o,
		     const struct bw_clock *k, int i, uint64_t size,
		     struct iwarp_send_wr *wr, struct iwarp_sge *sge,
		     int *credit_wait)
{
	struct bw_qp *q = &d->q[i];
	uint64_t iters = o->iters;
	int posted = 0, rc;

	for (;;) {
		int m = 0;

		while (m < o->post_list &&
		       (k->duration || q->scnt + (uint64_t)m < iters) &&
		       q->scnt + (uint64_t)m <
			       q->ccnt + (uint64_t)o->tx_depth) {
			unsigned int flags = 0;
			uint64_t cover = 0, s = q->scnt + (uint64_t)m;

			if (d->send_credit) {
				uint32_t credit =
					((volatile uint32_t *)
						 d->ctrl_buf)[d->n + i];

				if ((uint32_t)s + 1u - credit >=
				    (uint32_t)o->rx_depth) {
					/* credits come by RDMA Write: no CQ
					 * event */
					*credit_wait = 1;
					break;
				}
			}
			if (q->batch++ == 0)
				q->batch_tick =
					(bw_now_ns() - k->start) / BW_TICK_NS;
			if (q->batch >= (uint64_t)o->cq_mod ||
			    (!k->duration && s + 1 == iters)) {
				flags = IWARP_SEND_SIGNALED;
				cover = q->batch;
				q->batch = 0;
			}
			fill_data_wr(d, o, i, size, flags,
				     mk_wrid_at(i, cover, q->batch_tick), s,
				     &wr[m], &sge[m]);
			if (m > 0)
				wr[m - 1].next = &wr[m];
			m++;
		}
		if (m == 0)
			return posted;
		rc = post_chain(d, i, wr);
		if (rc)
			return rc;
		q->scnt += (uint64_t)m;
		posted += m;
		if (m < o->post_list)
			return posted;
	}
}

static int qp_failed(struct bw_data *d, int i);

/* Idle passes of a Send sender waiting for a credit between two looks at
 * its QPs' state: a credit is an RDMA Write, no completion tells the
 * sender that the peer went away while it waits for one. */
#define BW_CREDIT_CHECK 256u

/* 0, or -ECONNRESET (with a message) when a QP of |d| is in error. */
static int credit_peer_check(struct bw_data *d)
{
	int i;

	for (i = 0; i < d->n; i++)
		if (qp_failed(d, i)) {
			fprintf(stderr,
				" iwarp_bw: QP %d went to the error state "
				"while waiting for the peer's credit\n",
				i);
			return -ECONNRESET;
		}
	return 0;
}

int bw_run_bw(struct bw_data *d, const struct bw_opts *o, uint64_t size,
	      struct bw_result *r)
{
	unsigned int credit_idle = 0;
	uint64_t iters = o->iters, tot = iters * (uint64_t)d->n, posted = 0,
		 done = 0;
	uint64_t counted = 0, rcounted = 0;
	uint64_t t0, t1 = 0, last_prog = 0;
	int recv_side = o->verb == BW_SEND && o->duplex;
	int wait_rx = recv_side && !o->server; /* server sends after first rx */
	struct iwarp_send_wr *wr;
	struct iwarp_sge *sge;
	struct bw_idle w;
	struct bw_clock k;
	struct bw_peak pk;
	double cpu0, cpu1 = 0;
	int i, rc;

	wr = calloc((size_t)o->post_list, sizeof(*wr));
	sge = calloc((size_t)o->post_list, sizeof(*sge));
	if (!wr || !sge) {
		free(wr);
		free(sge);
		return -ENOMEM;
	}
	idle_init(&w, o);
	for (i = 0; i < d->n; i++) {
		d->q[i].scnt = 0;
		d->q[i].ccnt = 0;
		d->q[i].batch = 0;
		if (d->send_credit)
			d->ctrl_buf[d->n + i] = 0;
	}
	cpu0 = bw_cpu_seconds();
	clock_init(&k, o);
	t0 = k.start;
	peak_init(&pk, t0);
	for (;;) {
		uint64_t now = k.duration ? bw_now_ns() : 0;
		int more = 0, credit_wait = 0, got;

		rc = 0;
		if (bw_stopping()) {
			rc = -EINTR;
			goto out;
		}
		if (k.duration) {
			if (now >= k.end)
				break;
		} else if (done >= tot && (!recv_side || rcounted >= tot)) {
			break;
		}
		for (i = 0; i < d->n && !wait_rx; i++) {
			rc = post_some(d, o, &k, i, size, wr, sge,
				       &credit_wait);
			if (rc < 0)
				goto out;
			if (rc > 0) {
				posted += (uint64_t)rc;
				more = 1;
			}
		}
		rc = reap_sends(d, &k, size, &pk, &counted);
		if (rc < 0)
			goto out;
		got = rc;
		if (rc > 0) {
			done = 0;
			for (i = 0; i < d->n; i++)
				done += d->q[i].ccnt;
			if (done >= tot && !t1) {
				t1 = bw_now_ns();
				cpu1 = bw_cpu_seconds();
			}
		}
		if (recv_side) {
			rc = reap_recvs(d, o, size, &k, &rcounted);
			if (rc < 0)
				goto out;
			if (rc > 0)
				wait_rx = 0;
		}
		if (rc == 0 && !more && d->inline_progress)
			iwarp_progress(d->ctx);
		/*
		 * Nothing posted, nothing reaped: every QP has tx_depth WRs
		 * outstanding (at least one of them signaled, as cq_mod <=
		 * tx_depth) or has posted all its iterations (the last one is
		 * signaled), so a send completion is bound to come.
		 */
		if (credit_wait && !more && !got &&
		    ++credit_idle % BW_CREDIT_CHECK == 0) {
			rc = credit_peer_check(d);
			if (rc < 0)
				goto out;
		}
		rc = idle_step(d, &w, more || got, !recv_side && !credit_wait,
			       !recv_side && credit_wait, d->scq, NULL);
		if (rc < 0)
			goto out;
		if (o->progress_line && (posted & 1023) == 0 &&
		    bw_now_ns() - last_prog > 250000000u) {
			last_prog = bw_now_ns();
			bw_progress(o, size, done, tot);
		}
	}
	rc = 0;
	if (k.duration) {
		/*
		 * Drain what is still in flight so the QP is quiet. Only the
		 * WRs covered by a signaled one complete: the batch
		 * unsignaled WRs posted after a QP's last signaled WR never
		 * produce a completion (waiting for them hung every -D run).
		 */
		cpu1 = bw_cpu_seconds();
		t1 = bw_now_ns();
		while (1) {
			uint64_t out = 0;

			for (i = 0; i < d->n; i++)
				out += d->q[i].scnt - d->q[i].batch -
				       d->q[i].ccnt;
			if (!out)
				break;
			if (bw_stopping()) {
				rc = -EINTR;
				goto out;
			}
			rc = reap_sends(d, &k, size, &pk, &counted);
			if (rc < 0)
				goto out;
			if (rc == 0 && d->inline_progress)
				iwarp_progress(d->ctx);
		}
		rc = 0;
		r->iters = counted;
		r->msgs = counted;
		r->seconds = (double)(k.sample_to - k.sample_from) / 1e9;
	} else {
		if (!t1) {
			t1 = bw_now_ns();
			cpu1 = bw_cpu_seconds();
		}
		r->iters = iters;
		r->msgs = tot;
		r->seconds = (double)(t1 - t0) / 1e9;
	}
	r->size = size;
	r->peak_bps = pk.peak;
	r->cpu_s = cpu1 - cpu0;
	r->wall_s = (double)(t1 - t0) / 1e9;
	bw_progress(o, size, 0, 0);
out:
	free(wr);
	free(sge);
	return rc;
}

int bw_run_bw_server(struct bw_data *d, const struct bw_opts *o, uint64_t size,
		     struct bw_result *r)
{
	uint64_t tot = o->iters * (uint64_t)d->n, counted = 0, first = 0,
		 last = 0;
	uint64_t last_prog = 0, credit_done = 0;
	struct bw_idle w;
	struct bw_clock k;
	struct bw_peak pk;
	double cpu0 = 0, cpu1 = 0;
	int rc, i, got;

	memset(&k, 0, sizeof(k));
	peak_init(&pk, bw_now_ns());
	idle_init(&w, o);
	for (;;) {
		if (bw_stopping())
			return -EINTR;
		if (k.duration) {
			if (bw_now_ns() >= k.end)
				break;
		} else if (first && counted >= tot) {
			break;
		}
		rc = reap_recvs(d, o, size, &k, &counted);
		if (rc < 0)
			return rc;
		if (rc > 0 && !first) {
			/* set_on_first_rx_packet: the clock starts here */
			first = bw_now_ns();
			cpu0 = bw_cpu_seconds();
			if (o->duration > 0) {
				clock_init(&k, o);
				counted = 0;
			}
		}
		if (rc > 0) {
			last = bw_now_ns();
			if (o->cpu_util)
				cpu1 = bw_cpu_seconds();
		}
		got = rc;
		if (d->send_credit) {
			rc = reap_sends(d, &k, size, &pk, &credit_done);
			if (rc < 0)
				return rc;
			got += rc;
		}
		if (rc == 0 && d->inline_progress)
			iwarp_progress(d->ctx);
		/* the sender keeps sending while we have receives posted */
		rc = idle_step(d, &w, got, 1, 0, d->rcq,
			       d->send_credit ? d->scq : NULL);
		if (rc < 0)
			return rc;
		if (o->progress_line && bw_now_ns() - last_prog > 250000000u) {
			last_prog = bw_now_ns();
			bw_progress(o, size, counted, tot);
		}
	}
	/* clean the credit Writes still in flight */
	for (;;) {
		uint64_t out = 0;

		for (i = 0; i < d->n; i++)
			out += d->q[i].credits_out;
		if (!out)
			break;
		if (bw_stopping())
			return -EINTR;
		rc = reap_sends(d, &k, size, &pk, &credit_done);
		if (rc < 0)
			return rc;
		if (rc == 0 && d->inline_progress)
			iwarp_progress(d->ctx);
	}
	r->size = size;
	r->iters = k.duration ? counted : o->iters;
	r->msgs = k.duration ? counted : tot;
	r->seconds = k.duration ? (double)(k.sample_to - k.sample_from) / 1e9
				: (double)(last - first) / 1e9;
	r->peak_bps = 0;
	r->cpu_s = cpu1 > cpu0 ? cpu1 - cpu0 : 0;
	r->wall_s =
		o->cpu_util && last > first ? (double)(last - first) / 1e9 : 0;
	bw_progress(o, size, 0, 0);
	return 0;
}

/*
 * Latency loops with -e: blocks in iwarp_get_cq_event on the (blocking)
 * channel fd, as perftest does; the stop signals' handler ends the wait
 * with -EINTR. A thread blocked there may be the one that reads the
 * message (direct socket I/O, the library's default with one engine).
 */
static int chan_wait(struct bw_data *d)
{
	struct iwarp_cq *cq;
	void *ctx;
	int rc = iwarp_get_cq_event(d->chan, &cq, &ctx);

	if (rc)
		return rc == -EINTR && !bw_stopping() ? 0 : rc;
	iwarp_ack_cq_events(cq, 1);
	return 0;
}

/*
 * Waits for one completion on |cq| (latency loops): spins (bw_poll_one),
 * or with -e (d->chan) sleeps on the completion channel: poll, arm, poll
 * again (a completion pushed before the arm fires no event), sleep.
 */
static int lat_wait(struct bw_data *d, struct iwarp_cq *cq, struct iwarp_wc *wc)
{
	int n, rc;

	if (!d->chan)
		return bw_poll_one(cq, d->inline_progress, wc);
	for (;;) {
		n = iwarp_poll_cq(cq, 1, wc);
		if (n != 0)
			return n < 0 ? n : 0;
		if (bw_stopping())
			return -EINTR;
		rc = iwarp_req_notify_cq(cq, 0);
		if (rc)
			return rc;
		n = iwarp_poll_cq(cq, 1, wc);
		if (n != 0)
			return n < 0 ? n : 0;
		rc = chan_wait(d);
		if (rc)
			return rc;
	}
}

/* Waits for one send-queue completion. */
static int wait_send(struct bw_data *d)
{
	struct iwarp_wc wc;
	int rc = lat_wait(d, d->scq, &wc);

	return rc ? rc : wc_ok(&wc, "send queue");
}

/* Spins on the target octet between two peer-liveness checks. */
#define BW_SPIN_CHECK 4096u

/*
 * Whether QP |i| is in the error state: the peer is gone (disconnected,
 * killed). A spin on memory sees no completion, so it asks the QP.
 */
static int qp_failed(struct bw_data *d, int i)
{
	struct iwarp_qp_init_attr ia;
	struct iwarp_qp_attr a;

	if (iwarp_query_qp(d->q[i].qp, &a, IWARP_QP_STATE, &ia))
		return 0;
	return a.qp_state == IWARP_QPS_ERR;
}

/*
 * perftest_resources.c run_iter_lat_write: RDMA Write ping-pong. The SERVER
 * writes first (only it skips the wait while scnt < 1); then each side, per
 * iteration, spins until the last octet of its remote-target region
 * (buf + num_qps * BUFF + size - 1) equals (char)++rcnt, stores (char)++scnt
 * in the last octet of its own source region and posts a signaled Write of
 * |size| octets. (run_iter_lat_send is the other way round: the client
 * sends first.)
 */
static int lat_write(struct bw_data *d, const struct bw_opts *o, uint64_t size,
		     uint64_t *t)
{
	volatile uint8_t *post_buf = d->buf + size - 1;
	volatile uint8_t *poll_buf = d->buf + (size_t)d->n * d->buff + size - 1;
	uint64_t scnt = 0, rcnt = 0, out = 0;
	int server = o->server == NULL;
	unsigned int spins = 0;
	int rc;

	while (scnt < o->iters || rcnt < o->iters) {
		if (rcnt < o->iters && !(scnt < 1 && server)) {
			uint8_t want = (uint8_t)++rcnt;

			if (o->write_imm) { /* the receive completion says it */
				struct iwarp_wc wc;

				rc = lat_wait(d, d->rcq, &wc);
				if (!rc && wc_ok(&wc, "receive"))
					rc = -EIO;
				if (!rc)
					rc = bw_ext_check_recv(o, 0, rcnt - 1,
							       &wc);
				if (rc)
					return rc;
			}
			while (*poll_buf != want) {
				if (bw_stopping())
					return -EINTR;
				if (++spins % BW_SPIN_CHECK == 0 &&
				    qp_failed(d, 0)) {
					fprintf(stderr,
						" iwarp_bw: connection lost (QP in error) waiting for Write %llu\n",
						(unsigned long long)rcnt);
					return -ECONNRESET;
				}
				if (d->inline_progress)
					iwarp_progress(d->ctx);
			}
		}
		if (scnt < o->iters) {
			while (out >= (uint64_t)o->tx_depth) {
				rc = wait_send(d);
				if (rc)
					return rc;
				out--;
			}
			t[scnt] = bw_now_ns();
			*post_buf = (uint8_t)++scnt;
			rc = post_data(d, o, 0, size, IWARP_SEND_SIGNALED,
				       mk_wrid(0, 1), scnt - 1);
			if (rc)
				return rc;
			out++;
		}
	}
	while (out--) {
		rc = wait_send(d);
		if (rc)
			return rc;
	}
	return 0;
}

static int lat_read(struct bw_data *d, const struct bw_opts *o, uint64_t size,
		    uint64_t *t)
{
	uint64_t i;
	int rc;

	for (i = 0; i < o->iters; i++) {
		t[i] = bw_now_ns();
		rc = post_data(d, o, 0, size, IWARP_SEND_SIGNALED,
			       mk_wrid(0, 1), i);
		if (rc)
			return rc;
		rc = wait_send(d);
		if (rc)
			return rc;
		if (o->atomic) { /* the original value landed in our source */
			uint64_t v;

			memcpy(&v, d->buf, sizeof(v));
			rc = bw_atomic_check_fetched(o, i, v);
			if (rc)
				return rc;
		}
	}
	return 0;
}

static int lat_send(struct bw_data *d, const struct bw_opts *o, uint64_t size,
		    uint64_t *t)
{
	struct bw_qp *q = &d->q[0];
	uint64_t scnt = 0, out = 0;
	int client = o->server != NULL;
	struct iwarp_wc wc;
	int rc;

	q->rcnt = 0;
	while (scnt < o->iters || q->rcnt < o->iters) {
		if (q->rcnt < o->iters && !(scnt < 1 && client)) {
			rc = lat_wait(d, d->rcq, &wc);
			if (rc)
				return rc;
			if (wc_ok(&wc, "receive"))
				return -EIO;
			rc = bw_ext_check_recv(o, 0, q->rcnt, &wc);
			if (rc)
				return rc;
			q->rcnt++;
			if (q->rposted < o->iters) {
				rc = post_one_recv(d, 0, size);
				if (rc)
					return rc;
			}
		}
		if (scnt < o->iters) {
			while (out >= (uint64_t)o->tx_depth) {
				rc = wait_send(d);
				if (rc)
					return rc;
				out--;
			}
			t[scnt] = bw_now_ns();
			rc = post_data(d, o, 0, size, IWARP_SEND_SIGNALED,
				       mk_wrid(0, 1), scnt);
			if (rc)
				return rc;
			scnt++;
			out++;
		}
	}
	while (out--) {
		rc = wait_send(d);
		if (rc)
			return rc;
	}
	return 0;
}

int bw_run_lat(struct bw_data *d, const struct bw_opts *o, uint64_t size,
	       uint64_t *samples)
{
	switch (o->verb) {
	case BW_WRITE:
		return lat_write(d, o, size, samples);
	case BW_READ:
		return lat_read(d, o, size, samples);
	case BW_SEND:
	default:
		return lat_send(d, o, size, samples);
	}
}
