/*
 * tests/interop/oob_write.c: provokes a TERMINATE from a real iWARP peer
 * with an out-of-bounds RDMA Write, using libiwarp's public API only, and
 * checks that the library surfaces it: an async event caused by a received
 * TERMINATE, and the QP in the error state.
 *
 * Server for one rping client (rdma-core's "rping -c", e.g. on siw):
 *   oob_write [-a ADDR] [-p PORT] [-t TIMEOUT_MS] [-S SIZE] [--crc]
 * rping's client sends its buffer (address, rkey, length: 8 + 4 + 4 octets,
 * big-endian) in its first Send; we then RDMA Write 64 octets at
 * address + length, just beyond the advertised region. The peer's DDP layer
 * must refuse the tagged segment with a base-or-bounds violation and send
 * a TERMINATE (RFC 5041 §7.2: layer DDP, tagged buffer error, code 1;
 * RFC 5040 §5.2 for the RDMAP side).
 *
 * Exit status: 0 the TERMINATE was surfaced as expected, 1 it was not (or
 * another failure), 2 usage, 77 io_uring unavailable.
 */
#include <errno.h>
#include <getopt.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "iwarp/iwarp.h"

#define OOB_LEN 64

struct oob {
	struct iwarp_context *ctx;
	struct iwarp_event_channel *ch;
	struct iwarp_cm_id *lid;
	struct iwarp_cm_id *id;
	struct iwarp_pd *pd;
	struct iwarp_cq *cq;
	struct iwarp_mr *rmr;
	struct iwarp_mr *smr;
	uint8_t rbuf[16];
	uint8_t sbuf[OOB_LEN];
	uint64_t deadline_ms;
	int got_recv;
	int got_write_wc;
	enum iwarp_wc_status write_status;
	int got_term;
	struct iwarp_term_cause term;
	enum iwarp_event_type term_event;
	int disconnected;
};

static uint64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000u + (uint64_t)ts.tv_nsec / 1000000u;
}

static uint64_t get_be(const uint8_t *p, int n)
{
	uint64_t v = 0;
	int i;

	for (i = 0; i < n; i++)
		v = v << 8 | p[i];
	return v;
}

/* Waits for the next CM event (bounded by the deadline); 0 or -errno. */
static int oob_cm_event(struct oob *o, struct iwarp_cm_event **ev)
{
	struct pollfd pfd = {.fd = o->ch->fd, .events = POLLIN};
	uint64_t now;

	for (;;) {
		now = now_ms();
		if (now >= o->deadline_ms)
			return -ETIMEDOUT;
		if (poll(&pfd, 1, (int)(o->deadline_ms - now)) > 0)
			return iwarp_cm_get_event(o->ch, ev);
	}
}

/* Handles one work completion. */
static void oob_wc(struct oob *o, const struct iwarp_wc *wc)
{
	printf("completion: wr_id %llu opcode %d status %s vendor_err 0x%06x\n",
	       (unsigned long long)wc->wr_id, (int)wc->opcode,
	       iwarp_wc_status_str(wc->status), wc->vendor_err);
	if (wc->wr_id == 1) {
		if (wc->status == IWARP_WC_SUCCESS && wc->byte_len >= 16)
			o->got_recv = 1;
		else if (!o->got_recv)
			o->got_recv = -1;
	} else if (wc->wr_id == 2) {
		o->got_write_wc = 1;
		o->write_status = wc->status;
	}
}

/* Drains CQ, async and CM events until |cond| holds or the deadline. */
static int oob_wait(struct oob *o, int (*cond)(const struct oob *))
{
	struct pollfd pfd[2];
	struct iwarp_async_event ae;
	struct iwarp_cm_event *ev;
	struct iwarp_wc wc;
	int n;

	pfd[0].fd = iwarp_async_fd(o->ctx);
	pfd[0].events = POLLIN;
	pfd[1].fd = o->ch->fd;
	pfd[1].events = POLLIN;
	while (!cond(o)) {
		if (now_ms() >= o->deadline_ms)
			return -ETIMEDOUT;
		while ((n = iwarp_poll_cq(o->cq, 1, &wc)) > 0)
			oob_wc(o, &wc);
		if (n < 0)
			return n;
		if (cond(o))
			break;
		pfd[0].revents = pfd[1].revents = 0;
		poll(pfd, 2, 1);
		if (pfd[0].revents & POLLIN &&
		    !iwarp_get_async_event(o->ctx, &ae)) {
			printf("async event: %s, TERMINATE %s: layer %u etype %u ecode %u: %s\n",
			       iwarp_event_type_str(ae.event_type),
			       ae.term_received ? "received" : "sent",
			       ae.term.layer, ae.term.etype, ae.term.ecode,
			       iwarp_term_strerror(ae.term.layer, ae.term.etype,
						   ae.term.ecode));
			if (ae.term_received && !o->got_term) {
				o->got_term = 1;
				o->term = ae.term;
				o->term_event = ae.event_type;
			}
			iwarp_ack_async_event(&ae);
		}
		if (pfd[1].revents & POLLIN &&
		    !iwarp_cm_get_event(o->ch, &ev)) {
			printf("cm event: %s status %d\n",
			       iwarp_cm_event_str(ev->event), ev->status);
			if (ev->event == IWARP_CM_EVENT_DISCONNECTED)
				o->disconnected = 1;
			iwarp_cm_ack_event(ev);
		}
	}
	return 0;
}

static int cond_recv(const struct oob *o)
{
	return o->got_recv != 0;
}

static int cond_term(const struct oob *o)
{
	return o->got_term;
}

static int cond_never(const struct oob *o)
{
	(void)o;
	return 0;
}

/* Accepts one rping client; 0 or a negative error. */
static int oob_accept(struct oob *o)
{
	struct iwarp_qp_init_attr qa;
	struct iwarp_conn_param cp;
	struct iwarp_cm_event *ev;
	struct iwarp_recv_wr rwr, *bad;
	struct iwarp_sge sge;
	int ret;

	ret = oob_cm_event(o, &ev);
	if (ret)
		return ret;
	if (ev->event != IWARP_CM_EVENT_CONNECT_REQUEST) {
		fprintf(stderr, "oob_write: unexpected %s\n",
			iwarp_cm_event_str(ev->event));
		iwarp_cm_ack_event(ev);
		return -EPROTO;
	}
	o->id = ev->id;
	iwarp_cm_ack_event(ev);

	o->pd = iwarp_alloc_pd(o->ctx);
	o->cq = o->pd ? iwarp_create_cq(o->ctx, 16, NULL, NULL, 0) : NULL;
	if (!o->cq)
		return -errno;
	memset(&qa, 0, sizeof(qa));
	qa.send_cq = o->cq;
	qa.recv_cq = o->cq;
	qa.cap.max_send_wr = 4;
	qa.cap.max_recv_wr = 4;
	qa.cap.max_send_sge = 1;
	qa.cap.max_recv_sge = 1;
	qa.qp_type = IWARP_QPT_RC;
	ret = iwarp_cm_create_qp(o->id, o->pd, &qa);
	if (ret)
		return ret;
	o->rmr = iwarp_reg_mr(o->pd, o->rbuf, sizeof(o->rbuf),
			      IWARP_ACCESS_LOCAL_WRITE);
	o->smr = iwarp_reg_mr(o->pd, o->sbuf, sizeof(o->sbuf), 0);
	if (!o->rmr || !o->smr)
		return -errno;
	sge.addr = (uint64_t)(uintptr_t)o->rbuf;
	sge.length = sizeof(o->rbuf);
	sge.lkey = o->rmr->lkey;
	memset(&rwr, 0, sizeof(rwr));
	rwr.wr_id = 1;
	rwr.sg_list = &sge;
	rwr.num_sge = 1;
	ret = iwarp_post_recv(o->id->qp, &rwr, &bad);
	if (ret)
		return ret;
	memset(&cp, 0, sizeof(cp));
	cp.responder_resources = 1;
	cp.initiator_depth = 1;
	ret = iwarp_cm_accept(o->id, &cp);
	if (ret)
		return ret;
	ret = oob_cm_event(o, &ev);
	if (ret)
		return ret;
	printf("cm event: %s status %d\n", iwarp_cm_event_str(ev->event),
	       ev->status);
	ret = ev->event == IWARP_CM_EVENT_ESTABLISHED ? 0 : -ECONNABORTED;
	iwarp_cm_ack_event(ev);
	return ret;
}

/* The out-of-bounds Write; 0 or a negative error. */
static int oob_write(struct oob *o)
{
	struct iwarp_send_wr wr, *bad;
	struct iwarp_sge sge;
	uint64_t addr;
	uint32_t rkey, len;

	addr = get_be(o->rbuf, 8);
	rkey = (uint32_t)get_be(o->rbuf + 8, 4);
	len = (uint32_t)get_be(o->rbuf + 12, 4);
	printf("peer buffer: addr 0x%llx rkey 0x%x len %u\n",
	       (unsigned long long)addr, rkey, len);
	printf("RDMA Write %d octets at 0x%llx (addr + len: out of bounds)\n",
	       OOB_LEN, (unsigned long long)(addr + len));
	memset(o->sbuf, 0xab, sizeof(o->sbuf));
	sge.addr = (uint64_t)(uintptr_t)o->sbuf;
	sge.length = OOB_LEN;
	sge.lkey = o->smr->lkey;
	memset(&wr, 0, sizeof(wr));
	wr.wr_id = 2;
	wr.sg_list = &sge;
	wr.num_sge = 1;
	wr.opcode = IWARP_WR_RDMA_WRITE;
	wr.send_flags = IWARP_SEND_SIGNALED;
	wr.wr.rdma.remote_addr = addr + len;
	wr.wr.rdma.rkey = rkey;
	return iwarp_post_send(o->id->qp, &wr, &bad);
}

static void oob_teardown(struct oob *o)
{
	if (o->id) {
		iwarp_cm_disconnect(o->id);
		iwarp_cm_destroy_qp(o->id);
		iwarp_cm_destroy_id(o->id);
	}
	if (o->smr)
		iwarp_dereg_mr(o->smr);
	if (o->rmr)
		iwarp_dereg_mr(o->rmr);
	if (o->cq)
		iwarp_destroy_cq(o->cq);
	if (o->pd)
		iwarp_dealloc_pd(o->pd);
	if (o->lid)
		iwarp_cm_destroy_id(o->lid);
	if (o->ch)
		iwarp_cm_destroy_event_channel(o->ch);
	if (o->ctx)
		iwarp_close_context(o->ctx);
}

static void usage(FILE *f)
{
	fprintf(f,
		"usage: oob_write [-a ADDR] [-p PORT] [-t TIMEOUT_MS] [--crc]\n");
}

int main(int argc, char **argv)
{
	static const struct option lo[] = {
		{"crc", no_argument, NULL, 'C'},
		{"help", no_argument, NULL, 'h'},
		{NULL, 0, NULL, 0},
	};
	struct iwarp_context_attr attr;
	struct sockaddr_storage ss;
	struct iwarp_qp_attr qpa;
	struct iwarp_qp_init_attr qia;
	const char *addr = "127.0.0.1";
	long port = 7174, tmo = 20000;
	struct oob o;
	int c, ret, ok;

	memset(&o, 0, sizeof(o));
	iwarp_context_attr_init(&attr);
	while ((c = getopt_long(argc, argv, "a:p:t:h", lo, NULL)) != -1) {
		switch (c) {
		case 'a':
			addr = optarg;
			break;
		case 'p':
			port = strtol(optarg, NULL, 10);
			break;
		case 't':
			tmo = strtol(optarg, NULL, 10);
			break;
		case 'C':
			attr.crc = IWARP_CRC_REQUEST;
			break;
		case 'h':
			usage(stdout);
			return 0;
		default:
			usage(stderr);
			return 2;
		}
	}
	if (port <= 0 || port > 65535 || tmo <= 0) {
		usage(stderr);
		return 2;
	}
	o.deadline_ms = now_ms() + (uint64_t)tmo;

	o.ctx = iwarp_open_context(&attr);
	if (!o.ctx) {
		fprintf(stderr, "oob_write: iwarp_open_context: %s\n",
			iwarp_strerror(-errno));
		return errno == ENOSYS ? 77 : 1;
	}
	o.ch = iwarp_cm_create_event_channel();
	ret = o.ch ? iwarp_cm_create_id(o.ch, o.ctx, &o.lid, NULL, IWARP_PS_TCP)
		   : -errno;
	if (!ret)
		ret = iwarp_cm_getaddr(addr, (uint16_t)port, &ss);
	if (!ret)
		ret = iwarp_cm_bind_addr(o.lid, (struct sockaddr *)&ss);
	if (!ret)
		ret = iwarp_cm_listen(o.lid, 1);
	if (ret) {
		fprintf(stderr, "oob_write: listen on %s:%ld: %s\n", addr, port,
			iwarp_strerror(ret));
		oob_teardown(&o);
		return 1;
	}
	printf("listening on %s:%ld\n", addr, port);
	fflush(stdout);

	ret = oob_accept(&o);
	if (!ret)
		ret = oob_wait(&o, cond_recv);
	if (!ret && o.got_recv < 0)
		ret = -EPROTO;
	if (!ret)
		ret = oob_write(&o);
	if (!ret)
		ret = oob_wait(&o, cond_term);
	if (ret) {
		fprintf(stderr, "oob_write: %s (no TERMINATE surfaced)\n",
			iwarp_strerror(ret));
		oob_teardown(&o);
		return 1;
	}
	/* let the Write's completion and the disconnect arrive, briefly */
	o.deadline_ms = now_ms() + 500;
	oob_wait(&o, cond_never);

	memset(&qpa, 0, sizeof(qpa));
	ret = iwarp_query_qp(o.id->qp, &qpa, IWARP_QP_STATE, &qia);
	printf("TERMINATE surfaced: %s, layer %u etype %u ecode %u (%s)\n",
	       iwarp_event_type_str(o.term_event), o.term.layer, o.term.etype,
	       o.term.ecode,
	       iwarp_term_strerror(o.term.layer, o.term.etype, o.term.ecode));
	printf("QP state: %d (%s)\n", (int)qpa.qp_state,
	       qpa.qp_state == IWARP_QPS_ERR ? "ERR" : "not ERR");
	if (o.got_write_wc)
		printf("Write completion: %s\n",
		       iwarp_wc_status_str(o.write_status));
	ok = !ret && qpa.qp_state == IWARP_QPS_ERR;
	/* RFC 5041 §7.2: tagged buffer, base or bounds violation */
	if (o.term.layer != IWARP_TERM_LAYER_DDP ||
	    o.term.etype != IWARP_DDP_ETYPE_TAGGED_BUFFER ||
	    o.term.ecode != IWARP_DDP_ECODE_T_BASE_BOUNDS)
		printf("note: cause is not DDP/tagged/base-or-bounds\n");
	oob_teardown(&o);
	printf("%s\n", ok ? "PASS" : "FAIL");
	return ok ? 0 : 1;
}
