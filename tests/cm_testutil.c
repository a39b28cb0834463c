/*
 * tests/cm_testutil.c: loopback CM scaffolding shared by the suites that
 * connect real ids (see cm_testutil.h).
 */
#include "config.h"

#include <check.h>
#include <netinet/in.h>
#include <poll.h>
#include <string.h>

#include "cm_testutil.h"

void cmt_side_open(struct cmt_side *s, const struct iwarp_context_attr *a,
		   int cq_depth)
{
	memset(s, 0, sizeof(*s));
	s->ctx = iwarp_open_context(a);
	ck_assert_ptr_nonnull(s->ctx);
	s->ch = iwarp_cm_create_event_channel();
	ck_assert_ptr_nonnull(s->ch);
	s->pd = iwarp_alloc_pd(s->ctx);
	ck_assert_ptr_nonnull(s->pd);
	s->cq = iwarp_create_cq(s->ctx, cq_depth, NULL, NULL, 0);
	ck_assert_ptr_nonnull(s->cq);
}

void cmt_side_close(struct cmt_side *s)
{
	ck_assert_int_eq(iwarp_destroy_cq(s->cq), 0);
	ck_assert_int_eq(iwarp_dealloc_pd(s->pd), 0);
	if (s->ch)
		iwarp_cm_destroy_event_channel(s->ch);
	ck_assert_int_eq(iwarp_close_context(s->ctx), 0);
}

bool cmt_ch_ready(struct iwarp_event_channel *ch, int ms)
{
	struct pollfd p = {.fd = ch->fd, .events = POLLIN};

	return poll(&p, 1, ms) == 1;
}

struct iwarp_cm_event *cmt_expect_ev(struct iwarp_event_channel *ch,
				     enum iwarp_cm_event_type type, int wait_ms)
{
	struct iwarp_cm_event *ev;

	ck_assert_msg(cmt_ch_ready(ch, wait_ms), "no event, wanted %s",
		      iwarp_cm_event_str(type));
	ck_assert_int_eq(iwarp_cm_get_event(ch, &ev), 0);
	ck_assert_msg(ev->event == type, "got %s (status %d), wanted %s",
		      iwarp_cm_event_str(ev->event), ev->status,
		      iwarp_cm_event_str(type));
	return ev;
}

uint16_t cmt_sa_port(const struct sockaddr_storage *ss)
{
	if (ss->ss_family == AF_INET6)
		return ntohs(((const struct sockaddr_in6 *)ss)->sin6_port);
	return ntohs(((const struct sockaddr_in *)ss)->sin_port);
}

void cmt_qp_attr(const struct cmt_side *s, struct iwarp_qp_init_attr *qa,
		 uint32_t depth)
{
	memset(qa, 0, sizeof(*qa));
	qa->send_cq = s->cq;
	qa->recv_cq = s->cq;
	qa->qp_type = IWARP_QPT_RC;
	qa->cap.max_send_wr = depth;
	qa->cap.max_recv_wr = depth;
	qa->cap.max_send_sge = 1;
	qa->cap.max_recv_sge = 1;
}

struct iwarp_cm_id *cmt_listen(struct cmt_side *s, int backlog, uint16_t *port)
{
	struct sockaddr_storage ss;
	struct iwarp_cm_id *l;

	ck_assert_int_eq(
		iwarp_cm_create_id(s->ch, s->ctx, &l, NULL, IWARP_PS_TCP), 0);
	ck_assert_int_eq(iwarp_cm_getaddr("127.0.0.1", 0, &ss), 0);
	ck_assert_int_eq(iwarp_cm_bind_addr(l, (struct sockaddr *)&ss), 0);
	ck_assert_int_eq(iwarp_cm_listen(l, backlog), 0);
	*port = cmt_sa_port(&l->src_addr);
	ck_assert_uint_ne(*port, 0);
	return l;
}

struct iwarp_cm_id *cmt_resolving(struct cmt_side *s, uint16_t port)
{
	struct sockaddr_storage ss;
	struct iwarp_cm_id *c;

	ck_assert_int_eq(
		iwarp_cm_create_id(s->ch, s->ctx, &c, NULL, IWARP_PS_TCP), 0);
	ck_assert_int_eq(iwarp_cm_getaddr("127.0.0.1", port, &ss), 0);
	ck_assert_int_eq(
		iwarp_cm_resolve_addr(c, NULL, (struct sockaddr *)&ss, 2000),
		0);
	return c;
}

struct iwarp_cm_id *cmt_resolved(struct cmt_side *s, uint16_t port, int wait_ms)
{
	struct iwarp_cm_id *c = cmt_resolving(s, port);

	ck_assert_int_eq(iwarp_cm_ack_event(cmt_expect_ev(
				 s->ch, IWARP_CM_EVENT_ADDR_RESOLVED, wait_ms)),
			 0);
	ck_assert_int_eq(iwarp_cm_resolve_route(c, 2000), 0);
	ck_assert_int_eq(
		iwarp_cm_ack_event(cmt_expect_ev(
			s->ch, IWARP_CM_EVENT_ROUTE_RESOLVED, wait_ms)),
		0);
	return c;
}

struct iwarp_cm_id *cmt_client(struct cmt_side *s, uint16_t port,
			       uint32_t depth, int wait_ms)
{
	struct iwarp_cm_id *c = cmt_resolved(s, port, wait_ms);
	struct iwarp_qp_init_attr qa;

	cmt_qp_attr(s, &qa, depth);
	ck_assert_int_eq(iwarp_cm_create_qp(c, s->pd, &qa), 0);
	return c;
}

enum iwarp_qp_state cmt_qp_state(struct iwarp_qp *qp)
{
	struct iwarp_qp_attr attr;
	struct iwarp_qp_init_attr init;

	ck_assert_int_eq(iwarp_query_qp(qp, &attr, IWARP_QP_STATE, &init), 0);
	return attr.qp_state;
}
