/*
 * tests/stack_inline_test.c: IWARP_PROGRESS_INLINE with an event-driven
 * program, over the CM and real loopback TCP. A server thread and a client
 * thread, each with its own INLINE context (no progress thread: only the
 * library calls of that thread drive its engine), wait only in the
 * library's blocking calls: iwarp_cm_get_event, iwarp_get_cq_event (after
 * iwarp_req_notify_cq) and iwarp_get_async_event. Each must drive the
 * engine while it waits, or the program hangs. Rounds of Write + Send
 * from the client, a Send back from the server, while a third thread
 * blocks in iwarp_get_async_event on the client's context all along (two
 * waiters driving one engine); then a Write with a bad rkey: the server
 * answers with a TERMINATE (RFC 5040 §8), which the async thread reports
 * and the server sees as the flush of its receives. Check's per-test
 * timeout (60 s) bounds a hang.
 */
#include "config.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "iwarp/iwarp.h"
#include "stack_harness.h"
#include "testutil.h"
#include "util/mem.h"

#define ROUNDS 40
#define MSG    4096 /* Write payload */
#define SMALL  64   /* Send payload */
#define NRECV  4

/* Private data of the server's accept: where the client writes. */
struct adv {
	uint64_t addr;
	uint32_t rkey;
};

struct side {
	struct iwarp_context *ctx;
	struct iwarp_event_channel *ech;
	struct iwarp_pd *pd;
	struct iwarp_comp_channel *cch;
	struct iwarp_cq *cq;
	struct iwarp_cm_id *id; /* the connection's id */
	struct iwarp_mr *mr;
	uint8_t *buf; /* [0, MSG): Write target/source; then recvs */
	uint16_t port;
	char err[256]; /* first failure, "" if none */
	int cq_events; /* get_cq_event calls that returned an event */
	/* the client's async-event thread: its result */
	int async_rc;
	struct iwarp_async_event async_ev;
};

#define BUF_LEN (MSG + (NRECV + 1) * SMALL)

/* Records the first failure of a thread and leaves its function. */
#define FAILIF(s, cond, ...)                                                   \
	do {                                                                   \
		if ((cond) && !(s)->err[0]) {                                  \
			snprintf((s)->err, sizeof((s)->err), __VA_ARGS__);     \
			return false;                                          \
		}                                                              \
	} while (0)

static void side_open(struct side *s)
{
	struct iwarp_context_attr a;

	memset(s, 0, sizeof(*s));
	iwarp_context_attr_init(&a);
	a.progress = IWARP_PROGRESS_INLINE;
	a.mpa_reply_grace_ms = 0;
	s->ctx = iwarp_open_context(&a);
	ck_assert_msg(s->ctx != NULL, "open: %s", strerror(errno));
	s->ech = iwarp_cm_create_event_channel();
	s->pd = iwarp_alloc_pd(s->ctx);
	s->cch = iwarp_create_comp_channel(s->ctx);
	ck_assert_ptr_nonnull(s->ech);
	ck_assert_ptr_nonnull(s->pd);
	ck_assert_ptr_nonnull(s->cch);
	s->cq = iwarp_create_cq(s->ctx, 64, s, s->cch, 0);
	ck_assert_ptr_nonnull(s->cq);
	s->buf = calloc(1, BUF_LEN);
	ck_assert_ptr_nonnull(s->buf);
	s->mr = iwarp_reg_mr(s->pd, s->buf, BUF_LEN,
			     IWARP_ACCESS_LOCAL_WRITE |
				     IWARP_ACCESS_REMOTE_WRITE);
	ck_assert_ptr_nonnull(s->mr);
}

static void side_close(struct side *s)
{
	if (s->id) {
		iwarp_cm_destroy_qp(s->id);
		ck_assert_int_eq(iwarp_cm_destroy_id(s->id), 0);
	}
	ck_assert_int_eq(iwarp_dereg_mr(s->mr), 0);
	ck_assert_int_eq(iwarp_destroy_cq(s->cq), 0);
	ck_assert_int_eq(iwarp_destroy_comp_channel(s->cch), 0);
	ck_assert_int_eq(iwarp_dealloc_pd(s->pd), 0);
	iwarp_cm_destroy_event_channel(s->ech);
	ck_assert_int_eq(iwarp_close_context(s->ctx), 0);
	free(s->buf);
}

/* Blocks in iwarp_cm_get_event for |type|; copies private data to |pd|. */
static bool cm_wait(struct side *s, enum iwarp_cm_event_type type,
		    struct iwarp_cm_id **id, void *pd, size_t len)
{
	struct iwarp_cm_event *ev;
	int rc;

	rc = iwarp_cm_get_event(s->ech, &ev);
	FAILIF(s, rc, "cm_get_event: %d", rc);
	FAILIF(s, ev->event != type, "got %s (%d), wanted %s",
	       iwarp_cm_event_str(ev->event), ev->status,
	       iwarp_cm_event_str(type));
	if (id)
		*id = ev->id;
	if (pd) {
		FAILIF(s, ev->param.conn.private_data_len < len,
		       "private data %u", ev->param.conn.private_data_len);
		memcpy(pd, ev->param.conn.private_data, len);
	}
	iwarp_cm_ack_event(ev);
	return true;
}

/*
 * Event-driven wait for |want| completions (ibverbs pattern: poll; when
 * empty, arm, poll again, then block in iwarp_get_cq_event).
 */
static bool cq_wait(struct side *s, struct iwarp_wc *wc, int want)
{
	struct iwarp_cq *ecq;
	void *ectx;
	int got = 0, n, rc;

	while (got < want) {
		n = iwarp_poll_cq(s->cq, want - got, wc + got);
		FAILIF(s, n < 0, "poll_cq: %d", n);
		got += n;
		if (got == want)
			break;
		if (n)
			continue;
		rc = iwarp_req_notify_cq(s->cq, 0);
		FAILIF(s, rc, "req_notify_cq: %d", rc);
		n = iwarp_poll_cq(s->cq, want - got, wc + got);
		FAILIF(s, n < 0, "poll_cq: %d", n);
		got += n;
		if (n)
			continue;
		rc = iwarp_get_cq_event(s->cch, &ecq, &ectx); /* blocks */
		FAILIF(s, rc, "get_cq_event: %d", rc);
		FAILIF(s, ecq != s->cq || ectx != s, "event for another CQ");
		iwarp_ack_cq_events(ecq, 1);
		s->cq_events++;
	}
	return true;
}

static bool post_recv(struct side *s, int slot)
{
	struct iwarp_recv_wr wr, *bad;
	struct iwarp_sge sge;
	int rc;

	sge.addr = (uintptr_t)(s->buf + MSG + (size_t)slot * SMALL);
	sge.length = SMALL;
	sge.lkey = s->mr->lkey;
	memset(&wr, 0, sizeof(wr));
	wr.wr_id = (uint64_t)slot;
	wr.sg_list = &sge;
	wr.num_sge = 1;
	rc = iwarp_post_recv(s->id->qp, &wr, &bad);
	FAILIF(s, rc, "post_recv: %d", rc);
	return true;
}

/* Posts a Send of SMALL bytes from slot NRECV, signaled, wr_id |id|. */
static bool post_send_small(struct side *s, uint64_t id)
{
	struct iwarp_send_wr wr, *bad;
	struct iwarp_sge sge;
	int rc;

	sge.addr = (uintptr_t)(s->buf + MSG + NRECV * SMALL);
	sge.length = SMALL;
	sge.lkey = s->mr->lkey;
	memset(&wr, 0, sizeof(wr));
	wr.wr_id = id;
	wr.opcode = IWARP_WR_SEND;
	wr.send_flags = IWARP_SEND_SIGNALED;
	wr.sg_list = &sge;
	wr.num_sge = 1;
	rc = iwarp_post_send(s->id->qp, &wr, &bad);
	FAILIF(s, rc, "post_send: %d", rc);
	return true;
}

static bool server_run(struct side *s)
{
	struct iwarp_qp_init_attr qa;
	struct iwarp_conn_param cp;
	struct iwarp_wc wc[2];
	struct adv adv;
	int r, i, slot, rc;

	if (!cm_wait(s, IWARP_CM_EVENT_CONNECT_REQUEST, &s->id, NULL, 0))
		return false;
	memset(&qa, 0, sizeof(qa));
	qa.send_cq = qa.recv_cq = s->cq;
	qa.qp_type = IWARP_QPT_RC;
	qa.cap.max_send_wr = 8;
	qa.cap.max_recv_wr = NRECV;
	qa.cap.max_send_sge = 1;
	qa.cap.max_recv_sge = 1;
	rc = iwarp_cm_create_qp(s->id, s->pd, &qa);
	FAILIF(s, rc, "create_qp: %d", rc);
	for (i = 0; i < NRECV; i++)
		if (!post_recv(s, i))
			return false;
	adv.addr = (uintptr_t)s->buf;
	adv.rkey = s->mr->rkey;
	memset(&cp, 0, sizeof(cp));
	cp.private_data = &adv;
	cp.private_data_len = sizeof(adv);
	cp.responder_resources = 1;
	cp.initiator_depth = 1;
	rc = iwarp_cm_accept(s->id, &cp);
	FAILIF(s, rc, "accept: %d", rc);
	if (!cm_wait(s, IWARP_CM_EVENT_ESTABLISHED, NULL, NULL, 0))
		return false;
	for (r = 0; r < ROUNDS; r++) {
		/* the client's Write, then its Send */
		if (!cq_wait(s, wc, 1))
			return false;
		FAILIF(s,
		       wc[0].status != IWARP_WC_SUCCESS ||
			       wc[0].opcode != IWARP_WC_RECV,
		       "round %d: recv %s", r,
		       iwarp_wc_status_str(wc[0].status));
		slot = (int)wc[0].wr_id;
		FAILIF(s,
		       s->buf[MSG + (size_t)slot * SMALL] != (uint8_t)r ||
			       s->buf[0] != (uint8_t)(r + 1) ||
			       s->buf[MSG - 1] != (uint8_t)(r + 1),
		       "round %d: data %u/%u", r, s->buf[0],
		       s->buf[MSG + (size_t)slot * SMALL]);
		if (!post_recv(s, slot))
			return false;
		s->buf[MSG + NRECV * SMALL] = (uint8_t)r;
		if (!post_send_small(s, 1000 + (uint64_t)r) ||
		    !cq_wait(s, wc, 1))
			return false;
		FAILIF(s,
		       wc[0].status != IWARP_WC_SUCCESS ||
			       wc[0].wr_id != 1000 + (uint64_t)r,
		       "round %d: send %s", r,
		       iwarp_wc_status_str(wc[0].status));
	}
	/* the client's bad Write: we TERMINATE, our receives are flushed */
	if (!cq_wait(s, wc, 1))
		return false;
	FAILIF(s, wc[0].status != IWARP_WC_WR_FLUSH_ERR,
	       "after the bad Write: %s", iwarp_wc_status_str(wc[0].status));
	return true;
}

/* A dedicated async-event thread, as applications have: it blocks in
 * iwarp_get_async_event for the whole run, waiting on the same INLINE
 * context as the client's data path (both drive its engine). */
static void *async_thread(void *arg)
{
	struct side *s = arg;

	s->async_rc = iwarp_get_async_event(s->ctx, &s->async_ev);
	if (!s->async_rc)
		iwarp_ack_async_event(&s->async_ev);
	return NULL;
}

static bool client_run(struct side *s)
{
	struct iwarp_qp_init_attr qa;
	struct iwarp_conn_param cp;
	struct sockaddr_storage ss;
	pthread_t ta;
	struct iwarp_send_wr wr[2], *bad;
	struct iwarp_sge sge;
	struct iwarp_wc wc[2];
	struct adv adv;
	int r, rc, i, slot, got;

	rc = iwarp_cm_create_id(s->ech, s->ctx, &s->id, NULL, IWARP_PS_TCP);
	FAILIF(s, rc, "create_id: %d", rc);
	rc = iwarp_cm_getaddr("127.0.0.1", s->port, &ss);
	FAILIF(s, rc, "getaddr: %d", rc);
	rc = iwarp_cm_resolve_addr(s->id, NULL, (struct sockaddr *)&ss, 2000);
	FAILIF(s, rc, "resolve_addr: %d", rc);
	if (!cm_wait(s, IWARP_CM_EVENT_ADDR_RESOLVED, NULL, NULL, 0))
		return false;
	rc = iwarp_cm_resolve_route(s->id, 2000);
	FAILIF(s, rc, "resolve_route: %d", rc);
	if (!cm_wait(s, IWARP_CM_EVENT_ROUTE_RESOLVED, NULL, NULL, 0))
		return false;
	memset(&qa, 0, sizeof(qa));
	qa.send_cq = qa.recv_cq = s->cq;
	qa.qp_type = IWARP_QPT_RC;
	qa.cap.max_send_wr = 8;
	qa.cap.max_recv_wr = NRECV;
	qa.cap.max_send_sge = 1;
	qa.cap.max_recv_sge = 1;
	rc = iwarp_cm_create_qp(s->id, s->pd, &qa);
	FAILIF(s, rc, "create_qp: %d", rc);
	for (i = 0; i < NRECV; i++)
		if (!post_recv(s, i))
			return false;
	memset(&cp, 0, sizeof(cp));
	cp.responder_resources = 1;
	cp.initiator_depth = 1;
	rc = iwarp_cm_connect(s->id, &cp);
	FAILIF(s, rc, "connect: %d", rc);
	if (!cm_wait(s, IWARP_CM_EVENT_ESTABLISHED, NULL, &adv, sizeof(adv)))
		return false;
	rc = pthread_create(&ta, NULL, async_thread, s);
	FAILIF(s, rc, "pthread_create: %d", rc);

	for (r = 0; r < ROUNDS; r++) {
		memset(s->buf, r + 1, MSG);
		s->buf[MSG + NRECV * SMALL] = (uint8_t)r;
		memset(wr, 0, sizeof(wr));
		sge.addr = (uintptr_t)s->buf;
		sge.length = MSG;
		sge.lkey = s->mr->lkey;
		wr[0].wr_id = 1;
		wr[0].opcode = IWARP_WR_RDMA_WRITE; /* unsignaled */
		wr[0].sg_list = &sge;
		wr[0].num_sge = 1;
		wr[0].wr.rdma.remote_addr = adv.addr;
		wr[0].wr.rdma.rkey = adv.rkey;
		wr[0].next = NULL;
		rc = iwarp_post_send(s->id->qp, wr, &bad);
		FAILIF(s, rc, "post Write: %d", rc);
		if (!post_send_small(s, 2000 + (uint64_t)r))
			return false;
		/* our Send's completion and the server's reply, any order */
		for (got = 0; got < 2; got++) {
			if (!cq_wait(s, wc, 1))
				return false;
			FAILIF(s, wc[0].status != IWARP_WC_SUCCESS,
			       "round %d: %s", r,
			       iwarp_wc_status_str(wc[0].status));
			if (wc[0].opcode != IWARP_WC_RECV) {
				FAILIF(s, wc[0].wr_id != 2000 + (uint64_t)r,
				       "round %d: wr_id %llu", r,
				       (unsigned long long)wc[0].wr_id);
				continue;
			}
			slot = (int)wc[0].wr_id;
			FAILIF(s,
			       s->buf[MSG + (size_t)slot * SMALL] != (uint8_t)r,
			       "round %d: reply %u", r,
			       s->buf[MSG + (size_t)slot * SMALL]);
			if (!post_recv(s, slot))
				return false;
		}
	}

	/* a Write with a bad rkey: the server's TERMINATE arrives only if
	 * the async thread, blocked in iwarp_get_async_event, drives our
	 * engine (this thread no longer calls into the library) */
	wr[0].wr.rdma.rkey = adv.rkey ^ 0x80u;
	wr[0].send_flags = IWARP_SEND_SIGNALED;
	rc = iwarp_post_send(s->id->qp, wr, &bad);
	FAILIF(s, rc, "post bad Write: %d", rc);
	rc = pthread_join(ta, NULL);
	FAILIF(s, rc, "pthread_join: %d", rc);
	FAILIF(s, s->async_rc, "get_async_event: %d", s->async_rc);
	FAILIF(s, s->async_ev.element.qp != s->id->qp,
	       "async %s for another element",
	       iwarp_event_type_str(s->async_ev.event_type));
	FAILIF(s,
	       s->async_ev.event_type != IWARP_EVENT_QP_ACCESS_ERR &&
		       s->async_ev.event_type != IWARP_EVENT_QP_FATAL,
	       "async %s", iwarp_event_type_str(s->async_ev.event_type));
	FAILIF(s, s->id->qp->state != IWARP_QPS_ERR, "QP state %d",
	       s->id->qp->state);
	return true;
}

static void *server_thread(void *arg)
{
	server_run(arg);
	return NULL;
}

static void *client_thread(void *arg)
{
	client_run(arg);
	return NULL;
}

START_TEST(test_inline_event_driven)
{
	long base = iw_mem_outstanding();
	struct sockaddr_storage ss;
	struct iwarp_cm_id *l;
	struct side srv, cli;
	pthread_t ts, tc;

	side_open(&srv);
	side_open(&cli);
	ck_assert_int_eq(
		iwarp_cm_create_id(srv.ech, srv.ctx, &l, NULL, IWARP_PS_TCP),
		0);
	ck_assert_int_eq(iwarp_cm_getaddr("127.0.0.1", 0, &ss), 0);
	ck_assert_int_eq(iwarp_cm_bind_addr(l, (struct sockaddr *)&ss), 0);
	ck_assert_int_eq(iwarp_cm_listen(l, 4), 0);
	cli.port = ntohs(((struct sockaddr_in *)&l->src_addr)->sin_port);
	ck_assert_uint_ne(cli.port, 0);

	ck_assert_int_eq(pthread_create(&ts, NULL, server_thread, &srv), 0);
	ck_assert_int_eq(pthread_create(&tc, NULL, client_thread, &cli), 0);
	ck_assert_int_eq(pthread_join(tc, NULL), 0);
	ck_assert_int_eq(pthread_join(ts, NULL), 0);
	ck_assert_msg(!cli.err[0], "client: %s", cli.err);
	ck_assert_msg(!srv.err[0], "server: %s", srv.err);
	/* every wait above that found the CQ empty slept in get_cq_event */
	ck_assert_int_gt(cli.cq_events, 0);
	ck_assert_int_gt(srv.cq_events, 0);

	ck_assert_int_eq(iwarp_cm_destroy_id(l), 0);
	side_close(&cli);
	side_close(&srv);
	ck_assert_int_eq(iw_mem_outstanding(), base);
}
END_TEST

static Suite *stack_inline_suite(void)
{
	Suite *s = suite_create("stack_inline");
	TCase *tc = tcase_create("inline");

	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, test_inline_event_driven);
	suite_add_tcase(s, tc);
	return s;
}

ST_TEST_MAIN(stack_inline_suite)
