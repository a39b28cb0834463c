/*
 * tests/net/mixed_cut.c: a connection cut at and around every MPA and FPDU
 * boundary of a run of 1,000 mixed operations.
 *
 * Two contexts in this process on loopback; the client connects through an
 * in-process relay thread (a TCP proxy). The workload: 1,000 operations in
 * rounds of MC_K, each a Send, an RDMA Write or an RDMA Read (RFC 5040
 * §4.3-§4.5) initiated by either side, sizes crossing FPDU boundaries
 * (IWARP_FPDU_MAX is set to MC_FPDU, a 1500-octet MTU's segment); each side
 * closes a round with a 4-octet Send (after its Writes: RFC 5040 §5.5
 * ordering makes the peer's receive of it prove the Writes were placed).
 *
 * First a clean pass: the relay records both byte streams, which are parsed
 * as MPA (RFC 5044 §7.1 Request/Reply frames, then FPDUs §4.1: ULPDU_Length,
 * ULPDU, pad, CRC) into the offset of every frame boundary per direction.
 * Then, for every boundary B and N in {B-1, B, B+1}, both directions, FIN
 * and RST, one run in which the relay forwards N octets in that direction
 * and then cuts both TCP connections. Each run asserts:
 *   - every posted WR completes (posted == completed, per side), with
 *     success or IWARP_WC_WR_FLUSH_ERR;
 *   - what completed successfully carries the right data (receives, Read
 *     sinks, and the peer's Writes once its round-closing Send is in);
 *   - the client ends with CONNECT_ERROR / REJECTED / UNREACHABLE or
 *     DISCONNECTED + TIMEWAIT_EXIT, and a server that got the request with
 *     CONNECT_ERROR or DISCONNECTED + TIMEWAIT_EXIT;
 *   - nothing hangs (no event or completion for MC_IDLE_MS fails; the
 *     harness's watchdog bounds each run);
 *   - nothing leaks (library blocks counted through the allocator seam; ASan
 *     builds add the leak check at exit).
 * The interleaving of the two sides' FPDUs on a stream varies slightly from
 * run to run, so an offset is a boundary of the clean run's stream.
 *
 * MIXED_CUT_STRIDE=S runs, of every S-th offset (direction and N), one
 * cut, FIN and RST in turn; every point below MC_EARLY_OCTETS (the MPA
 * exchange and the first FPDUs) always runs in both modes. The default S
 * gives about MC_DEFAULT_POINTS points plus those; MIXED_CUT_STRIDE=1 runs
 * every point, FIN and RST (make check-net runs S=8, net_long.sh).
 */
#include "config.h"

#include <errno.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "../stress/sx.h"
#include "trelay.h"

#define MC_OPS		  1000
#define MC_K		  10 /* operations per round */
#define MC_ROUNDS	  (MC_OPS / MC_K)
#define MC_MAXSZ	  12288
#define MC_FPDU		  "1448"
#define MC_IDLE_MS	  30000
#define MC_DEFAULT_POINTS 48
#define MC_EARLY_OCTETS	  4096 /* cut points below this always run */

enum mc_type { MC_SEND, MC_WRITE, MC_READ };

struct mc_op {
	int init; /* 0: client, 1: server */
	enum mc_type type;
	uint32_t len;
};

static struct mc_op plan[MC_ROUNDS][MC_K];

/* ---- the workload ---------------------------------------------------- */

static uint64_t mc_seed = 0x6d69786564637574ull;

static uint32_t mc_rand(void)
{
	mc_seed ^= mc_seed >> 12;
	mc_seed ^= mc_seed << 25;
	mc_seed ^= mc_seed >> 27;
	return (uint32_t)((mc_seed * 0x2545F4914F6CDD1Dull) >> 32);
}

static void mc_plan(void)
{
	/* around one and two FPDUs of payload at MC_FPDU (1448 minus the
	 * MPA, DDP and RDMAP headers and the CRC), and between */
	static const uint32_t sizes[] = {1,    3,    64,   1000, 1407, 1408,
					 1409, 1420, 1421, 1422, 2815, 2816,
					 2817, 4096, 5000, 9000, 12288};
	int r, q;

	for (r = 0; r < MC_ROUNDS; r++) {
		for (q = 0; q < MC_K; q++) {
			struct mc_op *o = &plan[r][q];
			uint32_t x = mc_rand();

			o->init = (int)(x & 1);
			o->type = (enum mc_type)((x >> 1) % 3);
			if ((x >> 8) & 1)
				o->len = sizes[(x >> 9) % (sizeof(sizes) /
							   sizeof(sizes[0]))];
			else
				o->len = (x >> 9) % (MC_MAXSZ + 1);
			if (o->type == MC_READ && !o->len)
				o->len = 1;
		}
	}
}

static uint8_t mc_pat(int r, int q, uint32_t j)
{
	return (uint8_t)((uint32_t)(r * MC_K + q) * 29u + j * 7u + (j >> 9) +
			 1u);
}

/* per side: src[q], dst[q], end Send source, end receive */
#define MC_SRC(q) ((size_t)(q)*MC_MAXSZ)
#define MC_DST(q) ((size_t)(MC_K + (q)) * MC_MAXSZ)
#define MC_ENDSRC ((size_t)2 * MC_K * MC_MAXSZ)
#define MC_ENDDST (MC_ENDSRC + 64)
#define MC_BUFLEN (MC_ENDDST + 64)
#define MC_FILL	  0xa5
#define MC_WR(r, kind, q)                                                      \
	(((uint64_t)(r) << 16) | ((uint64_t)(kind) << 8) | (uint64_t)(q))

struct mc_side {
	struct sx_side *sx;
	struct iwarp_cm_id *id;
	uint8_t *buf;
	struct iwarp_mr *mr;
	long posted, completed, ok, flushed;
	int up, disc, end, failed; /* CM state seen */
	int req;		   /* server: a CONNECT_REQUEST came */
};

struct mc_run {
	struct sx_net n;
	struct mc_side s[2];
	int round, round_left, broken, disc_sent;
	int started;
	uint64_t last;
};

struct mc_stats {
	long runs, connect_failed, broken, completed, srv_no_req;
	long wr_ok, wr_flushed;
};

static struct mc_stats st;
static uint64_t mc_req_len; /* the MPA Request's length (clean run) */

static void mc_verify(const uint8_t *p, int r, int q, uint32_t len,
		      const char *what)
{
	uint32_t j;

	for (j = 0; j < len; j++)
		SX_CHECK(p[j] == mc_pat(r, q, j),
			 "round %d op %d (%s, %u octets): octet %u is %#x, "
			 "wanted %#x",
			 r, q, what, len, j, p[j], mc_pat(r, q, j));
}

static int mc_post_send(struct mc_run *m, int s, uint64_t wr_id,
			enum iwarp_wr_opcode op, size_t loff, uint32_t len,
			size_t roff)
{
	struct mc_side *me = &m->s[s], *peer = &m->s[1 - s];
	int rc = sx_post_send(me->id->qp, wr_id, op, IWARP_SEND_SIGNALED,
			      me->mr, me->buf + loff, len,
			      (uintptr_t)(peer->buf + roff), peer->mr->rkey);

	if (rc == 0) {
		me->posted++;
		m->round_left++;
	}
	return rc;
}

static int mc_post_recv(struct mc_run *m, int s, uint64_t wr_id, size_t off,
			uint32_t len)
{
	struct mc_side *me = &m->s[s];
	int rc = sx_post_recv(me->id->qp, wr_id, me->mr, me->buf + off, len);

	if (rc == 0) {
		me->posted++;
		m->round_left++;
	}
	return rc;
}

/* Posts round m->round on both sides: receives first, then the data. A
 * refused post (the QP already left RTS) ends the workload. */
static void mc_round(struct mc_run *m)
{
	int r = m->round, q, s;
	uint32_t j;

	sx_phase("post a round");
	for (q = 0; q < MC_K; q++) {
		const struct mc_op *o = &plan[r][q];
		int src = o->type == MC_READ ? 1 - o->init : o->init;

		for (j = 0; j < o->len; j++)
			m->s[src].buf[MC_SRC(q) + j] = mc_pat(r, q, j);
		memset(m->s[1 - src].buf + MC_DST(q), MC_FILL, MC_MAXSZ);
	}
	for (s = 0; s < 2; s++) {
		memcpy(m->s[s].buf + MC_ENDSRC, &r, sizeof(r));
		memset(m->s[s].buf + MC_ENDDST, MC_FILL, 64);
	}
	for (s = 0; s < 2; s++) {
		for (q = 0; q < MC_K; q++) {
			const struct mc_op *o = &plan[r][q];

			if (o->init == s || o->type != MC_SEND)
				continue;
			if (mc_post_recv(m, s, MC_WR(r, 1, q), MC_DST(q),
					 MC_MAXSZ))
				goto refused;
		}
		if (mc_post_recv(m, s, MC_WR(r, 1, MC_K), MC_ENDDST, 64))
			goto refused;
	}
	for (s = 0; s < 2; s++) {
		for (q = 0; q < MC_K; q++) {
			const struct mc_op *o = &plan[r][q];
			int rc;

			if (o->init != s)
				continue;
			if (o->type == MC_READ)
				rc = mc_post_send(m, s, MC_WR(r, 0, q),
						  IWARP_WR_RDMA_READ, MC_DST(q),
						  o->len, MC_SRC(q));
			else
				rc = mc_post_send(m, s, MC_WR(r, 0, q),
						  o->type == MC_SEND
							  ? IWARP_WR_SEND
							  : IWARP_WR_RDMA_WRITE,
						  MC_SRC(q), o->len, MC_DST(q));
			if (rc)
				goto refused;
		}
		if (mc_post_send(m, s, MC_WR(r, 0, MC_K), IWARP_WR_SEND,
				 MC_ENDSRC, (uint32_t)sizeof(r), 0))
			goto refused;
	}
	return;
refused:
	m->broken = 1;
}

static void mc_completion(struct mc_run *m, int s, const struct iwarp_wc *wc)
{
	struct mc_side *me = &m->s[s];
	int r = (int)(wc->wr_id >> 16), kind = (int)((wc->wr_id >> 8) & 0xff),
	    q = (int)(wc->wr_id & 0xff), k;
	const struct mc_op *o;

	me->completed++;
	m->round_left--;
	SX_CHECK(r == m->round && q <= MC_K,
		 "side %d: completion for wr_id %#llx in round %d", s,
		 (unsigned long long)wc->wr_id, m->round);
	if (wc->status != IWARP_WC_SUCCESS) {
		SX_CHECK(wc->status == IWARP_WC_WR_FLUSH_ERR,
			 "side %d: wr_id %#llx: status %s (vendor_err %#x)", s,
			 (unsigned long long)wc->wr_id,
			 iwarp_wc_status_str(wc->status), wc->vendor_err);
		me->flushed++;
		m->broken = 1;
		return;
	}
	me->ok++;
	if (kind == 1 && q == MC_K) {
		/* the peer's round-closing Send: its Writes are placed */
		SX_CHECK(wc->opcode == IWARP_WC_RECV && wc->byte_len == 4 &&
				 !memcmp(me->buf + MC_ENDDST, &r, 4),
			 "side %d: round %d closing Send: opcode %d, %u "
			 "octets",
			 s, r, wc->opcode, wc->byte_len);
		for (k = 0; k < MC_K; k++) {
			o = &plan[r][k];
			if (o->init != s && o->type == MC_WRITE)
				mc_verify(me->buf + MC_DST(k), r, k, o->len,
					  "Write placed");
		}
		return;
	}
	if (q == MC_K)
		return; /* our closing Send */
	o = &plan[r][q];
	if (kind == 1) {
		SX_CHECK(wc->opcode == IWARP_WC_RECV && wc->byte_len == o->len,
			 "side %d: round %d op %d: receive opcode %d, %u "
			 "octets, wanted %u",
			 s, r, q, wc->opcode, wc->byte_len, o->len);
		mc_verify(me->buf + MC_DST(q), r, q, o->len, "Send received");
	} else if (o->type == MC_READ) {
		SX_CHECK(wc->opcode == IWARP_WC_RDMA_READ,
			 "side %d: round %d op %d: opcode %d", s, r, q,
			 wc->opcode);
		mc_verify(me->buf + MC_DST(q), r, q, o->len, "Read sink");
	}
}

static bool mc_cm(struct mc_run *m, int s)
{
	struct mc_side *me = &m->s[s];
	struct iwarp_cm_event *ev = sx_cm_next(&m->n, me->sx->ech, 0);
	enum iwarp_cm_event_type t;

	if (!ev)
		return false;
	t = ev->event;
	if (s == 1 && t == IWARP_CM_EVENT_CONNECT_REQUEST) {
		struct iwarp_qp_init_attr qa;
		struct iwarp_conn_param cp;
		int rc;

		SX_CHECK(!me->req, "a second CONNECT_REQUEST");
		me->req = 1;
		me->id = ev->id;
		SX_OK(iwarp_cm_ack_event(ev));
		memset(&qa, 0, sizeof(qa));
		qa.send_cq = qa.recv_cq = me->sx->cq;
		qa.qp_type = IWARP_QPT_RC;
		qa.cap.max_send_wr = qa.cap.max_recv_wr = 4 * MC_K;
		qa.cap.max_send_sge = qa.cap.max_recv_sge = 1;
		SX_OK(iwarp_cm_create_qp(me->id, me->sx->pd, &qa));
		memset(&cp, 0, sizeof(cp));
		cp.responder_resources = cp.initiator_depth = 16;
		rc = iwarp_cm_accept(me->id, &cp);
		SX_CHECK(rc == 0 || rc == -ECONNRESET || rc == -ENOTCONN ||
				 rc == -EPIPE,
			 "iwarp_cm_accept: %d (%s)", rc, iwarp_strerror(rc));
		return true;
	}
	SX_CHECK(ev->id == me->id, "side %d: %s for another id", s,
		 iwarp_cm_event_str(t));
	if (t == IWARP_CM_EVENT_ESTABLISHED) {
		SX_CHECK(!me->up && !me->end, "side %d: late ESTABLISHED", s);
		me->up = 1;
	} else if (t == IWARP_CM_EVENT_DISCONNECTED) {
		SX_CHECK(me->up && !me->disc, "side %d: DISCONNECTED", s);
		me->disc = 1;
	} else if (t == IWARP_CM_EVENT_TIMEWAIT_EXIT) {
		SX_CHECK(me->disc, "side %d: TIMEWAIT_EXIT first", s);
		me->end = 1;
	} else if (t == IWARP_CM_EVENT_CONNECT_ERROR ||
		   t == IWARP_CM_EVENT_REJECTED ||
		   t == IWARP_CM_EVENT_UNREACHABLE) {
		SX_CHECK(!me->up, "side %d: %s after ESTABLISHED", s,
			 iwarp_cm_event_str(t));
		me->failed = 1;
		me->end = 1;
	} else {
		SX_FAIL("side %d: unexpected %s (status %d)", s,
			iwarp_cm_event_str(t), ev->status);
	}
	SX_OK(iwarp_cm_ack_event(ev));
	return true;
}

static bool mc_poll(struct mc_run *m, int s)
{
	struct iwarp_wc wc[32];
	int i, got = iwarp_poll_cq(m->s[s].sx->cq, 32, wc);

	SX_CHECK(got >= 0, "iwarp_poll_cq: %s", iwarp_strerror(got));
	for (i = 0; i < got; i++)
		mc_completion(m, s, &wc[i]);
	return got > 0;
}

static bool mc_finished(const struct mc_run *m, const struct trelay *rl)
{
	const struct mc_side *c = &m->s[0], *v = &m->s[1];

	if (c->posted != c->completed || v->posted != v->completed)
		return false;
	if (!c->end || (v->req && !v->end))
		return false;
	return rl->done;
}

/* One run: a cut after |cut_n| octets in |dir| (-1: none), RST or FIN. */
static void mc_run(int dir, uint64_t cut_n, int rst, struct trelay *rec)
{
	long base = sx_mem_live();
	struct trelay relay, *rl = rec ? rec : &relay;
	struct sx_opts o;
	struct mc_run m;
	uint64_t idle_until = 0;
	int s;

	memset(&o, 0, sizeof(o));
	o.progress = IWARP_PROGRESS_CPU;
	o.cqe = 256;
	memset(&m, 0, sizeof(m));
	sx_net_open(&m.n, &o);
	m.n.drain_stray = true;
	for (s = 0; s < 2; s++) {
		m.s[s].sx = s ? &m.n.srv : &m.n.cli;
		m.s[s].buf = sx_buf_alloc(MC_BUFLEN);
		m.s[s].mr = iwarp_reg_mr(m.s[s].sx->pd, m.s[s].buf, MC_BUFLEN,
					 IWARP_ACCESS_LOCAL_WRITE |
						 IWARP_ACCESS_REMOTE_WRITE |
						 IWARP_ACCESS_REMOTE_READ);
		SX_CHECK(m.s[s].mr, "iwarp_reg_mr: %s", strerror(errno));
	}
	if (!rec)
		trelay_init(rl);
	rl->cut_dir = dir;
	rl->cut_n = cut_n;
	rl->rst = rst;
	trelay_start(rl, m.n.port);
	{
		struct sx_conn k;

		m.n.port = rl->port;
		sx_connect_start(&m.n, &k, NULL);
		m.s[0].id = k.c;
	}
	/* the client QP from sx_connect_start has 128 WRs per queue */
	sx_phase("workload");
	m.last = sx_now_ms();
	for (;;) {
		bool moved = false;
		struct pollfd p[2];

		for (s = 0; s < 2; s++) {
			while (mc_cm(&m, s))
				moved = true;
			while (mc_poll(&m, s))
				moved = true;
		}
		if (m.s[0].up && m.s[1].up && !m.broken && !m.s[0].disc &&
		    !m.s[1].disc && m.round_left == 0) {
			if (m.started && m.round < MC_ROUNDS)
				m.round++;
			if (m.round < MC_ROUNDS) {
				m.started = 1;
				mc_round(&m);
				moved = true;
			} else if (!m.disc_sent) {
				/* all done: the orderly end */
				m.disc_sent = 1;
				SX_OK(iwarp_cm_disconnect(m.s[0].id));
				moved = true;
			}
		}
		if (mc_finished(&m, rl)) {
			/* the server may still get a request the relay
			 * passed on before the cut: wait a moment for it */
			if (m.s[1].req || rl->fwd[0] < mc_req_len ||
			    (idle_until && sx_now_ms() >= idle_until))
				break;
			if (!idle_until)
				idle_until = sx_now_ms() + 1000;
		}
		if (moved) {
			m.last = sx_now_ms();
			continue;
		}
		SX_CHECK(sx_now_ms() - m.last < MC_IDLE_MS,
			 "nothing happened for %d ms: client posted %ld "
			 "completed %ld up %d disc %d end %d; server req %d "
			 "posted %ld completed %ld up %d disc %d end %d; relay "
			 "done %d cut %d fwd %llu/%llu; round %d",
			 MC_IDLE_MS, m.s[0].posted, m.s[0].completed, m.s[0].up,
			 m.s[0].disc, m.s[0].end, m.s[1].req, m.s[1].posted,
			 m.s[1].completed, m.s[1].up, m.s[1].disc, m.s[1].end,
			 rl->done, rl->cut, (unsigned long long)rl->fwd[0],
			 (unsigned long long)rl->fwd[1], m.round);
		p[0].fd = m.n.cli.ech->fd;
		p[1].fd = m.n.srv.ech->fd;
		p[0].events = p[1].events = POLLIN;
		(void)poll(p, 2, 1);
	}
	sx_phase("teardown");
	trelay_stop(rl);
	st.runs++;
	if (m.s[0].failed)
		st.connect_failed++;
	else if (m.round >= MC_ROUNDS && !m.broken)
		st.completed++;
	else
		st.broken++;
	if (!m.s[1].req)
		st.srv_no_req++;
	for (s = 0; s < 2; s++) {
		st.wr_ok += m.s[s].ok;
		st.wr_flushed += m.s[s].flushed;
	}
	if (dir < 0) {
		SX_CHECK(m.round == MC_ROUNDS && !m.broken && !m.s[0].failed,
			 "the clean run did not complete: round %d", m.round);
	}
	sx_drain_async(&m.n, m.n.cli.ctx);
	sx_drain_async(&m.n, m.n.srv.ctx);
	for (s = 0; s < 2; s++) {
		if (m.s[s].id) {
			iwarp_cm_destroy_qp(m.s[s].id);
			SX_OK(iwarp_cm_destroy_id(m.s[s].id));
		}
		SX_OK(iwarp_dereg_mr(m.s[s].mr));
	}
	sx_net_close(&m.n, base);
	for (s = 0; s < 2; s++)
		sx_buf_free(m.s[s].buf);
}

/* ---- boundaries and cut points ---------------------------------------- */

struct mc_cut {
	int dir, rst;
	uint64_t n;
};

static struct mc_cut *cuts;
static int ncuts, cap_cuts;

static void mc_add(int dir, uint64_t n, int rst)
{
	if (ncuts == cap_cuts) {
		cap_cuts = cap_cuts ? cap_cuts * 2 : 1024;
		cuts = realloc(cuts, (size_t)cap_cuts * sizeof(*cuts));
		SX_CHECK(cuts != NULL, "realloc");
	}
	cuts[ncuts].dir = dir;
	cuts[ncuts].n = n;
	cuts[ncuts].rst = rst;
	ncuts++;
}

static uint16_t be16(const uint8_t *p)
{
	return (uint16_t)(p[0] << 8 | p[1]);
}

/* The boundaries of stream |d| (MPA frame, then FPDUs, RFC 5044 §4.1,
 * §7.1; no markers); returns how many, offsets in |b| (0 included). */
static size_t mc_bounds(const uint8_t *p, size_t len, int d, uint64_t **b)
{
	static const char *const key[2] = {"MPA ID Req Frame",
					   "MPA ID Rep Frame"};
	size_t off, n = 0;

	*b = malloc((len / 8 + 4) * sizeof(**b));
	SX_CHECK(*b && len >= 20 && !memcmp(p, key[d], 16),
		 "stream %d does not start with an MPA frame", d);
	SX_CHECK(!(p[16] & 0x40), "markers negotiated: unexpected");
	(*b)[n++] = 0;
	off = 20u + be16(p + 18);
	(*b)[n++] = off;
	while (off < len) {
		size_t f;

		SX_CHECK(off + 2 <= len, "stream %d: truncated at %zu", d, off);
		f = 2u + be16(p + off);
		f = (f + 3u) & ~(size_t)3u; /* pad, RFC 5044 §4.1 */
		f += 4;			    /* CRC field */
		off += f;
		SX_CHECK(off <= len, "stream %d: FPDU past the end (%zu > %zu)",
			 d, off, len);
		(*b)[n++] = off;
	}
	return n;
}

static void iter(int it)
{
	const struct mc_cut *c = &cuts[it];

	sx_variant(c->dir ? (c->rst ? "s2c RST" : "s2c FIN")
			  : (c->rst ? "c2s RST" : "c2s FIN"));
	if (getenv("MIXED_CUT_TRACE"))
		fprintf(stderr, "cut %d: %s after %llu\n", it,
			c->dir ? "s2c" : "c2s", (unsigned long long)c->n);
	mc_run(c->dir, c->n, c->rst, NULL);
}

int main(void)
{
	struct trelay rec;
	uint64_t *b[2], t0;
	size_t nb[2], i;
	const char *env = getenv("MIXED_CUT_STRIDE");
	long stride, all, kept = 0;
	struct mc_cut *sel;
	char iters[32];
	int d, rst, k, rc;
	struct iwarp_context *probe;

	setenv("IWARP_FPDU_MAX", MC_FPDU, 1);
	setenv("IWARP_MARKERS", "0", 1);
	setvbuf(stdout, NULL, _IOLBF, 0);
	probe = iwarp_open_context(NULL);
	if (!probe && (errno == ENOSYS || errno == EPERM)) {
		printf("mixed_cut: no io_uring here: skipped\n");
		return 77;
	}
	if (probe)
		iwarp_close_context(probe);
	mc_plan();
	t0 = sx_now_ms();
	sx_phase("clean run");
	alarm(SX_ITER_LIMIT_S);
	trelay_init(&rec);
	rec.record = 1;
	mc_run(-1, 0, 0, &rec);
	alarm(0);
	for (d = 0; d < 2; d++)
		nb[d] = mc_bounds(rec.rec[d], rec.rec_len[d], d, &b[d]);
	mc_req_len = b[0][1];
	printf("mixed_cut: clean run %llu ms: %d operations, %ld WRs; "
	       "c2s %zu octets, %zu boundaries; s2c %zu octets, %zu "
	       "boundaries\n",
	       (unsigned long long)(sx_now_ms() - t0), MC_OPS, st.wr_ok,
	       rec.rec_len[0], nb[0], rec.rec_len[1], nb[1]);
	for (d = 0; d < 2; d++) {
		for (i = 0; i < nb[d]; i++) {
			for (k = -1; k <= 1; k++) {
				uint64_t n = b[d][i] + (uint64_t)(int64_t)k;

				if (k < 0 && b[d][i] == 0)
					continue;
				/* neighbours of 4-octet-apart boundaries
				 * coincide: once */
				if (ncuts && cuts[ncuts - 1].dir == d &&
				    cuts[ncuts - 1].n >= n)
					continue;
				for (rst = 0; rst < 2; rst++)
					mc_add(d, n, rst);
			}
		}
		free(b[d]);
	}
	all = ncuts; /* pairs: (dir, n, FIN), (dir, n, RST) */
	stride = env && *env ? atol(env)
			     : (all / 2 + MC_DEFAULT_POINTS - 1) /
				       MC_DEFAULT_POINTS;
	if (stride < 1)
		stride = 1;
	sel = malloc((size_t)all * sizeof(*sel));
	SX_CHECK(sel != NULL, "malloc");
	for (i = 0; i < (size_t)all; i++) {
		/* cut points come in FIN/RST pairs (j: the pair): every
		 * stride-th pair, FIN and RST in turn */
		long j = (long)i / 2;

		if (cuts[i].n < MC_EARLY_OCTETS || stride == 1 ||
		    (j % stride == 0 && cuts[i].rst == (j / stride) % 2))
			sel[kept++] = cuts[i];
	}
	free(cuts);
	cuts = sel;
	ncuts = (int)kept;
	printf("mixed_cut: %ld cut points (boundary -1/0/+1 x 2 directions x "
	       "FIN/RST), running %ld (stride %ld, every point below %d "
	       "octets)\n",
	       all, kept, stride, MC_EARLY_OCTETS);
	free(rec.rec[0]);
	free(rec.rec[1]);
	memset(&st, 0, sizeof(st));
	snprintf(iters, sizeof(iters), "%d", ncuts);
	setenv("IWARP_STRESS_ITERS", iters, 1);
	t0 = sx_now_ms();
	rc = sx_main("mixed_cut", ncuts, iter);
	if (rc == 0)
		printf("mixed_cut: %ld runs in %.1f s: %ld failed to connect, "
		       "%ld cut while established, %ld completed the "
		       "workload; server without a request %ld; WRs %ld "
		       "succeeded, %ld flushed\n",
		       st.runs, (double)(sx_now_ms() - t0) / 1000.0,
		       st.connect_failed, st.broken, st.completed,
		       st.srv_no_req, st.wr_ok, st.wr_flushed);
	free(cuts);
	return rc;
}
