/*
 * tools/ping/sess.c: resources of one ping connection and posting of work
 * requests, with rping's sizes: QP of 16 send / 2 receive WRs with one SGE,
 * CQ of 32 entries on a completion channel, MRs (rping_setup_buffers):
 * recv_buf LOCAL_WRITE, send_buf no access, rdma_buf and start_buf
 * LOCAL_WRITE | REMOTE_READ | REMOTE_WRITE.
 */
#include "config.h"

#include <arpa/inet.h>
#include <errno.h>
#include <inttypes.h>
#include <netinet/in.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tools/ping/session.h"

#define SESS_RW_ACCESS                                                         \
	(IWARP_ACCESS_LOCAL_WRITE | IWARP_ACCESS_REMOTE_READ |                 \
	 IWARP_ACCESS_REMOTE_WRITE)

void ping_dbg(const struct ping_opts *o, const char *fmt, ...)
{
	va_list ap;

	if (!o->debug)
		return;
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	fflush(stdout);
}

void ping_fmt_addr(const struct sockaddr *sa, char *buf, size_t len)
{
	char host[INET6_ADDRSTRLEN] = "?";
	unsigned int port = 0;

	if (sa->sa_family == AF_INET) {
		const struct sockaddr_in *in = (const void *)sa;

		inet_ntop(AF_INET, &in->sin_addr, host, sizeof(host));
		port = ntohs(in->sin_port);
		snprintf(buf, len, "%s:%u", host, port);
	} else if (sa->sa_family == AF_INET6) {
		const struct sockaddr_in6 *in6 = (const void *)sa;

		inet_ntop(AF_INET6, &in6->sin6_addr, host, sizeof(host));
		port = ntohs(in6->sin6_port);
		snprintf(buf, len, "[%s]:%u", host, port);
	} else {
		snprintf(buf, len, "(unknown address)");
	}
}

struct ping_sess *sess_new(struct ping_loop *l, struct iwarp_cm_id *id,
			   int server)
{
	struct ping_sess *s = calloc(1, sizeof(*s));

	if (!s)
		return NULL;
	s->loop = l;
	s->o = l->o;
	s->server = server;
	s->id = id;
	s->state = server ? SESS_ACCEPTING : SESS_RESOLVE_ADDR;
	snprintf(s->peer, sizeof(s->peer), "%s", server ? "client" : "server");
	ping_stats_init(&s->stats);
	s->next = l->sessions;
	l->sessions = s;
	return s;
}

/* Registers |len| bytes at |addr| with |access|; prints on failure. */
static struct iwarp_mr *sess_reg(struct ping_sess *s, void *addr, size_t len,
				 int access, const char *what)
{
	struct iwarp_mr *mr = iwarp_reg_mr(s->pd, addr, len, access);

	if (!mr)
		sess_fail(s, "%s reg_mr failed: %s", what,
			  iwarp_strerror(-errno));
	else
		ping_dbg(s->o, "registered %s: addr %p len %zu key %x\n", what,
			 addr, len, mr->rkey);
	return mr;
}

/* The buffers and their MRs. Returns 0 or -1 (printed). */
static int sess_setup_buffers(struct ping_sess *s)
{
	s->recv_mr = sess_reg(s, s->recv_buf, sizeof(s->recv_buf),
			      IWARP_ACCESS_LOCAL_WRITE, "recv_buf");
	if (!s->recv_mr)
		return -1;
	s->send_mr =
		sess_reg(s, s->send_buf, sizeof(s->send_buf), 0, "send_buf");
	if (!s->send_mr)
		return -1;

	/* the server reads whatever size the client advertises */
	s->rdma_size = s->server ? PING_SERVER_BUF : s->o->size;
	/* one extra NUL so the buffer always prints as a string */
	s->rdma_buf = calloc(1, (size_t)s->rdma_size + 1);
	if (!s->rdma_buf) {
		sess_fail(s, "rdma_buf malloc failed");
		return -1;
	}
	s->rdma_mr = sess_reg(s, s->rdma_buf, s->rdma_size, SESS_RW_ACCESS,
			      "rdma_buf");
	if (!s->rdma_mr)
		return -1;
	if (s->server)
		return 0;

	s->start_buf = calloc(1, s->o->size);
	if (!s->start_buf) {
		sess_fail(s, "start_buf malloc failed");
		return -1;
	}
	s->start_mr = sess_reg(s, s->start_buf, s->o->size, SESS_RW_ACCESS,
			       "start_buf");
	return s->start_mr ? 0 : -1;
}

int sess_setup(struct ping_sess *s)
{
	struct iwarp_qp_init_attr qa;
	int ret;

	s->pd = iwarp_alloc_pd(s->id->verbs);
	if (!s->pd) {
		ret = -errno;
		sess_fail(s, "alloc_pd failed: %s", iwarp_strerror(ret));
		return ret;
	}
	s->cq = iwarp_create_cq(s->id->verbs, PING_CQ_DEPTH, s,
				s->loop->comp_ch, 0);
	if (!s->cq) {
		ret = -errno;
		sess_fail(s, "create_cq failed: %s", iwarp_strerror(ret));
		return ret;
	}
	ret = iwarp_req_notify_cq(s->cq, 0);
	if (ret) {
		sess_fail(s, "req_notify_cq failed: %s", iwarp_strerror(ret));
		return ret;
	}

	memset(&qa, 0, sizeof(qa));
	qa.qp_context = s;
	qa.send_cq = s->cq;
	qa.recv_cq = s->cq;
	qa.cap.max_send_wr = PING_SQ_DEPTH;
	qa.cap.max_recv_wr = PING_RQ_DEPTH;
	qa.cap.max_send_sge = 1;
	qa.cap.max_recv_sge = 1;
	qa.qp_type = IWARP_QPT_RC;
	ret = iwarp_cm_create_qp(s->id, s->pd, &qa);
	if (ret) {
		sess_fail(s, "create_qp failed: %s", iwarp_strerror(ret));
		return ret;
	}
	s->qp = s->id->qp;
	ping_dbg(s->o, "created pd %p cq %p qp %p\n", (void *)s->pd,
		 (void *)s->cq, (void *)s->qp);

	if (sess_setup_buffers(s))
		return -ENOMEM;
	return sess_post_recv(s);
}

void sess_free(struct ping_sess *s)
{
	struct ping_sess **pp;

	for (pp = &s->loop->sessions; *pp; pp = &(*pp)->next) {
		if (*pp == s) {
			*pp = s->next;
			break;
		}
	}
	/* rping disconnects on every exit path that had a connection */
	if (s->id && s->established)
		iwarp_cm_disconnect(s->id);
	if (s->qp)
		iwarp_cm_destroy_qp(s->id);
	if (s->start_mr)
		iwarp_dereg_mr(s->start_mr);
	if (s->rdma_mr)
		iwarp_dereg_mr(s->rdma_mr);
	if (s->send_mr)
		iwarp_dereg_mr(s->send_mr);
	if (s->recv_mr)
		iwarp_dereg_mr(s->recv_mr);
	if (s->cq)
		iwarp_destroy_cq(s->cq);
	if (s->pd)
		iwarp_dealloc_pd(s->pd);
	if (s->id)
		iwarp_cm_destroy_id(s->id);
	free(s->start_buf);
	free(s->rdma_buf);
	ping_stats_free(&s->stats);
	free(s);
}

int sess_post_recv(struct ping_sess *s)
{
	struct iwarp_sge sge = {
		.addr = (uint64_t)(uintptr_t)s->recv_buf,
		.length = PING_CTRL_LEN,
		.lkey = s->recv_mr->lkey,
	};
	struct iwarp_recv_wr wr = {
		.wr_id = SESS_WR_RECV,
		.sg_list = &sge,
		.num_sge = 1,
	};
	struct iwarp_recv_wr *bad;
	int ret = iwarp_post_recv(s->qp, &wr, &bad);

	if (ret)
		sess_fail(s, "post recv error: %s", iwarp_strerror(ret));
	return ret;
}

int sess_post_ctrl(struct ping_sess *s, int idx)
{
	struct iwarp_sge sge = {
		.addr = (uint64_t)(uintptr_t)s->send_buf[idx],
		.length = PING_CTRL_LEN,
		.lkey = s->send_mr->lkey,
	};
	struct iwarp_send_wr wr = {
		.wr_id = SESS_WR_SEND,
		.sg_list = &sge,
		.num_sge = 1,
		.opcode = IWARP_WR_SEND,
		.send_flags = IWARP_SEND_SIGNALED,
	};
	struct iwarp_send_wr *bad;
	int ret = iwarp_post_send(s->qp, &wr, &bad);

	if (ret)
		sess_fail(s, "post send error: %s", iwarp_strerror(ret));
	return ret;
}

int sess_post_rdma(struct ping_sess *s, int read, uint32_t len, uint64_t raddr,
		   uint32_t rkey)
{
	struct iwarp_sge sge = {
		.addr = (uint64_t)(uintptr_t)s->rdma_buf,
		.length = len,
		.lkey = s->rdma_mr->lkey,
	};
	struct iwarp_send_wr wr = {
		.wr_id = read ? SESS_WR_READ : SESS_WR_WRITE,
		.sg_list = &sge,
		.num_sge = 1,
		.opcode = read ? IWARP_WR_RDMA_READ : IWARP_WR_RDMA_WRITE,
		.send_flags = IWARP_SEND_SIGNALED,
	};
	struct iwarp_send_wr *bad;
	int ret;

	wr.wr.rdma.remote_addr = raddr;
	wr.wr.rdma.rkey = rkey;
	ping_dbg(s->o, "rdma %s: local %p len %u remote %" PRIx64 " rkey %x\n",
		 read ? "read" : "write", (void *)s->rdma_buf, len, raddr,
		 rkey);
	ret = iwarp_post_send(s->qp, &wr, &bad);
	if (ret)
		sess_fail(s, "post send error (RDMA %s): %s",
			  read ? "Read" : "Write", iwarp_strerror(ret));
	return ret;
}

void sess_wait(struct ping_sess *s, const char *what)
{
	s->waiting = what;
	s->deadline =
		ping_now_ns() + (uint64_t)s->o->timeout_ms * UINT64_C(1000000);
}

void sess_interrupt(struct ping_sess *s)
{
	uint64_t until =
		ping_now_ns() + (uint64_t)PING_INTERRUPT_MS * UINT64_C(1000000);

	if (s->state == SESS_DONE)
		return;
	if (s->state == SESS_DISCONNECTING) {
		if (!s->deadline || s->deadline > until)
			s->deadline = until;
		return;
	}
	if (!s->established || iwarp_cm_disconnect(s->id)) {
		ping_dbg(s->o, "interrupted: dropping %s\n", s->peer);
		sess_end(s, 0);
		return;
	}
	ping_dbg(s->o, "interrupted: disconnecting %s\n", s->peer);
	s->state = SESS_DISCONNECTING;
	s->waiting = "the DISCONNECTED event";
	s->deadline = until;
}

void sess_end(struct ping_sess *s, int failed)
{
	if (s->state == SESS_DONE)
		return;
	if (failed)
		s->result = -1;
	s->state = SESS_DONE;
	s->deadline = 0;
}

void sess_fail(struct ping_sess *s, const char *fmt, ...)
{
	va_list ap;

	if (s->state == SESS_DONE)
		return;
	fprintf(stderr, "iwarp_ping: %s at %s: ",
		s->server ? "server, client" : "client, server", s->peer);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	sess_end(s, -1);
}

/* Name of the operation behind wr_id |id|. */
static const char *sess_wr_name(uint64_t id)
{
	switch (id) {
	case SESS_WR_RECV:
		return "RECV";
	case SESS_WR_SEND:
		return "SEND";
	case SESS_WR_READ:
		return "RDMA Read";
	case SESS_WR_WRITE:
		return "RDMA Write";
	default:
		return "unknown";
	}
}

int sess_check_wc(struct ping_sess *s, const struct iwarp_wc *wc)
{
	uint8_t layer, etype, ecode;

	if (wc->status == IWARP_WC_SUCCESS)
		return 0;
	if (wc->status == IWARP_WC_WR_FLUSH_ERR) {
		/* as rping: the connection is going away; the DISCONNECTED
		 * event (or the deadline) decides whether that is an error */
		ping_dbg(s->o, "%s flushed\n", sess_wr_name(wc->wr_id));
		return 1;
	}
	if (!wc->vendor_err) {
		sess_fail(s, "cq completion failed: %s: %s (status %d)",
			  sess_wr_name(wc->wr_id),
			  iwarp_wc_status_str(wc->status), (int)wc->status);
		return -1;
	}
	layer = (uint8_t)(wc->vendor_err >> 16);
	etype = (uint8_t)(wc->vendor_err >> 8);
	ecode = (uint8_t)wc->vendor_err;
	sess_fail(s, "cq completion failed: %s: %s (status %d), TERMINATE %s",
		  sess_wr_name(wc->wr_id), iwarp_wc_status_str(wc->status),
		  (int)wc->status, iwarp_term_strerror(layer, etype, ecode));
	return -1;
}

void sess_fail_cm_event(struct ping_sess *s, const struct iwarp_cm_event *ev)
{
	sess_fail(s, "cma event %s, error %d: %s",
		  iwarp_cm_event_str(ev->event), ev->status,
		  ev->status ? iwarp_strerror(ev->status)
			     : "connection failed");
}
