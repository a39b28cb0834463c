/*
 * tests/stress/stress_teardown.c: teardown while both sides stream 1 MiB
 * Sends and RDMA Writes to each other. The connection ends at a random
 * point (right away, or after a random pause of up to 0.5 or 5 ms) by one of:
 * a disconnect from the client or the server, or an abrupt destroy of one
 * side (rdma_destroy_qp + rdma_destroy_id order, or the QP first with
 * iwarp_destroy_qp and the id after). Every WR of a surviving QP completes
 * in posting order (success prefix, then IWARP_WC_WR_FLUSH_ERR), received
 * data is intact, the survivor sees DISCONNECTED, and after the contexts
 * are closed no freed receive buffer was written (the quarantine: a
 * RECVMSG still in flight when the connection object freed its buffer) and
 * nothing leaked.
 */
#include "config.h"

#include <string.h>

#include "sx.h"

#define NMSG	8 /* WRs each side posts: Sends and Writes alternating */
#define NRECV	(NMSG / 2)
#define SEND_ID 1000u
#define RECV_ID 2000u

struct side_bufs {
	uint8_t *src;  /* 1 MiB, the pattern this side sends */
	uint8_t *rbuf; /* NRECV MiB of receive buffers */
	uint8_t *wbuf; /* 1 MiB the peer writes into */
	struct iwarp_mr *src_mr, *rmr, *wmr;
};

static void bufs_open(struct side_bufs *b, struct iwarp_pd *pd, uint8_t seed)
{
	int rw = IWARP_ACCESS_LOCAL_WRITE | IWARP_ACCESS_REMOTE_WRITE;
	size_t i;

	b->src = sx_buf_alloc(SX_MIB);
	for (i = 0; i < SX_MIB; i++)
		b->src[i] = (uint8_t)(seed + i * 7u + (i >> 12));
	b->rbuf = sx_buf_alloc(NRECV * SX_MIB);
	b->wbuf = sx_buf_alloc(SX_MIB);
	b->src_mr = iwarp_reg_mr(pd, b->src, SX_MIB, IWARP_ACCESS_LOCAL_WRITE);
	b->rmr = iwarp_reg_mr(pd, b->rbuf, NRECV * SX_MIB, rw);
	b->wmr = iwarp_reg_mr(pd, b->wbuf, SX_MIB, rw);
	SX_CHECK(b->src_mr && b->rmr && b->wmr, "iwarp_reg_mr");
}

static void bufs_close(struct side_bufs *b)
{
	SX_OK(iwarp_dereg_mr(b->src_mr));
	SX_OK(iwarp_dereg_mr(b->rmr));
	SX_OK(iwarp_dereg_mr(b->wmr));
	sx_buf_free(b->src);
	sx_buf_free(b->rbuf);
	sx_buf_free(b->wbuf);
}

static void post_all(struct iwarp_qp *qp, struct side_bufs *me,
		     struct side_bufs *peer)
{
	int i;

	for (i = 0; i < NRECV; i++)
		SX_OK(sx_post_recv(qp, RECV_ID + (uint64_t)i, me->rmr,
				   me->rbuf + (size_t)i * SX_MIB,
				   (uint32_t)SX_MIB));
	for (i = 0; i < NMSG; i++)
		SX_OK(sx_post_send(qp, SEND_ID + (uint64_t)i,
				   i % 2 ? IWARP_WR_RDMA_WRITE : IWARP_WR_SEND,
				   IWARP_SEND_SIGNALED, me->src_mr, me->src,
				   (uint32_t)SX_MIB, (uintptr_t)peer->wbuf,
				   peer->wmr->rkey));
}

/* All completions of one QP's CQ (the CQ is per side): sends and receives
 * each in posting order, success prefix then flush; received data intact. */
static void check_side(struct sx_net *n, struct iwarp_cq *cq,
		       const struct side_bufs *me, const struct side_bufs *peer)
{
	struct iwarp_wc wc[NMSG + NRECV], snd[NMSG], rcv[NRECV];
	int i, ns = 0, nr = 0, ok;

	sx_phase("collect completions");
	sx_poll(n, cq, wc, NMSG + NRECV);
	for (i = 0; i < NMSG + NRECV; i++) {
		if (wc[i].wr_id >= RECV_ID) {
			SX_CHECK(nr < NRECV, "receive completion %llu too many",
				 (unsigned long long)wc[i].wr_id);
			rcv[nr++] = wc[i];
		} else {
			SX_CHECK(ns < NMSG, "send completion %llu too many",
				 (unsigned long long)wc[i].wr_id);
			snd[ns++] = wc[i];
		}
	}
	sx_check_prefix(snd, NMSG, SEND_ID, IWARP_WC_SUCCESS);
	ok = sx_check_prefix(rcv, NRECV, RECV_ID, IWARP_WC_SUCCESS);
	for (i = 0; i < ok; i++) {
		SX_CHECK(rcv[i].byte_len == SX_MIB, "receive %d: %u octets", i,
			 rcv[i].byte_len);
		SX_CHECK(!memcmp(me->rbuf + (size_t)i * SX_MIB, peer->src,
				 SX_MIB),
			 "receive %d: data differs from what the peer sent", i);
	}
}

static void iter(int it)
{
	static const char *const names[] = {
		"client disconnect", "server disconnect",
		"client destroy (cm_destroy_qp, destroy_id)",
		"server destroy (destroy_qp, then destroy_id)"};
	long base = sx_mem_live();
	int how = sx_pick(it, names, 4);
	uint64_t r = sx_rand();
	struct sx_opts o;
	struct sx_net n;
	struct sx_conn k;
	struct side_bufs cb, sb;
	int waits = (int)(r % 3);

	memset(&o, 0, sizeof(o));
	o.progress =
		(r >> 8) & 1 ? IWARP_PROGRESS_CPU : IWARP_PROGRESS_ADAPTIVE;
	o.crc = (int)((r >> 9) & 1);
	sx_net_open(&n, &o);
	sx_connect(&n, &k, &o);
	bufs_open(&cb, n.cli.pd, 0x11);
	bufs_open(&sb, n.srv.pd, 0x77);
	sx_phase("post both ways");
	post_all(k.c->qp, &cb, &sb);
	post_all(k.s->qp, &sb, &cb);
	/* end it while data moves: right away, or after up to 0.5 or 5 ms */
	sx_phase("streaming");
	if (waits)
		sx_usleep((unsigned int)((r >> 16) %
					 (waits == 1 ? 500u : 5000u)));
	sx_phase(names[how]);
	switch (how) {
	case 0:
	case 1:
		sx_disconnect(&n, &k, how == 1);
		check_side(&n, n.cli.cq, &cb, &sb);
		check_side(&n, n.srv.cq, &sb, &cb);
		break;
	case 2:
		iwarp_cm_destroy_qp(k.c);
		SX_OK(iwarp_cm_destroy_id(k.c));
		k.c = NULL;
		sx_cm_expect(&n, n.srv.ech, IWARP_CM_EVENT_DISCONNECTED, k.s);
		sx_cm_expect(&n, n.srv.ech, IWARP_CM_EVENT_TIMEWAIT_EXIT, k.s);
		SX_CHECK(sx_qp_state(k.s->qp) == IWARP_QPS_ERR,
			 "server QP state %d", sx_qp_state(k.s->qp));
		check_side(&n, n.srv.cq, &sb, &cb);
		break;
	default:
		SX_OK(iwarp_destroy_qp(k.s->qp));
		SX_OK(iwarp_cm_destroy_id(k.s));
		k.s = NULL;
		sx_cm_expect(&n, n.cli.ech, IWARP_CM_EVENT_DISCONNECTED, k.c);
		sx_cm_expect(&n, n.cli.ech, IWARP_CM_EVENT_TIMEWAIT_EXIT, k.c);
		SX_CHECK(sx_qp_state(k.c->qp) == IWARP_QPS_ERR,
			 "client QP state %d", sx_qp_state(k.c->qp));
		check_side(&n, n.cli.cq, &cb, &sb);
		break;
	}
	sx_drain_async(&n, n.cli.ctx);
	sx_drain_async(&n, n.srv.ctx);
	sx_conn_close(&k);
	sx_phase("free MRs");
	bufs_close(&cb);
	bufs_close(&sb);
	sx_net_close(&n, base);
}

int main(void)
{
	return sx_main("teardown", 24, iter);
}
