/*
 * tests/cm_mpa_test.c: the CM's MPA handshake state machine (cm/cm_mpa.c),
 * both roles, every input replayed whole / split at every byte / one byte
 * at a time (RFC 5044 §7.1, RFC 6581).
 */
#include "config.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "cm/cm_int.h"
#include "cm/cm_mpa.h"
#include "cm/cm_mpa_term.h"
#include "iwarp/iwarp.h"
#include "testutil.h"

static const uint8_t fpdu_tail[] = {0x00, 0x0e, 0xc1, 0x40, 0,	  0,   0,
				    1,	  0,	0,    0,    0,	  0,   0,
				    0,	  0,	0,    0,    0xde, 0xad};

/* Builds a frame from |rr| into |out|; returns its length. */
static size_t build_rr(uint8_t *out, size_t cap, const struct mpa_rr *rr)
{
	int n = mpa_rr_encode(out, cap, rr);

	ck_assert_int_gt(n, 0);
	return (size_t)n;
}

static void params_rev(struct mpa_neg_params *p, uint8_t rev)
{
	mpa_neg_params_init(p);
	p->rev = rev;
	p->crc = MPA_CRC_OFF;
}

/* ---- a replay context: one machine fed again for every split ---- */
struct feed_ctx {
	struct cm_mpa m;
	enum cm_mpa_role role;
	struct mpa_neg_params p;
	const uint8_t *pd;
	size_t pd_len;
	bool done;
	int expect_rc;		/* final rc: 1 done, or the error */
	const uint8_t *want_pd; /* peer ULP private data */
	size_t want_pd_len;
	const uint8_t *want_carry;
	size_t want_carry_len;
	uint16_t want_ird, want_ord;
	bool check_ird_ord;
	bool want_reply; /* responder error: R=1 Reply queued */
};

static void fc_reset(void *arg)
{
	struct feed_ctx *f = arg;

	ck_assert_int_eq(cm_mpa_init(&f->m, f->role, &f->p, 1000, 5000), 0);
	if (f->role == CM_MPA_INITIATOR)
		ck_assert_int_eq(
			cm_mpa_start(&f->m, f->pd, f->pd_len, 1000, 10000), 0);
	f->done = false;
}

static int fc_feed(void *arg, const uint8_t *buf, size_t len)
{
	struct feed_ctx *f = arg;
	int rc = cm_mpa_feed(&f->m, buf, len);

	if (rc == CM_MPA_DONE) {
		ck_assert(!f->done); /* DONE exactly once */
		f->done = true;
	}
	return rc;
}

static void fc_check(void *arg, int rc)
{
	struct feed_ctx *f = arg;
	const uint8_t *p;
	size_t len;

	if (f->expect_rc == CM_MPA_DONE) {
		ck_assert_int_ge(rc, 0);
		ck_assert(f->done);
	} else {
		ck_assert_int_eq(rc, f->expect_rc);
		ck_assert_int_eq(f->m.err, f->expect_rc);
	}
	if (f->want_pd) {
		p = cm_mpa_peer_pdata(&f->m, &len);
		ck_assert_uint_eq(len, f->want_pd_len);
		ck_assert(!len || !memcmp(p, f->want_pd, len));
	}
	if (f->expect_rc == CM_MPA_DONE) {
		p = cm_mpa_carry(&f->m, &len);
		ck_assert_uint_eq(len, f->want_carry_len);
		ck_assert(!len || !memcmp(p, f->want_carry, len));
	}
	if (f->check_ird_ord) {
		ck_assert_uint_eq(f->m.res.ird, f->want_ird);
		ck_assert_uint_eq(f->m.res.ord, f->want_ord);
	}
	if (f->role == CM_MPA_RESPONDER && f->expect_rc < 0)
		ck_assert_uint_eq(cm_mpa_tx_peek(&f->m, &p) > 0, f->want_reply);
}

static const struct iw_test_rx_ops fc_ops = {fc_reset, fc_feed, fc_check};

/* ---- initiator ---- */

START_TEST(test_initiator_request_bytes)
{
	struct cm_mpa m;
	struct mpa_neg_params p;
	uint8_t want[64];
	const uint8_t *tx;
	size_t n;
	int len;

	params_rev(&p, MPA_REV_2);
	p.ird = 7;
	p.ord = 9;
	ck_assert_int_eq(cm_mpa_init(&m, CM_MPA_INITIATOR, &p, 0, 0), 0);
	ck_assert_uint_eq(cm_mpa_rx_space(&m, (uint8_t **)&tx), 0);
	ck_assert_int_eq(cm_mpa_start(&m, (const uint8_t *)"hi", 2, 50, 100),
			 0);
	ck_assert_uint_eq(cm_mpa_deadline(&m), 150);
	len = mpa_neg_request_encode(&p, (const uint8_t *)"hi", 2, want,
				     sizeof(want));
	ck_assert_int_eq(len, 26);
	n = cm_mpa_tx_peek(&m, &tx);
	ck_assert_uint_eq(n, 26);
	ck_assert(!memcmp(tx, want, 26));
	ck_assert(!memcmp(
		tx, "MPA ID Req Frame\x10\x02\x00\x06\x00\x07\x00\x09hi", 26));
	cm_mpa_tx_done(&m, 10);
	ck_assert_uint_eq(cm_mpa_tx_peek(&m, &tx), 16);
	ck_assert(!memcmp(tx, want + 10, 16));
	cm_mpa_tx_done(&m, 100); /* clamped */
	ck_assert_uint_eq(cm_mpa_tx_peek(&m, &tx), 0);
	/* second start refused */
	ck_assert_int_eq(cm_mpa_start(&m, NULL, 0, 0, 0), -EINVAL);
}
END_TEST

START_TEST(test_initiator_pd_limits)
{
	static uint8_t big[600];
	struct cm_mpa m;
	struct mpa_neg_params p;

	params_rev(&p, MPA_REV_2);
	ck_assert_int_eq(cm_mpa_init(&m, CM_MPA_INITIATOR, &p, 0, 0), 0);
	ck_assert_int_eq(cm_mpa_start(&m, big, 509, 0, 0), -EINVAL);
	ck_assert_int_eq(cm_mpa_start(&m, big, 508, 0, 0), 0);
	params_rev(&p, MPA_REV_1);
	ck_assert_int_eq(cm_mpa_init(&m, CM_MPA_INITIATOR, &p, 0, 0), 0);
	ck_assert_int_eq(cm_mpa_start(&m, big, 513, 0, 0), -EINVAL);
	ck_assert_int_eq(cm_mpa_start(&m, big, 512, 0, 0), 0);
	/* a smaller context limit (max_private_data) */
	params_rev(&p, MPA_REV_2);
	p.max_pd = 100;
	ck_assert_int_eq(cm_mpa_init(&m, CM_MPA_INITIATOR, &p, 0, 0), 0);
	ck_assert_int_eq(cm_mpa_start(&m, big, 97, 0, 0), -EINVAL);
	ck_assert_int_eq(cm_mpa_start(&m, big, 96, 0, 0), 0);
	/* bad params */
	p.rev = 3;
	ck_assert_int_eq(cm_mpa_init(&m, CM_MPA_INITIATOR, &p, 0, 0), -EINVAL);
}
END_TEST

START_TEST(test_initiator_reply_splits)
{
	static struct feed_ctx f;
	struct mpa_rr rr;
	uint8_t in[128];
	size_t n;

	memset(&f, 0, sizeof(f));
	params_rev(&f.p, MPA_REV_2);
	f.p.ird = 16;
	f.p.ord = 16;
	f.role = CM_MPA_INITIATOR;
	f.pd = (const uint8_t *)"client";
	f.pd_len = 6;
	memset(&rr, 0, sizeof(rr));
	rr.kind = MPA_RR_REPLY;
	rr.rev = 2;
	rr.enhanced = true;
	rr.c = true;
	rr.ird = 4;
	rr.ord = 8;
	rr.pdata = (const uint8_t *)"server-data";
	rr.pdata_len = 11;
	n = build_rr(in, sizeof(in), &rr);
	memcpy(in + n, fpdu_tail, sizeof(fpdu_tail));
	f.expect_rc = CM_MPA_DONE;
	f.want_pd = rr.pdata;
	f.want_pd_len = 11;
	f.want_carry = fpdu_tail;
	f.want_carry_len = sizeof(fpdu_tail);
	f.check_ird_ord = true;
	f.want_ird = 8; /* min(our IRD 16, peer ORD 8) */
	f.want_ord = 4; /* min(our ORD 16, peer IRD 4) */
	iw_test_feed_splits(&fc_ops, &f, in, n + sizeof(fpdu_tail));
	ck_assert(f.m.res.crc); /* RFC 5044 §7.1: C from either side */
	ck_assert_int_eq(f.m.state, CM_MPA_S_ESTABLISHED);
	ck_assert_uint_eq(cm_mpa_deadline(&f.m), 0);
	/* no carry without trailing bytes */
	f.want_carry_len = 0;
	iw_test_feed_splits(&fc_ops, &f, in, n);
}
END_TEST

START_TEST(test_initiator_rejected)
{
	static struct feed_ctx f;
	struct mpa_rr rr;
	uint8_t in[128];
	size_t n;

	memset(&f, 0, sizeof(f));
	params_rev(&f.p, MPA_REV_2);
	f.role = CM_MPA_INITIATOR;
	memset(&rr, 0, sizeof(rr));
	rr.kind = MPA_RR_REPLY;
	rr.rev = 2;
	rr.enhanced = true;
	rr.r = true;
	rr.pdata = (const uint8_t *)"go away";
	rr.pdata_len = 7;
	n = build_rr(in, sizeof(in), &rr);
	f.expect_rc = IWARP_ERR_MPA_REJECTED;
	f.want_pd = rr.pdata;
	f.want_pd_len = 7;
	iw_test_feed_splits(&fc_ops, &f, in, n);
	ck_assert_int_eq(f.m.state, CM_MPA_S_REJECTED);
	/* siw's reject `30 02 00 00` (enhanced, no IRD/ORD) is a reject too */
	memcpy(in, "MPA ID Rep Frame\x30\x02\x00\x00", 20);
	f.want_pd_len = 0;
	iw_test_feed_splits(&fc_ops, &f, in, 20);
}
END_TEST

/* An MPA Request or Reply frame, rev 2 = enhanced (RFC 6581 §5). */
static size_t build_frame(uint8_t *out, size_t cap, enum mpa_rr_kind kind,
			  uint8_t rev, bool c, bool m, uint16_t ird,
			  uint16_t ord, bool p2p, uint8_t rtr, const char *pd)
{
	struct mpa_rr rr;

	memset(&rr, 0, sizeof(rr));
	rr.kind = kind;
	rr.rev = rev;
	rr.enhanced = rev == 2;
	rr.c = c;
	rr.m = m;
	rr.ird = ird;
	rr.ord = ord;
	rr.p2p = p2p;
	rr.rtr = rtr;
	rr.pdata = (const uint8_t *)pd;
	rr.pdata_len = pd ? strlen(pd) : 0;
	return build_rr(out, cap, &rr);
}

static size_t build_request(uint8_t *out, size_t cap, uint8_t rev, bool c,
			    bool m, uint16_t ird, uint16_t ord, bool p2p,
			    uint8_t rtr, const char *pd)
{
	return build_frame(out, cap, MPA_RR_REQUEST, rev, c, m, ird, ord, p2p,
			   rtr, pd);
}

/* An enhanced Reply with these flags and values, no private data. */
static size_t build_reply(uint8_t *out, size_t cap, bool c, bool m,
			  uint16_t ird, uint16_t ord, bool p2p, uint8_t rtr)
{
	return build_frame(out, cap, MPA_RR_REPLY, 2, c, m, ird, ord, p2p, rtr,
			   NULL);
}

START_TEST(test_initiator_bad_replies)
{
	static struct feed_ctx f;
	uint8_t in[128];
	size_t n;

	memset(&f, 0, sizeof(f));
	params_rev(&f.p, MPA_REV_2);
	f.role = CM_MPA_INITIATOR;

	/* not MPA: refused at the first wrong Key octet */
	fc_reset(&f);
	ck_assert_int_eq(cm_mpa_feed(&f.m, (const uint8_t *)"MPX", 3),
			 IWARP_ERR_MPA_KEY);
	ck_assert_int_eq(cm_mpa_feed(&f.m, (const uint8_t *)"A", 1),
			 IWARP_ERR_MPA_KEY);
	ck_assert_int_eq(f.m.state, CM_MPA_S_FAILED);

	/* a Request where the Reply belongs */
	n = build_request(in, sizeof(in), 2, false, false, 0, 0, false, 0,
			  NULL);
	f.expect_rc = IWARP_ERR_MPA_KEY;
	iw_test_feed_splits(&fc_ops, &f, in, n);

	/* a rev 1 Reply to our enhanced Request */
	n = build_frame(in, sizeof(in), MPA_RR_REPLY, 1, false, false, 0, 0,
			false, 0, NULL);
	f.expect_rc = IWARP_ERR_MPA_REQ_REP;
	iw_test_feed_splits(&fc_ops, &f, in, n);

	/* CRC required, the Reply has C=0 */
	f.p.crc = MPA_CRC_REQUIRE;
	n = build_reply(in, sizeof(in), false, false, 0, 0, false, 0);
	f.expect_rc = IWARP_ERR_MPA_CRC_REQUIRED;
	iw_test_feed_splits(&fc_ops, &f, in, n);

	/* P2P asked, Reply without A */
	f.p.crc = MPA_CRC_OFF;
	f.p.p2p = true;
	f.p.rtr_mask = MPA_RTR_WRITE;
	f.expect_rc = IWARP_ERR_MPA_RTR;
	iw_test_feed_splits(&fc_ops, &f, in, n);

	/* PD_Length > 512 in the header */
	memcpy(in, "MPA ID Rep Frame\x10\x02\x02\x01", 20);
	f.p.p2p = false;
	f.expect_rc = IWARP_ERR_MPA_PD_LENGTH;
	iw_test_feed_splits(&fc_ops, &f, in, 20);
}
END_TEST

START_TEST(test_initiator_timeout)
{
	struct cm_mpa m;
	struct mpa_neg_params p;

	params_rev(&p, MPA_REV_2);
	ck_assert_int_eq(cm_mpa_init(&m, CM_MPA_INITIATOR, &p, 0, 0), 0);
	ck_assert_int_eq(cm_mpa_start(&m, NULL, 0, 1000, 10000), 0);
	ck_assert_int_eq(cm_mpa_feed(&m, (const uint8_t *)"MPA ID", 6),
			 CM_MPA_NEED_MORE);
	ck_assert_int_eq(cm_mpa_timeout(&m, 10999), 0);
	ck_assert_int_eq(cm_mpa_timeout(&m, 11000), -ETIMEDOUT);
	ck_assert_int_eq(m.state, CM_MPA_S_FAILED);
	ck_assert_int_eq(cm_mpa_feed(&m, (const uint8_t *)" Rep", 4),
			 -ETIMEDOUT);
	ck_assert_uint_eq(cm_mpa_deadline(&m), 0);
	/* no deadline: never times out */
	ck_assert_int_eq(cm_mpa_init(&m, CM_MPA_INITIATOR, &p, 0, 0), 0);
	ck_assert_int_eq(cm_mpa_start(&m, NULL, 0, 1000, 0), 0);
	ck_assert_int_eq(cm_mpa_timeout(&m, UINT64_MAX), 0);
}
END_TEST

/* ---- responder ---- */

START_TEST(test_responder_request_splits)
{
	static struct feed_ctx f;
	uint8_t in[128];
	size_t n;

	memset(&f, 0, sizeof(f));
	params_rev(&f.p, MPA_REV_2);
	f.role = CM_MPA_RESPONDER;
	n = build_request(in, sizeof(in), 2, false, false, 1, 200, false, 0,
			  "hello-rev2");
	memcpy(in + n, fpdu_tail, 5);
	f.expect_rc = CM_MPA_DONE;
	f.want_pd = (const uint8_t *)"hello-rev2";
	f.want_pd_len = 10;
	f.want_carry = fpdu_tail;
	f.want_carry_len = 5;
	f.check_ird_ord = true;
	f.want_ird = 128; /* min(128, peer ORD 200) */
	f.want_ord = 1;	  /* min(128, peer IRD 1) */
	iw_test_feed_splits(&fc_ops, &f, in, n + 5);
	ck_assert_int_eq(f.m.state, CM_MPA_S_REQ_RCVD);
	ck_assert_uint_eq(cm_mpa_deadline(&f.m), 0);
}
END_TEST

/* Decodes the responder's queued Reply into |rr| (pdata in |buf|). */
static void queued_reply(struct cm_mpa *m, struct mpa_rr *rr)
{
	const uint8_t *tx;
	size_t n = cm_mpa_tx_peek(m, &tx);

	ck_assert_uint_gt(n, 0);
	ck_assert_int_eq(mpa_rr_decode(rr, tx, n, MPA_RR_DECODE_STRICT),
			 (int)n);
	ck_assert_int_eq(rr->kind, MPA_RR_REPLY);
}

START_TEST(test_responder_accept)
{
	struct cm_mpa m;
	struct mpa_neg_params p;
	struct mpa_rr rr;
	uint8_t in[128];
	size_t n;

	params_rev(&p, MPA_REV_2);
	n = build_request(in, sizeof(in), 2, true, false, 16, 16, false, 0,
			  NULL);
	ck_assert_int_eq(cm_mpa_init(&m, CM_MPA_RESPONDER, &p, 0, 5000), 0);
	ck_assert_uint_eq(cm_mpa_deadline(&m), 5000);
	/* accept before the Request: refused */
	ck_assert_int_eq(cm_mpa_accept(&m, NULL, 0, -1, -1), -EINVAL);
	ck_assert_int_eq(cm_mpa_feed(&m, in, n), CM_MPA_DONE);
	/* the app's IRD/ORD: ORD clamped to the peer's IRD (16) */
	ck_assert_int_eq(cm_mpa_accept(&m, (const uint8_t *)"srv", 3, 300, 40),
			 0);
	queued_reply(&m, &rr);
	ck_assert(rr.c && !rr.r && rr.enhanced && rr.rev == 2);
	ck_assert_uint_eq(rr.ird, 128);
	ck_assert_uint_eq(rr.ord, 16);
	ck_assert_uint_eq(rr.pdata_len, 3);
	ck_assert(!memcmp(rr.pdata, "srv", 3));
	ck_assert_uint_eq(m.res.ird, 128);
	ck_assert_uint_eq(m.res.ord, 16);
	ck_assert_int_eq(m.state, CM_MPA_S_ESTABLISHED);
	ck_assert_int_eq(cm_mpa_accept(&m, NULL, 0, -1, -1), -EINVAL);

	/* accept(NULL): the negotiated values (siw: 0/0 -> 0/0) */
	n = build_request(in, sizeof(in), 2, false, false, 0, 0, false, 0,
			  NULL);
	ck_assert_int_eq(cm_mpa_init(&m, CM_MPA_RESPONDER, &p, 0, 5000), 0);
	ck_assert_int_eq(cm_mpa_feed(&m, in, n), CM_MPA_DONE);
	ck_assert_int_eq(cm_mpa_accept(&m, NULL, 0, -1, -1), 0);
	queued_reply(&m, &rr);
	ck_assert(!rr.c);
	ck_assert_uint_eq(rr.ird, 0);
	ck_assert_uint_eq(rr.ord, 0);

	/* private data limit: 512 - 4 when enhanced */
	ck_assert_int_eq(cm_mpa_init(&m, CM_MPA_RESPONDER, &p, 0, 5000), 0);
	ck_assert_int_eq(cm_mpa_feed(&m, in, n), CM_MPA_DONE);
	{
		static uint8_t big[512];

		ck_assert_int_eq(cm_mpa_accept(&m, big, 509, -1, -1), -EINVAL);
		ck_assert_int_eq(cm_mpa_accept(&m, big, 508, -1, -1), 0);
	}
}
END_TEST

START_TEST(test_responder_p2p_read_rtr_ird)
{
	struct cm_mpa m;
	struct mpa_neg_params p;
	struct mpa_rr rr;
	uint8_t in[128];
	size_t n;

	params_rev(&p, MPA_REV_2);
	p.rtr_mask = MPA_RTR_ALL;
	n = build_request(in, sizeof(in), 2, false, false, 4, 1, true,
			  MPA_RTR_READ, NULL);
	ck_assert_int_eq(cm_mpa_init(&m, CM_MPA_RESPONDER, &p, 0, 0), 0);
	ck_assert_int_eq(cm_mpa_feed(&m, in, n), CM_MPA_DONE);
	ck_assert(m.res.p2p);
	ck_assert_int_eq(m.res.rtr, MPA_RTR_READ);
	/* RFC 6581 §7: the Read RTR needs one IRD slot even if the app
	 * offers 0 */
	ck_assert_int_eq(cm_mpa_accept(&m, NULL, 0, 0, 0), 0);
	queued_reply(&m, &rr);
	ck_assert(rr.p2p);
	ck_assert_uint_eq(rr.rtr, MPA_RTR_READ);
	ck_assert_uint_eq(rr.ird, 1);
	ck_assert_uint_eq(rr.ord, 0);
}
END_TEST

START_TEST(test_responder_reject)
{
	struct cm_mpa m;
	struct mpa_neg_params p;
	struct mpa_rr rr;
	uint8_t in[128];
	size_t n;

	params_rev(&p, MPA_REV_2);
	n = build_request(in, sizeof(in), 2, false, false, 1, 1, false, 0, "x");
	ck_assert_int_eq(cm_mpa_init(&m, CM_MPA_RESPONDER, &p, 0, 0), 0);
	ck_assert_int_eq(cm_mpa_reject(&m, NULL, 0), -EINVAL);
	ck_assert_int_eq(cm_mpa_feed(&m, in, n), CM_MPA_DONE);
	ck_assert_int_eq(cm_mpa_reject(&m, (const uint8_t *)"busy", 4), 0);
	queued_reply(&m, &rr);
	ck_assert(rr.r);
	ck_assert(rr.enhanced);
	ck_assert_uint_eq(rr.pdata_len, 4);
	ck_assert(!memcmp(rr.pdata, "busy", 4));
	ck_assert_int_eq(m.state, CM_MPA_S_REJECTED);
	ck_assert_int_eq(m.err, IWARP_ERR_MPA_REJECTED);
	ck_assert_int_eq(cm_mpa_accept(&m, NULL, 0, -1, -1), -EINVAL);

	/* rev 1 request: rev 1 reject */
	n = build_request(in, sizeof(in), 1, false, false, 0, 0, false, 0,
			  NULL);
	ck_assert_int_eq(cm_mpa_init(&m, CM_MPA_RESPONDER, &p, 0, 0), 0);
	ck_assert_int_eq(cm_mpa_feed(&m, in, n), CM_MPA_DONE);
	ck_assert_int_eq(cm_mpa_reject(&m, NULL, 0), 0);
	queued_reply(&m, &rr);
	ck_assert(rr.r && !rr.enhanced && rr.rev == 1);
}
END_TEST

START_TEST(test_responder_refusals)
{
	static struct feed_ctx f;
	uint8_t in[600];
	size_t n;

	memset(&f, 0, sizeof(f));
	params_rev(&f.p, MPA_REV_2);
	f.role = CM_MPA_RESPONDER;

	/* bad key: no Reply, refused at the first wrong octet */
	memcpy(in, "MPA_ID_Bad_Frame\x10\x02\x00\x00", 20);
	f.expect_rc = IWARP_ERR_MPA_KEY;
	f.want_reply = false;
	iw_test_feed_splits(&fc_ops, &f, in, 20);

	/* rev 3: no Reply (as siw) */
	memcpy(in, "MPA ID Req Frame\x00\x03\x00\x00", 20);
	f.expect_rc = IWARP_ERR_MPA_REV;
	iw_test_feed_splits(&fc_ops, &f, in, 20);

	/* enhanced without IRD/ORD: R=1 Reply (as siw) */
	memcpy(in, "MPA ID Req Frame\x10\x02\x00\x00", 20);
	f.expect_rc = IWARP_ERR_MPA_ENHANCED_PD;
	f.want_reply = true;
	iw_test_feed_splits(&fc_ops, &f, in, 20);

	/* more private data than the context accepts: R=1 Reply */
	f.p.max_pd = 8;
	n = build_request(in, sizeof(in), 2, false, false, 1, 1, false, 0,
			  "0123456789");
	f.expect_rc = IWARP_ERR_MPA_PD_LENGTH;
	iw_test_feed_splits(&fc_ops, &f, in, n);
}
END_TEST

START_TEST(test_responder_timeout)
{
	struct cm_mpa m;
	struct mpa_neg_params p;
	const uint8_t *tx;

	params_rev(&p, MPA_REV_2);
	ck_assert_int_eq(cm_mpa_init(&m, CM_MPA_RESPONDER, &p, 100, 5000), 0);
	ck_assert_int_eq(cm_mpa_timeout(&m, 5099), 0);
	ck_assert_int_eq(cm_mpa_timeout(&m, 5100), -ETIMEDOUT);
	ck_assert_uint_eq(cm_mpa_tx_peek(&m, &tx), 0);
	ck_assert_int_eq(cm_mpa_reject(&m, NULL, 0), -EINVAL);
}
END_TEST

/* ---- both machines back to back ---- */

/* Moves everything |from| has queued into |to| in |chunk|-octet pieces. */
static int pump(struct cm_mpa *from, struct cm_mpa *to, size_t chunk)
{
	const uint8_t *tx;
	size_t n, k;
	int rc = CM_MPA_NEED_MORE, r;

	while ((n = cm_mpa_tx_peek(from, &tx))) {
		k = n < chunk ? n : chunk;
		r = cm_mpa_feed(to, tx, k);
		cm_mpa_tx_done(from, k);
		if (r < 0)
			return r;
		if (r == CM_MPA_DONE)
			rc = r;
	}
	return rc;
}

struct combo {
	uint8_t rev;
	enum mpa_crc_policy ci, cr; /* initiator, responder */
	bool mi, mr;		    /* markers wanted by each */
	bool p2p;
	uint8_t rtr;
	int expect; /* initiator's result */
	bool crc;
};

static const struct combo combos[] = {
	{2, MPA_CRC_OFF, MPA_CRC_OFF, false, false, false, 0, 1, false},
	{2, MPA_CRC_REQUEST, MPA_CRC_OFF, false, false, false, 0, 1, true},
	{2, MPA_CRC_OFF, MPA_CRC_REQUEST, false, false, false, 0, 1, true},
	/* our responder echoes C (RFC 5044 §7.1), so REQUIRE is met */
	{2, MPA_CRC_REQUIRE, MPA_CRC_OFF, false, false, false, 0, 1, true},
	{2, MPA_CRC_REQUIRE, MPA_CRC_REQUEST, false, false, false, 0, 1, true},
	{2, MPA_CRC_OFF, MPA_CRC_REQUIRE, false, false, false, 0, 1, true},
	{1, MPA_CRC_OFF, MPA_CRC_OFF, false, false, false, 0, 1, false},
	{1, MPA_CRC_REQUEST, MPA_CRC_OFF, true, false, false, 0, 1, true},
	{1, MPA_CRC_OFF, MPA_CRC_OFF, false, true, false, 0, 1, false},
	{2, MPA_CRC_OFF, MPA_CRC_OFF, true, true, false, 0, 1, false},
	{2, MPA_CRC_OFF, MPA_CRC_OFF, false, false, true, MPA_RTR_WRITE, 1,
	 false},
	{2, MPA_CRC_OFF, MPA_CRC_OFF, false, false, true, MPA_RTR_READ, 1,
	 false},
	{2, MPA_CRC_OFF, MPA_CRC_OFF, false, false, true, MPA_RTR_SEND, 1,
	 false},
};

START_TEST(test_back_to_back)
{
	const struct combo *c = &combos[_i];
	static struct cm_mpa ini, rsp;
	struct mpa_neg_params pi, pr;
	size_t chunk;

	for (chunk = 1; chunk <= 64; chunk = chunk * 3 + 1) {
		params_rev(&pi, c->rev);
		params_rev(&pr, 2);
		pi.crc = c->ci;
		pr.crc = c->cr;
		pi.markers_rx = c->mi;
		pr.markers_rx = c->mr;
		pi.p2p = c->p2p;
		pi.rtr_mask = c->p2p ? c->rtr : MPA_RTR_WRITE;
		pr.rtr_mask = MPA_RTR_ALL;
		pi.ird = 3;
		pi.ord = 5;
		ck_assert_int_eq(cm_mpa_init(&ini, CM_MPA_INITIATOR, &pi, 0, 0),
				 0);
		ck_assert_int_eq(cm_mpa_init(&rsp, CM_MPA_RESPONDER, &pr, 0, 0),
				 0);
		ck_assert_int_eq(
			cm_mpa_start(&ini, (const uint8_t *)"ping", 4, 0, 0),
			0);
		ck_assert_int_eq(pump(&ini, &rsp, chunk), CM_MPA_DONE);
		ck_assert_int_eq(
			cm_mpa_accept(&rsp, (const uint8_t *)"pong", 4, -1, -1),
			0);
		ck_assert_int_eq(pump(&rsp, &ini, chunk), c->expect);
		if (c->expect != CM_MPA_DONE)
			continue;
		ck_assert_int_eq(ini.res.crc, c->crc);
		ck_assert_int_eq(rsp.res.crc, c->crc);
		/* RFC 5044 §7.1: M asks the other side for markers */
		ck_assert_int_eq(ini.res.markers_rx, c->mi);
		ck_assert_int_eq(rsp.res.markers_tx, c->mi);
		ck_assert_int_eq(rsp.res.markers_rx, c->mr);
		ck_assert_int_eq(ini.res.markers_tx, c->mr);
		ck_assert_int_eq(ini.res.rev, c->rev);
		ck_assert_int_eq(ini.res.p2p, c->p2p);
		ck_assert_int_eq(rsp.res.p2p, c->p2p);
		ck_assert_int_eq(ini.res.rtr, c->p2p ? c->rtr : MPA_RTR_NONE);
		ck_assert_int_eq(rsp.res.rtr, ini.res.rtr);
		if (c->rev == 2) {
			/* RFC 6581 §5: each ORD <= the other's IRD */
			ck_assert_uint_le(ini.res.ord, rsp.res.ird);
			ck_assert_uint_le(rsp.res.ord, ini.res.ird);
			ck_assert_uint_eq(rsp.res.ird, 5); /* min(128, 5) */
			ck_assert_uint_eq(ini.res.ord, 5);
		}
		{
			size_t len;
			const uint8_t *p = cm_mpa_peer_pdata(&ini, &len);

			ck_assert_uint_eq(len, 4);
			ck_assert(!memcmp(p, "pong", 4));
			p = cm_mpa_peer_pdata(&rsp, &len);
			ck_assert_uint_eq(len, 4);
			ck_assert(!memcmp(p, "ping", 4));
		}
	}
}
END_TEST

/*
 * Both sides with the default context attributes (IWARP_P2P_AUTO, rev 2),
 * at every split: the initiator offers Write and Read RTR, the responder
 * picks Write (RFC 6581 §9.2), both agree, so the initiator's first FPDU
 * will be the RTR (RFC 6581 §7). With initiator depth 0 the offered Read
 * RTR still gets an ORD slot. _i 1: the initiator at MPA rev 1: no P2P.
 */
START_TEST(test_back_to_back_defaults)
{
	static struct cm_mpa ini, rsp;
	struct iwarp_context_attr a;
	struct mpa_neg_params pi, pr;
	size_t chunk;

	unsetenv("IWARP_P2P");
	unsetenv("IWARP_MPA_REV");
	iwarp_context_attr_init(&a);
	cm_attr_mpa_params(&a, &pr);
	if (_i)
		a.mpa_rev = 1;
	cm_attr_mpa_params(&a, &pi);
	pi.ord = 0;
	for (chunk = 1; chunk <= 64; chunk = chunk * 3 + 1) {
		ck_assert_int_eq(cm_mpa_init(&ini, CM_MPA_INITIATOR, &pi, 0, 0),
				 0);
		ck_assert_int_eq(cm_mpa_init(&rsp, CM_MPA_RESPONDER, &pr, 0, 0),
				 0);
		ck_assert_int_eq(cm_mpa_start(&ini, NULL, 0, 0, 0), 0);
		ck_assert_int_eq(pump(&ini, &rsp, chunk), CM_MPA_DONE);
		ck_assert_int_eq(cm_mpa_accept(&rsp, NULL, 0, -1, -1), 0);
		ck_assert_int_eq(pump(&rsp, &ini, chunk), CM_MPA_DONE);
		ck_assert_int_eq(ini.res.p2p, !_i);
		ck_assert_int_eq(rsp.res.p2p, !_i);
		ck_assert_int_eq(ini.res.rtr,
				 _i ? MPA_RTR_NONE : MPA_RTR_WRITE);
		ck_assert_int_eq(rsp.res.rtr, ini.res.rtr);
		if (!_i) {
			ck_assert_uint_eq(ini.res.ord, 1); /* Read offered */
			ck_assert_uint_ge(rsp.res.ird, 1);
		}
	}
}
END_TEST

/* ---- TERMINATEs of the setup (cm/cm_mpa_term.h) ---- */

START_TEST(test_term_llp_encode)
{
	static const uint8_t v[] = "123456789";
	/* bare Terminate: 28 octets on the wire (docs/interop-notes.md §6.7) */
	static const uint8_t rtr07[28] = {
		0x00, 0x16, 0x41, 0x47, 0, 0, 0,    0,	  0, 0, 0, 2, 0, 0,
		0,    1,    0,	  0,	0, 0, 0x20, 0x07, 0, 0, 0, 0, 0, 0,
	};
	uint8_t out[64], want[64];
	size_t wn;
	int i, crc, mk;

	ck_assert_uint_eq(iw_test_crc32c_ref(v, 9), 0xE3069283u);
	ck_assert_int_eq(cm_term_llp_encode(out, sizeof(out), 7, false, false),
			 28);
	ck_assert_mem_eq(out, rtr07, sizeof(rtr07));
	for (i = 1; i <= 7; i++)
		for (crc = 0; crc < 2; crc++)
			for (mk = 0; mk < 2; mk++) {
				wn = iw_test_llp_term(want, (uint8_t)i, crc,
						      mk);
				ck_assert_uint_eq(wn, mk ? 32 : 28);
				memset(out, 0xee, sizeof(out));
				ck_assert_int_eq(
					cm_term_llp_encode(out, sizeof(out),
							   (uint8_t)i, crc, mk),
					(int)wn);
				ck_assert_mem_eq(out, want, wn);
				ck_assert_uint_eq(out[wn], 0xee);
			}
	/* not an LLP/MPA code (RFC 5044 §8, RFC 6581 §6) */
	ck_assert_int_eq(cm_term_llp_encode(out, sizeof(out), 0, false, false),
			 -EINVAL);
	ck_assert_int_eq(cm_term_llp_encode(out, sizeof(out), 8, false, false),
			 -EINVAL);
	ck_assert_int_eq(cm_term_llp_encode(out, 27, 7, false, false), -ENOSPC);
	ck_assert_int_eq(cm_term_llp_encode(out, 31, 7, false, true), -ENOSPC);
}
END_TEST

/* A Reply replayed at every split, then the TERMINATE it calls for. */
struct term_ctx {
	struct feed_ctx f; /* first: the fc_* callbacks take it */
	int want_ecode;	   /* cm_mpa_reply_term: 0 = none */
	bool crc, markers; /* the TERMINATE's framing */
};

static void tc_check(void *arg, int rc)
{
	struct term_ctx *t = arg;
	uint8_t want[CM_TERM_FPDU_MAX], req[MPA_RR_FRAME_MAX];
	const uint8_t *tx;
	size_t n, wn, rn;

	fc_check(&t->f, rc);
	/* the Request is still queued: the TERMINATE goes after it */
	rn = cm_mpa_tx_peek(&t->f.m, &tx);
	ck_assert_uint_gt(rn, 0);
	memcpy(req, tx, rn);
	cm_mpa_tx_done(&t->f.m, 7);
	ck_assert_int_eq(cm_mpa_reply_term(&t->f.m), t->want_ecode);
	n = cm_mpa_tx_peek(&t->f.m, &tx);
	if (!t->want_ecode) {
		ck_assert_uint_eq(n, rn - 7);
		return;
	}
	wn = iw_test_llp_term(want, (uint8_t)t->want_ecode, t->crc, t->markers);
	ck_assert_uint_eq(n, rn - 7 + wn);
	ck_assert_mem_eq(tx, req + 7, rn - 7);
	ck_assert_mem_eq(tx + rn - 7, want, wn);
	/* everything sent: the next one starts at the front */
	cm_mpa_tx_done(&t->f.m, n);
	ck_assert_int_eq(cm_mpa_term_queue(&t->f.m, 1, false, false), 28);
	ck_assert_uint_eq(cm_mpa_tx_peek(&t->f.m, &tx), 28);
	ck_assert_uint_eq(tx[21], 1);
}

static const struct iw_test_rx_ops tc_ops = {fc_reset, fc_feed, tc_check};

/*
 * Initiator, docs/interop-notes.md §1.2 (siw_proc_mpareply): a well-formed
 * Reply whose negotiation fails is answered with TERMINATE LLP/MPA: 0x07 no
 * matching RTR, 0x06 insufficient IRD, 0x04 otherwise (a Request key: siw's
 * "bad key"; Rev/enhanced mismatch; C=0 when we require CRC), framed with CRC
 * when either frame has C=1 and a marker when the Reply's M asks for it.
 * No TERMINATE for R=1, for bytes that are no MPA frame, Rev > 2, or a
 * timeout.
 */
START_TEST(test_initiator_reply_term)
{
	static struct term_ctx t;
	struct mpa_rr rr;
	uint8_t in[128];
	size_t n;

	memset(&t, 0, sizeof(t));
	params_rev(&t.f.p, MPA_REV_2);
	t.f.role = CM_MPA_INITIATOR;

	/* P2P asked with Write only; the Reply picks Read: 0x07 */
	t.f.p.p2p = true;
	t.f.p.rtr_mask = MPA_RTR_WRITE;
	n = build_reply(in, sizeof(in), false, false, 4, 4, true, MPA_RTR_READ);
	t.f.expect_rc = IWARP_ERR_MPA_RTR;
	t.want_ecode = IWARP_LLP_ECODE_NO_MATCHING_RTR;
	iw_test_feed_splits(&tc_ops, &t, in, n);
	/* ... the Reply without A, C=1 in the Reply: CRC on */
	n = build_reply(in, sizeof(in), true, false, 4, 4, false, 0);
	t.crc = true;
	iw_test_feed_splits(&tc_ops, &t, in, n);
	/* ... M=1 in the Reply: a marker at stream position 0 */
	n = build_reply(in, sizeof(in), true, true, 4, 4, false, 0);
	t.markers = true;
	iw_test_feed_splits(&tc_ops, &t, in, n);
	/* ... C=0 in the Reply but C=1 in our Request: CRC on both ways */
	t.f.p.crc = MPA_CRC_REQUEST;
	n = build_reply(in, sizeof(in), false, false, 4, 4, false, 0);
	t.markers = false;
	iw_test_feed_splits(&tc_ops, &t, in, n);

	/* strict IRD: the Reply's IRD 1 < our ORD 2: 0x06 */
	params_rev(&t.f.p, MPA_REV_2);
	t.f.p.strict_ird = true;
	t.f.p.ord = 2;
	n = build_reply(in, sizeof(in), true, false, 1, 0, false, 0);
	t.f.expect_rc = IWARP_ERR_MPA_IRD;
	t.want_ecode = IWARP_LLP_ECODE_INSUFFICIENT_IRD;
	t.crc = true;
	iw_test_feed_splits(&tc_ops, &t, in, n);

	/* a Request where the Reply belongs (bad key): 0x04 */
	params_rev(&t.f.p, MPA_REV_2);
	n = build_request(in, sizeof(in), 2, false, false, 1, 1, false, 0,
			  NULL);
	t.f.expect_rc = IWARP_ERR_MPA_KEY;
	t.want_ecode = IWARP_LLP_ECODE_INVALID_REQ_REP;
	t.crc = false;
	iw_test_feed_splits(&tc_ops, &t, in, n);
	/* a rev 1 Reply to our enhanced Request: 0x04 */
	n = build_frame(in, sizeof(in), MPA_RR_REPLY, 1, false, false, 0, 0,
			false, 0, NULL);
	t.f.expect_rc = IWARP_ERR_MPA_REQ_REP;
	iw_test_feed_splits(&tc_ops, &t, in, n);
	/* CRC required, the Reply has C=0: 0x04, CRC on (our C=1) */
	t.f.p.crc = MPA_CRC_REQUIRE;
	n = build_reply(in, sizeof(in), false, false, 4, 4, false, 0);
	t.f.expect_rc = IWARP_ERR_MPA_CRC_REQUIRED;
	t.crc = true;
	iw_test_feed_splits(&tc_ops, &t, in, n);

	/* none: R=1 (the peer refused; RFC 5044 §7.1 just closes) */
	params_rev(&t.f.p, MPA_REV_2);
	t.f.p.p2p = true;
	t.f.p.rtr_mask = MPA_RTR_WRITE;
	memset(&rr, 0, sizeof(rr));
	rr.kind = MPA_RR_REPLY;
	rr.rev = 2;
	rr.enhanced = true;
	rr.r = true;
	n = build_rr(in, sizeof(in), &rr);
	t.f.expect_rc = IWARP_ERR_MPA_REJECTED;
	t.want_ecode = 0;
	iw_test_feed_splits(&tc_ops, &t, in, n);
	/* none: Rev 3 (not a frame we can read) */
	memcpy(in, "MPA ID Rep Frame\x10\x03\x00\x04\0\4\0\4", 24);
	t.f.expect_rc = IWARP_ERR_MPA_REV;
	iw_test_feed_splits(&tc_ops, &t, in, 24);
	/* none: not MPA at all, refused at the first wrong Key octet */
	memcpy(in, "MPA ID Bad Frame\x10\x02\x00\x04\0\4\0\4", 24);
	t.f.expect_rc = IWARP_ERR_MPA_KEY;
	iw_test_feed_splits(&tc_ops, &t, in, 24);
	/* none: PD_Length > 512 */
	memcpy(in, "MPA ID Rep Frame\x10\x02\x02\x01", 20);
	t.f.expect_rc = IWARP_ERR_MPA_PD_LENGTH;
	iw_test_feed_splits(&tc_ops, &t, in, 20);
	/* none: timeout, and not for a responder */
	fc_reset(&t.f);
	ck_assert_int_eq(cm_mpa_timeout(&t.f.m, 1000 + 10000), -ETIMEDOUT);
	ck_assert_int_eq(cm_mpa_reply_term(&t.f.m), 0);
	ck_assert_int_eq(cm_mpa_init(&t.f.m, CM_MPA_RESPONDER, &t.f.p, 0, 0),
			 0);
	ck_assert_int_eq(cm_mpa_feed(&t.f.m, (const uint8_t *)"X", 1),
			 IWARP_ERR_MPA_KEY);
	ck_assert_int_eq(cm_mpa_reply_term(&t.f.m), 0);
}
END_TEST

/* A responder that negotiated P2P with |rtr| and sent its Reply, then
 * the first FPDU replayed at every split into its carry. */
struct rtr_ctx {
	struct cm_mpa m;
	uint8_t rtr;
	bool markers_rx; /* our M: a marker starts the peer's stream */
	size_t fed, decided_at;
	int decided; /* first cm_mpa_rtr_check result != NEED_MORE */
	int want;
	size_t want_at; /* octets fed when it must be decided */
};

static void rc_reset(void *arg)
{
	struct rtr_ctx *r = arg;
	struct mpa_neg_params p;
	uint8_t in[64];
	const uint8_t *tx;
	size_t n;

	params_rev(&p, MPA_REV_2);
	p.rtr_mask = MPA_RTR_ALL;
	p.markers_rx = r->markers_rx;
	n = build_request(in, sizeof(in), 2, false, false, 4, 4, true, r->rtr,
			  NULL);
	ck_assert_int_eq(cm_mpa_init(&r->m, CM_MPA_RESPONDER, &p, 0, 0), 0);
	ck_assert_int_eq(cm_mpa_feed(&r->m, in, n), CM_MPA_DONE);
	ck_assert_int_eq(cm_mpa_accept(&r->m, NULL, 0, -1, -1), 0);
	ck_assert(r->m.res.p2p);
	ck_assert_int_eq(r->m.res.rtr, r->rtr);
	cm_mpa_tx_done(&r->m, cm_mpa_tx_peek(&r->m, &tx));
	ck_assert_int_eq(cm_mpa_rtr_check(&r->m), CM_MPA_NEED_MORE);
	r->fed = 0;
	r->decided = CM_MPA_NEED_MORE;
	r->decided_at = 0;
}

static int rc_feed(void *arg, const uint8_t *buf, size_t len)
{
	struct rtr_ctx *r = arg;
	int rc = cm_mpa_feed(&r->m, buf, len);

	ck_assert_int_eq(rc, CM_MPA_NEED_MORE); /* carry only */
	r->fed += len;
	rc = cm_mpa_rtr_check(&r->m);
	if (r->decided == CM_MPA_NEED_MORE) {
		r->decided = rc;
		r->decided_at = r->fed;
	} else {
		ck_assert_int_eq(rc, r->decided); /* never changes */
	}
	/* decided by the octet that settles it: not before, not later */
	ck_assert_int_eq(r->decided != CM_MPA_NEED_MORE, r->fed >= r->want_at);
	return 0;
}

static void rc_check(void *arg, int rc)
{
	struct rtr_ctx *r = arg;

	ck_assert_int_eq(rc, 0);
	ck_assert_int_eq(r->decided, r->want);
	ck_assert_uint_ge(r->decided_at, r->want_at);
}

static const struct iw_test_rx_ops rc_ops = {rc_reset, rc_feed, rc_check};

/* Replays |in| (|n| octets) for |rtr| and expects |want| once |at| octets
 * are in (exactly |at| when the input is fed one octet at a time). */
static void rtr_case(struct rtr_ctx *r, uint8_t rtr, const uint8_t *in,
		     size_t n, int want, size_t at)
{
	r->rtr = rtr;
	r->want = want;
	r->want_at = at;
	iw_test_feed_splits(&rc_ops, r, in, n);
	/* the one-octet replay ran last: the decision fell on octet |at| */
	ck_assert_uint_eq(r->decided_at, at);
}

/*
 * RFC 6581 §7: the responder's first FPDU must be the negotiated
 * zero-length RTR; anything else is IWARP_ERR_MPA_RTR (TERMINATE 0x07),
 * a Terminate is reported as such (not answered).
 */
START_TEST(test_responder_rtr_check)
{
	/* zero-length Write, STag 1, TO 0, CRC off
	 * (docs/interop-notes.md §6.7) */
	static const uint8_t wr[20] = {0x00, 0x0e, 0xc1, 0x40, 0, 0, 0, 1};
	/* zero-length Read Request: QN 1, MSN 1, sink STag 1, size 0,
	 * source STag 1 */
	static const uint8_t rd[52] = {
		0x00, 0x2e, 0x41, 0x41, 0, 0, 0, 0, 0, 0, 0, 1, 0, 0,
		0,    1,    0,	  0,	0, 0, 0, 0, 0, 1, 0, 0, 0, 0,
		0,    0,    0,	  0,	0, 0, 0, 0, 0, 0, 0, 1,
	};
	/* zero-length Send: QN 0, MSN 1, MO 0 */
	static const uint8_t sd[24] = {0x00, 0x12, 0x41, 0x43, 0, 0, 0, 0,
				       0,    0,	   0,	 0,    0, 0, 0, 1};
	static struct rtr_ctx r;
	uint8_t in[128];

	memset(&r, 0, sizeof(r));
	/* the negotiated RTR, whole: DONE at its last CRC octet */
	rtr_case(&r, MPA_RTR_WRITE, wr, sizeof(wr), CM_MPA_DONE, 20);
	rtr_case(&r, MPA_RTR_READ, rd, sizeof(rd), CM_MPA_DONE, 52);
	rtr_case(&r, MPA_RTR_SEND, sd, sizeof(sd), CM_MPA_DONE, 24);
	/* a Write RTR with STag 0 (cxgb4: docs/interop-notes.md §6.7), more */
	memcpy(in, wr, sizeof(wr));
	in[7] = 0;
	memcpy(in + 20, sd, sizeof(sd));
	rtr_case(&r, MPA_RTR_WRITE, in, 44, CM_MPA_DONE, 20);

	/* another RTR type than the one chosen: decided by the control
	 * octets (or ULPDU_Length) */
	rtr_case(&r, MPA_RTR_WRITE, rd, sizeof(rd), IWARP_ERR_MPA_RTR, 4);
	rtr_case(&r, MPA_RTR_READ, wr, sizeof(wr), IWARP_ERR_MPA_RTR, 4);
	rtr_case(&r, MPA_RTR_SEND, wr, sizeof(wr), IWARP_ERR_MPA_RTR, 4);
	/* a Write with payload instead of the zero-length one */
	memcpy(in, wr, sizeof(wr));
	in[1] = 0x12;
	rtr_case(&r, MPA_RTR_WRITE, in, 24, IWARP_ERR_MPA_RTR, 4);
	/* zero-length Write without L */
	in[1] = 0x0e;
	in[2] = 0x81;
	rtr_case(&r, MPA_RTR_WRITE, in, 20, IWARP_ERR_MPA_RTR, 4);
	/* a 1-octet Send (ULPDU 19, pad 3: 28 octets) */
	memset(in, 0, 28);
	memcpy(in, sd, sizeof(sd));
	in[1] = 0x13;
	rtr_case(&r, MPA_RTR_WRITE, in, 28, IWARP_ERR_MPA_RTR, 4);
	rtr_case(&r, MPA_RTR_SEND, in, 28, IWARP_ERR_MPA_RTR, 4);
	/* a zero-length Send with SE / on QN 1: only decidable from the
	 * opcode / the QN field */
	memcpy(in, sd, sizeof(sd));
	in[3] = 0x45;
	rtr_case(&r, MPA_RTR_SEND, in, 24, IWARP_ERR_MPA_RTR, 4);
	in[3] = 0x43;
	in[11] = 1;
	rtr_case(&r, MPA_RTR_SEND, in, 24, IWARP_ERR_MPA_RTR, 20);
	/* a Read Request of 8 octets: decided by the size field */
	memcpy(in, rd, sizeof(rd));
	in[35] = 8;
	rtr_case(&r, MPA_RTR_READ, in, 52, IWARP_ERR_MPA_RTR, 48);
	/* ULPDU_Length 0 */
	memset(in, 0, 8);
	rtr_case(&r, MPA_RTR_WRITE, in, 8, IWARP_ERR_MPA_RTR, 4);

	/* the peer's Terminate (LLP/MPA 0x07): not answered */
	ck_assert_int_eq(cm_term_llp_encode(in, sizeof(in), 7, false, false),
			 28);
	rtr_case(&r, MPA_RTR_WRITE, in, 28, CM_MPA_RTR_PEER_TERM, 4);

	/* markers toward us: the stream starts with a marker */
	r.markers_rx = true;
	memset(in, 0, 4);
	memcpy(in + 4, wr, sizeof(wr));
	rtr_case(&r, MPA_RTR_WRITE, in, 24, CM_MPA_DONE, 24);
	memcpy(in + 4, rd, sizeof(rd));
	rtr_case(&r, MPA_RTR_WRITE, in, 56, IWARP_ERR_MPA_RTR, 8);

	/* no RTR negotiated */
	ck_assert_int_eq(cm_mpa_init(&r.m, CM_MPA_RESPONDER, &r.m.params, 0, 0),
			 0);
	ck_assert_int_eq(cm_mpa_rtr_check(&r.m), -EINVAL);
}
END_TEST

static Suite *cm_mpa_suite(void)
{
	Suite *s = suite_create("cm_mpa");
	TCase *tc = tcase_create("core");

	tcase_add_test(tc, test_initiator_request_bytes);
	tcase_add_test(tc, test_initiator_pd_limits);
	tcase_add_test(tc, test_initiator_reply_splits);
	tcase_add_test(tc, test_initiator_rejected);
	tcase_add_test(tc, test_initiator_bad_replies);
	tcase_add_test(tc, test_initiator_timeout);
	tcase_add_test(tc, test_responder_request_splits);
	tcase_add_test(tc, test_responder_accept);
	tcase_add_test(tc, test_responder_p2p_read_rtr_ird);
	tcase_add_test(tc, test_responder_reject);
	tcase_add_test(tc, test_responder_refusals);
	tcase_add_test(tc, test_responder_timeout);
	tcase_add_test(tc, test_term_llp_encode);
	tcase_add_test(tc, test_initiator_reply_term);
	tcase_add_test(tc, test_responder_rtr_check);
	tcase_add_loop_test(tc, test_back_to_back_defaults, 0, 2);
	tcase_add_loop_test(tc, test_back_to_back, 0,
			    (int)(sizeof(combos) / sizeof(combos[0])));
	suite_add_tcase(s, tc);
	return s;
}

IW_TEST_MAIN(cm_mpa_suite)
