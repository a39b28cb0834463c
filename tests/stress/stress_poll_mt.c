/*
 * tests/stress/stress_poll_mt.c: two threads call iwarp_poll_cq on the same
 * CQ at once, on both sides of a connection, in every progress mode
 * (ADAPTIVE, LATENCY, CPU, INLINE: there the pollers are what drives the
 * engines, so two threads run the engine through iwarp_poll_cq at once).
 * The client streams small Sends and RDMA Writes with immediate-free
 * payloads; every completion is returned exactly once (no loss, no
 * duplicate: a bitmap per CQ), with the right opcode, status and length.
 */
#include "config.h"

#include <pthread.h>
#include <sched.h>
#include <string.h>

#include "sx.h"

#define NMSG	240
#define MSG	256u
#define RECV_ID 100000u

static const char *const names[] = {"ADAPTIVE", "LATENCY", "CPU", "INLINE"};

struct poller {
	struct iwarp_cq *cq;
	const char *who;
	uint8_t *seen; /* per wr_id (index), shared by the two pollers */
	int *got;      /* completions taken from this CQ, shared */
	int want;
	bool recv;
};

static void *poll_thread(void *arg)
{
	struct poller *p = arg;
	struct iwarp_wc wc[8];
	uint64_t last = sx_now_ms();
	int n, i, idle = 0;

	while (__atomic_load_n(p->got, __ATOMIC_ACQUIRE) < p->want) {
		n = iwarp_poll_cq(p->cq, 8, wc);
		SX_CHECK(n >= 0, "%s: iwarp_poll_cq: %s", p->who,
			 iwarp_strerror(n));
		if (!n) {
			SX_CHECK(sx_now_ms() - last < SX_WAIT_MS,
				 "%s: %d of %d completions, none for %d ms",
				 p->who,
				 __atomic_load_n(p->got, __ATOMIC_ACQUIRE),
				 p->want, SX_WAIT_MS);
			if (++idle % 64 == 0)
				sx_usleep(50);
			else
				sched_yield();
			continue;
		}
		last = sx_now_ms();
		for (i = 0; i < n; i++) {
			uint64_t id = wc[i].wr_id - (p->recv ? RECV_ID : 0);

			SX_CHECK(id < (uint64_t)p->want,
				 "%s: wr_id %llu unknown", p->who,
				 (unsigned long long)wc[i].wr_id);
			SX_CHECK(!__atomic_exchange_n(&p->seen[id], 1,
						      __ATOMIC_ACQ_REL),
				 "%s: wr_id %llu returned twice", p->who,
				 (unsigned long long)wc[i].wr_id);
			SX_CHECK(wc[i].status == IWARP_WC_SUCCESS,
				 "%s: wr_id %llu status %s", p->who,
				 (unsigned long long)wc[i].wr_id,
				 iwarp_wc_status_str(wc[i].status));
			if (p->recv)
				SX_CHECK(wc[i].opcode == IWARP_WC_RECV &&
						 wc[i].byte_len == MSG,
					 "%s: receive opcode %d, %u octets",
					 p->who, wc[i].opcode, wc[i].byte_len);
			else
				SX_CHECK(wc[i].opcode ==
						 (id % 2 ? IWARP_WC_RDMA_WRITE
							 : IWARP_WC_SEND),
					 "%s: wr %llu opcode %d", p->who,
					 (unsigned long long)id, wc[i].opcode);
		}
		__atomic_add_fetch(p->got, n, __ATOMIC_ACQ_REL);
	}
	return NULL;
}

static void iter(int it)
{
	long base = sx_mem_live();
	int mode = sx_pick(it, names, 4), i, got_c = 0, got_s = 0;
	int rw = IWARP_ACCESS_LOCAL_WRITE | IWARP_ACCESS_REMOTE_WRITE;
	uint8_t seen_c[NMSG], seen_s[NMSG / 2];
	struct poller p[4];
	pthread_t th[4];
	struct sx_opts o;
	struct sx_net n;
	struct sx_conn k;
	uint8_t *cbuf, *sbuf;
	struct iwarp_mr *cmr, *smr;

	memset(&o, 0, sizeof(o));
	o.progress = (enum iwarp_progress_mode)mode;
	o.max_send_wr = NMSG;
	o.max_recv_wr = NMSG;
	sx_net_open(&n, &o);
	sx_connect(&n, &k, &o);
	cbuf = sx_buf_alloc(MSG);
	sbuf = sx_buf_alloc((NMSG / 2 + 1) * MSG);
	memset(cbuf, 0x42, MSG);
	cmr = iwarp_reg_mr(n.cli.pd, cbuf, MSG, IWARP_ACCESS_LOCAL_WRITE);
	smr = iwarp_reg_mr(n.srv.pd, sbuf, (NMSG / 2 + 1) * MSG, rw);
	SX_CHECK(cmr && smr, "iwarp_reg_mr");
	for (i = 0; i < NMSG / 2; i++)
		SX_OK(sx_post_recv(k.s->qp, RECV_ID + (uint64_t)i, smr,
				   sbuf + (size_t)i * MSG, MSG));
	memset(seen_c, 0, sizeof(seen_c));
	memset(seen_s, 0, sizeof(seen_s));
	for (i = 0; i < 4; i++) {
		p[i].recv = i >= 2;
		p[i].cq = p[i].recv ? n.srv.cq : n.cli.cq;
		p[i].who = p[i].recv ? "server poller" : "client poller";
		p[i].seen = p[i].recv ? seen_s : seen_c;
		p[i].got = p[i].recv ? &got_s : &got_c;
		p[i].want = p[i].recv ? NMSG / 2 : NMSG;
	}
	sx_phase("two pollers per CQ while the client posts");
	for (i = 0; i < 4; i++)
		SX_CHECK(pthread_create(&th[i], NULL, poll_thread, &p[i]) == 0,
			 "pthread_create");
	for (i = 0; i < NMSG; i++)
		SX_OK(sx_post_send(k.c->qp, (uint64_t)i,
				   i % 2 ? IWARP_WR_RDMA_WRITE : IWARP_WR_SEND,
				   IWARP_SEND_SIGNALED, cmr, cbuf, MSG,
				   (uintptr_t)(sbuf + (size_t)(NMSG / 2) * MSG),
				   smr->rkey));
	for (i = 0; i < 4; i++)
		SX_CHECK(pthread_join(th[i], NULL) == 0, "pthread_join");
	SX_CHECK(got_c == NMSG && got_s == NMSG / 2, "client %d, server %d",
		 got_c, got_s);
	for (i = 0; i < NMSG; i++)
		SX_CHECK(seen_c[i], "client wr %d never completed", i);
	for (i = 0; i < NMSG / 2; i++)
		SX_CHECK(seen_s[i], "server receive %d never completed", i);
	for (i = 0; i < NMSG / 2; i++)
		SX_CHECK(!memcmp(sbuf + (size_t)i * MSG, cbuf, MSG),
			 "receive %d: data differs", i);
	sx_disconnect(&n, &k, it % 8 >= 4);
	sx_conn_close(&k);
	SX_OK(iwarp_dereg_mr(cmr));
	SX_OK(iwarp_dereg_mr(smr));
	sx_buf_free(cbuf);
	sx_buf_free(sbuf);
	sx_net_close(&n, base);
}

int main(void)
{
	return sx_main("poll_mt", 24, iter);
}
