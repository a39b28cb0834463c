/* tests/stack_harness.c: see stack_harness.h. */
#include "config.h"

#include <arpa/inet.h>
#include <check.h>
#include <errno.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "stack_harness.h"
#include "testutil.h"
#include "util/mem.h"

uint64_t st_now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000u + (uint64_t)ts.tv_nsec / 1000000u;
}

/* Milliseconds left until |deadline| (0 when passed). */
static int ms_left(uint64_t deadline)
{
	uint64_t now = st_now_ms();

	return now >= deadline ? 0 : (int)(deadline - now);
}

static bool fd_ready(int fd, int ms)
{
	struct pollfd p = {.fd = fd, .events = POLLIN};

	return poll(&p, 1, ms) == 1;
}

void st_attr(struct iwarp_context_attr *a, int rev, enum iwarp_crc_policy crc,
	     int markers)
{
	iwarp_context_attr_init(a);
	a->mpa_rev = rev;
	a->crc = crc;
	a->markers = markers;
	a->p2p = IWARP_P2P_NONE;
	a->progress = IWARP_PROGRESS_CPU;
	/* never reached on a loaded machine: no test here is about them */
	a->mpa_req_timeout_ms = 20000;
	a->mpa_rep_timeout_ms = 20000;
	a->mpa_reply_grace_ms = 0;
}

static void side_open(struct st_side *s, const struct iwarp_context_attr *a)
{
	memset(s, 0, sizeof(*s));
	s->ctx = iwarp_open_context(a);
	ck_assert_msg(s->ctx != NULL, "iwarp_open_context: %s",
		      strerror(errno));
	s->ech = iwarp_cm_create_event_channel();
	ck_assert_ptr_nonnull(s->ech);
	s->pd = iwarp_alloc_pd(s->ctx);
	ck_assert_ptr_nonnull(s->pd);
}

/* A port of 127.0.0.1 that is bound but not listening (connects are
 * refused); reserved until the caller closes *fd. */
static uint16_t refused_port(int *fd)
{
	struct sockaddr_in sin;
	socklen_t len = sizeof(sin);

	*fd = socket(AF_INET, SOCK_STREAM, 0);
	ck_assert_int_ge(*fd, 0);
	memset(&sin, 0, sizeof(sin));
	sin.sin_family = AF_INET;
	sin.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	ck_assert_int_eq(bind(*fd, (struct sockaddr *)&sin, sizeof(sin)), 0);
	ck_assert_int_eq(getsockname(*fd, (struct sockaddr *)&sin, &len), 0);
	return ntohs(sin.sin_port);
}

/*
 * No CM event is left on |s|'s channel: a refused connect goes through the
 * same engine and channel, and its ADDR_RESOLVED, ROUTE_RESOLVED and
 * REJECTED (-ECONNREFUSED) must be the next events (an event left over
 * from the test would come first and fail st_cm_expect).
 */
static void side_expect_no_cm_event(struct st_side *s)
{
	struct iwarp_qp_init_attr qa;
	struct sockaddr_storage ss;
	struct iwarp_cm_id *id;
	struct iwarp_cq *cq;
	int fd;

	cq = iwarp_create_cq(s->ctx, 4, NULL, NULL, 0);
	ck_assert_ptr_nonnull(cq);
	ck_assert_int_eq(
		iwarp_cm_create_id(s->ech, s->ctx, &id, NULL, IWARP_PS_TCP), 0);
	ck_assert_int_eq(iwarp_cm_getaddr("127.0.0.1", refused_port(&fd), &ss),
			 0);
	ck_assert_int_eq(
		iwarp_cm_resolve_addr(id, NULL, (struct sockaddr *)&ss, 2000),
		0);
	st_cm_expect(s->ech, IWARP_CM_EVENT_ADDR_RESOLVED, id);
	ck_assert_int_eq(iwarp_cm_resolve_route(id, 2000), 0);
	st_cm_expect(s->ech, IWARP_CM_EVENT_ROUTE_RESOLVED, id);
	memset(&qa, 0, sizeof(qa));
	qa.send_cq = cq;
	qa.recv_cq = cq;
	qa.qp_type = IWARP_QPT_RC;
	qa.cap.max_send_wr = 1;
	qa.cap.max_recv_wr = 1;
	qa.cap.max_send_sge = 1;
	qa.cap.max_recv_sge = 1;
	ck_assert_int_eq(iwarp_cm_create_qp(id, s->pd, &qa), 0);
	ck_assert_int_eq(iwarp_cm_connect(id, NULL), 0);
	st_cm_expect(s->ech, IWARP_CM_EVENT_REJECTED, id);
	iwarp_cm_destroy_qp(id);
	ck_assert_int_eq(iwarp_cm_destroy_id(id), 0);
	ck_assert_int_eq(iwarp_destroy_cq(cq), 0);
	close(fd);
}

static void side_close(struct st_side *s)
{
	side_expect_no_cm_event(s);
	ck_assert_int_eq(iwarp_dealloc_pd(s->pd), 0);
	iwarp_cm_destroy_event_channel(s->ech);
	ck_assert_int_eq(iwarp_close_context(s->ctx), 0);
}

static uint16_t sa_port(const struct sockaddr_storage *ss)
{
	if (ss->ss_family == AF_INET6)
		return ntohs(((const struct sockaddr_in6 *)ss)->sin6_port);
	return ntohs(((const struct sockaddr_in *)ss)->sin_port);
}

void st_net_open(struct st_net *n, const struct iwarp_context_attr *a)
{
	st_net_open2(n, a, a);
}

void st_net_open2(struct st_net *n, const struct iwarp_context_attr *srv,
		  const struct iwarp_context_attr *cli)
{
	struct sockaddr_storage ss;

	memset(n, 0, sizeof(*n));
	side_open(&n->srv, srv);
	side_open(&n->cli, cli);
	ck_assert_int_eq(iwarp_cm_create_id(n->srv.ech, n->srv.ctx, &n->l, NULL,
					    IWARP_PS_TCP),
			 0);
	ck_assert_int_eq(iwarp_cm_getaddr("127.0.0.1", 0, &ss), 0);
	ck_assert_int_eq(iwarp_cm_bind_addr(n->l, (struct sockaddr *)&ss), 0);
	ck_assert_int_eq(iwarp_cm_listen(n->l, 128), 0);
	n->port = sa_port(&n->l->src_addr);
	ck_assert_uint_ne(n->port, 0);
}

void st_net_close(struct st_net *n)
{
	ck_assert_int_eq(iwarp_cm_destroy_id(n->l), 0);
	side_close(&n->cli);
	side_close(&n->srv);
}

void st_cq_open(struct st_cq *c, struct iwarp_context *ctx, int cqe)
{
	c->ch = iwarp_create_comp_channel(ctx);
	ck_assert_ptr_nonnull(c->ch);
	c->cq = iwarp_create_cq(ctx, cqe, c, c->ch, 0);
	ck_assert_ptr_nonnull(c->cq);
}

void st_cq_close(struct st_cq *c)
{
	ck_assert_int_eq(iwarp_destroy_cq(c->cq), 0);
	ck_assert_int_eq(iwarp_destroy_comp_channel(c->ch), 0);
	c->cq = NULL;
	c->ch = NULL;
}

int st_cm_expect(struct iwarp_event_channel *ch, enum iwarp_cm_event_type type,
		 struct iwarp_cm_id *id)
{
	struct iwarp_cm_event *ev;
	int status;

	ck_assert_msg(fd_ready(ch->fd, ST_WAIT_MS), "no CM event, wanted %s",
		      iwarp_cm_event_str(type));
	ck_assert_int_eq(iwarp_cm_get_event(ch, &ev), 0);
	ck_assert_msg(ev->event == type, "got %s (status %d), wanted %s",
		      iwarp_cm_event_str(ev->event), ev->status,
		      iwarp_cm_event_str(type));
	if (id)
		ck_assert_ptr_eq(ev->id, id);
	status = ev->status;
	ck_assert_int_eq(iwarp_cm_ack_event(ev), 0);
	return status;
}

static void qp_init(struct iwarp_qp_init_attr *qa, struct st_cq *cq,
		    const struct st_qp_opts *o, struct iwarp_srq *srq)
{
	memset(qa, 0, sizeof(*qa));
	qa->send_cq = cq->cq;
	qa->recv_cq = cq->cq;
	qa->srq = srq;
	qa->qp_type = IWARP_QPT_RC;
	qa->cap.max_send_wr = o && o->max_send_wr ? o->max_send_wr : 64;
	qa->cap.max_recv_wr = o && o->max_recv_wr ? o->max_recv_wr : 64;
	qa->cap.max_send_sge = 2;
	qa->cap.max_recv_sge = 2;
	qa->cap.max_inline_data = 128;
	qa->sq_sig_all = o ? o->sq_sig_all : 0;
}

static int cq_size(const struct st_qp_opts *o)
{
	uint32_t s = o && o->max_send_wr ? o->max_send_wr : 64;
	uint32_t r = o && o->max_recv_wr ? o->max_recv_wr : 64;

	return (int)(2 * (s + r));
}

/* Client half: id resolved, QP created, connect sent with |idx| as
 * private data. */
static void client_start(struct st_net *n, struct st_conn *k, int idx,
			 const struct st_qp_opts *o)
{
	struct iwarp_qp_init_attr qa;
	struct iwarp_conn_param cp;
	struct sockaddr_storage ss;
	char pd[16];

	memset(k, 0, sizeof(*k));
	if (o && o->cli_cq) {
		k->cq_c = o->cli_cq;
	} else {
		st_cq_open(&k->ccq, n->cli.ctx, cq_size(o));
		k->cq_c = &k->ccq;
	}
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
	qp_init(&qa, k->cq_c, o, NULL);
	ck_assert_int_eq(iwarp_cm_create_qp(k->c, n->cli.pd, &qa), 0);
	snprintf(pd, sizeof(pd), "%05d", idx % 100000);
	memset(&cp, 0, sizeof(cp));
	cp.private_data = pd;
	cp.private_data_len = 6;
	cp.responder_resources = 16;
	cp.initiator_depth = 16;
	ck_assert_int_eq(iwarp_cm_connect(k->c, &cp), 0);
}

/* Server half: QP for the requested child |id|, accept. */
static void server_accept(struct st_net *n, struct st_conn *k,
			  struct iwarp_cm_id *id, const struct st_qp_opts *o)
{
	struct iwarp_qp_init_attr qa;
	struct iwarp_conn_param cp;

	k->s = id;
	if (o && o->srv_cq) {
		k->cq_s = o->srv_cq;
	} else {
		st_cq_open(&k->scq, n->srv.ctx, cq_size(o));
		k->cq_s = &k->scq;
	}
	qp_init(&qa, k->cq_s, o, o ? o->srv_srq : NULL);
	ck_assert_int_eq(
		iwarp_cm_create_qp(id, o && o->srv_pd ? o->srv_pd : n->srv.pd,
				   &qa),
		0);
	memset(&cp, 0, sizeof(cp));
	cp.responder_resources = 16;
	cp.initiator_depth = 16;
	ck_assert_int_eq(iwarp_cm_accept(id, &cp), 0);
}

void st_conn_open_many(struct st_net *n, struct st_conn *k, int count,
		       const struct st_qp_opts *o)
{
	struct iwarp_cm_event *ev;
	int i, j, nreq = 0, est_s = 0, est_c = 0;

	for (i = 0; i < count; i++)
		client_start(n, &k[i], i, o);
	while (nreq < count || est_s < count) {
		ck_assert_msg(fd_ready(n->srv.ech->fd, ST_WAIT_MS),
			      "server: %d requests, %d established", nreq,
			      est_s);
		ck_assert_int_eq(iwarp_cm_get_event(n->srv.ech, &ev), 0);
		if (ev->event == IWARP_CM_EVENT_ESTABLISHED) {
			est_s++;
			ck_assert_int_eq(iwarp_cm_ack_event(ev), 0);
			continue;
		}
		ck_assert_msg(ev->event == IWARP_CM_EVENT_CONNECT_REQUEST,
			      "server got %s (%d)",
			      iwarp_cm_event_str(ev->event), ev->status);
		ck_assert_ptr_eq(ev->listen_id, n->l);
		ck_assert_uint_eq(ev->param.conn.private_data_len, 6);
		j = atoi((const char *)ev->param.conn.private_data);
		ck_assert(j >= 0 && j < count && !k[j].s);
		nreq++;
		server_accept(n, &k[j], ev->id, o);
		ck_assert_int_eq(iwarp_cm_ack_event(ev), 0);
	}
	while (est_c < count) {
		ck_assert_msg(fd_ready(n->cli.ech->fd, ST_WAIT_MS),
			      "client: %d established", est_c);
		ck_assert_int_eq(iwarp_cm_get_event(n->cli.ech, &ev), 0);
		ck_assert_msg(ev->event == IWARP_CM_EVENT_ESTABLISHED,
			      "client got %s (%d)",
			      iwarp_cm_event_str(ev->event), ev->status);
		est_c++;
		ck_assert_int_eq(iwarp_cm_ack_event(ev), 0);
	}
	for (i = 0; i < count; i++) {
		ck_assert_int_eq(cmt_qp_state(k[i].c->qp), IWARP_QPS_RTS);
		ck_assert_int_eq(cmt_qp_state(k[i].s->qp), IWARP_QPS_RTS);
	}
}

void st_conn_open(struct st_net *n, struct st_conn *k,
		  const struct st_qp_opts *o)
{
	st_conn_open_many(n, k, 1, o);
}

void st_conn_disconnect(struct st_net *n, struct st_conn *k, bool from_server)
{
	ck_assert_int_eq(iwarp_cm_disconnect(from_server ? k->s : k->c), 0);
	st_cm_expect(n->cli.ech, IWARP_CM_EVENT_DISCONNECTED, k->c);
	st_cm_expect(n->srv.ech, IWARP_CM_EVENT_DISCONNECTED, k->s);
	st_cm_expect(n->cli.ech, IWARP_CM_EVENT_TIMEWAIT_EXIT, k->c);
	st_cm_expect(n->srv.ech, IWARP_CM_EVENT_TIMEWAIT_EXIT, k->s);
	ck_assert_int_eq(cmt_qp_state(k->c->qp), IWARP_QPS_ERR);
	ck_assert_int_eq(cmt_qp_state(k->s->qp), IWARP_QPS_ERR);
}

void st_conn_close(struct st_conn *k)
{
	if (k->c) {
		iwarp_cm_destroy_qp(k->c);
		ck_assert_int_eq(iwarp_cm_destroy_id(k->c), 0);
	}
	if (k->s) {
		iwarp_cm_destroy_qp(k->s);
		ck_assert_int_eq(iwarp_cm_destroy_id(k->s), 0);
	}
	if (k->ccq.cq)
		st_cq_close(&k->ccq);
	if (k->scq.cq)
		st_cq_close(&k->scq);
	memset(k, 0, sizeof(*k));
}

/* st_poll (|block| false) and st_reap_blocking (|block| true). */
static int poll_until(struct st_cq *c, struct iwarp_wc *wc, int want, int ms,
		      bool block)
{
	uint64_t deadline = st_now_ms() + (uint64_t)ms;
	struct iwarp_cq *ecq;
	void *ectx;
	int got = 0, n;

	while (got < want) {
		n = iwarp_poll_cq(c->cq, want - got, wc + got);
		ck_assert_int_ge(n, 0);
		got += n;
		if (got == want || (n == 0 && !block && !ms_left(deadline)))
			break;
		if (n)
			continue;
		/* arm, re-check (a completion may have raced the arm), sleep */
		ck_assert_int_eq(iwarp_req_notify_cq(c->cq, 0), 0);
		n = iwarp_poll_cq(c->cq, want - got, wc + got);
		ck_assert_int_ge(n, 0);
		got += n;
		if (n)
			continue;
		if (block || fd_ready(c->ch->fd, ms_left(deadline))) {
			ck_assert_int_eq(iwarp_get_cq_event(c->ch, &ecq, &ectx),
					 0);
			ck_assert_ptr_eq(ecq, c->cq);
			ck_assert_ptr_eq(ectx, c);
			iwarp_ack_cq_events(ecq, 1);
		}
	}
	return got;
}

int st_poll(struct st_cq *c, struct iwarp_wc *wc, int want, int ms)
{
	return poll_until(c, wc, want, ms, false);
}

void st_reap_blocking(struct st_cq *c, struct iwarp_wc *wc, int want)
{
	ck_assert_int_eq(poll_until(c, wc, want, 0, true), want);
}

void st_poll_n(struct st_cq *c, struct iwarp_wc *wc, int want)
{
	int got = st_poll(c, wc, want, ST_WAIT_MS);

	ck_assert_msg(got == want, "%d of %d completions", got, want);
}

void st_cq_empty(struct st_cq *c)
{
	struct iwarp_wc wc;
	int n = iwarp_poll_cq(c->cq, 1, &wc);

	ck_assert_msg(n == 0, "unexpected completion wr_id %llu status %s",
		      (unsigned long long)wc.wr_id,
		      iwarp_wc_status_str(wc.status));
}

void st_wc_check(const struct iwarp_wc *wc, uint64_t wr_id,
		 enum iwarp_wc_status status, enum iwarp_wc_opcode opcode,
		 uint32_t byte_len, unsigned int flags)
{
	ck_assert_msg(wc->wr_id == wr_id, "wr_id %llu, wanted %llu",
		      (unsigned long long)wc->wr_id, (unsigned long long)wr_id);
	ck_assert_msg(wc->status == status, "wr %llu status %s, wanted %s",
		      (unsigned long long)wr_id,
		      iwarp_wc_status_str(wc->status),
		      iwarp_wc_status_str(status));
	ck_assert_int_eq(wc->opcode, opcode);
	if (status == IWARP_WC_SUCCESS) {
		ck_assert_uint_eq(wc->byte_len, byte_len);
		ck_assert_uint_eq(wc->wc_flags, flags);
	}
}

bool st_async_wait(struct iwarp_context *ctx, struct iwarp_async_event *ev,
		   int ms)
{
	if (!fd_ready(iwarp_async_fd(ctx), ms))
		return false;
	ck_assert_int_eq(iwarp_get_async_event(ctx, ev), 0);
	iwarp_ack_async_event(ev);
	return true;
}

void st_buf_reg(struct st_buf *b, struct iwarp_pd *pd, size_t len, int access)
{
	b->len = len;
	b->p = malloc(len ? len : 1);
	ck_assert_ptr_nonnull(b->p);
	memset(b->p, ST_GUARD, len);
	b->mr = iwarp_reg_mr(pd, b->p, len, access);
	ck_assert_ptr_nonnull(b->mr);
}

void st_buf_free(struct st_buf *b)
{
	if (b->mr)
		ck_assert_int_eq(iwarp_dereg_mr(b->mr), 0);
	free(b->p);
	memset(b, 0, sizeof(*b));
}

void st_check_fill(const uint8_t *p, size_t len, uint8_t v)
{
	size_t i;

	for (i = 0; i < len; i++)
		ck_assert_msg(p[i] == v, "byte %zu is 0x%02x, wanted 0x%02x", i,
			      p[i], v);
}

/* One receive WR of [addr, addr+len) in |mr| (no SGE without an MR). */
static void recv_wr_fill(struct iwarp_recv_wr *wr, struct iwarp_sge *sge,
			 uint64_t wr_id, struct iwarp_mr *mr, void *addr,
			 uint32_t len)
{
	sge->addr = (uintptr_t)addr;
	sge->length = len;
	sge->lkey = mr ? mr->lkey : 0;
	memset(wr, 0, sizeof(*wr));
	wr->wr_id = wr_id;
	wr->sg_list = sge;
	wr->num_sge = mr ? 1 : 0;
}

int st_post_recv(struct iwarp_qp *qp, uint64_t wr_id, struct iwarp_mr *mr,
		 void *addr, uint32_t len)
{
	struct iwarp_recv_wr wr, *bad;
	struct iwarp_sge sge;

	recv_wr_fill(&wr, &sge, wr_id, mr, addr, len);
	return iwarp_post_recv(qp, &wr, &bad);
}

int st_post_srq_recv(struct iwarp_srq *srq, uint64_t wr_id, struct iwarp_mr *mr,
		     void *addr, uint32_t len)
{
	struct iwarp_recv_wr wr, *bad;
	struct iwarp_sge sge;

	recv_wr_fill(&wr, &sge, wr_id, mr, addr, len);
	return iwarp_post_srq_recv(srq, &wr, &bad);
}

int st_post_send(struct iwarp_qp *qp, uint64_t wr_id, enum iwarp_wr_opcode op,
		 unsigned int flags, struct iwarp_mr *mr, void *addr,
		 uint32_t len, uint64_t raddr, uint32_t rkey, uint32_t inv_rkey)
{
	struct iwarp_send_wr wr, *bad;
	struct iwarp_sge sge;

	sge.addr = (uintptr_t)addr;
	sge.length = len;
	sge.lkey = mr ? mr->lkey : 0;
	memset(&wr, 0, sizeof(wr));
	wr.wr_id = wr_id;
	wr.sg_list = &sge;
	/* a Read sink is always one SGE (RFC 5040 §4.4) */
	wr.num_sge = len || op == IWARP_WR_RDMA_READ ? 1 : 0;
	wr.opcode = op;
	wr.send_flags = flags;
	wr.invalidate_rkey = inv_rkey;
	wr.wr.rdma.remote_addr = raddr;
	wr.wr.rdma.rkey = rkey;
	return iwarp_post_send(qp, &wr, &bad);
}

void st_wait_mem(long base)
{
	/* every object was destroyed and every context closed (its engine
	 * thread joined): nothing may remain */
	ck_assert_msg(iw_mem_outstanding() == base, "%ld library blocks leaked",
		      iw_mem_outstanding() - base);
}

int st_run_suite(Suite *s)
{
	struct iwarp_context *ctx = iwarp_open_context(NULL);

	if (!ctx && (errno == ENOSYS || errno == EPERM)) {
		fprintf(stderr, "no io_uring here (%s): skipped\n",
			strerror(errno));
		(void)s; /* never run */
		return 77;
	}
	if (ctx)
		iwarp_close_context(ctx);
	return iw_test_run_suite(s);
}
