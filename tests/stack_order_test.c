/*
 * tests/stack_order_test.c: who may send first, over the whole stack (public
 * verbs + CM + progress engines + loopback TCP). The server (MPA responder)
 * posts a Send right after ESTABLISHED, before the client has sent
 * anything, as unmodified applications do (docs/message-order.md):
 *
 * - with an RFC 6581 RTR (the default IWARP_P2P_AUTO, and each explicit
 *   type) the initiator's RTR is its first FPDU (RFC 6581 §7), so the Send
 *   arrives although the server would wait forever otherwise
 *   (responder_tx_wait_ms 0 on the server);
 * - without one (IWARP_P2P_NONE, or MPA rev 1) the server holds the Send
 *   (RFC 5044 §7.1) for responder_tx_wait_ms, then sends it and raises
 *   IWARP_EVENT_QP_TX_HELD; with responder_tx_wait_ms 0 it raises the
 *   event, writes why to the debug log (IWARP_DEBUG) and keeps waiting
 *   until the client's first FPDU.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "iwarp/iwarp.h"
#include "stack_harness.h"
#include "testutil.h"
#include "util/mem.h"

struct order_case {
	const char *name;
	int rev;
	enum iwarp_p2p_rtr p2p;
	int defaults;	  /* 1: p2p from iwarp_context_attr_init */
	uint32_t wait_ms; /* server's responder_tx_wait_ms */
	int held;	  /* 1: IWARP_EVENT_QP_TX_HELD expected */
};

static const struct order_case cases[] = {
	{"auto-default", 2, IWARP_P2P_AUTO, 1, 0, 0},
	{"write", 2, IWARP_P2P_WRITE, 0, 0, 0},
	{"read", 2, IWARP_P2P_READ, 0, 0, 0},
	{"send", 2, IWARP_P2P_SEND, 0, 0, 0},
	{"none-rev2-bounded", 2, IWARP_P2P_NONE, 0, 1000, 1},
	{"auto-rev1-bounded", 1, IWARP_P2P_AUTO, 1, 1000, 1},
	{"none-rev2-strict", 2, IWARP_P2P_NONE, 0, 0, 1},
	{"auto-rev1-strict", 1, IWARP_P2P_AUTO, 1, 0, 1},
};
#define NCASES ((int)(sizeof(cases) / sizeof(cases[0])))

static void order_attr(struct iwarp_context_attr *a, const struct order_case *c)
{
	unsetenv("IWARP_P2P");
	unsetenv("IWARP_MPA_REV");
	unsetenv("IWARP_RESPONDER_TX_WAIT_MS");
	iwarp_context_attr_init(a);
	ck_assert_int_eq(a->p2p, IWARP_P2P_AUTO); /* the default */
	ck_assert_uint_eq(a->responder_tx_wait_ms, 1000);
	a->mpa_rev = c->rev;
	if (!c->defaults)
		a->p2p = c->p2p;
	a->progress = IWARP_PROGRESS_CPU;
	a->mpa_req_timeout_ms = 20000;
	a->mpa_rep_timeout_ms = 20000;
}

/* Reads what was written to |fd| (from the start) into |buf|. */
static void read_all(int fd, char *buf, size_t cap)
{
	ssize_t n;

	ck_assert_int_eq(lseek(fd, 0, SEEK_SET), 0);
	n = read(fd, buf, cap - 1);
	ck_assert_int_ge(n, 0);
	buf[n] = '\0';
}

START_TEST(test_server_sends_first)
{
	const struct order_case *c = &cases[_i];
	long base = iw_mem_outstanding();
	struct iwarp_context_attr as, ac;
	struct iwarp_async_event ev;
	struct st_net n;
	struct st_conn k;
	struct st_buf ssrc, cdst, csrc, sdst;
	struct iwarp_wc wc[2];
	char tmpl[] = "/tmp/stack_order_XXXXXX", log[4096];
	int logfd = -1, saved = -1;

	if (c->held && !c->wait_ms) {
		/* the debug log goes to stderr: catch it in a file */
		setenv("IWARP_DEBUG", "1", 1);
		logfd = mkstemp(tmpl);
		ck_assert_int_ge(logfd, 0);
		unlink(tmpl);
		saved = dup(STDERR_FILENO);
		ck_assert_int_ge(saved, 0);
		ck_assert_int_ge(dup2(logfd, STDERR_FILENO), 0);
	}
	order_attr(&ac, c);
	as = ac;
	as.responder_tx_wait_ms = c->wait_ms;
	st_net_open2(&n, &as, &ac);
	st_conn_open(&n, &k, NULL);
	st_buf_reg(&ssrc, n.srv.pd, 64, 0);
	st_buf_reg(&sdst, n.srv.pd, 64, IWARP_ACCESS_LOCAL_WRITE);
	st_buf_reg(&csrc, n.cli.pd, 64, 0);
	st_buf_reg(&cdst, n.cli.pd, 64, IWARP_ACCESS_LOCAL_WRITE);
	memset(ssrc.p, 0x5a, 32);
	memset(csrc.p, 0xa5, 8);
	ck_assert_int_eq(st_post_recv(k.c->qp, 1, cdst.mr, cdst.p, 64), 0);
	/* right after ESTABLISHED, the client has posted no send */
	ck_assert_int_eq(st_post_send(k.s->qp, 2, IWARP_WR_SEND,
				      IWARP_SEND_SIGNALED, ssrc.mr, ssrc.p, 32,
				      0, 0, 0),
			 0);
	if (c->held) {
		/* RFC 5044 §7.1 without an RTR: held, and said so */
		ck_assert_msg(st_async_wait(n.srv.ctx, &ev, ST_WAIT_MS),
			      "%s: no IWARP_EVENT_QP_TX_HELD", c->name);
		ck_assert_int_eq(ev.event_type, IWARP_EVENT_QP_TX_HELD);
		ck_assert_ptr_eq(ev.element.qp, k.s->qp);
	}
	if (c->held && !c->wait_ms) {
		/* still held: watched for ST_QUIET_MS (a slow machine only
		 * weakens this), until the client's first FPDU */
		ck_assert_int_eq(st_poll(k.cq_c, wc, 1, ST_QUIET_MS), 0);
		read_all(logfd, log, sizeof(log));
		ck_assert_int_ge(dup2(saved, STDERR_FILENO), 0);
		close(saved);
		close(logfd);
		unsetenv("IWARP_DEBUG");
		ck_assert_msg(strstr(log, "libiwarp: ") &&
				      strstr(log, "responder send held") &&
				      strstr(log, "still waiting"),
			      "debug log: %s", log);
		ck_assert_int_eq(st_post_recv(k.s->qp, 3, sdst.mr, sdst.p, 64),
				 0);
		ck_assert_int_eq(st_post_send(k.c->qp, 4, IWARP_WR_SEND,
					      IWARP_SEND_SIGNALED, csrc.mr,
					      csrc.p, 8, 0, 0, 0),
				 0);
		st_poll_n(k.cq_c, wc, 2); /* its Send, then our Recv */
		ck_assert_uint_eq(wc[0].wr_id + wc[1].wr_id, 5);
		st_poll_n(k.cq_s, wc, 2);
		ck_assert_uint_eq(wc[0].wr_id + wc[1].wr_id, 5);
		st_check_fill(sdst.p, 8, 0xa5);
	} else {
		st_poll_n(k.cq_c, wc, 1);
		st_wc_check(&wc[0], 1, IWARP_WC_SUCCESS, IWARP_WC_RECV, 32, 0);
		st_poll_n(k.cq_s, wc, 1);
		st_wc_check(&wc[0], 2, IWARP_WC_SUCCESS, IWARP_WC_SEND, 32, 0);
	}
	st_check_fill(cdst.p, 32, 0x5a);
	st_conn_disconnect(&n, &k, true);
	st_conn_close(&k);
	st_buf_free(&ssrc);
	st_buf_free(&sdst);
	st_buf_free(&csrc);
	st_buf_free(&cdst);
	st_net_close(&n);
	st_wait_mem(base);
}
END_TEST

static Suite *order_suite(void)
{
	Suite *s = suite_create("stack_order");
	TCase *tc = tcase_create("first");

	tcase_set_timeout(tc, 90);
	tcase_add_loop_test(tc, test_server_sends_first, 0, NCASES);
	suite_add_tcase(s, tc);
	return s;
}

ST_TEST_MAIN(order_suite)
