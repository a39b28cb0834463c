/*
 * tests/compat_verbs_test.c: the compat libibverbs.so.1 seen as an ibverbs
 * program sees it (<infiniband/verbs.h>, its inline functions and macros):
 * the device and its attributes, the extended context, object lifecycles
 * and their errors, and a data test over two QPs connected by the native
 * connection manager on loopback and wrapped with iwc_qp_wrap(): Send,
 * RDMA Write and RDMA Read posted with ibv_post_send, completions through
 * a completion channel and ibv_poll_cq. Every wait is bounded (WAIT_MS).
 */
#include "config.h"

#include <arpa/inet.h>
#include <endian.h>
#include <errno.h>
#include <infiniband/verbs.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "compat/compat_priv.h"
#include "testutil.h"

#define WAIT_MS 30000 /* upper bound of any wait (a hang fails the test) */
#define BUF_LEN 4096

static struct ibv_context *open_dev(void)
{
	struct ibv_device **list;
	struct ibv_context *ctx;
	int n = -1;

	list = ibv_get_device_list(&n);
	ck_assert_ptr_nonnull(list);
	ck_assert_int_eq(n, 1);
	ctx = ibv_open_device(list[0]);
	ck_assert_ptr_nonnull(ctx);
	ibv_free_device_list(list);
	return ctx;
}

START_TEST(test_device)
{
	struct ibv_device **list, **again;
	int n = -1;

	list = ibv_get_device_list(&n);
	ck_assert_ptr_nonnull(list);
	ck_assert_int_eq(n, 1);
	ck_assert_ptr_nonnull(list[0]);
	ck_assert_ptr_null(list[1]);
	ck_assert_str_eq(ibv_get_device_name(list[0]), "iwarp0");
	ck_assert_int_eq(list[0]->node_type, IBV_NODE_RNIC);
	ck_assert_int_eq(list[0]->transport_type, IBV_TRANSPORT_IWARP);
	ck_assert_uint_ne(ibv_get_device_guid(list[0]), 0);
	ck_assert_int_eq(ibv_get_device_index(list[0]), 0);
	again = ibv_get_device_list(NULL);
	ck_assert_ptr_nonnull(again);
	ck_assert_uint_eq(ibv_get_device_guid(again[0]),
			  ibv_get_device_guid(list[0]));
	ibv_free_device_list(again);
	ibv_free_device_list(list);

	ck_assert_str_eq(ibv_node_type_str(IBV_NODE_RNIC), "iWARP NIC");
	ck_assert_str_eq(ibv_port_state_str(IBV_PORT_ACTIVE), "active");
	ck_assert_str_eq(ibv_wc_status_str(IBV_WC_SUCCESS), "success");
	ck_assert_str_eq(ibv_wc_status_str((enum ibv_wc_status)999), "unknown");
	ck_assert_str_eq(ibv_event_type_str(IBV_EVENT_COMM_EST),
			 "communication established");
	ck_assert_int_eq(ibv_fork_init(), 0);
	ck_assert_int_eq(ibv_is_fork_initialized(), IBV_FORK_UNNEEDED);
}
END_TEST

START_TEST(test_query)
{
	struct ibv_context *ctx = open_dev();
	struct ibv_device_attr_ex ax;
	struct ibv_device_attr da;
	struct ibv_port_attr pa;
	struct ibv_gid_entry ge;
	union ibv_gid gid;
	__be16 pkey;

	ck_assert_ptr_nonnull(verbs_get_ctx(ctx));
	ck_assert_ptr_nonnull(iwc_native_context(ctx));
	ck_assert_int_ge(ctx->async_fd, 0);
	ck_assert_int_eq(ctx->num_comp_vectors, 1);

	ck_assert_int_eq(ibv_query_device(ctx, &da), 0);
	ck_assert_int_eq(da.phys_port_cnt, 1);
	ck_assert_int_gt(da.max_qp, 0);
	ck_assert_int_gt(da.max_qp_wr, 0);
	ck_assert_int_gt(da.max_cqe, 0);
	ck_assert_int_ge(da.max_sge, 1);
	ck_assert_int_eq(da.max_pkeys, 1);
	ck_assert_uint_eq(da.node_guid, ibv_get_device_guid(ctx->device));
	/* the extended query answers the same */
	memset(&ax, 0xa5, sizeof(ax));
	ck_assert_int_eq(ibv_query_device_ex(ctx, NULL, &ax), 0);
	ck_assert_int_eq(memcmp(&ax.orig_attr, &da, sizeof(da)), 0);
	ck_assert_uint_eq(ax.comp_mask, 0);
	ck_assert_uint_eq(ax.phys_port_cnt_ex, 1);
	{
		struct ibv_query_device_ex_input in = {.comp_mask = 1};

		ck_assert_int_eq(ibv_query_device_ex(ctx, &in, &ax), EINVAL);
	}

	memset(&pa, 0xa5, sizeof(pa));
	ck_assert_int_eq(ibv_query_port(ctx, 1, &pa), 0);
	ck_assert_int_eq(pa.state, IBV_PORT_ACTIVE);
	ck_assert_int_eq(pa.link_layer, IBV_LINK_LAYER_ETHERNET);
	ck_assert_int_eq(pa.max_mtu, IBV_MTU_4096);
	ck_assert_int_eq(pa.active_mtu, IBV_MTU_1024);
	ck_assert_int_eq(pa.gid_tbl_len, 1);
	ck_assert_uint_eq(pa.port_cap_flags2, 0);
	ck_assert_int_eq(ibv_query_port(ctx, 2, &pa), EINVAL);
	ck_assert_int_eq(ibv_query_port(ctx, 0, &pa), EINVAL);

	ck_assert_int_eq(ibv_query_gid(ctx, 1, 0, &gid), 0);
	ck_assert_int_eq(ibv_query_gid(ctx, 1, 1, &gid), EINVAL);
	ck_assert_int_eq(ibv_query_gid_ex(ctx, 1, 0, &ge, 0), 0);
	ck_assert_int_eq(memcmp(&ge.gid, &gid, sizeof(gid)), 0);
	ck_assert_int_eq(ibv_query_gid_ex(ctx, 1, 1, &ge, 0), ENODATA);
	ck_assert_int_eq(ibv_query_pkey(ctx, 1, 0, &pkey), 0);
	ck_assert_uint_eq(be16toh(pkey), 0xffff);
	ck_assert_int_eq(ibv_query_pkey(ctx, 1, 1, &pkey), EINVAL);
	ck_assert_int_eq(ibv_get_pkey_index(ctx, 1, htobe16(0xffff)), 0);

	/* extended verbs we do not have: clean EOPNOTSUPP, no NULL op call */
	{
		struct ibv_cq_init_attr_ex cqx = {.cqe = 4};
		struct ibv_xrcd_init_attr xa = {0};
		struct ibv_td_init_attr ta = {0};

		errno = 0;
		ck_assert_ptr_null(ibv_create_cq_ex(ctx, &cqx));
		ck_assert_int_eq(errno, EOPNOTSUPP);
		errno = 0;
		ck_assert_ptr_null(ibv_open_xrcd(ctx, &xa));
		ck_assert_int_eq(errno, EOPNOTSUPP);
		errno = 0;
		ck_assert_ptr_null(ibv_alloc_td(ctx, &ta));
		ck_assert_int_eq(errno, EOPNOTSUPP);
	}
	ck_assert_int_eq(ibv_close_device(ctx), 0);
}
END_TEST

START_TEST(test_lifecycle)
{
	struct ibv_context *ctx = open_dev();
	struct ibv_comp_channel *ch;
	struct ibv_qp_init_attr qa;
	struct ibv_qp_attr attr;
	struct ibv_qp_init_attr got;
	struct ibv_pd *pd, *pd2;
	struct ibv_cq *cq;
	struct ibv_mr *mr;
	struct ibv_mw *mw;
	struct ibv_qp *qp;
	static char buf[BUF_LEN];

	pd = ibv_alloc_pd(ctx);
	ck_assert_ptr_nonnull(pd);
	ck_assert_ptr_eq(pd->context, ctx);
	ck_assert_ptr_nonnull(iwc_native_pd(pd));
	pd2 = ibv_alloc_pd(ctx);
	ck_assert_ptr_nonnull(pd2);

	mr = ibv_reg_mr(pd, buf, sizeof(buf),
			IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE |
				IBV_ACCESS_REMOTE_READ);
	ck_assert_ptr_nonnull(mr);
	ck_assert_ptr_eq(mr->pd, pd);
	ck_assert_ptr_eq(mr->addr, buf);
	ck_assert_uint_eq(mr->length, sizeof(buf));
	ck_assert_uint_ne(mr->lkey, 0);
	/* flags that change what a region is, other I/O addresses: refused */
	errno = 0;
	ck_assert_ptr_null(
		ibv_reg_mr(pd, buf, sizeof(buf), IBV_ACCESS_ZERO_BASED));
	ck_assert_int_eq(errno, EOPNOTSUPP);
	errno = 0;
	ck_assert_ptr_null(ibv_reg_mr_iova(pd, buf, sizeof(buf), 0x1000,
					   IBV_ACCESS_LOCAL_WRITE));
	ck_assert_int_eq(errno, EOPNOTSUPP);
	/* an optional flag is ignored */
	{
		struct ibv_mr *m2 = ibv_reg_mr(
			pd, buf, 64,
			IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_RELAXED_ORDERING);

		ck_assert_ptr_nonnull(m2);
		ck_assert_int_eq(ibv_dereg_mr(m2), 0);
	}
	/* the PD is busy while the MR uses it */
	ck_assert_int_eq(ibv_dealloc_pd(pd), EBUSY);

	mw = ibv_alloc_mw(pd, IBV_MW_TYPE_2);
	ck_assert_ptr_nonnull(mw);
	ck_assert_int_eq(mw->type, IBV_MW_TYPE_2);
	ck_assert_int_eq(ibv_dealloc_mw(mw), 0);

	ch = ibv_create_comp_channel(ctx);
	ck_assert_ptr_nonnull(ch);
	ck_assert_int_ge(ch->fd, 0);
	cq = ibv_create_cq(ctx, 64, (void *)0x1234, ch, 0);
	ck_assert_ptr_nonnull(cq);
	ck_assert_int_ge(cq->cqe, 64);
	ck_assert_ptr_eq(cq->cq_context, (void *)0x1234);
	errno = 0;
	ck_assert_ptr_null(
		ibv_create_cq(ctx, 64, NULL, NULL, 1)); /* no vector 1 */
	ck_assert_int_eq(errno, EINVAL);
	ck_assert_int_eq(ibv_destroy_comp_channel(ch), EBUSY);
	ck_assert_int_eq(ibv_resize_cq(cq, 128), 0);
	ck_assert_int_ge(cq->cqe, 128);
	ck_assert_int_eq(ibv_req_notify_cq(cq, 0), 0);
	{
		struct ibv_wc wc;

		ck_assert_int_eq(ibv_poll_cq(cq, 1, &wc), 0);
	}

	memset(&qa, 0, sizeof(qa));
	qa.send_cq = cq;
	qa.recv_cq = cq;
	qa.qp_type = IBV_QPT_UD;
	qa.cap.max_send_wr = 8;
	qa.cap.max_recv_wr = 8;
	qa.cap.max_send_sge = 1;
	qa.cap.max_recv_sge = 1;
	errno = 0;
	ck_assert_ptr_null(ibv_create_qp(pd, &qa));
	ck_assert_int_eq(errno, EOPNOTSUPP);
	qa.qp_type = IBV_QPT_RC;
	qa.qp_context = (void *)0x5678;
	qp = ibv_create_qp(pd, &qa);
	ck_assert_ptr_nonnull(qp);
	ck_assert_int_ge(qa.cap.max_send_wr, 8);
	ck_assert_ptr_eq(qp->qp_context, (void *)0x5678);
	ck_assert_ptr_eq(qp->pd, pd);
	ck_assert_int_eq(qp->qp_type, IBV_QPT_RC);
	ck_assert_int_eq(qp->state, IBV_QPS_RESET);
	ck_assert_ptr_nonnull(iwc_native_qp(qp));
	ck_assert_uint_eq(qp->qp_num, iwc_native_qp(qp)->qp_num);
	ck_assert_int_eq(
		ibv_query_qp(qp, &attr, IBV_QP_STATE | IBV_QP_CAP, &got), 0);
	ck_assert_int_eq(attr.qp_state, IBV_QPS_RESET);
	ck_assert_ptr_eq(got.send_cq, cq);
	ck_assert_int_eq(got.qp_type, IBV_QPT_RC);
	/* InfiniBand path attributes alone change nothing */
	memset(&attr, 0, sizeof(attr));
	attr.pkey_index = 0;
	attr.port_num = 1;
	ck_assert_int_eq(
		ibv_modify_qp(qp, &attr, IBV_QP_PKEY_INDEX | IBV_QP_PORT), 0);
	attr.qp_state = IBV_QPS_INIT;
	attr.qp_access_flags = IBV_ACCESS_REMOTE_WRITE;
	ck_assert_int_eq(ibv_modify_qp(qp, &attr,
				       IBV_QP_STATE | IBV_QP_PKEY_INDEX |
					       IBV_QP_PORT |
					       IBV_QP_ACCESS_FLAGS),
			 0);
	ck_assert_int_eq(qp->state, IBV_QPS_INIT);
	/* the CQ is busy while the QP uses it */
	ck_assert_int_eq(ibv_destroy_cq(cq), EBUSY);
	ck_assert_int_eq(ibv_destroy_qp(qp), 0);

	/* a foreign or NULL object is refused, never followed */
	errno = 0;
	ck_assert_ptr_null(iwc_native_pd(NULL));
	ck_assert_int_eq(errno, EINVAL);
	ck_assert_int_eq(ibv_dereg_mr(NULL), EINVAL);

	ck_assert_int_eq(ibv_destroy_cq(cq), 0);
	ck_assert_int_eq(ibv_destroy_comp_channel(ch), 0);
	ck_assert_int_eq(ibv_dereg_mr(mr), 0);
	ck_assert_int_eq(ibv_dealloc_pd(pd), 0);
	ck_assert_int_eq(ibv_dealloc_pd(pd2), 0);
	ck_assert_int_eq(ibv_close_device(ctx), 0);
}
END_TEST

START_TEST(test_srq)
{
	struct ibv_context *ctx = open_dev();
	struct ibv_srq_init_attr sa;
	struct ibv_srq_attr got;
	struct ibv_recv_wr wr, *bad = NULL;
	struct ibv_sge sge;
	struct ibv_srq *srq;
	struct ibv_pd *pd;
	struct ibv_mr *mr;
	static char buf[256];

	pd = ibv_alloc_pd(ctx);
	ck_assert_ptr_nonnull(pd);
	mr = ibv_reg_mr(pd, buf, sizeof(buf), IBV_ACCESS_LOCAL_WRITE);
	ck_assert_ptr_nonnull(mr);
	memset(&sa, 0, sizeof(sa));
	sa.srq_context = (void *)0x42;
	sa.attr.max_wr = 16;
	sa.attr.max_sge = 1;
	srq = ibv_create_srq(pd, &sa);
	ck_assert_ptr_nonnull(srq);
	ck_assert_ptr_eq(srq->srq_context, (void *)0x42);
	ck_assert_ptr_nonnull(iwc_native_srq(srq));
	ck_assert_int_eq(ibv_query_srq(srq, &got), 0);
	ck_assert_uint_ge(got.max_wr, 16);
	sge.addr = (uintptr_t)buf;
	sge.length = sizeof(buf);
	sge.lkey = mr->lkey;
	memset(&wr, 0, sizeof(wr));
	wr.wr_id = 7;
	wr.sg_list = &sge;
	wr.num_sge = 1;
	ck_assert_int_eq(ibv_post_srq_recv(srq, &wr, &bad), 0);
	/* more SGEs than the SRQ has: a positive errno and bad_wr */
	wr.num_sge = 1000;
	ck_assert_int_eq(ibv_post_srq_recv(srq, &wr, &bad), EINVAL);
	ck_assert_ptr_eq(bad, &wr);
	ck_assert_int_eq(ibv_destroy_srq(srq), 0);
	ck_assert_int_eq(ibv_dereg_mr(mr), 0);
	ck_assert_int_eq(ibv_dealloc_pd(pd), 0);
	ck_assert_int_eq(ibv_close_device(ctx), 0);
}
END_TEST

/* ---- data test: two QPs connected by the native CM ---- */

struct side {
	struct ibv_context *ctx;
	struct ibv_pd *pd;
	struct ibv_comp_channel *ch;
	struct ibv_cq *cq;
	struct ibv_mr *mr;
	struct ibv_qp *qp;
	struct iwarp_event_channel *cm_ch;
	struct iwarp_cm_id *id;
	char *buf;
};

static void side_open(struct side *s)
{
	memset(s, 0, sizeof(*s));
	s->ctx = open_dev();
	s->pd = ibv_alloc_pd(s->ctx);
	ck_assert_ptr_nonnull(s->pd);
	s->ch = ibv_create_comp_channel(s->ctx);
	ck_assert_ptr_nonnull(s->ch);
	s->cq = ibv_create_cq(s->ctx, 256, s, s->ch, 0);
	ck_assert_ptr_nonnull(s->cq);
	s->buf = calloc(1, BUF_LEN);
	ck_assert_ptr_nonnull(s->buf);
	s->mr = ibv_reg_mr(s->pd, s->buf, BUF_LEN,
			   IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE |
				   IBV_ACCESS_REMOTE_READ | IBV_ACCESS_MW_BIND);
	ck_assert_ptr_nonnull(s->mr);
	s->cm_ch = iwarp_cm_create_event_channel();
	ck_assert_ptr_nonnull(s->cm_ch);
}

static int destroy_cm_qp(void *arg)
{
	iwarp_cm_destroy_qp(arg);
	return 0;
}

static void side_qp(struct side *s)
{
	struct iwarp_qp_init_attr na;
	struct ibv_qp_init_attr qa;

	memset(&na, 0, sizeof(na));
	na.send_cq = iwc_native_cq(s->cq);
	na.recv_cq = na.send_cq;
	na.qp_type = IWARP_QPT_RC;
	na.cap.max_send_wr = 64;
	na.cap.max_recv_wr = 64;
	na.cap.max_send_sge = 2;
	na.cap.max_recv_sge = 2;
	ck_assert_int_eq(iwarp_cm_create_qp(s->id, iwc_native_pd(s->pd), &na),
			 0);
	memset(&qa, 0, sizeof(qa));
	qa.qp_context = s;
	qa.send_cq = s->cq;
	qa.recv_cq = s->cq;
	qa.qp_type = IBV_QPT_RC;
	qa.cap.max_send_wr = na.cap.max_send_wr;
	qa.cap.max_recv_wr = na.cap.max_recv_wr;
	qa.cap.max_send_sge = na.cap.max_send_sge;
	qa.cap.max_recv_sge = na.cap.max_recv_sge;
	s->qp = iwc_qp_wrap(s->pd, s->id->qp, &qa, destroy_cm_qp, s->id);
	ck_assert_ptr_nonnull(s->qp);
	ck_assert_ptr_eq(iwc_native_qp(s->qp), s->id->qp);
	ck_assert_uint_eq(s->qp->qp_num, s->id->qp->qp_num);
	ck_assert_ptr_eq(s->qp->qp_context, s);
}

static void side_close(struct side *s)
{
	ck_assert_int_eq(ibv_destroy_qp(s->qp), 0);
	ck_assert_ptr_null(s->id->qp);
	ck_assert_int_eq(iwarp_cm_destroy_id(s->id), 0);
	iwarp_cm_destroy_event_channel(s->cm_ch);
	ck_assert_int_eq(ibv_dereg_mr(s->mr), 0);
	ck_assert_int_eq(ibv_destroy_cq(s->cq), 0);
	ck_assert_int_eq(ibv_destroy_comp_channel(s->ch), 0);
	ck_assert_int_eq(ibv_dealloc_pd(s->pd), 0);
	ck_assert_int_eq(ibv_close_device(s->ctx), 0);
	free(s->buf);
}

static struct iwarp_cm_event *expect_cm(struct iwarp_event_channel *ch,
					enum iwarp_cm_event_type type)
{
	struct pollfd p = {.fd = ch->fd, .events = POLLIN};
	struct iwarp_cm_event *ev;

	ck_assert_msg(poll(&p, 1, WAIT_MS) == 1, "no CM event, wanted %s",
		      iwarp_cm_event_str(type));
	ck_assert_int_eq(iwarp_cm_get_event(ch, &ev), 0);
	ck_assert_msg(ev->event == type, "got %s (status %d), wanted %s",
		      iwarp_cm_event_str(ev->event), ev->status,
		      iwarp_cm_event_str(type));
	return ev;
}

/* The next completion of |s|: polled, else waited for through the
 * completion channel (armed, re-polled, then the fd, bounded). */
static void next_wc(struct side *s, struct ibv_wc *wc)
{
	for (int round = 0; round < 1000; round++) {
		struct pollfd p = {.fd = s->ch->fd, .events = POLLIN};
		struct ibv_cq *ev_cq;
		void *ev_ctx;
		int n = ibv_poll_cq(s->cq, 1, wc);

		ck_assert_int_ge(n, 0);
		if (n == 1)
			return;
		ck_assert_int_eq(ibv_req_notify_cq(s->cq, 0), 0);
		n = ibv_poll_cq(s->cq, 1, wc);
		ck_assert_int_ge(n, 0);
		if (n == 1)
			return;
		ck_assert_msg(poll(&p, 1, WAIT_MS) == 1, "no completion event");
		ck_assert_int_eq(ibv_get_cq_event(s->ch, &ev_cq, &ev_ctx), 0);
		ck_assert_ptr_eq(ev_cq, s->cq);
		ck_assert_ptr_eq(ev_ctx, s);
		ibv_ack_cq_events(ev_cq, 1);
	}
	ck_abort_msg(
		"completion channel signalled 1000 times without a completion");
}

static void expect_wc(struct side *s, uint64_t wr_id, enum ibv_wc_opcode op,
		      uint32_t len)
{
	struct ibv_wc wc;

	next_wc(s, &wc);
	ck_assert_msg(wc.status == IBV_WC_SUCCESS,
		      "wr %llu: %s (vendor_err 0x%x)",
		      (unsigned long long)wc.wr_id,
		      ibv_wc_status_str(wc.status), wc.vendor_err);
	ck_assert_uint_eq(wc.wr_id, wr_id);
	ck_assert_int_eq(wc.opcode, op);
	ck_assert_uint_eq(wc.qp_num, s->qp->qp_num);
	if (op == IBV_WC_RECV || op == IBV_WC_RDMA_READ)
		ck_assert_uint_eq(wc.byte_len, len);
	ck_assert_uint_eq(wc.wc_flags & ~(unsigned int)(IBV_WC_WITH_IMM |
							IBV_WC_WITH_INV),
			  0);
}

static void post_recv(struct side *s, uint64_t wr_id, size_t off, uint32_t len)
{
	struct ibv_sge sge = {.addr = (uintptr_t)s->buf + off,
			      .length = len,
			      .lkey = s->mr->lkey};
	struct ibv_recv_wr wr = {.wr_id = wr_id, .sg_list = &sge, .num_sge = 1},
			   *bad = NULL;

	ck_assert_int_eq(ibv_post_recv(s->qp, &wr, &bad), 0);
}

static void connect_pair(struct side *srv, struct side *cli)
{
	struct sockaddr_storage ss;
	struct iwarp_cm_event *ev;
	struct iwarp_cm_id *l;
	uint16_t port;

	ck_assert_int_eq(iwarp_cm_create_id(srv->cm_ch,
					    iwc_native_context(srv->ctx), &l,
					    NULL, IWARP_PS_TCP),
			 0);
	ck_assert_int_eq(iwarp_cm_getaddr("127.0.0.1", 0, &ss), 0);
	ck_assert_int_eq(iwarp_cm_bind_addr(l, (struct sockaddr *)&ss), 0);
	ck_assert_int_eq(iwarp_cm_listen(l, 4), 0);
	port = ntohs(((struct sockaddr_in *)&l->src_addr)->sin_port);
	ck_assert_uint_ne(port, 0);

	ck_assert_int_eq(iwarp_cm_create_id(cli->cm_ch,
					    iwc_native_context(cli->ctx),
					    &cli->id, NULL, IWARP_PS_TCP),
			 0);
	ck_assert_int_eq(iwarp_cm_getaddr("127.0.0.1", port, &ss), 0);
	ck_assert_int_eq(iwarp_cm_resolve_addr(cli->id, NULL,
					       (struct sockaddr *)&ss, 2000),
			 0);
	ck_assert_int_eq(iwarp_cm_ack_event(expect_cm(
				 cli->cm_ch, IWARP_CM_EVENT_ADDR_RESOLVED)),
			 0);
	ck_assert_int_eq(iwarp_cm_resolve_route(cli->id, 2000), 0);
	ck_assert_int_eq(iwarp_cm_ack_event(expect_cm(
				 cli->cm_ch, IWARP_CM_EVENT_ROUTE_RESOLVED)),
			 0);
	side_qp(cli);
	ck_assert_int_eq(iwarp_cm_connect(cli->id, NULL), 0);

	ev = expect_cm(srv->cm_ch, IWARP_CM_EVENT_CONNECT_REQUEST);
	srv->id = ev->id;
	ck_assert_int_eq(iwarp_cm_ack_event(ev), 0);
	side_qp(srv);
	/* receives posted through the ibverbs inline before accepting */
	post_recv(srv, 100, 0, 64);
	post_recv(srv, 101, 64, 64);
	ck_assert_int_eq(iwarp_cm_accept(srv->id, NULL), 0);
	ck_assert_int_eq(iwarp_cm_ack_event(expect_cm(
				 cli->cm_ch, IWARP_CM_EVENT_ESTABLISHED)),
			 0);
	ck_assert_int_eq(iwarp_cm_ack_event(expect_cm(
				 srv->cm_ch, IWARP_CM_EVENT_ESTABLISHED)),
			 0);
	ck_assert_int_eq(iwarp_cm_destroy_id(l), 0);
}

START_TEST(test_data)
{
	struct side srv, cli;
	struct ibv_send_wr wr, *bad;
	struct ibv_sge sge[2];
	struct ibv_qp_attr qattr;
	struct ibv_qp_init_attr qinit;

	side_open(&srv);
	side_open(&cli);
	connect_pair(&srv, &cli);
	ck_assert_int_eq(ibv_query_qp(cli.qp, &qattr, IBV_QP_STATE, &qinit), 0);
	ck_assert_int_eq(qattr.qp_state, IBV_QPS_RTS);
	ck_assert_int_eq(cli.qp->state,
			 IBV_QPS_RTS); /* refreshed by the query */
	ck_assert_ptr_eq(qinit.qp_context, &cli);

	/* Send, two SGEs gathered into one message */
	memcpy(cli.buf, "hello, ", 7);
	memcpy(cli.buf + 100, "iwarp", 5);
	sge[0] = (struct ibv_sge){
		.addr = (uintptr_t)cli.buf, .length = 7, .lkey = cli.mr->lkey};
	sge[1] = (struct ibv_sge){.addr = (uintptr_t)cli.buf + 100,
				  .length = 5,
				  .lkey = cli.mr->lkey};
	memset(&wr, 0, sizeof(wr));
	wr.wr_id = 1;
	wr.sg_list = sge;
	wr.num_sge = 2;
	wr.opcode = IBV_WR_SEND;
	wr.send_flags = IBV_SEND_SIGNALED;
	bad = NULL;
	ck_assert_int_eq(ibv_post_send(cli.qp, &wr, &bad), 0);
	expect_wc(&cli, 1, IBV_WC_SEND, 12);
	expect_wc(&srv, 100, IBV_WC_RECV, 12);
	ck_assert_int_eq(memcmp(srv.buf, "hello, iwarp", 12), 0);

	/* RDMA Write into the server's buffer, then a Send behind it: when
	 * the Send arrives the Write is placed (RFC 5040 §5.5) */
	iw_test_fill((uint8_t *)cli.buf + 1024, 1000, 11);
	sge[0] = (struct ibv_sge){.addr = (uintptr_t)cli.buf + 1024,
				  .length = 1000,
				  .lkey = cli.mr->lkey};
	memset(&wr, 0, sizeof(wr));
	wr.wr_id = 2;
	wr.sg_list = sge;
	wr.num_sge = 1;
	wr.opcode = IBV_WR_RDMA_WRITE;
	wr.send_flags = IBV_SEND_SIGNALED;
	wr.wr.rdma.remote_addr = (uintptr_t)srv.buf + 2048;
	wr.wr.rdma.rkey = srv.mr->rkey;
	ck_assert_int_eq(ibv_post_send(cli.qp, &wr, &bad), 0);
	expect_wc(&cli, 2, IBV_WC_RDMA_WRITE, 1000);
	sge[0] = (struct ibv_sge){
		.addr = (uintptr_t)cli.buf, .length = 4, .lkey = cli.mr->lkey};
	wr.wr_id = 3;
	wr.opcode = IBV_WR_SEND;
	ck_assert_int_eq(ibv_post_send(cli.qp, &wr, &bad), 0);
	expect_wc(&cli, 3, IBV_WC_SEND, 4);
	expect_wc(&srv, 101, IBV_WC_RECV, 4);
	ck_assert_int_eq(memcmp(srv.buf + 2048, cli.buf + 1024, 1000), 0);

	/* RDMA Read of the server's buffer */
	iw_test_fill((uint8_t *)srv.buf + 3072, 512, 12);
	sge[0] = (struct ibv_sge){.addr = (uintptr_t)cli.buf + 3072,
				  .length = 512,
				  .lkey = cli.mr->lkey};
	memset(&wr, 0, sizeof(wr));
	wr.wr_id = 4;
	wr.sg_list = sge;
	wr.num_sge = 1;
	wr.opcode = IBV_WR_RDMA_READ;
	wr.send_flags = IBV_SEND_SIGNALED;
	wr.wr.rdma.remote_addr = (uintptr_t)srv.buf + 3072;
	wr.wr.rdma.rkey = srv.mr->rkey;
	ck_assert_int_eq(ibv_post_send(cli.qp, &wr, &bad), 0);
	expect_wc(&cli, 4, IBV_WC_RDMA_READ, 512);
	ck_assert_int_eq(memcmp(cli.buf + 3072, srv.buf + 3072, 512), 0);

	/* a chain longer than one conversion batch whose 19th WR is bad:
	 * the 18 before it are posted, bad_wr names it, EINVAL */
	{
		struct ibv_send_wr chain[20];

		memset(chain, 0, sizeof(chain));
		for (int i = 0; i < 20; i++) {
			chain[i].wr_id = 1000 + (uint64_t)i;
			chain[i].sg_list = sge;
			chain[i].num_sge = 1;
			chain[i].opcode = IBV_WR_RDMA_WRITE;
			chain[i].send_flags = IBV_SEND_SIGNALED;
			chain[i].wr.rdma.remote_addr =
				(uintptr_t)srv.buf + 3072;
			chain[i].wr.rdma.rkey = srv.mr->rkey;
			chain[i].next = i < 19 ? &chain[i + 1] : NULL;
		}
		sge[0].length = 16;
		chain[18].opcode = IBV_WR_TSO;
		bad = NULL;
		ck_assert_int_eq(ibv_post_send(cli.qp, chain, &bad), EINVAL);
		ck_assert_ptr_eq(bad, &chain[18]);
		for (int i = 0; i < 18; i++)
			expect_wc(&cli, 1000 + (uint64_t)i, IBV_WC_RDMA_WRITE,
				  16);
	}

	/* a type 1 window bound with the inline ibv_bind_mw (RFC 5040 §2.1):
	 * the client reads through its new STag */
	{
		struct ibv_mw *mw = ibv_alloc_mw(srv.pd, IBV_MW_TYPE_1);
		struct ibv_mw_bind mb;
		uint32_t old_rkey;

		ck_assert_ptr_nonnull(mw);
		old_rkey = mw->rkey;
		iw_test_fill((uint8_t *)srv.buf + 512, 256, 13);
		memset(&mb, 0, sizeof(mb));
		mb.wr_id = 55;
		mb.send_flags = IBV_SEND_SIGNALED;
		mb.bind_info.mr = srv.mr;
		mb.bind_info.addr = (uintptr_t)srv.buf + 512;
		mb.bind_info.length = 256;
		mb.bind_info.mw_access_flags = IBV_ACCESS_REMOTE_READ;
		ck_assert_int_eq(ibv_bind_mw(srv.qp, mw, &mb), 0);
		expect_wc(&srv, 55, IBV_WC_BIND_MW, 0);
		ck_assert_uint_ne(mw->rkey, old_rkey);
		sge[0] = (struct ibv_sge){.addr = (uintptr_t)cli.buf + 512,
					  .length = 256,
					  .lkey = cli.mr->lkey};
		memset(&wr, 0, sizeof(wr));
		wr.wr_id = 5;
		wr.sg_list = sge;
		wr.num_sge = 1;
		wr.opcode = IBV_WR_RDMA_READ;
		wr.send_flags = IBV_SEND_SIGNALED;
		wr.wr.rdma.remote_addr = (uintptr_t)srv.buf + 512;
		wr.wr.rdma.rkey = mw->rkey;
		ck_assert_int_eq(ibv_post_send(cli.qp, &wr, &bad), 0);
		expect_wc(&cli, 5, IBV_WC_RDMA_READ, 256);
		ck_assert_int_eq(memcmp(cli.buf + 512, srv.buf + 512, 256), 0);
		/* a window of another PD: EPERM from the inline checks */
		mb.bind_info.mr = srv.mr;
		{
			struct ibv_pd *other = ibv_alloc_pd(srv.ctx);
			struct ibv_mw *mw2;

			ck_assert_ptr_nonnull(other);
			mw2 = ibv_alloc_mw(other, IBV_MW_TYPE_1);
			ck_assert_ptr_nonnull(mw2);
			ck_assert_int_eq(ibv_bind_mw(srv.qp, mw2, &mb), EPERM);
			ck_assert_int_eq(ibv_dealloc_mw(mw2), 0);
			ck_assert_int_eq(ibv_dealloc_pd(other), 0);
		}
		ck_assert_int_eq(ibv_dealloc_mw(mw), 0);
	}

	/* a bad WR in a receive chain: positive errno, bad_wr */
	{
		struct ibv_sge rs = {.addr = (uintptr_t)srv.buf,
				     .length = 8,
				     .lkey = srv.mr->lkey};
		struct ibv_recv_wr rwr = {.wr_id = 9,
					  .sg_list = &rs,
					  .num_sge = 1000},
				   *rbad = NULL;

		ck_assert_int_eq(ibv_post_recv(srv.qp, &rwr, &rbad), EINVAL);
		ck_assert_ptr_eq(rbad, &rwr);
	}

	ck_assert_int_eq(iwarp_cm_disconnect(cli.id), 0);
	ck_assert_int_eq(iwarp_cm_ack_event(expect_cm(
				 cli.cm_ch, IWARP_CM_EVENT_DISCONNECTED)),
			 0);
	ck_assert_int_eq(iwarp_cm_ack_event(expect_cm(
				 srv.cm_ch, IWARP_CM_EVENT_DISCONNECTED)),
			 0);
	side_close(&cli);
	side_close(&srv);
}
END_TEST

/* An RDMA Write naming an STag the server does not have: both QPs report
 * the TERMINATE (RFC 5040 §7: remote protection error, invalid STag) as an
 * asynchronous event naming their ibverbs QP. */
START_TEST(test_remote_error)
{
	struct side srv, cli;
	struct ibv_send_wr wr, *bad = NULL;
	struct ibv_async_event ae;
	struct ibv_sge sge;
	struct ibv_wc wc;
	struct pollfd p;

	side_open(&srv);
	side_open(&cli);
	connect_pair(&srv, &cli);
	sge = (struct ibv_sge){
		.addr = (uintptr_t)cli.buf, .length = 64, .lkey = cli.mr->lkey};
	memset(&wr, 0, sizeof(wr));
	wr.wr_id = 77;
	wr.sg_list = &sge;
	wr.num_sge = 1;
	wr.opcode = IBV_WR_RDMA_WRITE;
	wr.send_flags = IBV_SEND_SIGNALED;
	wr.wr.rdma.remote_addr = (uintptr_t)srv.buf;
	wr.wr.rdma.rkey =
		srv.mr->rkey ^ 0x5500; /* another index: no such STag */
	ck_assert_int_eq(ibv_post_send(cli.qp, &wr, &bad), 0);
	next_wc(&cli, &wc);
	/* (a Write completes when sent: success, or an error when the
	 * TERMINATE came first) */
	ck_assert_uint_eq(wc.wr_id, 77);

	p = (struct pollfd){.fd = srv.ctx->async_fd, .events = POLLIN};
	ck_assert_msg(poll(&p, 1, WAIT_MS) == 1, "no asynchronous event");
	ck_assert_int_eq(ibv_get_async_event(srv.ctx, &ae), 0);
	ck_assert_msg(ae.event_type == IBV_EVENT_QP_ACCESS_ERR, "event %s",
		      ibv_event_type_str(ae.event_type));
	ck_assert_ptr_eq(ae.element.qp, srv.qp);
	ibv_ack_async_event(&ae);
	/* the client learns it from the TERMINATE */
	p = (struct pollfd){.fd = cli.ctx->async_fd, .events = POLLIN};
	ck_assert_msg(poll(&p, 1, WAIT_MS) == 1,
		      "no asynchronous event at the client");
	ck_assert_int_eq(ibv_get_async_event(cli.ctx, &ae), 0);
	ck_assert_ptr_eq(ae.element.qp, cli.qp);
	ck_assert_msg(ae.event_type == IBV_EVENT_QP_ACCESS_ERR,
		      "client event %s", ibv_event_type_str(ae.event_type));
	ibv_ack_async_event(&ae);

	side_close(&cli);
	side_close(&srv);
}
END_TEST

static Suite *compat_verbs_suite(void)
{
	Suite *s = suite_create("compat_verbs");
	TCase *tc = tcase_create("core");

	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, test_device);
	tcase_add_test(tc, test_query);
	tcase_add_test(tc, test_lifecycle);
	tcase_add_test(tc, test_srq);
	tcase_add_test(tc, test_data);
	tcase_add_test(tc, test_remote_error);
	suite_add_tcase(s, tc);
	return s;
}

IW_TEST_MAIN(compat_verbs_suite)
