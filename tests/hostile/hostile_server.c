/*
 * tests/hostile/hostile_server.c: the server side of the hostile-peer suite
 * (tests/hostile/hostile_peer.py). Public API only (include/iwarp/iwarp.h).
 *
 * Listens on 127.0.0.1 port 0 and accepts any number of connections, one
 * after the other or at once. Each connection gets its own resources:
 *   PD A: "rw"    4096 octets LOCAL_WRITE | REMOTE_WRITE | REMOTE_READ
 *         "ro"    4096 octets REMOTE_READ only (filled with i & 0xff)
 *         "inv"   4096 octets LOCAL_WRITE | REMOTE_WRITE | MW_BIND; the
 *                 Reply advertises a type 2 memory window over all of it
 *                 (remote write), bound once ESTABLISHED: its completion
 *                 (wc, opcode 5 = IWARP_WC_BIND_MW) says the window is
 *                 ready (the target of Send with Invalidate tests)
 *         "recv"  nrecv receive buffers of recvsize octets (LOCAL_WRITE)
 *         "atom"  4096 octets LOCAL_WRITE | REMOTE_WRITE | REMOTE_READ |
 *                 REMOTE_ATOMIC, 8-octet aligned, zeroed (only with
 *                 --rdmap-ext: the RFC 7306 Atomic Request target)
 *   PD B: "other" 4096 octets LOCAL_WRITE | REMOTE_WRITE | REMOTE_READ,
 *         registered in a second PD (STag not associated with the stream)
 *   a CQ, an RC QP, nrecv receive WRs posted before the accept.
 * The peer configures a connection with text in its MPA Request's private
 * data: "nrecv=N;recvsize=N;ird=N;ord=N" (each optional). The accepting
 * Reply's private data tells the peer where its buffers are (big-endian):
 *   u8 version (1), u8 nrecv, u16 recvsize, then for rw, ro, inv, other:
 *   u32 STag, u64 address, u32 length           (4 + 4 * 16 = 68 octets)
 * and with --rdmap-ext the same 16 octets for atom (84 octets).
 *
 * A received Send whose payload starts with "READ" followed by u32 STag,
 * u64 TO, u32 length (big-endian) makes the server post an RDMA Read of
 * that much from the peer into rw at offset 2048 (to test Read Responses).
 *
 * Every event goes to stdout as one JSON object per line:
 *   {"ev":"listening","port":P,"pid":N}
 *   {"ev":"conn","peer":P,"rw":{...},...}   (at CONNECT_REQUEST)
 *   {"ev":"cm","peer":P,"event":"ESTABLISHED","status":S}
 *   {"ev":"wc","peer":P,"wr_id":N,"status":S,"opcode":O,"vendor_err":V,
 *    "byte_len":L,"wc_flags":F,"inv_rkey":K[,"data":hex,"rw_head":hex]}
 *   {"ev":"async","peer":P,"type":T,"layer":L,"etype":E,"ecode":C,
 *    "term_received":R}
 *   {"ev":"freed","peer":P}                 (resources released)
 * where P is the peer's TCP port (the harness matches on it).
 *
 * Options: --crc off|request|require, --markers, --mpa-rev 1|2,
 * --req-timeout MS, --rep-timeout MS, --rdmap-ext (attr.rdmap_ext = 1:
 * RFC 7306 Immediate Data and Atomics when the peer sets MPA flag 0x01;
 * registers "atom"), --lifetime S (exit after S seconds,
 * default 600). It also ends when its stdin reaches end of file (the
 * harness keeps a pipe open). Exit 3 when io_uring is unavailable.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "iwarp/iwarp.h"

#define BUF_LEN	 4096u
#define MAX_RECV 16u
#define SINK_OFF 2048u
#define WR_READ	 1000u
#define WR_BIND	 1001u /* the bind of the window over "inv" */
#define ACC_RW                                                                 \
	(IWARP_ACCESS_LOCAL_WRITE | IWARP_ACCESS_REMOTE_WRITE |                \
	 IWARP_ACCESS_REMOTE_READ)

struct conn {
	struct conn *next;
	struct iwarp_cm_id *id;
	unsigned int peer;
	struct iwarp_pd *pd, *pd2;
	struct iwarp_cq *cq;
	struct iwarp_mr *rw, *ro, *inv, *other, *recv, *atom;
	uint8_t *rw_buf, *ro_buf, *inv_buf, *other_buf, *recv_buf, *atom_buf;
	struct iwarp_mw *mw; /* type 2 window over "inv" (advertised) */
	uint32_t mw_rkey;    /* its STag once bound */
	uint32_t nrecv, recvsize;
	int ird, ord;
	int qp_made;
	int pending_free; /* set up failed: free after the event is acked */
};

static struct conn *conns;
static struct iwarp_comp_channel *comp;
static struct iwarp_context *vctx;
static int rdmap_ext; /* --rdmap-ext: register and advertise "atom" */

static void out(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	putchar('\n');
	fflush(stdout);
}

/* An enum name without its "IWARP_..._" prefix. */
static const char *short_name(const char *s, const char *prefix)
{
	size_t n = strlen(prefix);

	return strncmp(s, prefix, n) ? s : s + n;
}

static unsigned int id_peer_port(const struct iwarp_cm_id *id)
{
	const struct sockaddr_in *in =
		(const struct sockaddr_in *)&id->dst_addr;

	return ntohs(in->sin_port);
}

static void hex(char *dst, const uint8_t *src, size_t n)
{
	static const char d[] = "0123456789abcdef";
	size_t i;

	for (i = 0; i < n; i++) {
		dst[2 * i] = d[src[i] >> 4];
		dst[2 * i + 1] = d[src[i] & 15];
	}
	dst[2 * n] = '\0';
}

static uint8_t *put32(uint8_t *p, uint32_t v)
{
	p[0] = (uint8_t)(v >> 24);
	p[1] = (uint8_t)(v >> 16);
	p[2] = (uint8_t)(v >> 8);
	p[3] = (uint8_t)v;
	return p + 4;
}

static uint8_t *put64(uint8_t *p, uint64_t v)
{
	p = put32(p, (uint32_t)(v >> 32));
	return put32(p, (uint32_t)v);
}

static uint32_t get32(const uint8_t *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 |
	       (uint32_t)p[2] << 8 | p[3];
}

static void conn_free(struct conn *c)
{
	struct conn **pp;
	struct iwarp_mr *mrs[6];
	uint8_t *bufs[6];
	size_t i;

	for (pp = &conns; *pp; pp = &(*pp)->next)
		if (*pp == c) {
			*pp = c->next;
			break;
		}
	if (c->qp_made)
		iwarp_cm_destroy_qp(c->id);
	if (c->mw)
		iwarp_dealloc_mw(c->mw);
	mrs[0] = c->rw;
	mrs[1] = c->ro;
	mrs[2] = c->inv;
	mrs[3] = c->other;
	mrs[4] = c->recv;
	bufs[0] = c->rw_buf;
	bufs[1] = c->ro_buf;
	bufs[2] = c->inv_buf;
	bufs[3] = c->other_buf;
	mrs[5] = c->atom;
	bufs[4] = c->recv_buf;
	bufs[5] = c->atom_buf;
	for (i = 0; i < 6; i++) {
		if (mrs[i])
			iwarp_dereg_mr(mrs[i]);
		free(bufs[i]);
	}
	if (c->cq)
		iwarp_destroy_cq(c->cq);
	if (c->pd)
		iwarp_dealloc_pd(c->pd);
	if (c->pd2)
		iwarp_dealloc_pd(c->pd2);
	iwarp_cm_destroy_id(c->id);
	out("{\"ev\":\"freed\",\"peer\":%u}", c->peer);
	free(c);
}

static struct iwarp_mr *reg(struct iwarp_pd *pd, uint8_t **buf, size_t len,
			    int access)
{
	*buf = calloc(1, len);
	if (!*buf)
		return NULL;
	return iwarp_reg_mr(pd, *buf, len, access);
}

static int post_recv(struct conn *c, uint32_t i)
{
	struct iwarp_sge sge;
	struct iwarp_recv_wr wr, *bad;

	sge.addr = (uintptr_t)(c->recv_buf + (size_t)i * c->recvsize);
	sge.length = c->recvsize;
	sge.lkey = c->recv->lkey;
	memset(&wr, 0, sizeof(wr));
	wr.wr_id = i;
	wr.sg_list = &sge;
	wr.num_sge = 1;
	return iwarp_post_recv(c->id->qp, &wr, &bad);
}

/* Reads "key=N" settings of the Request's private data. */
static void parse_cmd(struct conn *c, const uint8_t *pd, size_t len)
{
	char text[256], *tok, *save = NULL;
	long v;

	if (len >= sizeof(text))
		len = sizeof(text) - 1;
	memcpy(text, pd, len);
	text[len] = '\0';
	for (tok = strtok_r(text, ";", &save); tok;
	     tok = strtok_r(NULL, ";", &save)) {
		char *eq = strchr(tok, '=');

		if (!eq)
			continue;
		*eq = '\0';
		v = strtol(eq + 1, NULL, 0);
		if (!strcmp(tok, "nrecv") && v >= 0 && v <= (long)MAX_RECV)
			c->nrecv = (uint32_t)v;
		else if (!strcmp(tok, "recvsize") && v > 0 && v <= 65535)
			c->recvsize = (uint32_t)v;
		else if (!strcmp(tok, "ird") && v >= 0 && v <= 255)
			c->ird = (int)v;
		else if (!strcmp(tok, "ord") && v >= 0 && v <= 255)
			c->ord = (int)v;
	}
}

static uint8_t *put_mr(uint8_t *p, const struct iwarp_mr *mr)
{
	p = put32(p, mr->rkey);
	p = put64(p, (uint64_t)(uintptr_t)mr->addr);
	return put32(p, (uint32_t)mr->length);
}

/* The window over "inv": the STag it gets when bound, inv's range. */
static uint8_t *put_win(uint8_t *p, const struct conn *c)
{
	p = put32(p, c->mw_rkey);
	p = put64(p, (uint64_t)(uintptr_t)c->inv->addr);
	return put32(p, (uint32_t)c->inv->length);
}

static void print_win(char *dst, size_t cap, const struct conn *c)
{
	snprintf(dst, cap, "\"inv\":{\"stag\":%u,\"addr\":%llu,\"len\":%zu}",
		 c->mw_rkey, (unsigned long long)(uintptr_t)c->inv->addr,
		 c->inv->length);
}

/* Binds the window over "inv" (once the QP runs): its completion is the
 * wc event with opcode IWARP_WC_BIND_MW the peer waits for. */
static void bind_inv(struct conn *c)
{
	struct iwarp_send_wr wr, *bad;

	memset(&wr, 0, sizeof(wr));
	wr.wr_id = WR_BIND;
	wr.opcode = IWARP_WR_BIND_MW;
	wr.send_flags = IWARP_SEND_SIGNALED;
	wr.bind_mw.mw = c->mw;
	wr.bind_mw.rkey = c->mw_rkey;
	wr.bind_mw.bind_info.mr = c->inv;
	wr.bind_mw.bind_info.addr = (uint64_t)(uintptr_t)c->inv->addr;
	wr.bind_mw.bind_info.length = c->inv->length;
	wr.bind_mw.bind_info.mw_access_flags = IWARP_ACCESS_REMOTE_WRITE;
	if (iwarp_post_send(c->id->qp, &wr, &bad))
		out("{\"ev\":\"bind_failed\",\"peer\":%u}", c->peer);
}

static void print_mr(char *dst, size_t cap, const char *name,
		     const struct iwarp_mr *mr)
{
	snprintf(dst, cap, "\"%s\":{\"stag\":%u,\"addr\":%llu,\"len\":%zu}",
		 name, mr->rkey, (unsigned long long)(uintptr_t)mr->addr,
		 mr->length);
}

static void on_connect_request(struct iwarp_cm_event *ev)
{
	struct iwarp_qp_init_attr qa;
	struct iwarp_conn_param cp;
	uint8_t adv[84], *p;
	char m[5][128];
	struct conn *c;
	uint32_t i;
	int rc;

	c = calloc(1, sizeof(*c));
	if (!c) {
		iwarp_cm_reject(ev->id, NULL, 0);
		return;
	}
	c->id = ev->id;
	c->peer = id_peer_port(ev->id);
	c->nrecv = 4;
	c->recvsize = 64;
	c->ird = ev->param.conn.responder_resources;
	c->ord = ev->param.conn.initiator_depth;
	ev->id->context = c;
	c->next = conns;
	conns = c;
	if (ev->param.conn.private_data_len)
		parse_cmd(c, ev->param.conn.private_data,
			  ev->param.conn.private_data_len);
	c->pd = iwarp_alloc_pd(ev->id->verbs);
	c->pd2 = iwarp_alloc_pd(ev->id->verbs);
	if (!c->pd || !c->pd2)
		goto fail;
	c->rw = reg(c->pd, &c->rw_buf, BUF_LEN, ACC_RW);
	c->ro = reg(c->pd, &c->ro_buf, BUF_LEN, IWARP_ACCESS_REMOTE_READ);
	c->inv = reg(c->pd, &c->inv_buf, BUF_LEN,
		     IWARP_ACCESS_LOCAL_WRITE | IWARP_ACCESS_REMOTE_WRITE |
			     IWARP_ACCESS_MW_BIND);
	c->mw = iwarp_alloc_mw(c->pd, IWARP_MW_TYPE_2);
	if (!c->mw)
		goto fail;
	c->mw_rkey = iwarp_inc_rkey(c->mw->rkey);
	c->other = reg(c->pd2, &c->other_buf, BUF_LEN, ACC_RW);
	c->recv = reg(c->pd, &c->recv_buf,
		      (size_t)(c->nrecv ? c->nrecv : 1) * c->recvsize,
		      IWARP_ACCESS_LOCAL_WRITE);
	if (!c->rw || !c->ro || !c->inv || !c->other || !c->recv)
		goto fail;
	if (rdmap_ext) {
		/* calloc: aligned for any type, so 8-octet aligned */
		c->atom = reg(c->pd, &c->atom_buf, BUF_LEN,
			      ACC_RW | IWARP_ACCESS_REMOTE_ATOMIC);
		if (!c->atom)
			goto fail;
	}
	for (i = 0; i < BUF_LEN; i++)
		c->ro_buf[i] = (uint8_t)i;
	c->cq = iwarp_create_cq(ev->id->verbs, 128, c, comp, 0);
	if (!c->cq)
		goto fail;
	iwarp_req_notify_cq(c->cq, 0);
	memset(&qa, 0, sizeof(qa));
	qa.qp_context = c;
	qa.send_cq = qa.recv_cq = c->cq;
	qa.qp_type = IWARP_QPT_RC;
	qa.cap.max_send_wr = 16;
	qa.cap.max_recv_wr = MAX_RECV;
	qa.cap.max_send_sge = qa.cap.max_recv_sge = 1;
	qa.sq_sig_all = 1;
	rc = iwarp_cm_create_qp(ev->id, c->pd, &qa);
	if (rc)
		goto fail;
	c->qp_made = 1;
	for (i = 0; i < c->nrecv; i++)
		if (post_recv(c, i))
			goto fail;

	p = adv;
	*p++ = 1;
	*p++ = (uint8_t)c->nrecv;
	*p++ = (uint8_t)(c->recvsize >> 8);
	*p++ = (uint8_t)c->recvsize;
	p = put_mr(p, c->rw);
	p = put_mr(p, c->ro);
	p = put_win(p, c);
	p = put_mr(p, c->other);
	m[4][0] = '\0';
	if (c->atom) {
		put_mr(p, c->atom);
		m[4][0] = ',';
		print_mr(m[4] + 1, sizeof(m[4]) - 1, "atom", c->atom);
	}
	print_mr(m[0], sizeof(m[0]), "rw", c->rw);
	print_mr(m[1], sizeof(m[1]), "ro", c->ro);
	print_win(m[2], sizeof(m[2]), c);
	print_mr(m[3], sizeof(m[3]), "other", c->other);
	out("{\"ev\":\"conn\",\"peer\":%u,\"nrecv\":%u,\"recvsize\":%u,"
	    "\"ird\":%d,\"ord\":%d,%s,%s,%s,%s%s}",
	    c->peer, c->nrecv, c->recvsize, c->ird, c->ord, m[0], m[1], m[2],
	    m[3], m[4]);
	memset(&cp, 0, sizeof(cp));
	cp.private_data = adv;
	cp.private_data_len = c->atom ? 84 : 68;
	cp.responder_resources = (uint8_t)c->ird;
	cp.initiator_depth = (uint8_t)c->ord;
	rc = iwarp_cm_accept(ev->id, &cp);
	if (rc) {
		out("{\"ev\":\"accept_failed\",\"peer\":%u,\"status\":%d}",
		    c->peer, rc);
		c->pending_free = 1;
	}
	return;
fail:
	out("{\"ev\":\"setup_failed\",\"peer\":%u,\"errno\":%d}", c->peer,
	    errno);
	iwarp_cm_reject(ev->id, NULL, 0);
	c->pending_free = 1;
}

/* A received Send asking for an RDMA Read from the peer. */
static void maybe_read(struct conn *c, const uint8_t *d, uint32_t len)
{
	struct iwarp_send_wr wr, *bad;
	struct iwarp_sge sge;
	uint32_t n;
	int rc;

	if (len < 20 || memcmp(d, "READ", 4))
		return;
	n = get32(d + 16);
	if (n > BUF_LEN - SINK_OFF)
		n = BUF_LEN - SINK_OFF;
	memset(&wr, 0, sizeof(wr));
	sge.addr = (uintptr_t)(c->rw_buf + SINK_OFF);
	sge.length = n;
	sge.lkey = c->rw->lkey;
	wr.wr_id = WR_READ;
	wr.opcode = IWARP_WR_RDMA_READ;
	wr.send_flags = IWARP_SEND_SIGNALED;
	wr.sg_list = &sge;
	wr.num_sge = 1;
	wr.wr.rdma.rkey = get32(d + 4);
	wr.wr.rdma.remote_addr = (uint64_t)get32(d + 8) << 32 | get32(d + 12);
	rc = iwarp_post_send(c->id->qp, &wr, &bad);
	out("{\"ev\":\"read_posted\",\"peer\":%u,\"len\":%u,\"rc\":%d}",
	    c->peer, n, rc);
}

static void drain_cq(struct conn *c)
{
	struct iwarp_wc wc[16];
	char data[2 * 64 + 1], head[2 * 32 + 1], sink[2 * 32 + 1];
	int n, i;

	while ((n = iwarp_poll_cq(c->cq, 16, wc)) > 0) {
		for (i = 0; i < n; i++) {
			const struct iwarp_wc *w = &wc[i];

			data[0] = head[0] = sink[0] = '\0';
			if (w->opcode == IWARP_WC_RECV &&
			    w->status == IWARP_WC_SUCCESS &&
			    w->wr_id < c->nrecv) {
				const uint8_t *b =
					c->recv_buf +
					(size_t)w->wr_id * c->recvsize;
				uint32_t k =
					w->byte_len < 64 ? w->byte_len : 64;

				hex(data, b, k);
				hex(head, c->rw_buf, 32);
			}
			if (w->wr_id == WR_READ)
				hex(sink, c->rw_buf + SINK_OFF, 32);
			out("{\"ev\":\"wc\",\"peer\":%u,\"wr_id\":%llu,"
			    "\"status\":%d,\"opcode\":%d,\"vendor_err\":%u,"
			    "\"byte_len\":%u,\"wc_flags\":%u,\"inv_rkey\":%u,"
			    "\"data\":\"%s\",\"rw_head\":\"%s\",\"sink\":\"%s\"}",
			    c->peer, (unsigned long long)w->wr_id,
			    (int)w->status, (int)w->opcode, w->vendor_err,
			    w->byte_len, w->wc_flags, w->invalidated_rkey, data,
			    head, sink);
			if (w->opcode == IWARP_WC_RECV &&
			    w->status == IWARP_WC_SUCCESS &&
			    w->wr_id < c->nrecv) {
				maybe_read(c,
					   c->recv_buf + (size_t)w->wr_id *
								 c->recvsize,
					   w->byte_len);
				post_recv(c, (uint32_t)w->wr_id);
			}
		}
	}
}

static void on_comp(void)
{
	struct iwarp_cq *cq;
	void *ctx;

	while (iwarp_get_cq_event(comp, &cq, &ctx) == 0) {
		iwarp_ack_cq_events(cq, 1);
		iwarp_req_notify_cq(cq, 0);
		drain_cq(ctx);
	}
}

static void on_async(void)
{
	struct iwarp_async_event ae;
	struct conn *c;
	unsigned int peer = 0;

	while (iwarp_get_async_event(vctx, &ae) == 0) {
		if (ae.event_type != IWARP_EVENT_CQ_ERR &&
		    ae.event_type != IWARP_EVENT_SRQ_LIMIT_REACHED &&
		    ae.event_type != IWARP_EVENT_SRQ_ERR && ae.element.qp) {
			c = ae.element.qp->qp_context;
			if (c)
				peer = c->peer;
		}
		out("{\"ev\":\"async\",\"peer\":%u,\"type\":\"%s\",\"layer\":%u,"
		    "\"etype\":%u,\"ecode\":%u,\"term_received\":%d}",
		    peer,
		    short_name(iwarp_event_type_str(ae.event_type),
			       "IWARP_EVENT_"),
		    ae.term.layer, ae.term.etype, ae.term.ecode,
		    ae.term_received);
		iwarp_ack_async_event(&ae);
	}
}

static void on_cm(struct iwarp_event_channel *ch)
{
	struct iwarp_cm_event *ev;
	struct conn *c;
	enum iwarp_cm_event_type type;
	int status;

	while (iwarp_cm_get_event(ch, &ev) == 0) {
		type = ev->event;
		status = ev->status;
		c = ev->id ? ev->id->context : NULL;
		if (type == IWARP_CM_EVENT_CONNECT_REQUEST) {
			on_connect_request(ev);
			c = ev->id->context;
			iwarp_cm_ack_event(ev);
			if (c && c->pending_free)
				conn_free(c);
			continue;
		}
		out("{\"ev\":\"cm\",\"peer\":%u,\"event\":\"%s\",\"status\":%d}",
		    c ? c->peer : 0,
		    short_name(iwarp_cm_event_str(type), "IWARP_CM_EVENT_"),
		    status);
		iwarp_cm_ack_event(ev);
		if (!c)
			continue;
		if (type == IWARP_CM_EVENT_ESTABLISHED && c->mw)
			bind_inv(c);
		if (type == IWARP_CM_EVENT_DISCONNECTED ||
		    type == IWARP_CM_EVENT_CONNECT_ERROR ||
		    type == IWARP_CM_EVENT_REJECTED ||
		    type == IWARP_CM_EVENT_UNREACHABLE) {
			/* the QP's async events go with it: report them first
			 */
			on_async();
			if (c->cq)
				drain_cq(c);
			if (type == IWARP_CM_EVENT_DISCONNECTED)
				iwarp_cm_disconnect(c->id);
			if (c->cq)
				drain_cq(c);
			conn_free(c);
		}
	}
}

static void usage(void)
{
	fprintf(stderr,
		"usage: hostile_server [--crc off|request|require] [--markers] "
		"[--mpa-rev 1|2] [--req-timeout MS] [--rep-timeout MS] "
		"[--rdmap-ext] [--lifetime S]\n");
	exit(2);
}

int main(int argc, char **argv)
{
	struct iwarp_context_attr attr;
	struct iwarp_event_channel *ch;
	struct iwarp_cm_id *lid;
	struct sockaddr_storage ss;
	struct sockaddr_in *in;
	struct pollfd pfd[4];
	time_t end;
	long lifetime = 600;
	int i, rc;

	iwarp_context_attr_init(&attr);
	attr.crc = IWARP_CRC_REQUEST;
	attr.progress = IWARP_PROGRESS_CPU;
	for (i = 1; i < argc; i++) {
		const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;

		if (!strcmp(a, "--markers")) {
			attr.markers = 1;
			continue;
		}
		if (!strcmp(a, "--rdmap-ext")) {
			attr.rdmap_ext = 1;
			rdmap_ext = 1;
			continue;
		}
		if (!v)
			usage();
		i++;
		if (!strcmp(a, "--crc")) {
			if (!strcmp(v, "off"))
				attr.crc = IWARP_CRC_OFF;
			else if (!strcmp(v, "request"))
				attr.crc = IWARP_CRC_REQUEST;
			else if (!strcmp(v, "require"))
				attr.crc = IWARP_CRC_REQUIRE;
			else
				usage();
		} else if (!strcmp(a, "--mpa-rev")) {
			attr.mpa_rev = atoi(v);
		} else if (!strcmp(a, "--req-timeout")) {
			attr.mpa_req_timeout_ms = (uint32_t)atol(v);
		} else if (!strcmp(a, "--rep-timeout")) {
			attr.mpa_rep_timeout_ms = (uint32_t)atol(v);
		} else if (!strcmp(a, "--lifetime")) {
			lifetime = atol(v);
		} else {
			usage();
		}
	}
	vctx = iwarp_open_context(&attr);
	if (!vctx) {
		fprintf(stderr, "hostile_server: iwarp_open_context: %s\n",
			strerror(errno));
		return errno == ENOSYS ? 3 : 1;
	}
	comp = iwarp_create_comp_channel(vctx);
	ch = iwarp_cm_create_event_channel();
	if (!comp || !ch ||
	    iwarp_cm_create_id(ch, vctx, &lid, NULL, IWARP_PS_TCP)) {
		fprintf(stderr, "hostile_server: setup failed\n");
		return 1;
	}
	memset(&ss, 0, sizeof(ss));
	in = (struct sockaddr_in *)&ss;
	in->sin_family = AF_INET;
	in->sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	rc = iwarp_cm_bind_addr(lid, (struct sockaddr *)&ss);
	if (!rc)
		rc = iwarp_cm_listen(lid, 256);
	if (rc) {
		fprintf(stderr, "hostile_server: listen: %s\n",
			iwarp_strerror(rc));
		return 1;
	}
	fcntl(ch->fd, F_SETFL, fcntl(ch->fd, F_GETFL) | O_NONBLOCK);
	fcntl(comp->fd, F_SETFL, fcntl(comp->fd, F_GETFL) | O_NONBLOCK);
	fcntl(iwarp_async_fd(vctx), F_SETFL,
	      fcntl(iwarp_async_fd(vctx), F_GETFL) | O_NONBLOCK);
	in = (struct sockaddr_in *)&lid->src_addr;
	out("{\"ev\":\"listening\",\"port\":%u,\"pid\":%ld}",
	    ntohs(in->sin_port), (long)getpid());
	end = time(NULL) + lifetime;
	while (time(NULL) < end) {
		struct conn *c;

		pfd[0].fd = ch->fd;
		pfd[1].fd = comp->fd;
		pfd[2].fd = iwarp_async_fd(vctx);
		pfd[3].fd = STDIN_FILENO;
		pfd[0].events = pfd[1].events = pfd[2].events = POLLIN;
		pfd[3].events = POLLIN;
		pfd[3].revents = 0;
		if (poll(pfd, 4, 200) < 0 && errno != EINTR)
			break;
		if (pfd[3].revents & (POLLIN | POLLHUP)) {
			char b[64];

			/* the harness closed our stdin (or is gone): end */
			if (read(STDIN_FILENO, b, sizeof(b)) <= 0)
				break;
		}
		on_async();
		on_comp();
		on_cm(ch);
		/* completions that raced the notify arming */
		for (c = conns; c; c = c->next)
			if (c->cq)
				drain_cq(c);
	}
	while (conns)
		conn_free(conns);
	iwarp_cm_destroy_id(lid);
	iwarp_cm_destroy_event_channel(ch);
	iwarp_destroy_comp_channel(comp);
	iwarp_close_context(vctx);
	return 0;
}
