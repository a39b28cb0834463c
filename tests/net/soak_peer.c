/*
 * tests/net/soak_peer.c: the two ends of the soak (tests/soak.sh).
 *
 *   soak_peer -s [-b ADDR] [-p PORT]
 *   soak_peer -c HOST -p PORT [-q QPS] [-t SECS] [-z OCTETS] [-w WRITES]
 *             [-i PAUSE_MS]
 *
 * Server: one context, one MR of QPS (at most SP_MAX_QPS) slots of
 * SP_SLOT octets; accepts every connection, answering with the address
 * and STag of the slot the client named in its private data (1 octet) in
 * the MPA Reply's private data (8-octet address, 4-octet STag, network
 * order); destroys the QP and id at TIMEWAIT_EXIT (or CONNECT_ERROR).
 * Prints "port N" once listening; runs until SIGINT/SIGTERM.
 *
 * Client: QPS connections (default 16) churning for SECS seconds (default
 * 60): each connection in turn resolves, connects, registers its buffers,
 * writes OCTETS (default 256 KiB) of a fresh pattern into its server slot
 * in WRITES RDMA Writes, reads the slot back with one RDMA Read (RFC 5040
 * §4.3, §4.4), compares, disconnects, waits for TIMEWAIT_EXIT, destroys
 * the QP and id, deregisters its MRs and pauses PAUSE_MS (default 100).
 * A failed connect is counted and retried. Every established iteration
 * must complete every WR successfully and read back what it wrote; a
 * connection in one state for SP_STUCK_S seconds is a hang. At the end:
 *   soak: N iterations verified, E connect errors, F failures
 * Exit 0 when no failure and no hang, 1 otherwise.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "iwarp/iwarp.h"

#define SP_MAX_QPS 64
#define SP_SLOT	   ((size_t)1 << 20)
#define SP_STUCK_S 120
#define SP_MAX_WR  64

static volatile sig_atomic_t sp_stop;

static void sp_sig(int s)
{
	(void)s;
	sp_stop = 1;
}

static uint64_t sp_now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000u + (uint64_t)ts.tv_nsec / 1000000u;
}

static void put_be(uint8_t *p, uint64_t v, int n)
{
	int i;

	for (i = n - 1; i >= 0; i--) {
		p[i] = (uint8_t)v;
		v >>= 8;
	}
}

static uint64_t get_be(const uint8_t *p, int n)
{
	uint64_t v = 0;
	int i;

	for (i = 0; i < n; i++)
		v = v << 8 | p[i];
	return v;
}

static struct iwarp_context *sp_open(void)
{
	struct iwarp_context_attr a;
	struct iwarp_context *ctx;

	iwarp_context_attr_init(&a);
	a.progress = IWARP_PROGRESS_CPU;
	ctx = iwarp_open_context(&a);
	if (!ctx) {
		fprintf(stderr, "soak: iwarp_open_context: %s\n",
			strerror(errno));
		exit(errno == ENOSYS ? 77 : 1);
	}
	return ctx;
}

static void sp_qp_attr(struct iwarp_qp_init_attr *qa, struct iwarp_cq *cq)
{
	memset(qa, 0, sizeof(*qa));
	qa->send_cq = qa->recv_cq = cq;
	qa->qp_type = IWARP_QPT_RC;
	qa->cap.max_send_wr = SP_MAX_WR;
	qa->cap.max_recv_wr = 4;
	qa->cap.max_send_sge = qa->cap.max_recv_sge = 1;
}

/* ---- server ------------------------------------------------------------ */

static int sp_server(const char *bind_addr, uint16_t port)
{
	struct iwarp_context *ctx = sp_open();
	struct iwarp_event_channel *ech = iwarp_cm_create_event_channel();
	struct iwarp_pd *pd = iwarp_alloc_pd(ctx);
	struct iwarp_cq *cq = iwarp_create_cq(ctx, 4096, NULL, NULL, 0);
	size_t len = SP_SLOT * SP_MAX_QPS;
	uint8_t *buf = calloc(1, len);
	struct iwarp_mr *mr;
	struct iwarp_cm_id *l;
	struct sockaddr_storage ss;
	long accepted = 0, ended = 0;
	int rc;

	if (!ech || !pd || !cq || !buf) {
		fprintf(stderr, "soak server: setup: %s\n", strerror(errno));
		return 1;
	}
	mr = iwarp_reg_mr(pd, buf, len,
			  IWARP_ACCESS_LOCAL_WRITE | IWARP_ACCESS_REMOTE_WRITE |
				  IWARP_ACCESS_REMOTE_READ);
	if (!mr || iwarp_cm_create_id(ech, ctx, &l, NULL, IWARP_PS_TCP) ||
	    iwarp_cm_getaddr(bind_addr, port, &ss) ||
	    iwarp_cm_bind_addr(l, (struct sockaddr *)&ss) ||
	    iwarp_cm_listen(l, 64)) {
		fprintf(stderr, "soak server: listen failed\n");
		return 1;
	}
	printf("port %u\n",
	       ntohs(l->src_addr.ss_family == AF_INET6
			     ? ((struct sockaddr_in6 *)&l->src_addr)->sin6_port
			     : ((struct sockaddr_in *)&l->src_addr)->sin_port));
	fflush(stdout);
	while (!sp_stop) {
		struct pollfd p = {.fd = ech->fd, .events = POLLIN};
		struct iwarp_cm_event *ev;
		struct iwarp_cm_id *id;
		struct iwarp_async_event ae;
		struct iwarp_wc wc[16];

		(void)poll(&p, 1, 200);
		while (iwarp_poll_cq(cq, 16, wc) > 0)
			; /* the server posts nothing; flushes of none */
		while (1) {
			struct pollfd q = {.fd = iwarp_async_fd(ctx),
					   .events = POLLIN};

			if (poll(&q, 1, 0) != 1 ||
			    iwarp_get_async_event(ctx, &ae))
				break;
			iwarp_ack_async_event(&ae);
		}
		if (!(p.revents & POLLIN))
			continue;
		if (iwarp_cm_get_event(ech, &ev))
			continue;
		id = ev->id;
		switch ((int)ev->event) {
		case IWARP_CM_EVENT_CONNECT_REQUEST: {
			struct iwarp_qp_init_attr qa;
			struct iwarp_conn_param cp;
			uint8_t pdat[12];
			unsigned int slot =
				ev->param.conn.private_data_len >= 1
					? *(const uint8_t *)
						   ev->param.conn.private_data
					: SP_MAX_QPS;

			iwarp_cm_ack_event(ev);
			sp_qp_attr(&qa, cq);
			if (slot >= SP_MAX_QPS ||
			    iwarp_cm_create_qp(id, pd, &qa)) {
				iwarp_cm_reject(id, NULL, 0);
				iwarp_cm_destroy_id(id);
				continue;
			}
			put_be(pdat, (uintptr_t)(buf + slot * SP_SLOT), 8);
			put_be(pdat + 8, mr->rkey, 4);
			memset(&cp, 0, sizeof(cp));
			cp.private_data = pdat;
			cp.private_data_len = sizeof(pdat);
			cp.responder_resources = cp.initiator_depth = 16;
			rc = iwarp_cm_accept(id, &cp);
			if (rc) {
				fprintf(stderr, "soak server: accept: %s\n",
					iwarp_strerror(rc));
				iwarp_cm_destroy_qp(id);
				iwarp_cm_destroy_id(id);
			}
			accepted++;
			continue;
		}
		case IWARP_CM_EVENT_TIMEWAIT_EXIT:
		case IWARP_CM_EVENT_CONNECT_ERROR:
			iwarp_cm_ack_event(ev);
			iwarp_cm_destroy_qp(id);
			iwarp_cm_destroy_id(id);
			ended++;
			continue;
		default:
			iwarp_cm_ack_event(ev);
		}
	}
	printf("soak server: %ld accepted, %ld ended\n", accepted, ended);
	iwarp_cm_destroy_id(l);
	iwarp_dereg_mr(mr);
	/* ids still open go with the context */
	iwarp_destroy_cq(cq);
	iwarp_dealloc_pd(pd);
	iwarp_cm_destroy_event_channel(ech);
	iwarp_close_context(ctx);
	free(buf);
	return 0;
}

/* ---- client ------------------------------------------------------------ */

enum sp_state { SP_IDLE, SP_RESOLVE, SP_CONNECT, SP_DATA, SP_DISC };

struct sp_conn {
	int slot;
	enum sp_state st;
	struct iwarp_cm_id *id;
	struct iwarp_mr *smr, *dmr;
	uint8_t *src, *dst;
	uint64_t raddr;
	uint32_t rkey;
	int outstanding, failed, tw;
	uint64_t since, next;
	unsigned int iter;
};

static struct {
	struct iwarp_context *ctx;
	struct iwarp_event_channel *ech;
	struct iwarp_pd *pd;
	struct iwarp_cq *cq;
	struct sockaddr_storage dst;
	size_t octets;
	int writes;
	unsigned int pause_ms;
	long verified, conn_err, failures;
} C;

static void sp_set(struct sp_conn *k, enum sp_state st)
{
	k->st = st;
	k->since = sp_now_ms();
}

static void sp_release(struct sp_conn *k)
{
	if (k->id) {
		iwarp_cm_destroy_qp(k->id);
		iwarp_cm_destroy_id(k->id);
		k->id = NULL;
	}
	if (k->smr)
		iwarp_dereg_mr(k->smr);
	if (k->dmr)
		iwarp_dereg_mr(k->dmr);
	k->smr = k->dmr = NULL;
	k->tw = 0;
	k->next = sp_now_ms() + C.pause_ms;
	sp_set(k, SP_IDLE);
}

static void sp_fail(struct sp_conn *k, const char *what)
{
	fprintf(stderr, "soak: qp %d iteration %u: %s\n", k->slot, k->iter,
		what);
	C.failures++;
}

static void sp_start(struct sp_conn *k)
{
	k->iter++;
	if (iwarp_cm_create_id(C.ech, C.ctx, &k->id, k, IWARP_PS_TCP) ||
	    iwarp_cm_resolve_addr(k->id, NULL, (struct sockaddr *)&C.dst,
				  5000)) {
		sp_fail(k, "create_id/resolve_addr");
		sp_release(k);
		return;
	}
	sp_set(k, SP_RESOLVE);
}

static void sp_post(struct sp_conn *k)
{
	size_t chunk = C.octets / (size_t)C.writes, j;
	struct iwarp_send_wr wr, *bad;
	struct iwarp_sge sge;
	int i;

	k->smr = iwarp_reg_mr(C.pd, k->src, C.octets, IWARP_ACCESS_LOCAL_WRITE);
	k->dmr = iwarp_reg_mr(C.pd, k->dst, C.octets, IWARP_ACCESS_LOCAL_WRITE);
	if (!k->smr || !k->dmr) {
		sp_fail(k, "iwarp_reg_mr");
		(void)iwarp_cm_disconnect(k->id);
		sp_set(k, SP_DISC);
		return;
	}
	for (j = 0; j < C.octets; j++)
		k->src[j] = (uint8_t)(k->iter * 31u + (unsigned)k->slot +
				      j * 131u + (j >> 10));
	memset(k->dst, 0, C.octets);
	k->outstanding = 0;
	k->failed = 0;
	for (i = 0; i <= C.writes; i++) {
		int rd = i == C.writes;

		memset(&wr, 0, sizeof(wr));
		sge.addr =
			(uintptr_t)(rd ? k->dst : k->src + (size_t)i * chunk);
		sge.length = (uint32_t)(rd ? chunk * (size_t)C.writes : chunk);
		sge.lkey = rd ? k->dmr->lkey : k->smr->lkey;
		wr.wr_id = (uintptr_t)k;
		wr.sg_list = &sge;
		wr.num_sge = 1;
		wr.opcode = rd ? IWARP_WR_RDMA_READ : IWARP_WR_RDMA_WRITE;
		wr.send_flags = IWARP_SEND_SIGNALED;
		wr.wr.rdma.remote_addr =
			k->raddr + (rd ? 0 : (uint64_t)i * chunk);
		wr.wr.rdma.rkey = k->rkey;
		if (iwarp_post_send(k->id->qp, &wr, &bad)) {
			sp_fail(k, "iwarp_post_send refused");
			k->failed = 1;
			break;
		}
		k->outstanding++;
	}
	sp_set(k, SP_DATA);
	if (!k->outstanding) {
		(void)iwarp_cm_disconnect(k->id);
		sp_set(k, SP_DISC);
	}
}

static void sp_cm(void)
{
	struct iwarp_cm_event *ev;

	while (iwarp_cm_get_event(C.ech, &ev) == 0) {
		struct sp_conn *k = ev->id->context;
		enum iwarp_cm_event_type t = ev->event;
		int status = ev->status;
		uint8_t pdat[12];
		int pdl = ev->param.conn.private_data_len;

		if (t == IWARP_CM_EVENT_ESTABLISHED && pdl >= 12)
			memcpy(pdat, ev->param.conn.private_data, 12);
		iwarp_cm_ack_event(ev);
		if (t == IWARP_CM_EVENT_ADDR_RESOLVED) {
			if (iwarp_cm_resolve_route(k->id, 5000)) {
				sp_fail(k, "resolve_route");
				sp_release(k);
			}
		} else if (t == IWARP_CM_EVENT_ROUTE_RESOLVED) {
			struct iwarp_qp_init_attr qa;
			struct iwarp_conn_param cp;
			uint8_t slot = (uint8_t)k->slot;

			sp_qp_attr(&qa, C.cq);
			memset(&cp, 0, sizeof(cp));
			cp.private_data = &slot;
			cp.private_data_len = 1;
			cp.responder_resources = cp.initiator_depth = 16;
			if (iwarp_cm_create_qp(k->id, C.pd, &qa) ||
			    iwarp_cm_connect(k->id, &cp)) {
				sp_fail(k, "create_qp/connect");
				sp_release(k);
			} else {
				sp_set(k, SP_CONNECT);
			}
		} else if (t == IWARP_CM_EVENT_ESTABLISHED) {
			if (pdl < 12) {
				sp_fail(k, "no slot in the MPA Reply");
				(void)iwarp_cm_disconnect(k->id);
				sp_set(k, SP_DISC);
				continue;
			}
			k->raddr = get_be(pdat, 8);
			k->rkey = (uint32_t)get_be(pdat + 8, 4);
			sp_post(k);
		} else if (t == IWARP_CM_EVENT_DISCONNECTED) {
			if (k->st != SP_DISC) {
				fprintf(stderr,
					"soak: qp %d iteration %u: "
					"DISCONNECTED (%d) during the data\n",
					k->slot, k->iter, status);
				C.failures++;
			}
			sp_set(k, SP_DISC);
		} else if (t == IWARP_CM_EVENT_TIMEWAIT_EXIT) {
			k->tw = 1;
			if (!k->outstanding)
				sp_release(k); /* else at the last flush */
		} else if (t == IWARP_CM_EVENT_CONNECT_ERROR ||
			   t == IWARP_CM_EVENT_REJECTED ||
			   t == IWARP_CM_EVENT_UNREACHABLE ||
			   t == IWARP_CM_EVENT_ADDR_ERROR ||
			   t == IWARP_CM_EVENT_ROUTE_ERROR) {
			fprintf(stderr, "soak: qp %d iteration %u: %s (%s)\n",
				k->slot, k->iter, iwarp_cm_event_str(t),
				iwarp_strerror(status));
			C.conn_err++;
			sp_release(k);
		}
	}
}

static void sp_cq(void)
{
	struct iwarp_wc wc[32];
	int n, i;

	while ((n = iwarp_poll_cq(C.cq, 32, wc)) > 0) {
		for (i = 0; i < n; i++) {
			struct sp_conn *k =
				(struct sp_conn *)(uintptr_t)wc[i].wr_id;

			k->outstanding--;
			if (wc[i].status != IWARP_WC_SUCCESS) {
				if (!k->failed) {
					char m[96];

					snprintf(m, sizeof(m), "WR status %s",
						 iwarp_wc_status_str(
							 wc[i].status));
					sp_fail(k, m);
				}
				k->failed = 1;
			}
			if (k->outstanding)
				continue;
			if (k->tw) {
				sp_release(k);
				continue;
			}
			if (k->st == SP_DATA) {
				if (!k->failed) {
					if (memcmp(k->src, k->dst, C.octets))
						sp_fail(k, "read back differs");
					else
						C.verified++;
				}
				(void)iwarp_cm_disconnect(k->id);
				sp_set(k, SP_DISC);
			}
		}
	}
}

static int sp_client(const char *host, uint16_t port, int qps, int secs)
{
	struct sp_conn *k = calloc((size_t)qps, sizeof(*k));
	uint64_t end, t0 = sp_now_ms();
	int i, busy;

	C.ctx = sp_open();
	C.ech = iwarp_cm_create_event_channel();
	C.pd = iwarp_alloc_pd(C.ctx);
	C.cq = iwarp_create_cq(C.ctx, 4096, NULL, NULL, 0);
	if (!k || !C.ech || !C.pd || !C.cq ||
	    iwarp_cm_getaddr(host, port, &C.dst)) {
		fprintf(stderr, "soak client: setup failed\n");
		return 1;
	}
	fcntl(C.ech->fd, F_SETFL, fcntl(C.ech->fd, F_GETFL) | O_NONBLOCK);
	end = t0 + (uint64_t)secs * 1000u;
	for (i = 0; i < qps; i++) {
		k[i].slot = i;
		k[i].src = malloc(C.octets);
		k[i].dst = malloc(C.octets);
		if (!k[i].src || !k[i].dst)
			return 1;
		k[i].next = t0 + (uint64_t)i * 20u;
	}
	for (;;) {
		struct pollfd p = {.fd = C.ech->fd, .events = POLLIN};
		uint64_t now;

		(void)poll(&p, 1, 2);
		if (p.revents & POLLIN)
			sp_cm();
		sp_cq();
		now = sp_now_ms();
		busy = 0;
		for (i = 0; i < qps; i++) {
			if (k[i].st == SP_IDLE) {
				if (now < end && !sp_stop && now >= k[i].next)
					sp_start(&k[i]);
			} else if (now - k[i].since > SP_STUCK_S * 1000u) {
				fprintf(stderr,
					"soak: qp %d iteration %u: stuck in "
					"state %d for %d s (outstanding %d): "
					"hang\n",
					i, k[i].iter, k[i].st, SP_STUCK_S,
					k[i].outstanding);
				return 1;
			}
			if (k[i].st != SP_IDLE)
				busy++;
		}
		if ((now >= end || sp_stop) && !busy)
			break;
	}
	printf("soak: %ld iterations verified, %ld connect errors, %ld "
	       "failures in %.0f s\n",
	       C.verified, C.conn_err, C.failures,
	       (double)(sp_now_ms() - t0) / 1000.0);
	for (i = 0; i < qps; i++) {
		free(k[i].src);
		free(k[i].dst);
	}
	free(k);
	iwarp_destroy_cq(C.cq);
	iwarp_dealloc_pd(C.pd);
	iwarp_cm_destroy_event_channel(C.ech);
	iwarp_close_context(C.ctx);
	return C.failures || !C.verified ? 1 : 0;
}

int main(int argc, char **argv)
{
	const char *host = NULL, *bind_addr = "0.0.0.0";
	int ch, server = 0, qps = 16, secs = 60;
	uint16_t port = 0;

	C.octets = 256u << 10;
	C.writes = 4;
	C.pause_ms = 100;
	while ((ch = getopt(argc, argv, "sc:b:p:q:t:z:w:i:")) != -1) {
		switch (ch) {
		case 's':
			server = 1;
			break;
		case 'c':
			host = optarg;
			break;
		case 'b':
			bind_addr = optarg;
			break;
		case 'p':
			port = (uint16_t)atoi(optarg);
			break;
		case 'q':
			qps = atoi(optarg);
			break;
		case 't':
			secs = atoi(optarg);
			break;
		case 'z':
			C.octets = (size_t)strtoul(optarg, NULL, 0);
			break;
		case 'w':
			C.writes = atoi(optarg);
			break;
		case 'i':
			C.pause_ms = (unsigned int)atoi(optarg);
			break;
		default:
			fprintf(stderr, "usage: see tests/net/soak_peer.c\n");
			return 2;
		}
	}
	if (qps < 1 || qps > SP_MAX_QPS || C.writes < 1 ||
	    C.writes >= SP_MAX_WR || !C.octets || C.octets > SP_SLOT ||
	    C.octets % (size_t)C.writes || (!server && (!host || !port))) {
		fprintf(stderr, "soak: bad arguments\n");
		return 2;
	}
	signal(SIGINT, sp_sig);
	signal(SIGTERM, sp_sig);
	signal(SIGPIPE, SIG_IGN);
	setvbuf(stdout, NULL, _IOLBF, 0);
	return server ? sp_server(bind_addr, port)
		      : sp_client(host, port, qps, secs);
}
