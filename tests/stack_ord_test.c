/*
 * tests/stack_ord_test.c: Reads and the ORD over the CM and real loopback
 * TCP.
 *
 * A connection negotiated with ORD 0 (what a zeroed struct
 * iwarp_conn_param gives: responder_resources = initiator_depth = 0). RFC
 * 6581 §5: with ORD 0 the side may have no Read Request outstanding, so
 * iwarp_post_send refuses a Read at post time (-EINVAL, *bad_wr = the
 * Read) and the QP stays usable: Writes posted before and after it
 * complete and the QP stays in RTS.
 *
 * Reads posted while responses are owed: while the sockets are with the
 * threads that wait, the poster leaves their Read Requests to the pass
 * that receives the next response or to its own next wait
 * (verbs/qp_engine.c engine_qp_kick). A window of Reads kept open must
 * see every Read complete, in order, with its data, whoever waits: a
 * Read Request left to a response that had already been received would
 * hang the window (bounded: st_poll, the suite's timeout).
 */
#include "config.h"

#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <stdatomic.h>
#include <string.h>

#include "iwarp/iwarp.h"
#include "stack_harness.h"
#include "testutil.h"
#include "util/mem.h"

#define LEN 4096

/* Connects |k| over |n| with a zeroed iwarp_conn_param on both sides. */
static void open_ord0(struct st_net *n, struct st_conn *k)
{
	struct iwarp_qp_init_attr qa;
	struct iwarp_conn_param cp;
	struct sockaddr_storage ss;
	struct iwarp_cm_event *ev;
	struct pollfd p;

	memset(k, 0, sizeof(*k));
	st_cq_open(&k->ccq, n->cli.ctx, 64);
	st_cq_open(&k->scq, n->srv.ctx, 64);
	k->cq_c = &k->ccq;
	k->cq_s = &k->scq;
	memset(&qa, 0, sizeof(qa));
	qa.qp_type = IWARP_QPT_RC;
	qa.cap.max_send_wr = 16;
	qa.cap.max_recv_wr = 16;
	qa.cap.max_send_sge = 1;
	qa.cap.max_recv_sge = 1;
	ck_assert_int_eq(iwarp_cm_create_id(n->cli.ech, n->cli.ctx, &k->c, k,
					    IWARP_PS_TCP),
			 0);
	ck_assert_int_eq(iwarp_cm_getaddr("127.0.0.1", n->port, &ss), 0);
	ck_assert_int_eq(
		iwarp_cm_resolve_addr(k->c, NULL, (struct sockaddr *)&ss, 2000),
		0);
	st_cm_expect(n->cli.ech, IWARP_CM_EVENT_ADDR_RESOLVED, k->c);
	ck_assert_int_eq(iwarp_cm_resolve_route(k->c, 2000), 0);
	st_cm_expect(n->cli.ech, IWARP_CM_EVENT_ROUTE_RESOLVED, k->c);
	qa.send_cq = qa.recv_cq = k->ccq.cq;
	ck_assert_int_eq(iwarp_cm_create_qp(k->c, n->cli.pd, &qa), 0);
	memset(&cp, 0, sizeof(cp));
	ck_assert_int_eq(iwarp_cm_connect(k->c, &cp), 0);

	p.fd = n->srv.ech->fd;
	p.events = POLLIN;
	ck_assert_int_eq(poll(&p, 1, ST_WAIT_MS), 1);
	ck_assert_int_eq(iwarp_cm_get_event(n->srv.ech, &ev), 0);
	ck_assert_int_eq(ev->event, IWARP_CM_EVENT_CONNECT_REQUEST);
	k->s = ev->id;
	qa.send_cq = qa.recv_cq = k->scq.cq;
	ck_assert_int_eq(iwarp_cm_create_qp(k->s, n->srv.pd, &qa), 0);
	memset(&cp, 0, sizeof(cp));
	ck_assert_int_eq(iwarp_cm_accept(k->s, &cp), 0);
	ck_assert_int_eq(iwarp_cm_ack_event(ev), 0);
	st_cm_expect(n->srv.ech, IWARP_CM_EVENT_ESTABLISHED, k->s);
	st_cm_expect(n->cli.ech, IWARP_CM_EVENT_ESTABLISHED, k->c);
	ck_assert_int_eq(cmt_qp_state(k->c->qp), IWARP_QPS_RTS);
	ck_assert_int_eq(cmt_qp_state(k->s->qp), IWARP_QPS_RTS);
}

static void wr_init(struct iwarp_send_wr *wr, struct iwarp_sge *sge,
		    uint64_t id, enum iwarp_wr_opcode op,
		    const struct st_buf *local, const struct st_buf *remote)
{
	memset(wr, 0, sizeof(*wr));
	sge->addr = (uintptr_t)local->p;
	sge->length = LEN;
	sge->lkey = local->mr->lkey;
	wr->wr_id = id;
	wr->opcode = op;
	wr->send_flags = IWARP_SEND_SIGNALED;
	wr->sg_list = sge;
	wr->num_sge = 1;
	wr->wr.rdma.remote_addr = (uintptr_t)remote->p;
	wr->wr.rdma.rkey = remote->mr->rkey;
}

/* Side _i (0 client, 1 server) posts: a Read alone, then Write + Read +
 * Write in one list; the Reads are refused, the Writes complete. */
START_TEST(test_read_refused_with_ord0)
{
	long base = iw_mem_outstanding();
	int rw = IWARP_ACCESS_LOCAL_WRITE | IWARP_ACCESS_REMOTE_WRITE |
		 IWARP_ACCESS_REMOTE_READ;
	struct iwarp_send_wr wr[3], *bad;
	struct iwarp_sge sge[3];
	struct iwarp_context_attr a;
	struct iwarp_qp_attr qa;
	struct iwarp_qp_init_attr ia;
	struct iwarp_wc wc[4];
	struct iwarp_qp *qp;
	struct st_buf bc, bs, *mine, *peer;
	struct st_cq *cq;
	struct st_net n;
	struct st_conn k;

	st_attr(&a, 2, IWARP_CRC_REQUEST, 0);
	st_net_open(&n, &a);
	open_ord0(&n, &k);
	st_buf_reg(&bc, n.cli.pd, LEN, rw);
	st_buf_reg(&bs, n.srv.pd, LEN, rw);
	qp = _i ? k.s->qp : k.c->qp;
	cq = _i ? k.cq_s : k.cq_c;
	mine = _i ? &bs : &bc;
	peer = _i ? &bc : &bs;
	ck_assert_int_eq(
		iwarp_query_qp(qp, &qa, IWARP_QP_MAX_QP_RD_ATOMIC, &ia), 0);
	ck_assert_int_eq(qa.max_rd_atomic, 0);
	/* RFC 5044 §7.1: the responder sends only after the first FPDU of
	 * the initiator: the client writes once first */
	wr_init(&wr[0], &sge[0], 9, IWARP_WR_RDMA_WRITE, &bc, &bs);
	ck_assert_int_eq(iwarp_post_send(k.c->qp, wr, &bad), 0);
	st_poll_n(k.cq_c, wc, 1);
	st_wc_check(&wc[0], 9, IWARP_WC_SUCCESS, IWARP_WC_RDMA_WRITE, LEN, 0);

	/* a Read alone: refused, nothing queued */
	wr_init(&wr[0], &sge[0], 1, IWARP_WR_RDMA_READ, mine, peer);
	bad = NULL;
	ck_assert_int_eq(iwarp_post_send(qp, wr, &bad), -EINVAL);
	ck_assert_ptr_eq(bad, &wr[0]);

	/* Write, Read, Write: the first Write is posted, the list stops at
	 * the Read */
	wr_init(&wr[0], &sge[0], 2, IWARP_WR_RDMA_WRITE, mine, peer);
	wr_init(&wr[1], &sge[1], 3, IWARP_WR_RDMA_READ, mine, peer);
	wr_init(&wr[2], &sge[2], 4, IWARP_WR_RDMA_WRITE, mine, peer);
	wr[0].next = &wr[1];
	wr[1].next = &wr[2];
	bad = NULL;
	ck_assert_int_eq(iwarp_post_send(qp, wr, &bad), -EINVAL);
	ck_assert_ptr_eq(bad, &wr[1]);
	st_poll_n(cq, wc, 1);
	st_wc_check(&wc[0], 2, IWARP_WC_SUCCESS, IWARP_WC_RDMA_WRITE, LEN, 0);

	/* the QP is still usable: the rest of the list, minus the Read */
	bad = NULL;
	ck_assert_int_eq(iwarp_post_send(qp, &wr[2], &bad), 0);
	st_poll_n(cq, wc, 1);
	st_wc_check(&wc[0], 4, IWARP_WC_SUCCESS, IWARP_WC_RDMA_WRITE, LEN, 0);
	/* a refused Read would have failed the QP before this Write */
	ck_assert_int_eq(cmt_qp_state(qp), IWARP_QPS_RTS);

	st_conn_disconnect(&n, &k, false);
	st_conn_close(&k);
	st_buf_free(&bc);
	st_buf_free(&bs);
	st_net_close(&n);
	st_wait_mem(base);
}
END_TEST

#define WIN_READS 48   /* Reads kept outstanding: three times the ORD */
#define WIN_TOTAL 6000 /* Reads in all */
#define WIN_SLOT  256  /* octets per Read; slot i % WIN_SLOTS */
#define WIN_SLOTS 64

/* A thread that sleeps in iwarp_get_cq_event on an idle CQ of the client's
 * context, so that the sockets are with it, until |stop| and an event. */
struct win_driver {
	struct st_cq *cq;
	atomic_bool stop;
	int err;
};

static void *win_drive(void *arg)
{
	struct win_driver *d = arg;
	struct iwarp_wc wc;
	struct iwarp_cq *ecq;
	void *ectx;

	while (!atomic_load(&d->stop)) {
		d->err = iwarp_req_notify_cq(d->cq->cq, 0);
		if (!d->err)
			d->err = iwarp_get_cq_event(d->cq->ch, &ecq, &ectx);
		if (d->err)
			break;
		iwarp_ack_cq_events(ecq, 1);
		while (iwarp_poll_cq(d->cq->cq, 1, &wc) > 0)
			;
	}
	return NULL;
}

/*
 * The client keeps WIN_READS Reads open (ORD 16: the rest wait in the SQ)
 * and tops the window up by a varying batch after each wait, in progress
 * mode _i & 1 (CPU, ADAPTIVE). It waits (_i >> 1) in iwarp_get_cq_event
 * (it reads the sockets itself and runs what it left queued), in poll(2)
 * on the channel's fd (the progress thread has the sockets), or in poll(2)
 * while another thread sleeps in iwarp_get_cq_event on an idle CQ: then
 * only that thread's passes, woken by the responses, send the Read
 * Requests left to them. Every Read completes in order and brings its
 * slot's octets (cleared after each check).
 */
START_TEST(test_read_window)
{
	static const enum iwarp_progress_mode modes[] = {
		IWARP_PROGRESS_CPU, IWARP_PROGRESS_ADAPTIVE};
	long base = iw_mem_outstanding();
	int rw = IWARP_ACCESS_LOCAL_WRITE | IWARP_ACCESS_REMOTE_READ;
	struct st_qp_opts o = {.max_send_wr = 64, .max_recv_wr = 4};
	struct iwarp_wc wc[WIN_READS];
	struct iwarp_context_attr a;
	struct st_buf sink, src;
	uint64_t posted = 0, done = 0;
	struct st_net n;
	struct st_conn k, k2;
	struct st_cq idle;
	struct win_driver d = {.cq = &idle};
	pthread_t t;
	int wait = _i >> 1;
	int i, got;

	st_attr(&a, 2, IWARP_CRC_REQUEST, 0);
	a.progress = modes[_i & 1];
	st_net_open(&n, &a);
	st_conn_open(&n, &k, &o);
	if (wait == 2) {
		struct st_qp_opts o2 = {.cli_cq = &idle};

		st_cq_open(&idle, n.cli.ctx, 16);
		st_conn_open(&n, &k2, &o2);
		atomic_init(&d.stop, false);
		ck_assert_int_eq(pthread_create(&t, NULL, win_drive, &d), 0);
	}
	st_buf_reg(&sink, n.cli.pd, WIN_SLOT * WIN_SLOTS, rw);
	st_buf_reg(&src, n.srv.pd, WIN_SLOT * WIN_SLOTS, rw);
	memset(src.p, 0x5a, src.len);
	while (done < WIN_TOTAL) {
		/* a batch of 1..WIN_READS Reads, up to the window */
		int batch = 1 + (int)(done * 7 % WIN_READS);

		while (posted < WIN_TOTAL && posted - done < WIN_READS &&
		       batch-- > 0) {
			size_t off = (size_t)(posted % WIN_SLOTS) * WIN_SLOT;

			ck_assert_int_eq(st_post_send(k.c->qp, posted,
						      IWARP_WR_RDMA_READ,
						      IWARP_SEND_SIGNALED,
						      sink.mr, sink.p + off,
						      WIN_SLOT,
						      (uintptr_t)src.p + off,
						      src.mr->rkey, 0),
					 0);
			posted++;
		}
		if (wait == 0)
			st_reap_blocking(k.cq_c, wc, 1);
		else
			st_poll_n(k.cq_c, wc, 1);
		got = iwarp_poll_cq(k.cq_c->cq, WIN_READS - 1, wc + 1);
		ck_assert_int_ge(got, 0);
		got++;
		for (i = 0; i < got; i++) {
			size_t off = (size_t)(done % WIN_SLOTS) * WIN_SLOT;

			st_wc_check(&wc[i], done, IWARP_WC_SUCCESS,
				    IWARP_WC_RDMA_READ, WIN_SLOT, 0);
			st_check_fill(sink.p + off, WIN_SLOT, 0x5a);
			memset(sink.p + off, 0, WIN_SLOT);
			done++;
		}
	}
	ck_assert_uint_eq(posted, WIN_TOTAL);
	st_cq_empty(k.cq_c);
	ck_assert_int_eq(cmt_qp_state(k.c->qp), IWARP_QPS_RTS);
	if (wait == 2) {
		/* a Send's completion on the idle CQ ends the driver */
		atomic_store(&d.stop, true);
		ck_assert_int_eq(st_post_recv(k2.s->qp, 1, NULL, NULL, 0), 0);
		ck_assert_int_eq(st_post_send(k2.c->qp, 2, IWARP_WR_SEND,
					      IWARP_SEND_SIGNALED, NULL, NULL,
					      0, 0, 0, 0),
				 0);
		ck_assert_int_eq(pthread_join(t, NULL), 0);
		ck_assert_int_eq(d.err, 0);
		st_poll_n(k2.cq_s, wc, 1);
		st_wc_check(&wc[0], 1, IWARP_WC_SUCCESS, IWARP_WC_RECV, 0, 0);
		st_conn_disconnect(&n, &k2, false);
		st_conn_close(&k2);
		st_cq_close(&idle);
	}
	st_conn_disconnect(&n, &k, false);
	st_conn_close(&k);
	st_buf_free(&sink);
	st_buf_free(&src);
	st_net_close(&n);
	st_wait_mem(base);
}
END_TEST

static Suite *stack_ord_suite(void)
{
	Suite *s = suite_create("stack_ord");
	TCase *tc = tcase_create("ord0");

	tcase_set_timeout(tc, 60);
	tcase_add_loop_test(tc, test_read_refused_with_ord0, 0, 2);
	suite_add_tcase(s, tc);
	tc = tcase_create("window");
	tcase_set_timeout(tc, 120);
	tcase_add_loop_test(tc, test_read_window, 0, 6);
	suite_add_tcase(s, tc);
	return s;
}

ST_TEST_MAIN(stack_ord_suite)
