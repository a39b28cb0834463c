/*
 * tests/net/zero_window.c: a peer that stops reading one connection (its
 * TCP window goes to zero) while other QPs of the same contexts keep
 * working.
 *
 * Two contexts in this process on loopback. QP A connects through an
 * in-process relay (trelay.h) that stops reading the client's octets after
 * ZW_STALL_AT for ZW_STALL_S seconds (default 5; check-net: 30), so the
 * relay's and then the client's socket buffers fill. QPs B and C connect
 * directly. Asserts:
 *   1. A's sender queue is bounded: 1 MiB RDMA Writes are posted on A until
 *      iwarp_post_send says -ENOMEM with exactly ZW_SQ WRs outstanding
 *      (no completion for ZW_QUIET_MS), and keeps saying so during the
 *      stall; the process RSS grows by less than ZW_RSS_SLACK meanwhile
 *      (not asserted under ASan, whose quarantine holds freed blocks);
 *   2. B and C complete Write + Read round trips of 64 KiB (data compared)
 *      during the stall: at least ZW_MIN_TRIPS each;
 *   3. when the relay reads again, every Write on A completes with success
 *      and a Read of the server's buffer returns the data;
 *   4. a second connection A2, stalled the same way with a full send queue,
 *      is disconnected by the client during its stall: both sides see
 *      DISCONNECTED and TIMEWAIT_EXIT (within the stall + SX_WAIT_MS) and
 *      every WR on A2 completes (success or flush); B and C still work;
 *   5. no library block leaks.
 */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../stress/sx.h"
#include "trelay.h"

#define ZW_SQ	      32
#define ZW_BIG	      ((uint32_t)1 << 20)
#define ZW_SMALL      ((uint32_t)64 << 10)
#define ZW_STALL_AT   ((uint64_t)256 << 10)
#define ZW_QUIET_MS   2000
#define ZW_RSS_SLACK  ((long)16 << 10) /* KiB */
#define ZW_MIN_TRIPS  20
#define ZW_WR(q, seq) (((uint64_t)(q) << 32) | (uint64_t)(seq))

#if defined(__SANITIZE_ADDRESS__)
#define ZW_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define ZW_ASAN 1
#endif
#endif
#ifndef ZW_ASAN
#define ZW_ASAN 0
#endif

enum { QA = 1, QB = 2, QC = 3 };

struct zw {
	struct sx_net n;
	struct sx_opts o;
	struct sx_conn k[4]; /* [QA], [QB], [QC] */
	uint8_t *cbuf, *sbuf;
	struct iwarp_mr *cmr, *smr;
	long posted[4], done[4], ok[4], flushed[4];
	long trips[4];
	int busy[4]; /* B, C: a round trip in flight */
	unsigned int stall_s;
};

/* client buffer: [0, BIG) Write source of A; [BIG, 2 BIG) A's Read sink;
 * then per QP q (B, C) src and sink of ZW_SMALL. Server buffer: [0, BIG)
 * A's target, then per QP q a ZW_SMALL target. */
#define C_SRC(q)  ((size_t)2 * ZW_BIG + (size_t)(q)*2 * ZW_SMALL)
#define C_SINK(q) (C_SRC(q) + ZW_SMALL)
#define S_DST(q)  ((size_t)ZW_BIG + (size_t)(q)*ZW_SMALL)
#define C_LEN	  (C_SRC(4))
#define S_LEN	  (S_DST(4))

static long rss_kib(void)
{
	FILE *f = fopen("/proc/self/status", "r");
	char line[256];
	long v = -1;

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "VmRSS: %ld", &v) == 1)
			break;
	fclose(f);
	return v;
}

static int zw_post(struct zw *z, int q, uint64_t seq, enum iwarp_wr_opcode op,
		   size_t loff, uint32_t len, size_t roff)
{
	int rc = sx_post_send(z->k[q].c->qp, ZW_WR(q, seq), op,
			      IWARP_SEND_SIGNALED, z->cmr, z->cbuf + loff, len,
			      (uintptr_t)(z->sbuf + roff), z->smr->rkey);

	if (rc == 0)
		z->posted[q]++;
	return rc;
}

/* Starts a Write + Read round trip on B or C. */
static void zw_trip(struct zw *z, int q)
{
	uint32_t j, seed = (uint32_t)(z->trips[q] * 7 + q);

	for (j = 0; j < ZW_SMALL; j++)
		z->cbuf[C_SRC(q) + j] = (uint8_t)(seed + j * 13u + (j >> 8));
	memset(z->cbuf + C_SINK(q), 0, ZW_SMALL);
	SX_OK(zw_post(z, q, 0, IWARP_WR_RDMA_WRITE, C_SRC(q), ZW_SMALL,
		      S_DST(q)));
	SX_OK(zw_post(z, q, 1, IWARP_WR_RDMA_READ, C_SINK(q), ZW_SMALL,
		      S_DST(q)));
	z->busy[q] = 2;
}

/* Polls the client CQ; returns the completions seen. */
static int zw_poll(struct zw *z)
{
	struct iwarp_wc wc[32];
	int n = iwarp_poll_cq(z->n.cli.cq, 32, wc), i;

	SX_CHECK(n >= 0, "iwarp_poll_cq: %s", iwarp_strerror(n));
	for (i = 0; i < n; i++) {
		int q = (int)(wc[i].wr_id >> 32);

		SX_CHECK(q >= QA && q <= QC, "wr_id %#llx",
			 (unsigned long long)wc[i].wr_id);
		z->done[q]++;
		if (wc[i].status == IWARP_WC_WR_FLUSH_ERR) {
			z->flushed[q]++;
			continue;
		}
		SX_CHECK(wc[i].status == IWARP_WC_SUCCESS,
			 "QP %d: status %s (vendor_err %#x)", q,
			 iwarp_wc_status_str(wc[i].status), wc[i].vendor_err);
		z->ok[q]++;
		if (q == QA)
			continue;
		if (--z->busy[q] == 0) {
			SX_CHECK(!memcmp(z->cbuf + C_SRC(q),
					 z->cbuf + C_SINK(q), ZW_SMALL),
				 "QP %d: the Read returned other data", q);
			z->trips[q]++;
		}
	}
	return n;
}

/* Keeps B and C busy for one step. */
static void zw_others(struct zw *z)
{
	int q;

	for (q = QB; q <= QC; q++)
		if (!z->busy[q])
			zw_trip(z, q);
}

static struct iwarp_cm_id *zw_connect(struct zw *z, int q, uint16_t port)
{
	uint16_t saved = z->n.port;

	z->n.port = port;
	sx_connect(&z->n, &z->k[q], &z->o);
	z->n.port = saved;
	return z->k[q].c;
}

/* Fills A's send queue with 1 MiB Writes until -ENOMEM, with the queue
 * stuck (no completion for ZW_QUIET_MS). Returns the RSS then. */
static long zw_fill(struct zw *z, int q, struct trelay *rl)
{
	uint64_t last = sx_now_ms(), t0 = last, seq = 0;
	long d0;
	int rc;

	sx_phase("fill the stalled send queue");
	for (;;) {
		rc = zw_post(z, q, seq, IWARP_WR_RDMA_WRITE, 0, ZW_BIG, 0);
		if (rc == 0) {
			seq++;
			last = sx_now_ms();
		} else {
			SX_CHECK(rc == -ENOMEM,
				 "post on a full queue: %d (%s), wanted "
				 "-ENOMEM",
				 rc, iwarp_strerror(rc));
		}
		d0 = z->done[q];
		zw_poll(z);
		if (z->done[q] != d0)
			last = sx_now_ms();
		zw_others(z);
		if (rc == -ENOMEM && sx_now_ms() - last >= ZW_QUIET_MS)
			break;
		SX_CHECK(sx_now_ms() - t0 < SX_WAIT_MS,
			 "the send queue did not fill within %d ms (%ld "
			 "posted, %ld done, relay stalled %d)",
			 SX_WAIT_MS, z->posted[q], z->done[q], rl->stalled);
		if (rc)
			sx_usleep(1000);
		if (getenv("ZW_TRACE") && seq % 64 == 0 && rc == 0)
			fprintf(stderr,
				"%llu ms: posted %ld done %ld fwd %llu stalled %d rss %ld\n",
				(unsigned long long)(sx_now_ms() - t0),
				z->posted[q], z->done[q],
				(unsigned long long)rl->fwd[0], rl->stalled,
				rss_kib());
	}
	SX_CHECK(rl->stalled, "the relay is not stalled");
	SX_CHECK(z->posted[q] - z->done[q] == ZW_SQ,
		 "%ld WRs outstanding on a full queue of %d",
		 z->posted[q] - z->done[q], ZW_SQ);
	printf("zero_window: queue full after %ld Writes of 1 MiB (%ld "
	       "completed), relay forwarded %llu octets\n",
	       z->posted[q], z->done[q], (unsigned long long)rl->fwd[0]);
	return rss_kib();
}

/* Runs B and C while |rl| stays stalled; A must keep refusing. */
static void zw_during(struct zw *z, int q, struct trelay *rl, long rss0,
		      uint64_t until)
{
	long t0[4], rss_max = rss0, r;
	long refused = 0;
	int i;

	sx_phase("other QPs during the stall");
	for (i = 0; i < 4; i++)
		t0[i] = z->trips[i];
	while (rl->stalled && sx_now_ms() < until) {
		int rc = zw_post(z, q, 999, IWARP_WR_RDMA_WRITE, 0, ZW_BIG, 0);

		if (rc == -ENOMEM)
			refused++;
		else
			SX_CHECK(rc == 0, "post: %s", iwarp_strerror(rc));
		zw_poll(z);
		zw_others(z);
		r = rss_kib();
		if (r > rss_max)
			rss_max = r;
		sx_usleep(200);
	}
	printf("zero_window: during the stall: B %ld and C %ld round trips, "
	       "%ld posts on A refused (ENOMEM), RSS %ld -> max %ld KiB\n",
	       z->trips[QB] - t0[QB], z->trips[QC] - t0[QC], refused, rss0,
	       rss_max);
	SX_CHECK(z->trips[QB] - t0[QB] >= ZW_MIN_TRIPS &&
			 z->trips[QC] - t0[QC] >= ZW_MIN_TRIPS,
		 "B %ld, C %ld round trips during the stall (want %d each)",
		 z->trips[QB] - t0[QB], z->trips[QC] - t0[QC], ZW_MIN_TRIPS);
	SX_CHECK(refused > 0, "no post on the stalled QP was refused");
	/* ASan keeps freed blocks in its quarantine (up to 256 MiB): RSS
	 * says nothing there, the plain build asserts it */
	SX_CHECK(ZW_ASAN || rss_max - rss0 < ZW_RSS_SLACK,
		 "RSS grew by %ld KiB during the stall", rss_max - rss0);
}

static void zw_drain(struct zw *z, int q)
{
	uint64_t last = sx_now_ms();

	while (z->done[q] < z->posted[q]) {
		long d0 = z->done[q];

		zw_poll(z);
		if (z->done[q] != d0)
			last = sx_now_ms();
		zw_others(z);
		SX_CHECK(sx_now_ms() - last < SX_WAIT_MS,
			 "QP %d: %ld of %ld WRs completed, none for %d ms", q,
			 z->done[q], z->posted[q], SX_WAIT_MS);
		sx_usleep(200);
	}
}

/* Waits for |q|'s round trip in flight (none started). */
static void zw_idle(struct zw *z, int q)
{
	uint64_t t = sx_now_ms();

	while (z->busy[q]) {
		zw_poll(z);
		SX_CHECK(sx_now_ms() - t < SX_WAIT_MS, "QP %d stopped working",
			 q);
		sx_usleep(200);
	}
}

static void zw_wait_end(struct zw *z, struct iwarp_event_channel *ch,
			struct iwarp_cm_id *id, int ms, const char *who)
{
	int want = IWARP_CM_EVENT_DISCONNECTED;

	while (want) {
		struct iwarp_cm_event *ev = sx_cm_next(&z->n, ch, ms);

		SX_CHECK(ev, "%s: no %s within %d ms", who,
			 iwarp_cm_event_str((enum iwarp_cm_event_type)want),
			 ms);
		SX_CHECK(ev->id == id && (int)ev->event == want,
			 "%s: %s (status %d)", who,
			 iwarp_cm_event_str(ev->event), ev->status);
		SX_OK(iwarp_cm_ack_event(ev));
		want = want == IWARP_CM_EVENT_DISCONNECTED
			       ? IWARP_CM_EVENT_TIMEWAIT_EXIT
			       : 0;
	}
}

static void iter(int it)
{
	long base = sx_mem_live(), rss0;
	struct trelay rl;
	struct zw z;
	uint64_t t, until;
	size_t j;
	int q;

	(void)it;
	memset(&z, 0, sizeof(z));
	z.stall_s =
		(unsigned int)(getenv("ZW_STALL_S") ? atoi(getenv("ZW_STALL_S"))
						    : 5);
	if (!z.stall_s)
		z.stall_s = 5;
	z.o.progress = IWARP_PROGRESS_CPU;
	z.o.max_send_wr = ZW_SQ;
	sx_net_open(&z.n, &z.o);
	z.cbuf = sx_buf_alloc(C_LEN);
	z.sbuf = sx_buf_alloc(S_LEN);
	for (j = 0; j < ZW_BIG; j++)
		z.cbuf[j] = (uint8_t)(j * 31u + (j >> 12) + 5u);
	z.cmr = iwarp_reg_mr(z.n.cli.pd, z.cbuf, C_LEN,
			     IWARP_ACCESS_LOCAL_WRITE);
	z.smr = iwarp_reg_mr(z.n.srv.pd, z.sbuf, S_LEN,
			     IWARP_ACCESS_LOCAL_WRITE |
				     IWARP_ACCESS_REMOTE_WRITE |
				     IWARP_ACCESS_REMOTE_READ);
	SX_CHECK(z.cmr && z.smr, "iwarp_reg_mr: %s", strerror(errno));

	/* phase 1: stall, resume, complete */
	trelay_init(&rl);
	rl.stall_dir = 0;
	rl.stall_n = ZW_STALL_AT;
	rl.stall_ms = z.stall_s * 1000u;
	trelay_start(&rl, z.n.port);
	zw_connect(&z, QA, rl.port);
	zw_connect(&z, QB, z.n.port);
	zw_connect(&z, QC, z.n.port);
	rss0 = zw_fill(&z, QA, &rl);
	zw_during(&z, QA, &rl, rss0,
		  sx_now_ms() + (uint64_t)z.stall_s * 1000u + SX_WAIT_MS);
	sx_phase("after the stall: A completes");
	t = sx_now_ms();
	zw_drain(&z, QA);
	SX_CHECK(z.flushed[QA] == 0, "%ld Writes on A flushed", z.flushed[QA]);
	printf("zero_window: after the stall all %ld Writes on A completed in "
	       "%llu ms\n",
	       z.posted[QA], (unsigned long long)(sx_now_ms() - t));
	memset(z.cbuf + ZW_BIG, 0, ZW_BIG);
	SX_OK(zw_post(&z, QA, 1000, IWARP_WR_RDMA_READ, ZW_BIG, ZW_BIG, 0));
	zw_drain(&z, QA);
	SX_CHECK(!memcmp(z.cbuf, z.cbuf + ZW_BIG, ZW_BIG),
		 "A: the Read after the stall returned other data");
	sx_disconnect(&z.n, &z.k[QA], false);
	sx_conn_close(&z.k[QA]);
	trelay_stop(&rl);

	/* phase 2: disconnect during the stall */
	z.posted[QA] = z.done[QA] = z.ok[QA] = z.flushed[QA] = 0;
	trelay_init(&rl);
	rl.stall_dir = 0;
	rl.stall_n = ZW_STALL_AT;
	rl.stall_ms = z.stall_s * 1000u;
	trelay_start(&rl, z.n.port);
	zw_connect(&z, QA, rl.port);
	(void)zw_fill(&z, QA, &rl);
	sx_phase("disconnect during the stall");
	t = sx_now_ms();
	SX_OK(iwarp_cm_disconnect(z.k[QA].c));
	until = (uint64_t)z.stall_s * 1000u + SX_WAIT_MS;
	zw_wait_end(&z, z.n.cli.ech, z.k[QA].c, (int)until, "client");
	printf("zero_window: disconnect during the stall: client "
	       "TIMEWAIT_EXIT after %llu ms (relay still stalled: %d)\n",
	       (unsigned long long)(sx_now_ms() - t), rl.stalled);
	zw_wait_end(&z, z.n.srv.ech, z.k[QA].s, (int)until, "server");
	printf("zero_window: server TIMEWAIT_EXIT after %llu ms\n",
	       (unsigned long long)(sx_now_ms() - t));
	zw_drain(&z, QA);
	printf("zero_window: A2's %ld Writes: %ld succeeded, %ld flushed\n",
	       z.posted[QA], z.ok[QA], z.flushed[QA]);
	sx_conn_close(&z.k[QA]);
	trelay_stop(&rl);

	sx_phase("B and C after");
	for (q = QB; q <= QC; q++) {
		long before;

		zw_idle(&z, q);
		before = z.trips[q];
		zw_trip(&z, q);
		zw_idle(&z, q);
		SX_CHECK(z.trips[q] == before + 1, "QP %d: no round trip", q);
	}
	for (q = QB; q <= QC; q++) {
		sx_disconnect(&z.n, &z.k[q], q == QC);
		sx_conn_close(&z.k[q]);
	}
	sx_drain_async(&z.n, z.n.cli.ctx);
	sx_drain_async(&z.n, z.n.srv.ctx);
	SX_OK(iwarp_dereg_mr(z.cmr));
	SX_OK(iwarp_dereg_mr(z.smr));
	sx_net_close(&z.n, base);
	sx_buf_free(z.cbuf);
	sx_buf_free(z.sbuf);
}

int main(void)
{
	return sx_main("zero_window", 1, iter);
}
