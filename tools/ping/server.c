/*
 * tools/ping/server.c: the rping server (rping.c rping_run_server,
 * rping_test_server): bind, listen (backlog 3); on a connection request
 * create the QP and buffers, pre-post the RECV, accept with IRD = ORD = 1
 * and no private data; then per ping: RECV the start_buf advertisement,
 * RDMA Read it, SEND "go ahead", RECV the rdma_buf advertisement, RDMA
 * Write strlen + 1 bytes into it, SEND "go ahead". The client ends the
 * session with a disconnect.
 */
#include "config.h"

#include <errno.h>
#include <inttypes.h>
#include <netinet/in.h>
#include <stdio.h>
#include <string.h>

#include "tools/ping/session.h"

int server_start(struct ping_loop *l)
{
	const struct ping_opts *o = l->o;
	struct sockaddr_storage ss;
	char name[64];
	int ret;

	memset(&ss, 0, sizeof(ss));
	if (o->addr) {
		ret = iwarp_cm_getaddr(o->addr, o->port, &ss);
		if (ret) {
			fprintf(stderr,
				"iwarp_ping: cannot resolve '%s': %s - invalid hostname or IP address\n",
				o->addr, iwarp_strerror(ret));
			return ret;
		}
	} else {
		/* rping's default: any IPv4 address */
		struct sockaddr_in *in = (struct sockaddr_in *)&ss;

		in->sin_family = AF_INET;
		in->sin_addr.s_addr = htonl(INADDR_ANY);
		in->sin_port = htons(o->port);
	}
	ping_fmt_addr((struct sockaddr *)&ss, name, sizeof(name));

	ret = iwarp_cm_create_id(l->cm_ch, l->ctx, &l->listen_id, NULL,
				 IWARP_PS_TCP);
	if (ret) {
		l->listen_id = NULL;
		fprintf(stderr, "iwarp_ping: rdma_create_id: %s\n",
			iwarp_strerror(ret));
		return ret;
	}
	ret = iwarp_cm_bind_addr(l->listen_id, (struct sockaddr *)&ss);
	if (ret) {
		fprintf(stderr, "iwarp_ping: rdma_bind_addr %s: %s\n", name,
			iwarp_strerror(ret));
		return ret;
	}
	ret = tool_tls_apply(&o->tls, l->listen_id, true, "iwarp_ping");
	if (ret)
		return ret;
	ret = iwarp_cm_listen(l->listen_id, PING_LISTEN_BACKLOG);
	if (ret) {
		fprintf(stderr, "iwarp_ping: rdma_listen %s: %s\n", name,
			iwarp_strerror(ret));
		return ret;
	}
	ping_dbg(o, "listening on %s\n", name);
	if (o->listen_timeout_ms)
		l->listen_deadline =
			ping_now_ns() +
			(uint64_t)o->listen_timeout_ms * UINT64_C(1000000);
	return 0;
}

void server_connect_request(struct ping_loop *l,
			    const struct iwarp_cm_event *ev)
{
	struct iwarp_conn_param cp;
	struct ping_sess *s;
	int ret;

	s = sess_new(l, ev->id, 1);
	if (!s) {
		fprintf(stderr, "iwarp_ping: out of memory, rejecting\n");
		iwarp_cm_reject(ev->id, NULL, 0);
		return;
	}
	ev->id->context = s;
	ping_fmt_addr((const struct sockaddr *)&ev->id->dst_addr, s->peer,
		      sizeof(s->peer));
	ping_dbg(l->o, "child cma %p from %s\n", (void *)ev->id, s->peer);

	/* one client at a time without -P, as rping; refuse the others, and
	 * every one after SIGINT/SIGTERM */
	if (l->interrupted ||
	    (!l->o->persistent && (l->sessions_done || s->next))) {
		ping_dbg(l->o, "busy: rejecting %s\n", s->peer);
		iwarp_cm_reject(ev->id, NULL, 0);
		s->rejected = 1;
		sess_end(s, 0);
		return;
	}
	l->listen_deadline = 0;

	if (sess_setup(s)) {
		iwarp_cm_reject(ev->id, NULL, 0);
		return;
	}
	/* rping accepts with NULL; librdmacm then answers with the
	 * requester's IRD/ORD, 1/1 for an rping client */
	memset(&cp, 0, sizeof(cp));
	cp.responder_resources = 1;
	cp.initiator_depth = 1;
	ret = iwarp_cm_accept(ev->id, &cp);
	if (ret) {
		sess_fail(s, "rdma_accept: %s", iwarp_strerror(ret));
		return;
	}
	ping_dbg(l->o, "accepting client connection request\n");
	s->state = SESS_ACCEPTING;
	sess_wait(s, "the connection to be established");
}

/* The client disconnected: the normal end between pings. */
static void server_disconnected(struct ping_sess *s)
{
	const struct ping_opts *o = s->o;

	fprintf(stderr, "server DISCONNECT EVENT...\n");
	if (s->state == SESS_DISCONNECTING) { /* we disconnected (signal) */
		sess_end(s, 0);
		return;
	}
	if (s->state != SESS_S_WAIT_READ_ADV) {
		sess_fail(s, "client disconnected in the middle of ping %u",
			  s->ping);
		return;
	}
	if (o->count && s->ping < o->count) {
		sess_fail(s, "client disconnected after %u of %u pings",
			  s->ping, o->count);
		return;
	}
	ping_dbg(o, "client %s done after %u pings\n", s->peer, s->ping);
	sess_end(s, 0);
}

void server_cm_event(struct ping_sess *s, const struct iwarp_cm_event *ev)
{
	switch (ev->event) {
	case IWARP_CM_EVENT_ESTABLISHED:
		ping_dbg(s->o, "ESTABLISHED\n");
		s->established = 1;
		/* the first RECV may have come first (rping waits for it) */
		if (s->state == SESS_ACCEPTING) {
			s->state = SESS_S_WAIT_READ_ADV;
			sess_wait(s, "the client's first ping");
		}
		break;
	case IWARP_CM_EVENT_DISCONNECTED:
		s->established = 0;
		server_disconnected(s);
		break;
	case IWARP_CM_EVENT_ADDR_ERROR:
	case IWARP_CM_EVENT_ROUTE_ERROR:
	case IWARP_CM_EVENT_CONNECT_ERROR:
	case IWARP_CM_EVENT_UNREACHABLE:
	case IWARP_CM_EVENT_REJECTED:
		sess_fail_cm_event(s, ev);
		break;
	case IWARP_CM_EVENT_DEVICE_REMOVAL:
		sess_fail(s, "cma detected device removal");
		break;
	case IWARP_CM_EVENT_ADDR_RESOLVED:
	case IWARP_CM_EVENT_ROUTE_RESOLVED:
	case IWARP_CM_EVENT_CONNECT_REQUEST:
	case IWARP_CM_EVENT_CONNECT_RESPONSE:
	case IWARP_CM_EVENT_TIMEWAIT_EXIT:
	default:
		ping_dbg(s->o, "unhandled event: %s, ignoring\n",
			 iwarp_cm_event_str(ev->event));
		break;
	}
}

/* The client's start_buf advertisement: RDMA Read it. */
static void server_read(struct ping_sess *s)
{
	if (!s->remote_len || s->remote_len > s->rdma_size) {
		sess_fail(s, "client advertised %u bytes (valid 1 to %u)",
			  s->remote_len, s->rdma_size);
		return;
	}
	s->read_len = s->remote_len;
	if (sess_post_rdma(s, 1, s->read_len, s->remote_addr, s->remote_rkey))
		return;
	s->state = SESS_S_WAIT_READ;
	sess_wait(s, "the RDMA Read completion");
}

/* The client's rdma_buf advertisement: RDMA Write strlen + 1 bytes. */
static void server_write(struct ping_sess *s)
{
	uint32_t len = (uint32_t)strnlen(s->rdma_buf, s->read_len);

	if (len < s->read_len)
		len++; /* the NUL, as rping's strlen(rdma_buf) + 1 */
	if (len > s->remote_len) {
		sess_fail(
			s,
			"client sink of %u bytes is smaller than the ping data (%u bytes)",
			s->remote_len, len);
		return;
	}
	if (sess_post_rdma(s, 0, len, s->remote_addr, s->remote_rkey))
		return;
	s->state = SESS_S_WAIT_WRITE;
	sess_wait(s, "the RDMA Write completion");
}

/* A 16-byte control message from the client. */
static void server_recv(struct ping_sess *s, const struct iwarp_wc *wc)
{
	if (wc->byte_len != PING_CTRL_LEN) {
		sess_fail(s, "Received bogus data, size %u", wc->byte_len);
		return;
	}
	ping_ctrl_decode(s->recv_buf, &s->remote_addr, &s->remote_rkey,
			 &s->remote_len);
	ping_dbg(s->o, "Received rkey %x addr %" PRIx64 " len %u from peer\n",
		 s->remote_rkey, s->remote_addr, s->remote_len);
	if (sess_post_recv(s))
		return;

	switch (s->state) {
	case SESS_ACCEPTING:
		/* the first RECV before ESTABLISHED: connected anyway */
		s->established = 1;
		server_read(s);
		break;
	case SESS_S_WAIT_READ_ADV:
		server_read(s);
		break;
	case SESS_S_WAIT_WRITE_ADV:
		server_write(s);
		break;
	case SESS_RESOLVE_ADDR:
	case SESS_RESOLVE_ROUTE:
	case SESS_CONNECTING:
	case SESS_C_WAIT_GO1:
	case SESS_C_WAIT_GO2:
	case SESS_S_WAIT_READ:
	case SESS_S_WAIT_WRITE:
	case SESS_DISCONNECTING:
	case SESS_DONE:
	default:
		sess_fail(s, "unexpected message from the client in ping %u",
			  s->ping);
		break;
	}
}

/* The RDMA Read has completed: check, print, tell the client to go on. */
static void server_read_done(struct ping_sess *s)
{
	const struct ping_opts *o = s->o;
	long off;

	if (o->validate) {
		off = ping_payload_check(s->rdma_buf, s->read_len, s->ping);
		if (off >= 0) {
			sess_fail(
				s,
				"data mismatch! RDMA Read of ping %u differs from the rping pattern at byte %ld of %u",
				s->ping, off, s->read_len);
			return;
		}
	}
	if (o->verbose) {
		printf("server ping data: %.*s\n",
		       (int)strnlen(s->rdma_buf, s->read_len), s->rdma_buf);
		fflush(stdout);
	}
	if (sess_post_ctrl(s, 0))
		return;
	ping_dbg(o, "server posted go ahead\n");
	s->state = SESS_S_WAIT_WRITE_ADV;
	sess_wait(s, "the client's sink advertisement");
}

void server_wc(struct ping_sess *s, const struct iwarp_wc *wc)
{
	if (sess_check_wc(s, wc))
		return;

	switch (wc->opcode) {
	case IWARP_WC_SEND:
		ping_dbg(s->o, "send completion\n");
		break;
	case IWARP_WC_RECV:
		ping_dbg(s->o, "recv completion\n");
		server_recv(s, wc);
		break;
	case IWARP_WC_RDMA_READ:
		ping_dbg(s->o, "rdma read completion\n");
		if (s->state != SESS_S_WAIT_READ) {
			sess_fail(s, "unexpected RDMA Read completion");
			break;
		}
		server_read_done(s);
		break;
	case IWARP_WC_RDMA_WRITE:
		ping_dbg(s->o, "rdma write completion\n");
		if (s->state != SESS_S_WAIT_WRITE) {
			sess_fail(s, "unexpected RDMA Write completion");
			break;
		}
		if (sess_post_ctrl(s, 0))
			break;
		ping_dbg(s->o, "server posted go ahead\n");
		s->ping++;
		s->state = SESS_S_WAIT_READ_ADV;
		sess_wait(s, "the client's next ping or disconnect");
		break;
	case IWARP_WC_COMP_SWAP:
	case IWARP_WC_FETCH_ADD:
	case IWARP_WC_MASKED_COMP_SWAP:
	case IWARP_WC_MASKED_FETCH_ADD:
	case IWARP_WC_RECV_RDMA_WITH_IMM:
	case IWARP_WC_BIND_MW:
	case IWARP_WC_LOCAL_INV:
	default:
		sess_fail(s, "unexpected completion opcode %d",
			  (int)wc->opcode);
		break;
	}
}
