/*
 * tests/stress/stress_cq_overflow.c: a CQ that overflows. The application
 * does not poll a small CQ while more completions than it holds arrive:
 *  - send CQ: the client posts more signaled Sends than its CQ holds;
 *  - receive CQ: the server's CQ is small and the client's Sends fill it.
 * A completion that does not fit cannot be dropped silently: the CQ raises
 * IWARP_EVENT_CQ_ERR and the QPs that complete into it go to ERR (their
 * WRs flushed, the connection ended), never staying in RTS with completions
 * lost. Then the connection is ended and everything destroyed cleanly.
 */
#include "config.h"

#include <errno.h>
#include <string.h>

#include "sx.h"

#define SMALL_CQE 8
#define NMSG	  48
#define MSG	  64u

static const char *const names[] = {"send CQ overflow (client)",
				    "receive CQ overflow (server)"};

static void iter(int it)
{
	long base = sx_mem_live();
	int how = sx_pick(it, names, 2), i, cnt;
	uint64_t r = sx_rand();
	struct iwarp_async_event ev;
	struct iwarp_context *victim;
	struct iwarp_cq *vcq;
	struct iwarp_qp *vqp;
	struct iwarp_wc wc[NMSG];
	struct sx_opts o;
	struct sx_net n;
	struct sx_conn k;
	uint8_t *cbuf, *sbuf;
	struct iwarp_mr *cmr, *smr;
	uint64_t t0;

	memset(&o, 0, sizeof(o));
	o.progress =
		(r >> 8) & 1 ? IWARP_PROGRESS_CPU : IWARP_PROGRESS_ADAPTIVE;
	if (how)
		o.srv_cqe = SMALL_CQE;
	else
		o.cli_cqe = SMALL_CQE;
	sx_net_open(&n, &o);
	sx_connect(&n, &k, &o);
	victim = how ? n.srv.ctx : n.cli.ctx;
	vcq = how ? n.srv.cq : n.cli.cq;
	vqp = how ? k.s->qp : k.c->qp;
	SX_CHECK(vcq->cqe < NMSG, "CQ of %d entries cannot overflow with %d",
		 vcq->cqe, NMSG);
	cbuf = sx_buf_alloc(NMSG * MSG);
	sbuf = sx_buf_alloc(NMSG * MSG);
	memset(cbuf, 0x5a, NMSG * MSG);
	cmr = iwarp_reg_mr(n.cli.pd, cbuf, NMSG * MSG,
			   IWARP_ACCESS_LOCAL_WRITE);
	smr = iwarp_reg_mr(n.srv.pd, sbuf, NMSG * MSG,
			   IWARP_ACCESS_LOCAL_WRITE);
	SX_CHECK(cmr && smr, "iwarp_reg_mr");
	sx_phase("post receives and Sends, nobody polls the small CQ");
	for (i = 0; i < NMSG; i++)
		SX_OK(sx_post_recv(k.s->qp, 1000u + (uint64_t)i, smr,
				   sbuf + (size_t)i * MSG, MSG));
	for (i = 0; i < NMSG; i++) {
		int prc = sx_post_send(k.c->qp, (uint64_t)i, IWARP_WR_SEND,
				       IWARP_SEND_SIGNALED, cmr,
				       cbuf + (size_t)i * MSG, MSG, 0, 0);

		/* the client's own CQ may overflow while it still posts: its
		 * QP is then in ERR and a post whose flush completion has no
		 * room is refused (iwarp_post_send(3), ENOSPC) */
		if (prc == -ENOSPC && !how)
			break;
		SX_OK(prc);
	}
	sx_phase("wait for IWARP_EVENT_CQ_ERR");
	SX_CHECK(
		sx_async_wait(&n, victim, &ev, SX_WAIT_MS),
		"no async event within %d ms after %d completions into a CQ of %d",
		SX_WAIT_MS, NMSG, vcq->cqe);
	SX_CHECK(ev.event_type == IWARP_EVENT_CQ_ERR && ev.element.cq == vcq,
		 "async event %s, wanted CQ_ERR of the small CQ",
		 iwarp_event_type_str(ev.event_type));
	sx_phase("wait for the QP to go to ERR after the overflow");
	t0 = sx_now_ms();
	while (sx_qp_state(vqp) != IWARP_QPS_ERR &&
	       sx_now_ms() - t0 < SX_WAIT_MS)
		sx_usleep(1000);
	SX_CHECK(sx_qp_state(vqp) == IWARP_QPS_ERR,
		 "%s QP in state %d (RTS=%d) %d ms after its CQ overflowed "
		 "(CQ_ERR raised): completions dropped while the QP stays "
		 "usable; wanted ERR with the WRs flushed",
		 how ? "server" : "client", sx_qp_state(vqp), IWARP_QPS_RTS,
		 SX_WAIT_MS);
	sx_phase("poll what the overflowed CQ holds");
	cnt = iwarp_poll_cq(vcq, NMSG, wc);
	SX_CHECK(cnt >= 0 || cnt == -EIO || cnt == -EOVERFLOW,
		 "iwarp_poll_cq on the overflowed CQ: %s", iwarp_strerror(cnt));
	sx_phase("end the connection");
	sx_finish(&n, &k);
	/* the other side's CQ is big: every WR there completes, in order
	 * (success prefix, then flushes) */
	sx_phase("the big CQ has every completion");
	sx_poll(&n, how ? n.cli.cq : n.srv.cq, wc, NMSG);
	sx_check_prefix(wc, NMSG, how ? 0u : 1000u, IWARP_WC_SUCCESS);
	sx_conn_close(&k);
	SX_OK(iwarp_dereg_mr(cmr));
	SX_OK(iwarp_dereg_mr(smr));
	sx_buf_free(cbuf);
	sx_buf_free(sbuf);
	sx_net_close(&n, base);
}

int main(void)
{
	return sx_main("cq_overflow", 20, iter);
}
