/*
 * tests/tls_test.c: iWARP inside TLS 1.3 (iwarp_cm_set_tls) between two
 * libiwarp ids over loopback: Send, RDMA Write and RDMA Read with the data
 * checked, mutual authentication, PSK, and hostile peers (a certificate of
 * another CA, a wrong PSK, a plain peer on either side, a server without
 * credentials). Credentials are made at run time by tests/tls_certs.sh.
 * Every wait is bounded (WAIT_MS); nothing asserts on timing.
 */
#include "config.h"

#include <arpa/inet.h>
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "cm/cm_int.h"
#include "iwarp/iwarp.h"
#include "cm_testutil.h"
#include "testutil.h"

#define WAIT_MS	     30000
#define MPA_TIMER_MS 20000
#define XFER	     (256 * 1024) /* bytes per operation: many records */

static char dir[64];

static const char *cred(const char *name)
{
	static char buf[32][128];
	static int k;
	char *b = buf[k++ % 32];

	snprintf(b, sizeof(buf[0]), "%s/%s", dir, name);
	return b;
}

static void certs_setup(void)
{
	char cmd[256];

	strcpy(dir, "/tmp/iwarp-tls-XXXXXX");
	ck_assert_ptr_nonnull(mkdtemp(dir));
	snprintf(cmd, sizeof(cmd), "sh %s %s",
		 iw_test_srcpath("tests/tls_certs.sh"), dir);
	ck_assert_int_eq(system(cmd), 0);
}

static void certs_teardown(void)
{
	char cmd[128];

	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	if (system(cmd) != 0)
		fprintf(stderr, "tls_test: cannot remove %s\n", dir);
}

static void side_open_to(struct cmt_side *s, enum iwarp_crc_policy crc,
			 uint32_t req_ms)
{
	struct iwarp_context_attr a;

	iwarp_context_attr_init(&a);
	a.mpa_rev = 2;
	a.crc = crc;
	a.markers = 0;
	a.p2p = IWARP_P2P_NONE;
	a.progress = IWARP_PROGRESS_CPU;
	a.mpa_req_timeout_ms = req_ms;
	a.mpa_rep_timeout_ms = MPA_TIMER_MS;
	cmt_side_open(s, &a, 256);
}

static void side_open(struct cmt_side *s, enum iwarp_crc_policy crc)
{
	side_open_to(s, crc, MPA_TIMER_MS);
}

static struct iwarp_cm_event *expect_ev(struct iwarp_event_channel *ch,
					enum iwarp_cm_event_type type)
{
	return cmt_expect_ev(ch, type, WAIT_MS);
}

static void ack_ev(struct iwarp_event_channel *ch,
		   enum iwarp_cm_event_type type)
{
	ck_assert_int_eq(iwarp_cm_ack_event(expect_ev(ch, type)), 0);
}

/* A listener on 127.0.0.1 port 0 with |tls| (NULL: plain TCP). */
static struct iwarp_cm_id *
listen_tls(struct cmt_side *s, const struct iwarp_tls_attr *tls, uint16_t *port)
{
	struct sockaddr_storage ss;
	struct iwarp_cm_id *l;

	ck_assert_int_eq(
		iwarp_cm_create_id(s->ch, s->ctx, &l, NULL, IWARP_PS_TCP), 0);
	ck_assert_int_eq(iwarp_cm_getaddr("127.0.0.1", 0, &ss), 0);
	ck_assert_int_eq(iwarp_cm_bind_addr(l, (struct sockaddr *)&ss), 0);
	if (tls)
		ck_assert_int_eq(iwarp_cm_set_tls(l, tls), 0);
	ck_assert_int_eq(iwarp_cm_listen(l, 16), 0);
	*port = ntohs(((struct sockaddr_in *)&l->src_addr)->sin_port);
	ck_assert_uint_ne(*port, 0);
	/* the listener's TLS is fixed now */
	ck_assert_int_eq(iwarp_cm_set_tls(l, NULL), -EINVAL);
	return l;
}

/* A client id toward 127.0.0.1:|port| with a QP, connect started. */
static struct iwarp_cm_id *
connect_tls(struct cmt_side *s, const struct iwarp_tls_attr *tls, uint16_t port)
{
	struct iwarp_cm_id *c = cmt_resolved(s, port, WAIT_MS);
	struct iwarp_qp_init_attr qa;
	struct iwarp_conn_param cp;

	if (tls)
		ck_assert_int_eq(iwarp_cm_set_tls(c, tls), 0);
	cmt_qp_attr(s, &qa, 16);
	ck_assert_int_eq(iwarp_cm_create_qp(c, s->pd, &qa), 0);
	memset(&cp, 0, sizeof(cp));
	cp.private_data = "tls-hello";
	cp.private_data_len = 9;
	cp.responder_resources = 4;
	cp.initiator_depth = 4;
	ck_assert_int_eq(iwarp_cm_connect(c, &cp), 0);
	return c;
}

static void destroy(struct iwarp_cm_id *id)
{
	iwarp_cm_destroy_qp(id);
	ck_assert_int_eq(iwarp_cm_destroy_id(id), 0);
}

/* The server side of an accepted connection (private data checked). */
static struct iwarp_cm_id *accept_one(struct cmt_side *srv)
{
	struct iwarp_qp_init_attr qa;
	struct iwarp_conn_param cp;
	struct iwarp_cm_event *ev;
	struct iwarp_cm_id *s;

	ev = expect_ev(srv->ch, IWARP_CM_EVENT_CONNECT_REQUEST);
	s = ev->id;
	ck_assert_uint_eq(ev->param.conn.private_data_len, 9);
	ck_assert(!memcmp(ev->param.conn.private_data, "tls-hello", 9));
	ck_assert_int_eq(iwarp_cm_ack_event(ev), 0);
	cmt_qp_attr(srv, &qa, 16);
	ck_assert_int_eq(iwarp_cm_create_qp(s, srv->pd, &qa), 0);
	memset(&cp, 0, sizeof(cp));
	cp.responder_resources = 4;
	cp.initiator_depth = 4;
	ck_assert_int_eq(iwarp_cm_accept(s, &cp), 0);
	ack_ev(srv->ch, IWARP_CM_EVENT_ESTABLISHED);
	return s;
}

static void wait_wc(struct iwarp_cq *cq, uint64_t wr_id, uint32_t len)
{
	struct iwarp_wc wc;
	int i, n = 0;

	for (i = 0; i < WAIT_MS && !n; i++) {
		n = iwarp_poll_cq(cq, 1, &wc);
		if (!n)
			poll(NULL, 0, 1);
	}
	ck_assert_msg(n == 1, "no completion for wr %llu",
		      (unsigned long long)wr_id);
	ck_assert_msg(wc.status == IWARP_WC_SUCCESS, "wr %llu: %s",
		      (unsigned long long)wr_id,
		      iwarp_wc_status_str(wc.status));
	ck_assert_uint_eq(wc.wr_id, wr_id);
	if (len)
		ck_assert_uint_eq(wc.byte_len, len);
}

static void post_one(struct iwarp_qp *qp, enum iwarp_wr_opcode op, uint64_t id,
		     void *buf, uint32_t len, uint32_t lkey, uint64_t raddr,
		     uint32_t rkey)
{
	struct iwarp_sge sge = {(uintptr_t)buf, len, lkey};
	struct iwarp_send_wr wr, *bad;

	memset(&wr, 0, sizeof(wr));
	wr.wr_id = id;
	wr.sg_list = &sge;
	wr.num_sge = 1;
	wr.opcode = op;
	wr.send_flags = IWARP_SEND_SIGNALED;
	wr.wr.rdma.remote_addr = raddr;
	wr.wr.rdma.rkey = rkey;
	ck_assert_int_eq(iwarp_post_send(qp, &wr, &bad), 0);
}

/* Send, RDMA Write and RDMA Read of XFER bytes each, data checked. */
static void traffic(struct cmt_side *srv, struct cmt_side *cli,
		    struct iwarp_cm_id *s, struct iwarp_cm_id *c)
{
	int acc = IWARP_ACCESS_LOCAL_WRITE | IWARP_ACCESS_REMOTE_WRITE |
		  IWARP_ACCESS_REMOTE_READ;
	uint8_t *a = malloc(XFER), *b = malloc(XFER), *want = malloc(XFER);
	struct iwarp_mr *ma, *mb;
	struct iwarp_sge sge;
	struct iwarp_recv_wr rwr, *br;

	ck_assert(a && b && want);
	ma = iwarp_reg_mr(cli->pd, a, XFER, acc);
	mb = iwarp_reg_mr(srv->pd, b, XFER, acc);
	ck_assert(ma && mb);

	/* Send: client a -> server b */
	iw_test_fill(a, XFER, 11);
	memset(b, 0, XFER);
	sge.addr = (uintptr_t)b;
	sge.length = XFER;
	sge.lkey = mb->lkey;
	memset(&rwr, 0, sizeof(rwr));
	rwr.wr_id = 1;
	rwr.sg_list = &sge;
	rwr.num_sge = 1;
	ck_assert_int_eq(iwarp_post_recv(s->qp, &rwr, &br), 0);
	post_one(c->qp, IWARP_WR_SEND, 2, a, XFER, ma->lkey, 0, 0);
	wait_wc(srv->cq, 1, XFER);
	wait_wc(cli->cq, 2, 0);
	ck_assert(!memcmp(a, b, XFER));

	/* RDMA Write: client a -> server b */
	iw_test_fill(a, XFER, 22);
	post_one(c->qp, IWARP_WR_RDMA_WRITE, 3, a, XFER, ma->lkey, (uintptr_t)b,
		 mb->rkey);
	wait_wc(cli->cq, 3, 0);
	/* a Send after the Write: its arrival orders the Write before it */
	rwr.wr_id = 4;
	sge.length = 16;
	ck_assert_int_eq(iwarp_post_recv(s->qp, &rwr, &br), 0);
	memcpy(want, a, XFER);
	post_one(c->qp, IWARP_WR_SEND, 5, a, 16, ma->lkey, 0, 0);
	wait_wc(srv->cq, 4, 16);
	wait_wc(cli->cq, 5, 0);
	ck_assert(!memcmp(want, b, XFER));

	/* RDMA Read: server b -> client a */
	iw_test_fill(b, XFER, 33);
	memset(a, 0, XFER);
	post_one(c->qp, IWARP_WR_RDMA_READ, 6, a, XFER, ma->lkey, (uintptr_t)b,
		 mb->rkey);
	wait_wc(cli->cq, 6, XFER);
	ck_assert(!memcmp(a, b, XFER));

	ck_assert_int_eq(iwarp_dereg_mr(ma), 0);
	ck_assert_int_eq(iwarp_dereg_mr(mb), 0);
	free(a);
	free(b);
	free(want);
}

static void disconnect(struct cmt_side *srv, struct cmt_side *cli,
		       struct iwarp_cm_id *s, struct iwarp_cm_id *c)
{
	struct iwarp_cm_event *ev;

	ck_assert_int_eq(iwarp_cm_disconnect(c), 0);
	ev = expect_ev(cli->ch, IWARP_CM_EVENT_DISCONNECTED);
	ck_assert_ptr_eq(ev->id, c);
	ck_assert_int_eq(iwarp_cm_ack_event(ev), 0);
	ev = expect_ev(srv->ch, IWARP_CM_EVENT_DISCONNECTED);
	ck_assert_ptr_eq(ev->id, s);
	ck_assert_int_eq(iwarp_cm_ack_event(ev), 0);
}

/* Credential sets: [0] server, [1] client. */
struct creds {
	const char *name;
	struct iwarp_tls_attr srv, cli;
	enum iwarp_crc_policy crc;
};

static void creds_fill(int k, struct creds *cr)
{
	memset(cr, 0, sizeof(*cr));
	cr->crc = IWARP_CRC_OFF;
	switch (k) {
	case 0: /* mutual certificates, server name checked */
		cr->name = "mutual";
		cr->srv.cert_file = cred("srv.pem");
		cr->srv.key_file = cred("srv.key");
		cr->srv.ca_file = cred("ca.pem");
		cr->srv.require_peer_cert = 1;
		cr->cli.cert_file = cred("cli.pem");
		cr->cli.key_file = cred("cli.key");
		cr->cli.ca_file = cred("ca.pem");
		cr->cli.peer_name = "127.0.0.1";
		break;
	case 1: /* server certificate only, MPA CRC on as well */
		cr->name = "server-cert";
		cr->srv.cert_file = cred("srv.pem");
		cr->srv.key_file = cred("srv.key");
		cr->cli.ca_file = cred("ca.pem");
		cr->crc = IWARP_CRC_REQUIRE;
		break;
	default: /* external PSK only */
		cr->name = "psk";
		cr->srv.psk_file = cred("psk.hex");
		cr->srv.psk_identity = "node-a";
		cr->cli.psk_file = cred("psk.hex");
		cr->cli.psk_identity = "node-a";
		break;
	}
}

START_TEST(test_tls_traffic)
{
	struct cmt_side srv, cli;
	struct iwarp_cm_id *l, *s, *c;
	struct creds cr;
	uint16_t port;

	creds_fill(_i, &cr);
	side_open(&srv, cr.crc);
	side_open(&cli, cr.crc);
	l = listen_tls(&srv, &cr.srv, &port);
	c = connect_tls(&cli, &cr.cli, port);
	s = accept_one(&srv);
	ack_ev(cli.ch, IWARP_CM_EVENT_ESTABLISHED);
	traffic(&srv, &cli, s, c);
	disconnect(&srv, &cli, s, c);
	destroy(c);
	destroy(s);
	ck_assert_int_eq(iwarp_cm_destroy_id(l), 0);
	cmt_side_close(&cli);
	cmt_side_close(&srv);
}
END_TEST

/* A good client gets through: the listener still serves. */
static void good_client(struct cmt_side *srv, struct cmt_side *cli,
			const struct iwarp_tls_attr *tls, uint16_t port)
{
	struct iwarp_cm_id *s, *c;

	c = connect_tls(cli, tls, port);
	s = accept_one(srv);
	ack_ev(cli->ch, IWARP_CM_EVENT_ESTABLISHED);
	disconnect(srv, cli, s, c);
	destroy(c);
	destroy(s);
}

/* Hostile clients: each fails with a precise status, no CONNECT_REQUEST
 * reaches the server's application, and a good client connects after. */
START_TEST(test_tls_refused)
{
	struct iwarp_tls_attr srv_a, good, bad;
	struct iwarp_cm_event *ev;
	struct cmt_side srv, cli;
	struct iwarp_cm_id *l, *c;
	uint16_t port;
	int want;

	memset(&srv_a, 0, sizeof(srv_a));
	srv_a.cert_file = cred("srv.pem");
	srv_a.key_file = cred("srv.key");
	srv_a.ca_file = cred("ca.pem");
	srv_a.require_peer_cert = 1;
	srv_a.psk_file = cred("psk.hex");
	memset(&good, 0, sizeof(good));
	good.cert_file = cred("cli.pem");
	good.key_file = cred("cli.key");
	good.ca_file = cred("ca.pem");
	memset(&bad, 0, sizeof(bad));
	switch (_i) {
	case 0: /* a certificate of another CA */
		bad.cert_file = cred("rogue.pem");
		bad.key_file = cred("rogue.key");
		bad.ca_file = cred("ca.pem");
		want = -EACCES;
		break;
	case 1: /* no certificate, but the server requires one */
		bad.ca_file = cred("ca.pem");
		want = -EACCES;
		break;
	case 2: /* the right identity with a wrong key */
		bad.psk_file = cred("psk2.hex");
		want = -EACCES;
		break;
	case 3: /* the client does not trust the server's CA */
		bad.cert_file = cred("cli.pem");
		bad.key_file = cred("cli.key");
		bad.ca_file = cred("rogue-ca.pem");
		want = -EACCES;
		break;
	default: /* the server's name is not what the client asked for */
		bad = good;
		bad.peer_name = "other.example";
		want = -EACCES;
		break;
	}
	side_open(&srv, IWARP_CRC_OFF);
	side_open(&cli, IWARP_CRC_OFF);
	l = listen_tls(&srv, &srv_a, &port);
	c = connect_tls(&cli, &bad, port);
	ev = expect_ev(cli.ch, IWARP_CM_EVENT_CONNECT_ERROR);
	ck_assert_msg(ev->status == want, "status %d (%s), want %d", ev->status,
		      strerror(-ev->status), want);
	ck_assert_int_eq(iwarp_cm_ack_event(ev), 0);
	destroy(c);
	good_client(&srv, &cli, &good, port);
	ck_assert_int_eq(iwarp_cm_destroy_id(l), 0);
	cmt_side_close(&cli);
	cmt_side_close(&srv);
}
END_TEST

/* A plain client to a TLS listener, and a TLS client to a plain one. */
START_TEST(test_tls_plain_mismatch)
{
	struct iwarp_tls_attr srv_a, cli_a;
	struct iwarp_cm_event *ev;
	struct cmt_side srv, cli;
	struct iwarp_cm_id *l, *c;
	uint16_t port;

	memset(&srv_a, 0, sizeof(srv_a));
	srv_a.cert_file = cred("srv.pem");
	srv_a.key_file = cred("srv.key");
	memset(&cli_a, 0, sizeof(cli_a));
	cli_a.ca_file = cred("ca.pem");
	side_open(&srv, IWARP_CRC_OFF);
	side_open(&cli, IWARP_CRC_OFF);
	if (_i == 0) {
		/* plain MPA into a TLS listener: the client's MPA layer reads
		 * a TLS alert where the Reply belongs */
		l = listen_tls(&srv, &srv_a, &port);
		c = connect_tls(&cli, NULL, port);
		ev = expect_ev(cli.ch, IWARP_CM_EVENT_CONNECT_ERROR);
		ck_assert_msg(ev->status < 0, "status %d", ev->status);
		ck_assert_int_eq(iwarp_cm_ack_event(ev), 0);
		destroy(c);
		good_client(&srv, &cli, &cli_a, port);
	} else {
		/* TLS into a plain listener: not TLS, EPROTO */
		l = listen_tls(&srv, NULL, &port);
		c = connect_tls(&cli, &cli_a, port);
		ev = expect_ev(cli.ch, IWARP_CM_EVENT_CONNECT_ERROR);
		ck_assert_msg(ev->status == -EPROTO, "status %d (%s)",
			      ev->status, strerror(-ev->status));
		ck_assert_int_eq(iwarp_cm_ack_event(ev), 0);
		destroy(c);
		good_client(&srv, &cli, NULL, port);
	}
	ck_assert_int_eq(iwarp_cm_destroy_id(l), 0);
	cmt_side_close(&cli);
	cmt_side_close(&srv);
}
END_TEST

/* Waits (bounded) until listener |l| holds |n| hidden connections. */
static void wait_pending(struct iwarp_cm_id *l, unsigned int n)
{
	struct cm_listen_stats st;
	int i;

	for (i = 0; i < WAIT_MS / 10; i++) {
		ck_assert_int_eq(cm_listen_stats_get(l, &st), 0);
		if (st.pending == n)
			return;
		poll(NULL, 0, 10);
	}
	ck_abort_msg("listener holds %u hidden connections, want %u",
		     st.pending, n);
}

/* A peer that connects and never starts (or finishes) the handshake is
 * dropped at the MPA Request deadline; the listener then serves. */
START_TEST(test_tls_silent_peer)
{
	struct iwarp_tls_attr srv_a, cli_a;
	struct sockaddr_in sin;
	struct cmt_side srv, cli;
	struct iwarp_cm_id *l;
	struct pollfd p;
	uint16_t port;
	char b[16];
	int fd;

	memset(&srv_a, 0, sizeof(srv_a));
	srv_a.cert_file = cred("srv.pem");
	srv_a.key_file = cred("srv.key");
	memset(&cli_a, 0, sizeof(cli_a));
	cli_a.ca_file = cred("ca.pem");
	side_open_to(&srv, IWARP_CRC_OFF, 300);
	side_open(&cli, IWARP_CRC_OFF);
	l = listen_tls(&srv, &srv_a, &port);
	fd = socket(AF_INET, SOCK_STREAM, 0);
	ck_assert_int_ge(fd, 0);
	memset(&sin, 0, sizeof(sin));
	sin.sin_family = AF_INET;
	sin.sin_port = htons(port);
	sin.sin_addr.s_addr = htonl(0x7f000001);
	ck_assert_int_eq(connect(fd, (struct sockaddr *)&sin, sizeof(sin)), 0);
	if (_i) /* half a TLS record header, then silence */
		ck_assert_int_eq(write(fd, "\x16\x03\x01", 3), 3);
	/* the deadline frees it: the socket ends (EOF or reset) */
	p.fd = fd;
	p.events = POLLIN;
	ck_assert_int_eq(poll(&p, 1, WAIT_MS), 1);
	ck_assert_int_le(read(fd, b, sizeof(b)), 0);
	close(fd);
	wait_pending(l, 0);
	good_client(&srv, &cli, &cli_a, port);
	ck_assert_int_eq(iwarp_cm_destroy_id(l), 0);
	cmt_side_close(&cli);
	cmt_side_close(&srv);
}
END_TEST

/* Credentials are checked at iwarp_cm_set_tls / listen / connect. */
START_TEST(test_tls_bad_credentials)
{
	struct iwarp_tls_attr a;
	struct sockaddr_storage ss;
	struct iwarp_cm_id *id;
	struct cmt_side s;

	side_open(&s, IWARP_CRC_OFF);
	ck_assert_int_eq(
		iwarp_cm_create_id(s.ch, s.ctx, &id, NULL, IWARP_PS_TCP), 0);
	ck_assert_int_eq(iwarp_cm_set_tls(NULL, NULL), -EINVAL);
	memset(&a, 0, sizeof(a));
	ck_assert_int_eq(iwarp_cm_set_tls(id, &a), -EINVAL); /* nothing */
	a.comp_mask = 1;
	a.ca_file = cred("ca.pem");
	ck_assert_int_eq(iwarp_cm_set_tls(id, &a), -EINVAL); /* unknown bit */
	a.comp_mask = 0;
	a.ca_file = cred("missing.pem");
	ck_assert_int_eq(iwarp_cm_set_tls(id, &a), -ENOENT);
	a.ca_file = cred("psk.hex"); /* not PEM */
	ck_assert_int_eq(iwarp_cm_set_tls(id, &a), -EINVAL);
	memset(&a, 0, sizeof(a));
	a.cert_file = cred("srv.pem");
	ck_assert_int_eq(iwarp_cm_set_tls(id, &a), -EINVAL); /* no key */
	a.key_file = cred("cli.key");
	ck_assert_int_eq(iwarp_cm_set_tls(id, &a), -EINVAL); /* not its key */
	memset(&a, 0, sizeof(a));
	a.psk_file = cred("ca.pem"); /* not hex */
	ck_assert_int_eq(iwarp_cm_set_tls(id, &a), -EINVAL);
	memset(&a, 0, sizeof(a));
	a.cert_file = cred("srv.pem");
	a.key_file = cred("srv.key");
	a.require_peer_cert = 1; /* without a CA to check against */
	ck_assert_int_eq(iwarp_cm_set_tls(id, &a), -EINVAL);
	/* a server without credentials: only a CA */
	memset(&a, 0, sizeof(a));
	a.ca_file = cred("ca.pem");
	ck_assert_int_eq(iwarp_cm_set_tls(id, &a), 0);
	ck_assert_int_eq(iwarp_cm_getaddr("127.0.0.1", 0, &ss), 0);
	ck_assert_int_eq(iwarp_cm_bind_addr(id, (struct sockaddr *)&ss), 0);
	ck_assert_int_eq(iwarp_cm_listen(id, 4), -EINVAL);
	/* plain again: listening works */
	ck_assert_int_eq(iwarp_cm_set_tls(id, NULL), 0);
	ck_assert_int_eq(iwarp_cm_listen(id, 4), 0);
	ck_assert_int_eq(iwarp_cm_destroy_id(id), 0);
	cmt_side_close(&s);
}
END_TEST

static Suite *tls_suite(void)
{
	Suite *s = suite_create("tls");
	TCase *tc = tcase_create("loopback");

	tcase_add_unchecked_fixture(tc, certs_setup, certs_teardown);
	tcase_set_timeout(tc, 120);
	tcase_add_loop_test(tc, test_tls_traffic, 0, 3);
	tcase_add_loop_test(tc, test_tls_refused, 0, 5);
	tcase_add_loop_test(tc, test_tls_plain_mismatch, 0, 2);
	tcase_add_loop_test(tc, test_tls_silent_peer, 0, 2);
	tcase_add_test(tc, test_tls_bad_credentials);
	suite_add_tcase(s, tc);
	return s;
}

IW_TEST_MAIN(tls_suite)
