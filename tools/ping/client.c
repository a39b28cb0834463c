/*
 * tools/ping/client.c: the rping client (rping.c rping_run_client,
 * rping_test_client): resolve address and route (2000 ms each), create the
 * QP and buffers, post one RECV, connect with IRD = ORD = 1 and no private
 * data, then per ping: SEND the start_buf advertisement, wait for "go
 * ahead", SEND the rdma_buf advertisement, wait for "go ahead", compare
 * (-V), print (-v). After the last ping it disconnects.
 */
#include "config.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "tools/ping/session.h"

int client_start(struct ping_loop *l)
{
	const struct ping_opts *o = l->o;
	struct sockaddr_storage dst, src;
	struct ping_sess *s;
	int ret;

	ret = iwarp_cm_getaddr(o->addr, o->port, &dst);
	if (ret) {
		fprintf(stderr,
			"iwarp_ping: cannot resolve '%s': %s - invalid hostname or IP address\n",
			o->addr, iwarp_strerror(ret));
		return ret;
	}
	if (o->src_addr) {
		ret = iwarp_cm_getaddr(o->src_addr, 0, &src);
		if (ret) {
			fprintf(stderr,
				"iwarp_ping: cannot resolve source '%s': %s\n",
				o->src_addr, iwarp_strerror(ret));
			return ret;
		}
	}

	s = sess_new(l, NULL, 0);
	if (!s) {
		fprintf(stderr, "iwarp_ping: out of memory\n");
		return -ENOMEM;
	}
	ping_fmt_addr((struct sockaddr *)&dst, s->peer, sizeof(s->peer));
	ret = iwarp_cm_create_id(l->cm_ch, l->ctx, &s->id, s, IWARP_PS_TCP);
	if (ret) {
		s->id = NULL;
		sess_fail(s, "rdma_create_id: %s", iwarp_strerror(ret));
		return ret;
	}
	ping_dbg(o, "created cm_id %p\n", (void *)s->id);
	ret = iwarp_cm_resolve_addr(
		s->id, o->src_addr ? (struct sockaddr *)&src : NULL,
		(struct sockaddr *)&dst, PING_RESOLVE_MS);
	if (ret) {
		sess_fail(s, "rdma_resolve_addr: %s", iwarp_strerror(ret));
		return ret;
	}
	s->state = SESS_RESOLVE_ADDR;
	sess_wait(s, "address resolution");
	return 0;
}

/* Connects with rping's parameters (rping_init_conn_param). */
static void client_connect(struct ping_sess *s)
{
	struct iwarp_conn_param cp;
	int ret;

	if (sess_setup(s))
		return;
	memset(&cp, 0, sizeof(cp));
	cp.responder_resources = 1;
	cp.initiator_depth = 1;
	cp.retry_count = 7;
	cp.rnr_retry_count = 7;
	ret = tool_tls_apply(&s->o->tls, s->id, false, "iwarp_ping");
	if (ret) {
		sess_fail(s, "TLS: %s", iwarp_strerror(ret));
		return;
	}
	ret = iwarp_cm_connect(s->id, &cp);
	if (ret) {
		sess_fail(s, "rdma_connect: %s", iwarp_strerror(ret));
		return;
	}
	s->state = SESS_CONNECTING;
	sess_wait(s, "the connection (MPA Reply)");
}

/* Disconnects after the last ping (rping_disconnect). */
static void client_disconnect(struct ping_sess *s)
{
	int ret = iwarp_cm_disconnect(s->id);

	if (ret) {
		sess_fail(s, "rdma_disconnect: %s", iwarp_strerror(ret));
		return;
	}
	ping_dbg(s->o, "disconnecting\n");
	s->state = SESS_DISCONNECTING;
	sess_wait(s, "the DISCONNECTED event");
}

/* Starts ping number s->ping, or disconnects when done. */
static void client_ping_start(struct ping_sess *s)
{
	const struct ping_opts *o = s->o;

	if (o->count && s->ping >= o->count) {
		client_disconnect(s);
		return;
	}
	ping_payload_fill(s->start_buf, o->size, s->ping);
	ping_ctrl_encode(s->send_buf[0], (uint64_t)(uintptr_t)s->start_buf,
			 s->start_mr->rkey, o->size);
	ping_dbg(o, "RDMA addr %" PRIx64 " rkey %x len %u\n",
		 (uint64_t)(uintptr_t)s->start_buf, s->start_mr->rkey, o->size);
	s->t_start = ping_now_ns();
	if (sess_post_ctrl(s, 0))
		return;
	s->state = SESS_C_WAIT_GO1;
	sess_wait(s, "the server's RDMA Read and go-ahead");
}

void client_cm_event(struct ping_sess *s, const struct iwarp_cm_event *ev)
{
	int ret;

	switch (ev->event) {
	case IWARP_CM_EVENT_ADDR_RESOLVED:
		if (s->state != SESS_RESOLVE_ADDR)
			break;
		ret = iwarp_cm_resolve_route(s->id, PING_RESOLVE_MS);
		if (ret) {
			sess_fail(s, "rdma_resolve_route: %s",
				  iwarp_strerror(ret));
			break;
		}
		s->state = SESS_RESOLVE_ROUTE;
		sess_wait(s, "route resolution");
		break;
	case IWARP_CM_EVENT_ROUTE_RESOLVED:
		if (s->state == SESS_RESOLVE_ROUTE)
			client_connect(s);
		break;
	case IWARP_CM_EVENT_ESTABLISHED:
		ping_dbg(s->o, "ESTABLISHED\n");
		s->established = 1;
		if (s->state == SESS_CONNECTING)
			client_ping_start(s);
		break;
	case IWARP_CM_EVENT_ADDR_ERROR:
	case IWARP_CM_EVENT_ROUTE_ERROR:
	case IWARP_CM_EVENT_CONNECT_ERROR:
	case IWARP_CM_EVENT_UNREACHABLE:
	case IWARP_CM_EVENT_REJECTED:
		sess_fail_cm_event(s, ev);
		break;
	case IWARP_CM_EVENT_DISCONNECTED:
		/* rping prints this on every disconnect */
		fprintf(stderr, "client DISCONNECT EVENT...\n");
		s->established = 0;
		if (s->state == SESS_DISCONNECTING) {
			sess_end(s, 0);
			break;
		}
		if (s->o->count)
			sess_fail(s, "server disconnected after %u of %u pings",
				  s->ping, s->o->count);
		else
			sess_fail(s, "server disconnected after %u pings",
				  s->ping);
		break;
	case IWARP_CM_EVENT_DEVICE_REMOVAL:
		sess_fail(s, "cma detected device removal");
		break;
	case IWARP_CM_EVENT_CONNECT_REQUEST:
	case IWARP_CM_EVENT_CONNECT_RESPONSE:
	case IWARP_CM_EVENT_TIMEWAIT_EXIT:
	default:
		ping_dbg(s->o, "unhandled event: %s, ignoring\n",
			 iwarp_cm_event_str(ev->event));
		break;
	}
}

/* The second "go ahead": the server's RDMA Write has landed. */
static void client_ping_done(struct ping_sess *s)
{
	const struct ping_opts *o = s->o;
	uint64_t rtt = ping_now_ns() - s->t_start;
	uint32_t i;

	if (ping_stats_add(&s->stats, rtt)) {
		sess_fail(s, "out of memory for statistics");
		return;
	}
	if (o->validate && memcmp(s->start_buf, s->rdma_buf, o->size)) {
		for (i = 0; i < o->size; i++)
			if (s->start_buf[i] != s->rdma_buf[i])
				break;
		/* "data mismatch!" is rping's message */
		sess_fail(
			s,
			"data mismatch! ping %u, byte %u of %u: sent 0x%02x, got 0x%02x",
			s->ping, i, o->size, (uint8_t)s->start_buf[i],
			(uint8_t)s->rdma_buf[i]);
		return;
	}
	if (o->verbose) {
		printf("ping data: %s\n", s->rdma_buf);
		fflush(stdout);
	}
	ping_dbg(o, "ping %u rtt %.3f us\n", s->ping, (double)rtt / 1e3);
	s->ping++;
	client_ping_start(s);
}

void client_wc(struct ping_sess *s, const struct iwarp_wc *wc)
{
	if (sess_check_wc(s, wc))
		return;

	switch (wc->opcode) {
	case IWARP_WC_SEND:
		ping_dbg(s->o, "send completion\n");
		break;
	case IWARP_WC_RECV:
		ping_dbg(s->o, "recv completion\n");
		if (wc->byte_len != PING_CTRL_LEN) {
			sess_fail(s, "Received bogus data, size %u",
				  wc->byte_len);
			break;
		}
		if (sess_post_recv(s))
			break;
		if (s->state == SESS_C_WAIT_GO1) {
			ping_ctrl_encode(s->send_buf[1],
					 (uint64_t)(uintptr_t)s->rdma_buf,
					 s->rdma_mr->rkey, s->o->size);
			if (sess_post_ctrl(s, 1))
				break;
			s->state = SESS_C_WAIT_GO2;
			sess_wait(s, "the server's RDMA Write and go-ahead");
		} else if (s->state == SESS_C_WAIT_GO2) {
			client_ping_done(s);
		} else {
			sess_fail(s, "unexpected message from the server");
		}
		break;
	case IWARP_WC_RDMA_WRITE:
	case IWARP_WC_RDMA_READ:
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

void client_print_stats(struct ping_sess *s)
{
	struct ping_stats *st = &s->stats;
	double avg;

	if (!st->count) {
		if (!s->result)
			printf("iwarp_ping: no ping completed\n");
		return;
	}
	avg = st->sum_ns / (double)st->count;
	printf("%" PRIu64
	       " pings of %u bytes to %s: rtt min/avg/p50/p99/max = %.1f/%.1f/%.1f/%.1f/%.1f us\n",
	       st->count, s->o->size, s->peer, (double)st->min_ns / 1e3,
	       avg / 1e3, (double)ping_stats_percentile(st, 50.0) / 1e3,
	       (double)ping_stats_percentile(st, 99.0) / 1e3,
	       (double)st->max_ns / 1e3);
	fflush(stdout);
}
