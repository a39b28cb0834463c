/*
 * tests/stress/stress_dereg.c: deregistration of an MR that inbound data is
 * being placed into, and the buffer freed the moment iwarp_dereg_mr
 * returns (after it nothing may touch the memory: RFC 5040 §8 placement
 * needs a valid STag).
 *  - inbound Write: the client streams 1 MiB RDMA Writes into the server's
 *    MR; once the first has been handed to TCP, after a random pause, the
 *    server deregisters the MR and frees the buffer.
 *  - Read Response: the client reads 1 MiB at a time from the server into
 *    its sink MR; once the first Read completed, after a random pause, the
 *    client deregisters the sink and frees it while Read Responses arrive.
 * The freed buffer is quarantined (canary + ASan poison): an engine memcpy
 * into it is an ASan report, a kernel receive into it is canary damage. The
 * WRs end as a success prefix followed by error completions (the TERMINATE
 * for the invalid STag, then flushes), or all succeed before the dereg.
 */
#include "config.h"

#include <string.h>

#include "sx.h"

#define NWR   24
#define WR_ID 100u

static const char *const names[] = {"dereg during inbound Write",
				    "dereg during Read Response"};

/* Completions of the client: wr_ids in order, success prefix then errors. */
static void check_wrs(const struct iwarp_wc *wc, int cnt, int *ok, int *err)
{
	int i;

	*ok = *err = 0;
	for (i = 0; i < cnt; i++) {
		SX_CHECK(wc[i].wr_id == WR_ID + (uint64_t)i,
			 "completion %d: wr_id %llu (posting order)", i,
			 (unsigned long long)wc[i].wr_id);
		if (wc[i].status == IWARP_WC_SUCCESS) {
			SX_CHECK(!*err,
				 "wr %d: success after an error completion", i);
			(*ok)++;
		} else {
			(*err)++;
		}
	}
}

static void iter(int it)
{
	long base = sx_mem_live();
	int how = sx_pick(it, names, 2), i, ok, err;
	int rw = IWARP_ACCESS_LOCAL_WRITE | IWARP_ACCESS_REMOTE_WRITE |
		 IWARP_ACCESS_REMOTE_READ;
	uint64_t r = sx_rand();
	struct iwarp_wc wc[NWR];
	struct sx_opts o;
	struct sx_net n;
	struct sx_conn k;
	uint8_t *cbuf, *sbuf;
	struct iwarp_mr *cmr, *smr;

	memset(&o, 0, sizeof(o));
	o.progress =
		(r >> 8) & 1 ? IWARP_PROGRESS_CPU : IWARP_PROGRESS_ADAPTIVE;
	o.crc = (int)((r >> 9) & 1);
	sx_net_open(&n, &o);
	sx_connect(&n, &k, &o);
	cbuf = sx_buf_alloc(SX_MIB);
	sbuf = sx_buf_alloc(SX_MIB);
	memset(cbuf, 0x3c, SX_MIB);
	memset(sbuf, 0xc3, SX_MIB);
	cmr = iwarp_reg_mr(n.cli.pd, cbuf, SX_MIB, rw);
	smr = iwarp_reg_mr(n.srv.pd, sbuf, SX_MIB, rw);
	SX_CHECK(cmr && smr, "iwarp_reg_mr");
	sx_phase("post");
	for (i = 0; i < NWR; i++)
		SX_OK(sx_post_send(
			k.c->qp, WR_ID + (uint64_t)i,
			how ? IWARP_WR_RDMA_READ : IWARP_WR_RDMA_WRITE,
			IWARP_SEND_SIGNALED, cmr, cbuf, (uint32_t)SX_MIB,
			(uintptr_t)sbuf, smr->rkey));
	sx_phase("wait for the first completion");
	sx_poll(&n, n.cli.cq, wc, 1);
	sx_usleep((unsigned int)((r >> 16) % 2000u));
	sx_phase(how ? "client deregisters its Read sink and frees it"
		     : "server deregisters the Write target and frees it");
	if (how) {
		SX_OK(iwarp_dereg_mr(cmr));
		sx_buf_free(cbuf);
	} else {
		SX_OK(iwarp_dereg_mr(smr));
		sx_buf_free(sbuf);
	}
	sx_phase("collect the client's completions");
	sx_poll(&n, n.cli.cq, wc + 1, NWR - 1);
	check_wrs(wc, NWR, &ok, &err);
	sx_phase("end the connection");
	sx_finish(&n, &k);
	sx_conn_close(&k);
	if (how) {
		SX_OK(iwarp_dereg_mr(smr));
		sx_buf_free(sbuf);
	} else {
		SX_OK(iwarp_dereg_mr(cmr));
		sx_buf_free(cbuf);
	}
	sx_net_close(&n, base);
	sx_count(err ? "ended in error completions" : "all done before dereg");
}

int main(void)
{
	return sx_main("dereg", 30, iter);
}
