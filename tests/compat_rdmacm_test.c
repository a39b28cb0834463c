/*
 * tests/compat_rdmacm_test.c: the compat librdmacm.so.1 as an application
 * sees it (rdma_cm(7) conventions), over loopback TCP.
 *
 * Exit 77 when no device opens (no io_uring on this kernel).
 */
#include <arpa/inet.h>
#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <rdma/rdma_cma.h>
#include <rdma/rsocket.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#define WAIT_MS 30000 /* bound of one event wait */

/* The next event of |ch|, waiting at most WAIT_MS; NULL on timeout. */
static struct rdma_cm_event *next_event(struct rdma_event_channel *ch)
{
	struct pollfd p = {.fd = ch->fd, .events = POLLIN};
	struct rdma_cm_event *ev = NULL;

	ck_assert_int_eq(poll(&p, 1, WAIT_MS), 1);
	ck_assert_int_eq(rdma_get_cm_event(ch, &ev), 0);
	return ev;
}

static struct rdma_cm_event *expect_event(struct rdma_event_channel *ch,
					  enum rdma_cm_event_type type)
{
	struct rdma_cm_event *ev = next_event(ch);

	ck_assert_msg(ev->event == type, "got %s, want %s",
		      rdma_event_str(ev->event), rdma_event_str(type));
	return ev;
}

static struct sockaddr_in loopback(uint16_t port)
{
	struct sockaddr_in sin;

	memset(&sin, 0, sizeof(sin));
	sin.sin_family = AF_INET;
	sin.sin_port = htons(port);
	sin.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	return sin;
}

/* A listener on 127.0.0.1 with a kernel-chosen port. */
static struct rdma_cm_id *listener(struct rdma_event_channel *ch, void *ctx,
				   uint16_t *port)
{
	struct sockaddr_in sin = loopback(0);
	struct rdma_cm_id *id;

	ck_assert_int_eq(rdma_create_id(ch, &id, ctx, RDMA_PS_TCP), 0);
	ck_assert_int_eq(rdma_bind_addr(id, (struct sockaddr *)&sin), 0);
	/* port 0: the port is known after the bind already (qperf reads it) */
	*port = ntohs(rdma_get_src_port(id));
	ck_assert_uint_ne(*port, 0);
	ck_assert_int_eq(rdma_listen(id, 8), 0);
	ck_assert_uint_eq(ntohs(rdma_get_src_port(id)), *port);
	return id;
}

static struct ibv_qp_init_attr qp_attr(void)
{
	struct ibv_qp_init_attr a;

	memset(&a, 0, sizeof(a));
	a.qp_type = IBV_QPT_RC;
	a.cap.max_send_wr = a.cap.max_recv_wr = 8;
	a.cap.max_send_sge = a.cap.max_recv_sge = 1;
	return a;
}

/* Client up to ROUTE_RESOLVED with a QP (CQs made by rdma_create_qp). */
static struct rdma_cm_id *client(struct rdma_event_channel *ch, uint16_t port)
{
	struct sockaddr_in dst = loopback(port);
	struct ibv_qp_init_attr a = qp_attr();
	struct rdma_cm_event *ev;
	struct rdma_cm_id *id;

	ck_assert_int_eq(rdma_create_id(ch, &id, NULL, RDMA_PS_TCP), 0);
	ck_assert_int_eq(
		rdma_resolve_addr(id, NULL, (struct sockaddr *)&dst, 2000), 0);
	ev = expect_event(ch, RDMA_CM_EVENT_ADDR_RESOLVED);
	ck_assert_ptr_eq(ev->id, id);
	ck_assert_int_eq(ev->status, 0);
	ck_assert_int_eq(rdma_ack_cm_event(ev), 0);
	ck_assert_ptr_nonnull(id->verbs);
	ck_assert_uint_eq(rdma_get_dst_port(id), htons(port));
	ck_assert_int_eq(id->route.addr.src_addr.sa_family, AF_INET);
	ck_assert_int_eq(rdma_resolve_route(id, 2000), 0);
	ev = expect_event(ch, RDMA_CM_EVENT_ROUTE_RESOLVED);
	ck_assert_int_eq(rdma_ack_cm_event(ev), 0);
	ck_assert_int_eq(rdma_create_qp(id, NULL, &a), 0);
	ck_assert_ptr_nonnull(id->qp);
	ck_assert_ptr_nonnull(id->pd);
	ck_assert_ptr_nonnull(id->send_cq);
	ck_assert_ptr_nonnull(id->recv_cq);
	ck_assert_uint_ge(a.cap.max_send_wr, 8);
	return id;
}

START_TEST(t_nonblocking_channel)
{
	struct rdma_event_channel *ch = rdma_create_event_channel();
	struct rdma_cm_event *ev = (void *)1;
	struct rdma_cm_id *id;
	struct sockaddr_in dst = loopback(7);
	int fl;

	ck_assert_ptr_nonnull(ch);
	fl = fcntl(ch->fd, F_GETFL);
	ck_assert_int_eq(fcntl(ch->fd, F_SETFL, fl | O_NONBLOCK), 0);
	errno = 0;
	ck_assert_int_eq(rdma_get_cm_event(ch, &ev), -1);
	ck_assert_int_eq(errno, EAGAIN);
	/* an event makes the fd readable and get_cm_event returns it */
	ck_assert_int_eq(rdma_create_id(ch, &id, (void *)0x1234, RDMA_PS_TCP),
			 0);
	ck_assert_ptr_eq(id->context, (void *)0x1234);
	ck_assert_ptr_eq(id->channel, ch);
	ck_assert_int_eq(id->ps, RDMA_PS_TCP);
	ck_assert_int_eq(
		rdma_resolve_addr(id, NULL, (struct sockaddr *)&dst, 1000), 0);
	ev = expect_event(ch, RDMA_CM_EVENT_ADDR_RESOLVED);
	ck_assert_ptr_eq(ev->id, id);
	ck_assert_ptr_null(ev->listen_id);
	ck_assert_int_eq(rdma_ack_cm_event(ev), 0);
	errno = 0;
	ck_assert_int_eq(rdma_get_cm_event(ch, &ev), -1);
	ck_assert_int_eq(errno, EAGAIN);
	ck_assert_int_eq(rdma_destroy_id(id), 0);
	rdma_destroy_event_channel(ch);
}
END_TEST

START_TEST(t_connect_private_data_and_send)
{
	struct rdma_event_channel *sch = rdma_create_event_channel();
	struct rdma_event_channel *cch = rdma_create_event_channel();
	struct rdma_conn_param cp, sp;
	struct rdma_cm_id *lid, *cid, *child;
	struct rdma_cm_event *ev;
	struct ibv_qp_init_attr a = qp_attr();
	struct ibv_sge sge;
	struct ibv_recv_wr rwr, *bad_rwr;
	struct ibv_send_wr swr, *bad_swr;
	struct ibv_wc wc;
	struct ibv_mr *smr, *rmr;
	char sbuf[64] = "ping over the compat librdmacm", rbuf[64];
	uint16_t port;
	int n, i;

	ck_assert_ptr_nonnull(sch);
	ck_assert_ptr_nonnull(cch);
	lid = listener(sch, (void *)0x5150, &port);
	cid = client(cch, port);
	memset(&cp, 0, sizeof(cp));
	cp.private_data = "hello";
	cp.private_data_len = 5;
	cp.responder_resources = 4;
	cp.initiator_depth = 4;
	ck_assert_int_eq(rdma_connect(cid, &cp), 0);

	ev = expect_event(sch, RDMA_CM_EVENT_CONNECT_REQUEST);
	ck_assert_ptr_eq(ev->listen_id, lid);
	child = ev->id;
	ck_assert_ptr_nonnull(child);
	ck_assert_ptr_ne(child, lid);
	ck_assert_ptr_eq(child->context, (void *)0x5150);
	ck_assert_ptr_eq(child->verbs, lid->verbs);
	ck_assert_ptr_eq(child->channel, sch);
	ck_assert_uint_eq(ev->param.conn.private_data_len, 5);
	ck_assert_mem_eq(ev->param.conn.private_data, "hello", 5);
	ck_assert_uint_eq(ev->param.conn.responder_resources,
			  4); /* the peer's ORD */
	ck_assert_uint_eq(ev->param.conn.initiator_depth,
			  4); /* the peer's IRD */
	ck_assert_uint_eq(rdma_get_src_port(child), htons(port));
	ck_assert_int_eq(rdma_ack_cm_event(ev), 0);

	ck_assert_int_eq(rdma_create_qp(child, NULL, &a), 0);
	rmr = ibv_reg_mr(child->pd, rbuf, sizeof(rbuf), IBV_ACCESS_LOCAL_WRITE);
	ck_assert_ptr_nonnull(rmr);
	memset(rbuf, 0, sizeof(rbuf));
	sge.addr = (uintptr_t)rbuf;
	sge.length = sizeof(rbuf);
	sge.lkey = rmr->lkey;
	memset(&rwr, 0, sizeof(rwr));
	rwr.wr_id = 77;
	rwr.sg_list = &sge;
	rwr.num_sge = 1;
	ck_assert_int_eq(ibv_post_recv(child->qp, &rwr, &bad_rwr), 0);
	memset(&sp, 0, sizeof(sp));
	sp.private_data = "world!";
	sp.private_data_len = 6;
	sp.responder_resources = 4;
	sp.initiator_depth = 4;
	ck_assert_int_eq(rdma_accept(child, &sp), 0);

	ev = expect_event(cch, RDMA_CM_EVENT_ESTABLISHED);
	ck_assert_ptr_eq(ev->id, cid);
	ck_assert_int_eq(ev->status, 0);
	ck_assert_uint_eq(ev->param.conn.private_data_len, 6);
	ck_assert_mem_eq(ev->param.conn.private_data, "world!", 6);
	/* the client's port is known once the TCP connection is up */
	ck_assert_uint_eq(rdma_get_dst_port(child), rdma_get_src_port(cid));
	ck_assert_int_eq(rdma_ack_cm_event(ev), 0);
	ev = expect_event(sch, RDMA_CM_EVENT_ESTABLISHED);
	ck_assert_ptr_eq(ev->id, child);
	ck_assert_int_eq(rdma_ack_cm_event(ev), 0);

	/* the application's own ibv_post_send on the QP of rdma_create_qp */
	smr = ibv_reg_mr(cid->pd, sbuf, sizeof(sbuf), 0);
	ck_assert_ptr_nonnull(smr);
	sge.addr = (uintptr_t)sbuf;
	sge.length = (uint32_t)strlen(sbuf) + 1;
	sge.lkey = smr->lkey;
	memset(&swr, 0, sizeof(swr));
	swr.wr_id = 88;
	swr.sg_list = &sge;
	swr.num_sge = 1;
	swr.opcode = IBV_WR_SEND;
	swr.send_flags = IBV_SEND_SIGNALED;
	ck_assert_int_eq(ibv_post_send(cid->qp, &swr, &bad_swr), 0);
	for (i = 0, n = 0; i < WAIT_MS && n == 0; i++) {
		n = ibv_poll_cq(child->recv_cq, 1, &wc);
		if (n == 0)
			usleep(1000);
	}
	ck_assert_int_eq(n, 1);
	ck_assert_int_eq(wc.status, IBV_WC_SUCCESS);
	ck_assert_uint_eq(wc.wr_id, 77);
	ck_assert_uint_eq(wc.byte_len, strlen(sbuf) + 1);
	ck_assert_str_eq(rbuf, sbuf);
	for (i = 0, n = 0; i < WAIT_MS && n == 0; i++) {
		n = ibv_poll_cq(cid->send_cq, 1, &wc);
		if (n == 0)
			usleep(1000);
	}
	ck_assert_int_eq(n, 1);
	ck_assert_uint_eq(wc.wr_id, 88);
	ck_assert_int_eq(wc.status, IBV_WC_SUCCESS);

	ck_assert_int_eq(rdma_disconnect(cid), 0);
	ev = expect_event(cch, RDMA_CM_EVENT_DISCONNECTED);
	ck_assert_int_eq(rdma_ack_cm_event(ev), 0);
	ev = expect_event(sch, RDMA_CM_EVENT_DISCONNECTED);
	ck_assert_ptr_eq(ev->id, child);
	ck_assert_int_eq(rdma_ack_cm_event(ev), 0);

	ck_assert_int_eq(ibv_dereg_mr(smr), 0);
	ck_assert_int_eq(ibv_dereg_mr(rmr), 0);
	rdma_destroy_qp(cid);
	ck_assert_ptr_null(cid->qp);
	ck_assert_int_eq(rdma_destroy_id(cid), 0);
	/* the other order: the id first, then its QP */
	{
		struct ibv_qp *qp = child->qp;

		ck_assert_int_eq(rdma_destroy_id(child), 0);
		ck_assert_int_eq(ibv_destroy_qp(qp), 0);
	}
	ck_assert_int_eq(rdma_destroy_id(lid), 0);
	rdma_destroy_event_channel(cch);
	rdma_destroy_event_channel(sch);
}
END_TEST

START_TEST(t_reject_private_data)
{
	struct rdma_event_channel *sch = rdma_create_event_channel();
	struct rdma_event_channel *cch = rdma_create_event_channel();
	struct rdma_cm_id *lid, *cid, *child;
	struct rdma_cm_event *ev;
	uint16_t port;

	lid = listener(sch, NULL, &port);
	cid = client(cch, port);
	ck_assert_int_eq(rdma_connect(cid, NULL), 0);
	ev = expect_event(sch, RDMA_CM_EVENT_CONNECT_REQUEST);
	child = ev->id;
	ck_assert_int_eq(rdma_ack_cm_event(ev), 0);
	ck_assert_int_eq(rdma_reject(child, "busy", 4), 0);
	ev = expect_event(cch, RDMA_CM_EVENT_REJECTED);
	ck_assert_int_eq(ev->status, -ECONNREFUSED);
	ck_assert_uint_eq(ev->param.conn.private_data_len, 4);
	ck_assert_mem_eq(ev->param.conn.private_data, "busy", 4);
	ck_assert_int_eq(rdma_ack_cm_event(ev), 0);
	ck_assert_int_eq(rdma_destroy_id(child), 0);
	rdma_destroy_qp(cid);
	ck_assert_int_eq(rdma_destroy_id(cid), 0);
	ck_assert_int_eq(rdma_destroy_id(lid), 0);
	rdma_destroy_event_channel(cch);
	rdma_destroy_event_channel(sch);
}
END_TEST

/* A port bound by a socket that does not listen: connects are refused. */
START_TEST(t_refused_is_rejected)
{
	struct rdma_event_channel *ch = rdma_create_event_channel();
	struct sockaddr_in sin = loopback(0);
	socklen_t len = sizeof(sin);
	struct rdma_cm_event *ev;
	struct rdma_cm_id *cid;
	int s = socket(AF_INET, SOCK_STREAM, 0);

	ck_assert_int_ge(s, 0);
	ck_assert_int_eq(bind(s, (struct sockaddr *)&sin, sizeof(sin)), 0);
	ck_assert_int_eq(getsockname(s, (struct sockaddr *)&sin, &len), 0);
	cid = client(ch, ntohs(sin.sin_port));
	ck_assert_int_eq(rdma_connect(cid, NULL), 0);
	ev = expect_event(ch, RDMA_CM_EVENT_REJECTED);
	ck_assert_int_eq(ev->status, -ECONNREFUSED);
	ck_assert_int_eq(rdma_ack_cm_event(ev), 0);
	rdma_destroy_qp(cid);
	ck_assert_int_eq(rdma_destroy_id(cid), 0);
	rdma_destroy_event_channel(ch);
	close(s);
}
END_TEST

START_TEST(t_synchronous_id)
{
	struct sockaddr_in dst = loopback(9);
	struct rdma_cm_id *id;

	/* channel NULL: the calls wait for their own event */
	ck_assert_int_eq(rdma_create_id(NULL, &id, NULL, RDMA_PS_TCP), 0);
	ck_assert_ptr_nonnull(id->channel);
	ck_assert_int_eq(
		rdma_resolve_addr(id, NULL, (struct sockaddr *)&dst, 1000), 0);
	ck_assert_ptr_nonnull(id->event);
	ck_assert_int_eq(id->event->event, RDMA_CM_EVENT_ADDR_RESOLVED);
	ck_assert_int_eq(rdma_resolve_route(id, 1000), 0);
	ck_assert_int_eq(id->event->event, RDMA_CM_EVENT_ROUTE_RESOLVED);
	ck_assert_int_eq(rdma_destroy_id(id), 0);
}
END_TEST

/*
 * rdma_migrate_id(3): queued events follow the id to the new channel in
 * order and leave the old one, which may be destroyed at once; NULL makes
 * the id synchronous (calls wait for their event, kept in id->event) and a
 * channel makes it asynchronous again.
 */
START_TEST(t_migrate_id)
{
	struct rdma_event_channel *a = rdma_create_event_channel();
	struct rdma_event_channel *b = rdma_create_event_channel();
	struct sockaddr_in dst = loopback(9);
	struct rdma_cm_event *ev;
	struct rdma_cm_id *id;
	struct pollfd p;
	int fl;

	ck_assert_ptr_nonnull(a);
	ck_assert_ptr_nonnull(b);
	ck_assert_int_eq(rdma_create_id(a, &id, NULL, RDMA_PS_TCP), 0);
	ck_assert_int_eq(
		rdma_resolve_addr(id, NULL, (struct sockaddr *)&dst, 1000), 0);
	ck_assert_int_eq(rdma_resolve_route(id, 1000), 0);
	p.fd = a->fd;
	p.events = POLLIN;
	ck_assert_int_eq(poll(&p, 1, WAIT_MS), 1); /* queued on |a| */
	ck_assert_int_eq(rdma_migrate_id(id, b), 0);
	ck_assert_ptr_eq(id->channel, b);
	fl = fcntl(a->fd, F_GETFL);
	ck_assert_int_eq(fcntl(a->fd, F_SETFL, fl | O_NONBLOCK), 0);
	ck_assert_int_eq(rdma_get_cm_event(a, &ev), -1); /* gone from |a| */
	ck_assert_int_eq(errno, EAGAIN);
	rdma_destroy_event_channel(a);
	ev = expect_event(b, RDMA_CM_EVENT_ADDR_RESOLVED);
	ck_assert_ptr_eq(ev->id, id);
	ck_assert_int_eq(rdma_ack_cm_event(ev), 0);
	ev = expect_event(b, RDMA_CM_EVENT_ROUTE_RESOLVED);
	ck_assert_ptr_eq(ev->id, id);
	ck_assert_int_eq(rdma_ack_cm_event(ev), 0);

	/* synchronous mode, and back */
	ck_assert_int_eq(rdma_migrate_id(id, NULL), 0);
	ck_assert_ptr_nonnull(id->channel);
	ck_assert_ptr_ne(id->channel, b);
	ck_assert_int_eq(rdma_migrate_id(id, NULL), 0); /* already */
	ck_assert_int_eq(rdma_destroy_id(id), 0);
	ck_assert_int_eq(rdma_create_id(NULL, &id, NULL, RDMA_PS_TCP), 0);
	ck_assert_int_eq(
		rdma_resolve_addr(id, NULL, (struct sockaddr *)&dst, 1000), 0);
	ck_assert_ptr_nonnull(id->event);	     /* kept, not acked */
	ck_assert_int_eq(rdma_migrate_id(id, b), 0); /* acks it, no wait */
	ck_assert_ptr_null(id->event);
	ck_assert_ptr_eq(id->channel, b);
	ck_assert_int_eq(rdma_resolve_route(id, 1000), 0);
	ck_assert_ptr_null(id->event); /* asynchronous: the event is queued */
	ev = expect_event(b, RDMA_CM_EVENT_ROUTE_RESOLVED);
	ck_assert_ptr_eq(ev->id, id);
	ck_assert_int_eq(rdma_ack_cm_event(ev), 0);
	ck_assert_int_eq(rdma_migrate_id(NULL, b), -1);
	ck_assert_int_eq(errno, EINVAL);
	ck_assert_int_eq(rdma_destroy_id(id), 0);
	rdma_destroy_event_channel(b);
}
END_TEST

START_TEST(t_getaddrinfo)
{
	struct rdma_addrinfo hints, *res;
	const struct sockaddr_in *sin;

	memset(&hints, 0, sizeof(hints));
	hints.ai_flags = RAI_PASSIVE;
	hints.ai_port_space = RDMA_PS_TCP;
	hints.ai_family = AF_INET;
	ck_assert_int_eq(rdma_getaddrinfo(NULL, "7174", &hints, &res), 0);
	ck_assert_ptr_nonnull(res->ai_src_addr);
	ck_assert_ptr_null(res->ai_dst_addr);
	sin = (const struct sockaddr_in *)(const void *)res->ai_src_addr;
	ck_assert_uint_eq(ntohs(sin->sin_port), 7174);
	ck_assert_int_eq(res->ai_port_space, RDMA_PS_TCP);
	ck_assert_int_eq(res->ai_qp_type, IBV_QPT_RC);
	rdma_freeaddrinfo(res);

	ck_assert_int_eq(rdma_getaddrinfo("127.0.0.1", NULL, NULL, &res), 0);
	ck_assert_ptr_nonnull(res->ai_dst_addr);
	ck_assert_int_eq(res->ai_family, AF_INET);
	sin = (const struct sockaddr_in *)(const void *)res->ai_dst_addr;
	ck_assert_uint_eq(ntohl(sin->sin_addr.s_addr), INADDR_LOOPBACK);
	rdma_freeaddrinfo(res);

	/* no node, no service: the addresses of the hints (libfabric) */
	{
		struct sockaddr_in dst = loopback(7175);

		memset(&hints, 0, sizeof(hints));
		hints.ai_port_space = RDMA_PS_TCP;
		errno = 0;
		ck_assert_int_eq(rdma_getaddrinfo(NULL, NULL, &hints, &res),
				 -1);
		ck_assert_int_eq(errno, EINVAL);
		hints.ai_dst_addr = (struct sockaddr *)&dst;
		hints.ai_dst_len = sizeof(dst);
		ck_assert_int_eq(rdma_getaddrinfo(NULL, NULL, &hints, &res), 0);
		ck_assert_int_eq(res->ai_family, AF_INET);
		ck_assert_ptr_null(res->ai_src_addr);
		ck_assert_uint_eq(res->ai_dst_len, sizeof(dst));
		ck_assert_ptr_ne(res->ai_dst_addr, hints.ai_dst_addr);
		ck_assert(!memcmp(res->ai_dst_addr, &dst, sizeof(dst)));
		ck_assert_ptr_null(res->ai_next);
		rdma_freeaddrinfo(res);
	}

	memset(&hints, 0, sizeof(hints));
	hints.ai_flags = RAI_NUMERICHOST;
	ck_assert_int_eq(rdma_getaddrinfo("not-a-number", "1", &hints, &res),
			 -1);
	hints.ai_flags = 0;
	hints.ai_port_space = RDMA_PS_UDP;
	errno = 0;
	ck_assert_int_eq(rdma_getaddrinfo("127.0.0.1", "1", &hints, &res), -1);
	ck_assert_int_eq(errno, EPROTONOSUPPORT);
}
END_TEST

START_TEST(t_unsupported_fail_cleanly)
{
	struct rdma_event_channel *ch = rdma_create_event_channel();
	struct sockaddr_in sin = loopback(0);
	struct rdma_cm_id *id;
	uint8_t tos = 0;
	int n = 0;
	struct ibv_context **devs;

	ck_assert_int_eq(rdma_create_id(ch, &id, NULL, RDMA_PS_UDP), -1);
	ck_assert_int_eq(errno, EPROTONOSUPPORT);
	ck_assert_int_eq(rdma_create_id(ch, &id, NULL, RDMA_PS_TCP), 0);
	ck_assert_int_eq(rdma_set_option(id, RDMA_OPTION_ID, RDMA_OPTION_ID_TOS,
					 &tos, 1),
			 0);
	ck_assert_int_eq(rdma_set_option(id, RDMA_OPTION_IB,
					 RDMA_OPTION_IB_PATH, &tos, 1),
			 -1);
	ck_assert_int_eq(errno, ENOSYS);
	ck_assert_int_eq(rdma_join_multicast(id, (struct sockaddr *)&sin, NULL),
			 -1);
	ck_assert_int_eq(errno, EOPNOTSUPP);
	ck_assert_int_eq(rdma_migrate_id(id, ch), 0); /* its own channel */
	ck_assert_int_eq(rsocket(AF_INET, SOCK_STREAM, 0), -1);
	ck_assert_int_eq(errno, ENOSYS);
	ck_assert_str_eq(rdma_event_str(RDMA_CM_EVENT_ESTABLISHED),
			 "RDMA_CM_EVENT_ESTABLISHED");
	ck_assert_str_eq(rdma_event_str((enum rdma_cm_event_type)99),
			 "UNKNOWN EVENT");
	devs = rdma_get_devices(&n);
	ck_assert_int_eq(n, 1);
	ck_assert_ptr_eq(devs[0], id->verbs);
	ck_assert_ptr_null(devs[1]);
	rdma_free_devices(devs);
	ck_assert_int_eq(rdma_destroy_id(id), 0);
	rdma_destroy_event_channel(ch);
}
END_TEST

static Suite *compat_rdmacm_suite(void)
{
	Suite *s = suite_create("compat_rdmacm");
	TCase *tc = tcase_create("api");

	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, t_nonblocking_channel);
	tcase_add_test(tc, t_connect_private_data_and_send);
	tcase_add_test(tc, t_reject_private_data);
	tcase_add_test(tc, t_refused_is_rejected);
	tcase_add_test(tc, t_synchronous_id);
	tcase_add_test(tc, t_getaddrinfo);
	tcase_add_test(tc, t_migrate_id);
	tcase_add_test(tc, t_unsupported_fail_cleanly);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	SRunner *sr;
	int failed, status = 0;
	pid_t pid;

	/* Probe in a child: the device (and its engine thread) must not be
	 * opened in the process that forks the tests. */
	pid = fork();
	if (pid == 0) {
		struct rdma_event_channel *ch = rdma_create_event_channel();

		if (!ch) {
			printf("SKIP: no device opens (%s)\n", strerror(errno));
			_exit(77);
		}
		_exit(0);
	}
	if (pid < 0 || waitpid(pid, &status, 0) != pid || !WIFEXITED(status))
		return 99;
	if (WEXITSTATUS(status) == 77)
		return 77;
	sr = srunner_create(compat_rdmacm_suite());
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? 1 : 0;
}
