/*
 * tests/stack_teardown_test.c: ending connections with work in flight, over
 * the CM and real loopback TCP: a disconnect (from either side) or an
 * abrupt destroy while Sends, Writes and Reads of megabytes are queued.
 * Every WR completes, in posting order: a success prefix, then
 * IWARP_WC_WR_FLUSH_ERR; both sides get DISCONNECTED; nothing hangs or
 * leaks. Plus the context open error path on a kernel without io_uring
 * (simulated with a seccomp filter on io_uring_setup in the test's own
 * forked process).
 */
#include "config.h"

#include <errno.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>

#include "iwarp/iwarp.h"
#include "stack_harness.h"
#include "testutil.h"
#include "util/mem.h"

#define MSG   ((size_t)256 << 10)
#define NRECV 24
#define NWR   72

/* Checks |n| completions of one queue: wr_ids |first|.. in order, a
 * success prefix then flushes; returns the number of successes. */
static int check_prefix(const struct iwarp_wc *wc, int n, uint64_t first,
			bool recv)
{
	bool flushed = false;
	int i, ok = 0;

	for (i = 0; i < n; i++) {
		ck_assert_uint_eq(wc[i].wr_id, first + (uint64_t)i);
		if (recv)
			ck_assert_int_eq(wc[i].opcode, IWARP_WC_RECV);
		if (wc[i].status == IWARP_WC_SUCCESS) {
			ck_assert_msg(!flushed, "success after a flush");
			ok++;
		} else {
			ck_assert_msg(wc[i].status == IWARP_WC_WR_FLUSH_ERR,
				      "wr %d: %s", i,
				      iwarp_wc_status_str(wc[i].status));
			flushed = true;
		}
	}
	return ok;
}

/* _i: bit 0 = the server ends it, bit 1 = destroy instead of disconnect */
START_TEST(test_disconnect_in_flight)
{
	long base = iw_mem_outstanding();
	int rw = IWARP_ACCESS_LOCAL_WRITE | IWARP_ACCESS_REMOTE_WRITE |
		 IWARP_ACCESS_REMOTE_READ;
	bool from_server = _i & 1, destroy = (_i & 2) != 0;
	struct iwarp_context_attr a;
	struct iwarp_wc *wc = calloc(NWR + NRECV, sizeof(*wc));
	struct st_qp_opts o;
	struct st_net n;
	struct st_conn k;
	struct st_buf c, s;
	int i, ok;

	ck_assert_ptr_nonnull(wc);
	st_attr(&a, 2, IWARP_CRC_REQUEST, _i == 1);
	st_net_open(&n, &a);
	memset(&o, 0, sizeof(o));
	o.max_send_wr = 128;
	o.max_recv_wr = 64;
	st_conn_open(&n, &k, &o);
	st_buf_reg(&c, n.cli.pd, 2 * MSG, rw);
	st_buf_reg(&s, n.srv.pd, NRECV * MSG + MSG, rw);
	iw_test_fill(c.p, 2 * MSG, 8);
	for (i = 0; i < NRECV; i++)
		ck_assert_int_eq(st_post_recv(k.s->qp, 1000u + (uint64_t)i,
					      s.mr, s.p + (size_t)i * MSG,
					      (uint32_t)MSG),
				 0);
	for (i = 0; i < NWR; i++) {
		int kind = i % 3;

		ck_assert_int_eq(st_post_send(k.c->qp, (uint64_t)i,
					      kind == 0	  ? IWARP_WR_SEND
					      : kind == 1 ? IWARP_WR_RDMA_WRITE
							  : IWARP_WR_RDMA_READ,
					      IWARP_SEND_SIGNALED, c.mr,
					      kind == 2 ? c.p + MSG : c.p,
					      (uint32_t)MSG,
					      (uintptr_t)(s.p + NRECV * MSG),
					      s.mr->rkey, 0),
				 0);
	}
	if (destroy) {
		/* the client goes away without a word: its WRs are flushed
		 * by the destroy; the server sees the stream end */
		struct iwarp_cq *ccq = k.cq_c->cq;

		(void)ccq;
		iwarp_cm_destroy_qp(k.c);
		ck_assert_int_eq(iwarp_cm_destroy_id(k.c), 0);
		k.c = NULL;
		st_cm_expect(n.srv.ech, IWARP_CM_EVENT_DISCONNECTED, k.s);
		st_cm_expect(n.srv.ech, IWARP_CM_EVENT_TIMEWAIT_EXIT, k.s);
		ck_assert_int_eq(k.s->qp->state, IWARP_QPS_ERR);
	} else {
		st_conn_disconnect(&n, &k, from_server);
		st_poll_n(k.cq_c, wc, NWR);
		for (i = 0; i < NWR; i++)
			ck_assert_int_eq(wc[i].opcode,
					 i % 3 == 0   ? IWARP_WC_SEND
					 : i % 3 == 1 ? IWARP_WC_RDMA_WRITE
						      : IWARP_WC_RDMA_READ);
		check_prefix(wc, NWR, 0, false);
		st_cq_empty(k.cq_c);
	}
	/* the receives: complete, in order, success prefix (data intact) */
	st_poll_n(k.cq_s, wc, NRECV);
	ok = check_prefix(wc, NRECV, 1000, true);
	for (i = 0; i < ok; i++) {
		ck_assert_uint_eq(wc[i].byte_len, MSG);
		ck_assert(!memcmp(s.p + (size_t)i * MSG, c.p, MSG));
	}
	st_cq_empty(k.cq_s);
	/* nothing else comes, and nothing can be posted any more but
	 * flushes */
	ck_assert_int_eq(st_post_recv(k.s->qp, 7, NULL, NULL, 0), 0);
	st_poll_n(k.cq_s, wc, 1);
	st_wc_check(&wc[0], 7, IWARP_WC_WR_FLUSH_ERR, IWARP_WC_RECV, 0, 0);
	{
		struct iwarp_async_event ev;

		/* the side that ended it raises no event; its peer may see the
		 * stream end inside a message: at most "stream lost" (LLP
		 * 0x01, RFC 5044 §8) on the peer's QP */
		struct iwarp_context *ender =
			from_server && !destroy ? n.srv.ctx : n.cli.ctx;
		struct iwarp_context *peer =
			ender == n.srv.ctx ? n.cli.ctx : n.srv.ctx;

		/* watched for ST_QUIET_MS: no later event could show it */
		ck_assert(!st_async_wait(ender, &ev, ST_QUIET_MS));
		while (st_async_wait(peer, &ev, ST_QUIET_MS))
			ck_assert_msg(
				ev.event_type == IWARP_EVENT_QP_FATAL &&
					ev.term.layer == IWARP_TERM_LAYER_LLP &&
					ev.term.ecode ==
						IWARP_LLP_ECODE_STREAM_LOST,
				"peer event %s, cause %s",
				iwarp_event_type_str(ev.event_type),
				iwarp_term_strerror(ev.term.layer,
						    ev.term.etype,
						    ev.term.ecode));
	}
	st_conn_close(&k);
	st_buf_free(&c);
	st_buf_free(&s);
	st_net_close(&n);
	free(wc);
	st_wait_mem(base);
}
END_TEST

/* Makes io_uring_setup fail with |err| in this (forked) process. */
static void deny_io_uring(int err)
{
	struct sock_filter f[] = {
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS,
			 offsetof(struct seccomp_data, nr)),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_io_uring_setup, 0, 1),
		BPF_STMT(BPF_RET | BPF_K,
			 SECCOMP_RET_ERRNO |
				 ((uint32_t)err & SECCOMP_RET_DATA)),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
	};
	struct sock_fprog prog = {
		.len = (unsigned short)(sizeof(f) / sizeof(f[0])),
		.filter = f,
	};

	ck_assert_int_eq(prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0), 0);
	ck_assert_int_eq(prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog), 0);
}

/* No io_uring (ENOSYS: old kernel; EPERM: disabled by sysctl/seccomp): a
 * clear error at context open, and from the CM's default context. */
START_TEST(test_no_io_uring)
{
	const char *fork_env = getenv("CK_FORK");
	int err = _i ? EPERM : ENOSYS;
	struct iwarp_event_channel *ch;
	struct iwarp_cm_id *id;
	long base;

	if (fork_env && !strcmp(fork_env, "no"))
		return; /* the filter would outlive this test */
	base = iw_mem_outstanding();
	deny_io_uring(err);
	errno = 0;
	ck_assert_ptr_null(iwarp_open_context(NULL));
	ck_assert_int_eq(errno, err);
	ck_assert_int_eq(iw_mem_outstanding(), base);
	ch = iwarp_cm_create_event_channel();
	ck_assert_ptr_nonnull(ch);
	ck_assert_int_eq(iwarp_cm_create_id(ch, NULL, &id, NULL, IWARP_PS_TCP),
			 -err);
	iwarp_cm_destroy_event_channel(ch);
	ck_assert_int_eq(iw_mem_outstanding(), base);
}
END_TEST

static Suite *stack_teardown_suite(void)
{
	Suite *s = suite_create("stack_teardown");
	TCase *tc = tcase_create("teardown");

	tcase_set_timeout(tc, 30);
	tcase_add_loop_test(tc, test_disconnect_in_flight, 0, 4);
	tcase_add_loop_test(tc, test_no_io_uring, 0, 2);
	suite_add_tcase(s, tc);
	return s;
}

ST_TEST_MAIN(stack_teardown_suite)
