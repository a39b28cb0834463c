/*
 * tests/stress/stress_read_disc.c: the connection ends while RDMA Reads
 * (RFC 5040 §4.4, up to ORD outstanding) are in flight: the client has
 * 16 Reads of 1 MiB posted and, after a random pause, the client or the
 * server disconnects, or the server destroys its QP and id. Every Read
 * completes in posting order (success prefix, then IWARP_WC_WR_FLUSH_ERR),
 * each successful one with the server's data; after the sinks are freed
 * nothing writes into them (quarantine); nothing leaks.
 */
#include "config.h"

#include <string.h>

#include "sx.h"

#define NREAD 16
#define WR_ID 500u

static const char *const names[] = {"client disconnect", "server disconnect",
				    "server destroy"};

static void iter(int it)
{
	long base = sx_mem_live();
	int how = sx_pick(it, names, 3), i, ok;
	uint64_t r = sx_rand();
	struct iwarp_wc wc[NREAD];
	struct sx_opts o;
	struct sx_net n;
	struct sx_conn k;
	uint8_t *sink, *src;
	struct iwarp_mr *smr, *cmr;
	size_t j;

	memset(&o, 0, sizeof(o));
	o.progress =
		(r >> 8) & 1 ? IWARP_PROGRESS_CPU : IWARP_PROGRESS_ADAPTIVE;
	o.crc = (int)((r >> 9) & 1);
	sx_net_open(&n, &o);
	sx_connect(&n, &k, &o);
	sink = sx_buf_alloc(NREAD * SX_MIB);
	src = sx_buf_alloc(SX_MIB);
	for (j = 0; j < SX_MIB; j++)
		src[j] = (uint8_t)(j * 13u + (j >> 10));
	cmr = iwarp_reg_mr(n.cli.pd, sink, NREAD * SX_MIB,
			   IWARP_ACCESS_LOCAL_WRITE);
	smr = iwarp_reg_mr(n.srv.pd, src, SX_MIB, IWARP_ACCESS_REMOTE_READ);
	SX_CHECK(cmr && smr, "iwarp_reg_mr");
	sx_phase("post Reads");
	for (i = 0; i < NREAD; i++)
		SX_OK(sx_post_send(k.c->qp, WR_ID + (uint64_t)i,
				   IWARP_WR_RDMA_READ, IWARP_SEND_SIGNALED, cmr,
				   sink + (size_t)i * SX_MIB, (uint32_t)SX_MIB,
				   (uintptr_t)src, smr->rkey));
	sx_usleep((unsigned int)((r >> 16) % 4000u));
	sx_phase(names[how]);
	if (how < 2) {
		sx_disconnect(&n, &k, how == 1);
	} else {
		iwarp_cm_destroy_qp(k.s);
		SX_OK(iwarp_cm_destroy_id(k.s));
		k.s = NULL;
		sx_cm_expect(&n, n.cli.ech, IWARP_CM_EVENT_DISCONNECTED, k.c);
		sx_cm_expect(&n, n.cli.ech, IWARP_CM_EVENT_TIMEWAIT_EXIT, k.c);
	}
	sx_phase("collect the Read completions");
	sx_poll(&n, n.cli.cq, wc, NREAD);
	ok = sx_check_prefix(wc, NREAD, WR_ID, IWARP_WC_SUCCESS);
	for (i = 0; i < ok; i++) {
		SX_CHECK(wc[i].opcode == IWARP_WC_RDMA_READ &&
				 wc[i].byte_len == SX_MIB,
			 "Read %d: opcode %d, %u octets", i, wc[i].opcode,
			 wc[i].byte_len);
		SX_CHECK(!memcmp(sink + (size_t)i * SX_MIB, src, SX_MIB),
			 "Read %d: data differs from the server's", i);
	}
	sx_drain_async(&n, n.cli.ctx);
	sx_drain_async(&n, n.srv.ctx);
	sx_conn_close(&k);
	SX_OK(iwarp_dereg_mr(cmr));
	SX_OK(iwarp_dereg_mr(smr));
	sx_buf_free(sink);
	sx_buf_free(src);
	sx_net_close(&n, base);
	sx_count(ok == NREAD ? "all Reads done before the end"
		 : ok	     ? "some Reads flushed"
			     : "all Reads flushed");
}

int main(void)
{
	return sx_main("read_disc", 24, iter);
}
