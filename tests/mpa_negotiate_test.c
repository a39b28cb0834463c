/*
 * tests/mpa_negotiate_test.c: MPA connection setup, both roles (RFC 5044
 * §7.1, RFC 6581). The siw rows replay the probes of siw listed in
 * docs/interop-notes.md §10 (responder table, initiator and CRC setting).
 */
#include "config.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "cm/cm_int.h"
#include "iwarp/iwarp.h"
#include "mpa/mpa_negotiate.h"
#include "testutil.h"

#define REQ_KEY                                                                \
	0x4d, 0x50, 0x41, 0x20, 0x49, 0x44, 0x20, 0x52, 0x65, 0x71, 0x20,      \
		0x46, 0x72, 0x61, 0x6d, 0x65
#define REP_KEY                                                                \
	0x4d, 0x50, 0x41, 0x20, 0x49, 0x44, 0x20, 0x52, 0x65, 0x70, 0x20,      \
		0x46, 0x72, 0x61, 0x6d, 0x65
#define HDR_REQ(f, rev, pdl) REQ_KEY, f, rev, 0x00, pdl
#define HDR_REP(f, rev, pdl) REP_KEY, f, rev, 0x00, pdl

/* Params like siw's responder: no CRC asked, IRD/ORD 128, Write|Read RTR. */
static struct mpa_neg_params siw_like(void)
{
	struct mpa_neg_params p;

	mpa_neg_params_init(&p);
	p.crc = MPA_CRC_OFF;
	return p;
}

/* One row of the siw probe table, replayed against our responder. */
struct resp_row {
	const char *name;
	uint8_t req[40];
	size_t req_len;
	int rc;		     /* our return */
	uint8_t rep[40];     /* our Reply, when one is sent */
	size_t rep_len;	     /* 0: no Reply */
	uint8_t siw_rep[40]; /* what siw sent (0 len: closed) */
	size_t siw_rep_len;
};

static const struct resp_row resp_rows[] = {
	{"rev1",
	 {HDR_REQ(0x00, 1, 0x0a), 'h', 'e', 'l', 'l', 'o', '-', 'r', 'e', 'v',
	  '1'},
	 30,
	 30,
	 {HDR_REP(0x00, 1, 0)},
	 20,
	 {HDR_REP(0x00, 1, 0)},
	 20},
	{"rev1-crc",
	 {HDR_REQ(0x40, 1, 0x0a), 'c', 'r', 'c', '-', 'p', 'l', 'e', 'a', 's',
	  'e'},
	 30,
	 30,
	 {HDR_REP(0x40, 1, 0)},
	 20,
	 {HDR_REP(0x40, 1, 0)},
	 20},
	/* siw rejects markers; we support them and accept
	 * (docs/interop-notes.md §0.5) */
	{"rev1-markers",
	 {HDR_REQ(0x80, 1, 0)},
	 20,
	 20,
	 {HDR_REP(0x00, 1, 0)},
	 20,
	 {HDR_REP(0x20, 1, 0)},
	 20},
	{"rev1-crc-markers",
	 {HDR_REQ(0xc0, 1, 0)},
	 20,
	 20,
	 {HDR_REP(0x40, 1, 0)},
	 20,
	 {HDR_REP(0x60, 1, 0)},
	 20},
	{"rev2-enhanced",
	 {HDR_REQ(0x10, 2, 0x0e), 0x00, 0x10, 0x00, 0x10, 'h', 'e', 'l', 'l',
	  'o', '-', 'r', 'e', 'v', '2'},
	 34,
	 34,
	 {HDR_REP(0x10, 2, 4), 0x00, 0x10, 0x00, 0x10},
	 24,
	 {HDR_REP(0x10, 2, 4), 0x00, 0x10, 0x00, 0x10},
	 24},
	{"rev2-ird0-ord0",
	 {HDR_REQ(0x10, 2, 4), 0x00, 0x00, 0x00, 0x00},
	 24,
	 24,
	 {HDR_REP(0x10, 2, 4), 0x00, 0x00, 0x00, 0x00},
	 24,
	 {HDR_REP(0x10, 2, 4), 0x00, 0x00, 0x00, 0x00},
	 24},
	{"rev2-ird1-ord200",
	 {HDR_REQ(0x10, 2, 4), 0x00, 0x01, 0x00, 0xc8},
	 24,
	 24,
	 {HDR_REP(0x10, 2, 4), 0x00, 0x80, 0x00, 0x01},
	 24,
	 {HDR_REP(0x10, 2, 4), 0x00, 0x80, 0x00, 0x01},
	 24},
	{"p2p-write",
	 {HDR_REQ(0x10, 2, 4), 0x80, 0x10, 0x80, 0x10},
	 24,
	 24,
	 {HDR_REP(0x10, 2, 4), 0x80, 0x10, 0x80, 0x10},
	 24,
	 {HDR_REP(0x10, 2, 4), 0x80, 0x10, 0x80, 0x10},
	 24},
	{"p2p-read",
	 {HDR_REQ(0x10, 2, 4), 0x80, 0x10, 0x40, 0x10},
	 24,
	 24,
	 {HDR_REP(0x10, 2, 4), 0x80, 0x10, 0x40, 0x10},
	 24,
	 {HDR_REP(0x10, 2, 4), 0x80, 0x10, 0x40, 0x10},
	 24},
	{"p2p-none",
	 {HDR_REQ(0x10, 2, 4), 0x80, 0x10, 0x00, 0x10},
	 24,
	 24,
	 {HDR_REP(0x10, 2, 4), 0x80, 0x10, 0x80, 0x10},
	 24,
	 {HDR_REP(0x10, 2, 4), 0x80, 0x10, 0x80, 0x10},
	 24},
	{"rev2-no-H",
	 {HDR_REQ(0x00, 2, 4), 'n', 'o', '-', 'H'},
	 24,
	 24,
	 {HDR_REP(0x00, 2, 0)},
	 20,
	 {HDR_REP(0x00, 2, 0)},
	 20},
	/* siw sends `30 02 00 00`; we send a well-formed R=1 rev 2 Reply */
	{"rev2-H-without-ird-ord",
	 {HDR_REQ(0x10, 2, 0)},
	 20,
	 IWARP_ERR_MPA_ENHANCED_PD,
	 {HDR_REP(0x20, 2, 0)},
	 20,
	 {HDR_REP(0x30, 2, 0)},
	 20},
	{"rev0",
	 {HDR_REQ(0x00, 0, 0)},
	 20,
	 20,
	 {HDR_REP(0x00, 0, 0)},
	 20,
	 {HDR_REP(0x00, 0, 0)},
	 20},
	{"rev3", {HDR_REQ(0x00, 3, 0)}, 20, IWARP_ERR_MPA_REV, {0}, 0, {0}, 0},
	{"bad-key",
	 {'M', 'P', 'A', '_', 'I', 'D', '_',  'B',  'a',  'd',
	  '_', 'F', 'r', 'a', 'm', 'e', 0x00, 0x01, 0x00, 0x00},
	 20,
	 IWARP_ERR_MPA_KEY,
	 {0},
	 0,
	 {0},
	 0},
	/* siw echoes its GSO bit; we do not implement GSO: reserved = 0 */
	{"gso-bit",
	 {HDR_REQ(0x18, 2, 4), 0x00, 0x10, 0x00, 0x10},
	 24,
	 24,
	 {HDR_REP(0x10, 2, 4), 0x00, 0x10, 0x00, 0x10},
	 24,
	 {HDR_REP(0x18, 2, 4), 0x00, 0x10, 0x00, 0x10},
	 24},
	/* siw as initiator: rping 1/1, its CRC-required setting
	 * (docs/interop-notes.md §10) */
	{"siw-initiator-rping",
	 {HDR_REQ(0x10, 2, 4), 0x00, 0x01, 0x00, 0x01},
	 24,
	 24,
	 {HDR_REP(0x10, 2, 4), 0x00, 0x01, 0x00, 0x01},
	 24,
	 {0},
	 0},
	{"siw-initiator-crc-required",
	 {HDR_REQ(0x50, 2, 4), 0x00, 0x01, 0x00, 0x01},
	 24,
	 24,
	 {HDR_REP(0x50, 2, 4), 0x00, 0x01, 0x00, 0x01},
	 24,
	 {0},
	 0},
};

/*
 * RFC 7306 offer (reserved flag bit 0x01, docs/rdmap-ext.md): on only
 * when the initiator asked and the responder asked too; an unaware
 * responder (never sets the bit) and an unaware initiator (never asks)
 * give plain connections, and the bit is the only difference on the wire.
 * _i: bit 0 initiator asks, bit 1 responder asks; rev 1 and 2.
 */
START_TEST(test_rdmap_ext_offer)
{
	bool ini = _i & 1, rsp = (_i & 2) != 0;
	struct mpa_neg_params pi, pr, plain;
	struct mpa_neg_result ri, rr;
	struct mpa_neg_reply reply;
	uint8_t req[64], req_plain[64], rep[64];
	uint8_t pd[3] = {1, 2, 3};
	int nq, np, nr, rev;

	for (rev = 1; rev <= 2; rev++) {
		mpa_neg_params_init(&pi);
		pi.rev = (uint8_t)rev;
		pr = pi;
		plain = pi;
		pi.rdmap_ext = ini;
		pr.rdmap_ext = rsp;
		nq = mpa_neg_request_encode(&pi, pd, sizeof(pd), req,
					    sizeof(req));
		np = mpa_neg_request_encode(&plain, pd, sizeof(pd), req_plain,
					    sizeof(req_plain));
		ck_assert_int_gt(nq, 0);
		ck_assert_int_eq(nq, np);
		ck_assert_uint_eq(req[16] & MPA_RR_FLAG_RDMAP_EXT,
				  ini ? MPA_RR_FLAG_RDMAP_EXT : 0);
		/* nothing else differs: the private data is untouched */
		ck_assert_uint_eq(req[16] & (0xFFu ^ MPA_RR_FLAG_RDMAP_EXT),
				  req_plain[16]);
		ck_assert_mem_eq(req + 17, req_plain + 17, (size_t)nq - 17);
		ck_assert_int_eq(mpa_neg_responder_process(&pr, req, (size_t)nq,
							   &rr, &reply),
				 nq);
		ck_assert(rr.rdmap_ext == (ini && rsp));
		ck_assert_uint_eq(rr.peer_pdata_len, sizeof(pd));
		ck_assert_mem_eq(rr.peer_pdata, pd, sizeof(pd));
		nr = mpa_neg_reply_encode(&reply, pd, 2, rep, sizeof(rep));
		ck_assert_int_gt(nr, 0);
		ck_assert_uint_eq(rep[16] & MPA_RR_FLAG_RDMAP_EXT,
				  ini && rsp ? MPA_RR_FLAG_RDMAP_EXT : 0);
		ck_assert_int_eq(
			mpa_neg_initiator_process(&pi, rep, (size_t)nr, &ri),
			nr);
		ck_assert(ri.rdmap_ext == (ini && rsp));
		ck_assert_uint_eq(ri.peer_pdata_len, 2);
	}
}
END_TEST

START_TEST(test_responder_siw_rows)
{
	const struct resp_row *row = &resp_rows[_i];
	struct mpa_neg_params p = siw_like();
	struct mpa_neg_result res;
	struct mpa_neg_reply reply;
	uint8_t out[64];
	int rc, n;

	rc = mpa_neg_responder_process(&p, row->req, row->req_len, &res,
				       &reply);
	ck_assert_msg(rc == row->rc, "%s: rc %d want %d", row->name, rc,
		      row->rc);
	ck_assert(reply.send == (row->rep_len != 0));
	if (!row->rep_len)
		return;
	n = mpa_neg_reply_encode(&reply, NULL, 0, out, sizeof(out));
	ck_assert_msg(n == (int)row->rep_len, "%s: len %d", row->name, n);
	ck_assert_mem_eq(out, row->rep, row->rep_len);
	/* where siw's reply is the same, say so explicitly */
	if (row->siw_rep_len == row->rep_len &&
	    !memcmp(row->siw_rep, row->rep, row->rep_len))
		ck_assert_mem_eq(out, row->siw_rep, row->siw_rep_len);
}
END_TEST

/* Every truncation of a valid Request: need more, no Reply yet. */
START_TEST(test_responder_truncation)
{
	struct mpa_neg_params p = siw_like();
	struct mpa_neg_result res;
	struct mpa_neg_reply reply;
	size_t i, cut;

	for (i = 0; i < sizeof(resp_rows) / sizeof(resp_rows[0]); i++) {
		if (resp_rows[i].rc < 0)
			continue;
		for (cut = 0; cut < resp_rows[i].req_len; cut++) {
			ck_assert_int_eq(
				mpa_neg_responder_process(&p, resp_rows[i].req,
							  cut, &res, &reply),
				IWARP_ERR_TRUNCATED);
			ck_assert(!reply.send);
		}
	}
}
END_TEST

START_TEST(test_responder_results)
{
	static const uint8_t req[] = {
		HDR_REQ(0xd0, 2, 0x07), 0x00, 0x01, 0x00, 0xc8, 'a', 'b', 'c'};
	struct mpa_neg_params p = siw_like();
	struct mpa_neg_result res;
	struct mpa_neg_reply reply;

	ck_assert_int_eq(
		mpa_neg_responder_process(&p, req, sizeof(req), &res, &reply),
		27);
	ck_assert(res.crc && res.markers_tx && !res.markers_rx);
	ck_assert(res.enhanced && !res.p2p);
	ck_assert_uint_eq(res.rev, 2);
	ck_assert_uint_eq(res.ird, 128); /* min(local 128, req ORD 200) */
	ck_assert_uint_eq(res.ord, 1);	 /* min(local 128, req IRD 1) */
	ck_assert_int_eq(res.rtr, MPA_RTR_NONE);
	ck_assert_uint_eq(res.peer_pdata_len, 3);
	ck_assert_mem_eq(res.peer_pdata, "abc", 3);
	ck_assert(reply.send && !reply.rr.r && reply.rr.c && !reply.rr.m);
	ck_assert_int_eq(reply.rr.kind, MPA_RR_REPLY);
	ck_assert_uint_eq(reply.rr.rsvd, 0);

	/* smaller local IRD/ORD limit the reply */
	p.ird = 4;
	p.ord = 0;
	ck_assert_int_eq(
		mpa_neg_responder_process(&p, req, sizeof(req), &res, &reply),
		27);
	ck_assert_uint_eq(reply.rr.ird, 4);
	ck_assert_uint_eq(reply.rr.ord, 0);
	ck_assert_uint_eq(res.ird, 4);
	ck_assert_uint_eq(res.ord, 0);
	/* strict: the peer wants 200 outstanding Reads, we take 4 */
	p.strict_ird = true;
	ck_assert_int_eq(
		mpa_neg_responder_process(&p, req, sizeof(req), &res, &reply),
		IWARP_ERR_MPA_IRD);
	ck_assert(reply.send && reply.rr.r);
}
END_TEST

START_TEST(test_responder_rev1_locals)
{
	static const uint8_t req[] = {HDR_REQ(0x00, 1, 0)};
	struct mpa_neg_params p = siw_like();
	struct mpa_neg_result res;
	struct mpa_neg_reply reply;

	/* rev 1: no IRD/ORD exchanged, our local values stand (not 0/0) */
	p.ird = 3;
	p.ord = 5;
	p.rev = 1;
	ck_assert_int_eq(
		mpa_neg_responder_process(&p, req, sizeof(req), &res, &reply),
		20);
	ck_assert(!res.enhanced && !reply.rr.enhanced);
	ck_assert_uint_eq(res.ird, 3);
	ck_assert_uint_eq(res.ord, 5);
	/* a rev 1 responder still echoes an enhanced rev 2 Request */
	{
		static const uint8_t r2[] = {HDR_REQ(0x10, 2, 4), 0, 1, 0, 1};

		ck_assert_int_eq(mpa_neg_responder_process(&p, r2, sizeof(r2),
							   &res, &reply),
				 24);
		ck_assert(reply.rr.enhanced);
		ck_assert_uint_eq(reply.rr.rev, 2);
	}
}
END_TEST

START_TEST(test_responder_crc_policies)
{
	static const uint8_t req_c0[] = {HDR_REQ(0x10, 2, 4), 0, 1, 0, 1};
	static const uint8_t req_c1[] = {HDR_REQ(0x50, 2, 4), 0, 1, 0, 1};
	struct mpa_neg_params p = siw_like();
	struct mpa_neg_result res;
	struct mpa_neg_reply reply;

	p.crc = MPA_CRC_OFF;
	ck_assert_int_eq(
		mpa_neg_responder_process(&p, req_c0, 24, &res, &reply), 24);
	ck_assert(!res.crc && !reply.rr.c);
	ck_assert_int_eq(
		mpa_neg_responder_process(&p, req_c1, 24, &res, &reply), 24);
	ck_assert(res.crc && reply.rr.c); /* follow the peer */

	p.crc = MPA_CRC_REQUEST;
	ck_assert_int_eq(
		mpa_neg_responder_process(&p, req_c0, 24, &res, &reply), 24);
	ck_assert(res.crc && reply.rr.c); /* either side asks: on */

	/* REQUIRE as responder: our C=1 turns CRC on, so accept */
	p.crc = MPA_CRC_REQUIRE;
	ck_assert_int_eq(
		mpa_neg_responder_process(&p, req_c0, 24, &res, &reply), 24);
	ck_assert(res.crc && reply.rr.c && !reply.rr.r);
}
END_TEST

START_TEST(test_responder_markers)
{
	static const uint8_t req_m0[] = {HDR_REQ(0x10, 2, 4), 0, 1, 0, 1};
	static const uint8_t req_m1[] = {HDR_REQ(0x90, 2, 4), 0, 1, 0, 1};
	struct mpa_neg_params p = siw_like();
	struct mpa_neg_result res;
	struct mpa_neg_reply reply;

	/* the peer wants markers toward it; we want none toward us */
	ck_assert_int_eq(
		mpa_neg_responder_process(&p, req_m1, 24, &res, &reply), 24);
	ck_assert(res.markers_tx && !res.markers_rx && !reply.rr.m);
	ck_assert(!reply.rr.r);
	/* we want markers toward us; the peer wants none */
	p.markers_rx = true;
	ck_assert_int_eq(
		mpa_neg_responder_process(&p, req_m0, 24, &res, &reply), 24);
	ck_assert(!res.markers_tx && res.markers_rx && reply.rr.m);
}
END_TEST

/* RTR choice: exactly one, preferring Write, Read, Send; locally enabled. */
START_TEST(test_responder_rtr_choice)
{
	static const struct {
		uint8_t offered; /* RTR bits in the Request */
		uint8_t local;	 /* our rtr_mask */
		uint16_t ird;	 /* our IRD */
		int rc;
		enum mpa_rtr chosen;
	} v[] = {
		{MPA_RTR_WRITE | MPA_RTR_READ, MPA_RTR_ALL, 8, 24,
		 MPA_RTR_WRITE}, /* irdma offers both */
		{MPA_RTR_ALL, MPA_RTR_ALL, 8, 24, MPA_RTR_WRITE},
		{MPA_RTR_READ, MPA_RTR_ALL, 8, 24, MPA_RTR_READ}, /* cxgb4 */
		{MPA_RTR_SEND | MPA_RTR_READ, MPA_RTR_ALL, 8, 24, MPA_RTR_READ},
		{MPA_RTR_SEND, MPA_RTR_ALL, 8, 24, MPA_RTR_SEND},
		{MPA_RTR_SEND, MPA_RTR_WRITE | MPA_RTR_READ, 8,
		 IWARP_ERR_MPA_RTR, MPA_RTR_NONE},
		{MPA_RTR_WRITE, MPA_RTR_READ, 8, IWARP_ERR_MPA_RTR,
		 MPA_RTR_NONE},
		{MPA_RTR_READ, MPA_RTR_ALL, 0, IWARP_ERR_MPA_RTR,
		 MPA_RTR_NONE}, /* no IRD for the Read RTR */
		{MPA_RTR_WRITE | MPA_RTR_READ, MPA_RTR_ALL, 0, 24,
		 MPA_RTR_WRITE},
		{0, MPA_RTR_WRITE | MPA_RTR_READ, 8, 24, MPA_RTR_WRITE},
		{0, MPA_RTR_READ, 8, 24, MPA_RTR_READ},
		{0, MPA_RTR_SEND, 8, 24, MPA_RTR_SEND},
		{0, 0, 8, IWARP_ERR_MPA_RTR, MPA_RTR_NONE},
		{MPA_RTR_WRITE, 0, 8, IWARP_ERR_MPA_RTR, MPA_RTR_NONE},
	};
	uint8_t req[24] = {HDR_REQ(0x10, 2, 4), 0x80, 0x04, 0x00, 0x00};
	struct mpa_neg_params p = siw_like();
	struct mpa_neg_result res;
	struct mpa_neg_reply reply;
	size_t i;
	int rc;

	for (i = 0; i < sizeof(v) / sizeof(v[0]); i++) {
		req[22] =
			(uint8_t)(((v[i].offered & MPA_RTR_WRITE) ? 0x80 : 0) |
				  ((v[i].offered & MPA_RTR_READ) ? 0x40 : 0));
		req[20] = (uint8_t)(0x80 |
				    ((v[i].offered & MPA_RTR_SEND) ? 0x40 : 0));
		p.rtr_mask = v[i].local;
		p.ird = v[i].ird;
		rc = mpa_neg_responder_process(&p, req, sizeof(req), &res,
					       &reply);
		ck_assert_msg(rc == v[i].rc, "row %zu rc %d", i, rc);
		ck_assert(reply.send);
		ck_assert(reply.rr.p2p); /* RFC 6581 §9.2: A echoed */
		if (rc < 0) {
			ck_assert(reply.rr.r);
			ck_assert_int_eq(mpa_neg_error_llp_ecode(rc),
					 IWARP_LLP_ECODE_NO_MATCHING_RTR);
			continue;
		}
		ck_assert(!reply.rr.r && res.p2p);
		ck_assert_int_eq(res.rtr, v[i].chosen);
		ck_assert_uint_eq(reply.rr.rtr, v[i].chosen); /* exactly one */
	}
}
END_TEST

/* Read RTR with the peer asking ORD 0: we still need IRD >= 1. */
START_TEST(test_responder_read_rtr_ird)
{
	static const uint8_t req[] = {HDR_REQ(0x10, 2, 4), 0x80, 0x02, 0x40,
				      0x00};
	static const uint8_t want[] = {HDR_REP(0x10, 2, 4), 0x80, 0x01, 0x40,
				       0x02};
	struct mpa_neg_params p = siw_like();
	struct mpa_neg_result res;
	struct mpa_neg_reply reply;
	uint8_t out[32];

	ck_assert_int_eq(
		mpa_neg_responder_process(&p, req, sizeof(req), &res, &reply),
		24);
	ck_assert_int_eq(res.rtr, MPA_RTR_READ);
	ck_assert_uint_eq(res.ird, 1);
	ck_assert_uint_eq(res.ord, 2);
	ck_assert_int_eq(
		mpa_neg_reply_encode(&reply, NULL, 0, out, sizeof(out)), 24);
	ck_assert_mem_eq(out, want, sizeof(want));
}
END_TEST

START_TEST(test_responder_refusals)
{
	uint8_t req[300] = {HDR_REQ(0x10, 2, 4), 0, 1, 0, 1};
	static const uint8_t rep_as_req[] = {HDR_REP(0x10, 2, 4), 0, 1, 0, 1};
	struct mpa_neg_params p = siw_like();
	struct mpa_neg_result res;
	struct mpa_neg_reply reply;

	/* a Reply where a Request belongs: bad key for this role, close */
	ck_assert_int_eq(
		mpa_neg_responder_process(&p, rep_as_req, 24, &res, &reply),
		IWARP_ERR_MPA_KEY);
	ck_assert(!reply.send);
	/* R in a Request: close */
	req[16] = 0x30;
	ck_assert_int_eq(mpa_neg_responder_process(&p, req, 24, &res, &reply),
			 IWARP_ERR_MPA_REQ_REP);
	ck_assert(!reply.send);
	/* PD_Length 513: close */
	req[16] = 0x10;
	req[18] = 0x02;
	req[19] = 0x01;
	ck_assert_int_eq(mpa_neg_responder_process(&p, req, 24, &res, &reply),
			 IWARP_ERR_MPA_PD_LENGTH);
	ck_assert(!reply.send);
	/* PD_Length 260 > our max 256 (siw's cap): reject with R=1 */
	p.max_pd = 256;
	req[18] = 0x01;
	req[19] = 0x04;
	ck_assert_int_eq(mpa_neg_responder_process(&p, req, 280, &res, &reply),
			 IWARP_ERR_MPA_PD_LENGTH);
	ck_assert(reply.send && reply.rr.r);
	req[19] = 0x00; /* 256 is fine */
	ck_assert_int_eq(mpa_neg_responder_process(&p, req, 280, &res, &reply),
			 276);
	ck_assert_uint_eq(res.peer_pdata_len, 252);
	/* bad params */
	p.ird = 129;
	ck_assert_int_eq(mpa_neg_responder_process(&p, req, 280, &res, &reply),
			 -EINVAL);
	ck_assert(!reply.send);
}
END_TEST

START_TEST(test_reply_encode_pdata_and_app_reject)
{
	static const uint8_t req[] = {HDR_REQ(0x10, 2, 4), 0, 1, 0, 1};
	static const uint8_t want[] = {
		HDR_REP(0x30, 2, 7), 0, 1, 0, 1, 'n', 'o', '!'};
	static uint8_t big[MPA_RR_PD_MAX];
	struct mpa_neg_params p = siw_like();
	struct mpa_neg_result res;
	struct mpa_neg_reply reply;
	uint8_t out[MPA_RR_FRAME_MAX];

	ck_assert_int_eq(
		mpa_neg_responder_process(&p, req, sizeof(req), &res, &reply),
		24);
	ck_assert_int_eq(mpa_neg_reply_encode(&reply, big, MPA_RR_PD_MAX - 4,
					      out, sizeof(out)),
			 MPA_RR_FRAME_MAX);
	ck_assert_int_eq(mpa_neg_reply_encode(&reply, big, MPA_RR_PD_MAX - 3,
					      out, sizeof(out)),
			 -EINVAL);
	ck_assert_int_eq(mpa_neg_reply_encode(&reply, big, 10, out, 33),
			 -ENOSPC);
	reply.rr.r = true; /* rdma_reject() with private data */
	ck_assert_int_eq(mpa_neg_reply_encode(&reply, (const uint8_t *)"no!", 3,
					      out, sizeof(out)),
			 27);
	ck_assert_mem_eq(out, want, sizeof(want));
	reply.send = false;
	ck_assert_int_eq(
		mpa_neg_reply_encode(&reply, NULL, 0, out, sizeof(out)),
		-EINVAL);
}
END_TEST

/* ---- initiator ---- */

/* Our initiator against one siw reply: our Request must equal the probe's. */
struct init_row {
	const char *name;
	uint8_t rev;
	bool crc, markers, p2p;
	uint8_t rtr;
	uint16_t ird, ord;
	const char *ulp;
	uint8_t req[40]; /* what the probe sent (== what we must send) */
	size_t req_len;
	uint8_t rep[40]; /* siw's reply */
	size_t rep_len;
	int rc;
	bool r_crc, r_mtx, r_p2p;
	uint16_t r_ird, r_ord;
	enum mpa_rtr r_rtr;
};

static const struct init_row init_rows[] = {
	{"rev1",
	 1,
	 false,
	 false,
	 false,
	 0,
	 4,
	 4,
	 "hello-rev1",
	 {HDR_REQ(0x00, 1, 0x0a), 'h', 'e', 'l', 'l', 'o', '-', 'r', 'e', 'v',
	  '1'},
	 30,
	 {HDR_REP(0x00, 1, 0)},
	 20,
	 20,
	 false,
	 false,
	 false,
	 4,
	 4,
	 MPA_RTR_NONE},
	{"rev1-crc",
	 1,
	 true,
	 false,
	 false,
	 0,
	 4,
	 4,
	 "crc-please",
	 {HDR_REQ(0x40, 1, 0x0a), 'c', 'r', 'c', '-', 'p', 'l', 'e', 'a', 's',
	  'e'},
	 30,
	 {HDR_REP(0x40, 1, 0)},
	 20,
	 20,
	 true,
	 false,
	 false,
	 4,
	 4,
	 MPA_RTR_NONE},
	{"rev1-markers",
	 1,
	 false,
	 true,
	 false,
	 0,
	 4,
	 4,
	 "",
	 {HDR_REQ(0x80, 1, 0)},
	 20,
	 {HDR_REP(0x20, 1, 0)},
	 20,
	 IWARP_ERR_MPA_REJECTED,
	 false,
	 false,
	 false,
	 0,
	 0,
	 MPA_RTR_NONE},
	{"rev1-crc-markers",
	 1,
	 true,
	 true,
	 false,
	 0,
	 4,
	 4,
	 "",
	 {HDR_REQ(0xc0, 1, 0)},
	 20,
	 {HDR_REP(0x60, 1, 0)},
	 20,
	 IWARP_ERR_MPA_REJECTED,
	 false,
	 false,
	 false,
	 0,
	 0,
	 MPA_RTR_NONE},
	{"rev2-enhanced",
	 2,
	 false,
	 false,
	 false,
	 0,
	 16,
	 16,
	 "hello-rev2",
	 {HDR_REQ(0x10, 2, 0x0e), 0x00, 0x10, 0x00, 0x10, 'h', 'e', 'l', 'l',
	  'o', '-', 'r', 'e', 'v', '2'},
	 34,
	 {HDR_REP(0x10, 2, 4), 0x00, 0x10, 0x00, 0x10},
	 24,
	 24,
	 false,
	 false,
	 false,
	 16,
	 16,
	 MPA_RTR_NONE},
	{"rev2-ird0-ord0",
	 2,
	 false,
	 false,
	 false,
	 0,
	 0,
	 0,
	 "",
	 {HDR_REQ(0x10, 2, 4), 0, 0, 0, 0},
	 24,
	 {HDR_REP(0x10, 2, 4), 0, 0, 0, 0},
	 24,
	 24,
	 false,
	 false,
	 false,
	 0,
	 0,
	 MPA_RTR_NONE},
	/* IRD 1 / ORD 200 is beyond our 128 limit: ask 1/128 instead */
	{"rev2-ird1-ord128",
	 2,
	 false,
	 false,
	 false,
	 0,
	 1,
	 128,
	 "",
	 {HDR_REQ(0x10, 2, 4), 0x00, 0x01, 0x00, 0x80},
	 24,
	 {HDR_REP(0x10, 2, 4), 0x00, 0x80, 0x00, 0x01},
	 24,
	 24,
	 false,
	 false,
	 false,
	 1,
	 128,
	 MPA_RTR_NONE},
	{"p2p-write", 2,
	 false,	      false,
	 true,	      MPA_RTR_WRITE,
	 16,	      16,
	 "",	      {HDR_REQ(0x10, 2, 4), 0x80, 0x10, 0x80, 0x10},
	 24,	      {HDR_REP(0x10, 2, 4), 0x80, 0x10, 0x80, 0x10},
	 24,	      24,
	 false,	      false,
	 true,	      16,
	 16,	      MPA_RTR_WRITE},
	{"p2p-read", 2,
	 false,	     false,
	 true,	     MPA_RTR_READ,
	 16,	     16,
	 "",	     {HDR_REQ(0x10, 2, 4), 0x80, 0x10, 0x40, 0x10},
	 24,	     {HDR_REP(0x10, 2, 4), 0x80, 0x10, 0x40, 0x10},
	 24,	     24,
	 false,	     false,
	 true,	     16,
	 16,	     MPA_RTR_READ},
	/* both offered (irdma style), siw chose Write: send what it chose */
	{"p2p-both", 2,
	 false,	     false,
	 true,	     MPA_RTR_WRITE | MPA_RTR_READ,
	 16,	     16,
	 "",	     {HDR_REQ(0x10, 2, 4), 0x80, 0x10, 0xc0, 0x10},
	 24,	     {HDR_REP(0x10, 2, 4), 0x80, 0x10, 0x80, 0x10},
	 24,	     24,
	 false,	     false,
	 true,	     16,
	 16,	     MPA_RTR_WRITE},
	{"rev2-crc", 2,
	 true,	     false,
	 false,	     0,
	 16,	     16,
	 "",	     {HDR_REQ(0x50, 2, 4), 0x00, 0x10, 0x00, 0x10},
	 24,	     {HDR_REP(0x50, 2, 4), 0x00, 0x10, 0x00, 0x10},
	 24,	     24,
	 true,	     false,
	 false,	     16,
	 16,	     MPA_RTR_NONE},
	/* our enhanced request, siw echoes its GSO bit: ignored */
	{"gso-echo", 2,
	 false,	     false,
	 false,	     0,
	 16,	     16,
	 "",	     {HDR_REQ(0x10, 2, 4), 0x00, 0x10, 0x00, 0x10},
	 24,	     {HDR_REP(0x18, 2, 4), 0x00, 0x10, 0x00, 0x10},
	 24,	     24,
	 false,	     false,
	 false,	     16,
	 16,	     MPA_RTR_NONE},
	/* siw's own enhanced reject `30 02 00 00` */
	{"siw-enhanced-reject",
	 2,
	 false,
	 false,
	 false,
	 0,
	 16,
	 16,
	 "",
	 {HDR_REQ(0x10, 2, 4), 0x00, 0x10, 0x00, 0x10},
	 24,
	 {HDR_REP(0x30, 2, 0)},
	 20,
	 IWARP_ERR_MPA_REJECTED,
	 false,
	 false,
	 false,
	 0,
	 0,
	 MPA_RTR_NONE},
	/* siw as listener for our markers request (we ask, it refuses) */
	{"rev2-markers-rejected",
	 2,
	 false,
	 true,
	 false,
	 0,
	 16,
	 16,
	 "",
	 {HDR_REQ(0x90, 2, 4), 0x00, 0x10, 0x00, 0x10},
	 24,
	 {HDR_REP(0x30, 2, 4), 0x00, 0x10, 0x00, 0x10},
	 24,
	 IWARP_ERR_MPA_REJECTED,
	 false,
	 false,
	 false,
	 0,
	 0,
	 MPA_RTR_NONE},
};

static struct mpa_neg_params init_params(const struct init_row *row)
{
	struct mpa_neg_params p;

	mpa_neg_params_init(&p);
	p.rev = row->rev;
	p.crc = row->crc ? MPA_CRC_REQUEST : MPA_CRC_OFF;
	p.markers_rx = row->markers;
	p.p2p = row->p2p;
	if (row->p2p)
		p.rtr_mask = row->rtr;
	p.ird = row->ird;
	p.ord = row->ord;
	return p;
}

START_TEST(test_initiator_siw_rows)
{
	const struct init_row *row = &init_rows[_i];
	struct mpa_neg_params p = init_params(row);
	struct mpa_neg_result res;
	uint8_t out[64];
	size_t ulen = strlen(row->ulp);
	size_t cut;
	int n, rc;

	n = mpa_neg_request_encode(&p, (const uint8_t *)row->ulp, ulen, out,
				   sizeof(out));
	ck_assert_msg(n == (int)row->req_len, "%s: len %d", row->name, n);
	ck_assert_mem_eq(out, row->req, row->req_len);

	for (cut = 0; cut < row->rep_len; cut++)
		ck_assert_int_eq(
			mpa_neg_initiator_process(&p, row->rep, cut, &res),
			IWARP_ERR_TRUNCATED);
	rc = mpa_neg_initiator_process(&p, row->rep, row->rep_len, &res);
	ck_assert_msg(rc == row->rc, "%s: rc %d", row->name, rc);
	if (rc < 0)
		return;
	ck_assert(res.crc == row->r_crc);
	ck_assert(res.markers_tx == row->r_mtx);
	ck_assert(res.markers_rx == row->markers);
	ck_assert(res.p2p == row->r_p2p);
	ck_assert_uint_eq(res.ird, row->r_ird);
	ck_assert_uint_eq(res.ord, row->r_ord);
	ck_assert_int_eq(res.rtr, row->r_rtr);
	ck_assert_uint_eq(res.rev, row->rev);
}
END_TEST

/* Helper: run our default initiator (rev 2, 16/16) against |rep|. */
static int init_run(struct mpa_neg_params *p, const uint8_t *rep, size_t len,
		    struct mpa_neg_result *res)
{
	return mpa_neg_initiator_process(p, rep, len, res);
}

START_TEST(test_initiator_rejected_pdata)
{
	static const uint8_t rep[] = {
		HDR_REP(0x30, 2, 9), 0, 0, 0, 0, 'b', 'u', 's', 'y', '!'};
	struct mpa_neg_params p;
	struct mpa_neg_result res;

	mpa_neg_params_init(&p);
	ck_assert_int_eq(init_run(&p, rep, sizeof(rep), &res),
			 IWARP_ERR_MPA_REJECTED);
	ck_assert_uint_eq(res.peer_pdata_len, 5);
	ck_assert_mem_eq(res.peer_pdata, "busy!", 5);
	ck_assert(res.peer.r);
	ck_assert_int_eq(mpa_neg_error_llp_ecode(IWARP_ERR_MPA_REJECTED),
			 -EINVAL);
}
END_TEST

START_TEST(test_initiator_crc)
{
	static const uint8_t rep_c0[] = {HDR_REP(0x10, 2, 4), 0, 1, 0, 1};
	static const uint8_t rep_c1[] = {HDR_REP(0x50, 2, 4), 0, 1, 0, 1};
	struct mpa_neg_params p;
	struct mpa_neg_result res;

	mpa_neg_params_init(&p);
	p.crc = MPA_CRC_OFF;
	ck_assert_int_eq(init_run(&p, rep_c0, 24, &res), 24);
	ck_assert(!res.crc);
	ck_assert_int_eq(init_run(&p, rep_c1, 24, &res), 24);
	ck_assert(res.crc); /* the peer asked: on */
	p.crc = MPA_CRC_REQUEST;
	ck_assert_int_eq(init_run(&p, rep_c0, 24, &res), 24);
	ck_assert(res.crc); /* we asked: on, whatever the Reply says */
	/* siw's CRC-required setting as the model
	 * (docs/interop-notes.md §10) */
	p.crc = MPA_CRC_REQUIRE;
	ck_assert_int_eq(init_run(&p, rep_c0, 24, &res),
			 IWARP_ERR_MPA_CRC_REQUIRED);
	ck_assert_int_eq(init_run(&p, rep_c1, 24, &res), 24);
	ck_assert(res.crc);
	ck_assert_int_eq(mpa_neg_error_llp_ecode(IWARP_ERR_MPA_CRC_REQUIRED),
			 IWARP_LLP_ECODE_INVALID_REQ_REP);
}
END_TEST

START_TEST(test_initiator_markers)
{
	static const uint8_t rep_m1[] = {HDR_REP(0x90, 2, 4), 0, 1, 0, 1};
	struct mpa_neg_params p;
	struct mpa_neg_result res;

	mpa_neg_params_init(&p);
	ck_assert_int_eq(init_run(&p, rep_m1, 24, &res), 24);
	ck_assert(res.markers_tx && !res.markers_rx);
	p.markers_rx = true;
	ck_assert_int_eq(init_run(&p, rep_m1, 24, &res), 24);
	ck_assert(res.markers_tx && res.markers_rx);
}
END_TEST

START_TEST(test_initiator_rev_mismatch)
{
	static const uint8_t rep_rev1[] = {HDR_REP(0x00, 1, 0)};
	static const uint8_t rep_rev0[] = {HDR_REP(0x00, 0, 0)};
	static const uint8_t rep_rev2_noh[] = {HDR_REP(0x00, 2, 0)};
	static const uint8_t rep_rev2[] = {HDR_REP(0x10, 2, 4), 0, 1, 0, 1};
	static const uint8_t req_as_rep[] = {HDR_REQ(0x10, 2, 4), 0, 1, 0, 1};
	struct mpa_neg_params p;
	struct mpa_neg_result res;

	mpa_neg_params_init(&p); /* rev 2 enhanced */
	ck_assert_int_eq(init_run(&p, rep_rev1, 20, &res),
			 IWARP_ERR_MPA_REQ_REP);
	ck_assert_int_eq(init_run(&p, rep_rev2_noh, 20, &res),
			 IWARP_ERR_MPA_REQ_REP);
	ck_assert_int_eq(init_run(&p, req_as_rep, 24, &res), IWARP_ERR_MPA_KEY);
	p.rev = 1;
	ck_assert_int_eq(init_run(&p, rep_rev1, 20, &res), 20);
	ck_assert_int_eq(init_run(&p, rep_rev0, 20, &res), 20);
	ck_assert_int_eq(init_run(&p, rep_rev2, 24, &res),
			 IWARP_ERR_MPA_REQ_REP);
	ck_assert_int_eq(init_run(&p, rep_rev2_noh, 20, &res),
			 IWARP_ERR_MPA_REQ_REP);
	ck_assert_int_eq(mpa_neg_error_llp_ecode(IWARP_ERR_MPA_REQ_REP),
			 IWARP_LLP_ECODE_INVALID_REQ_REP);
}
END_TEST

START_TEST(test_initiator_decode_errors)
{
	uint8_t rep[24] = {HDR_REP(0x10, 2, 4), 0, 1, 0, 1};
	struct mpa_neg_params p;
	struct mpa_neg_result res;

	mpa_neg_params_init(&p);
	rep[0] = 'm';
	ck_assert_int_eq(init_run(&p, rep, 24, &res), IWARP_ERR_MPA_KEY);
	ck_assert_int_eq(mpa_neg_error_llp_ecode(IWARP_ERR_MPA_KEY),
			 IWARP_LLP_ECODE_INVALID_REQ_REP);
	rep[0] = 'M';
	rep[17] = 3;
	ck_assert_int_eq(init_run(&p, rep, 24, &res), IWARP_ERR_MPA_REV);
	rep[17] = 2;
	rep[19] = 2;
	ck_assert_int_eq(init_run(&p, rep, 24, &res),
			 IWARP_ERR_MPA_ENHANCED_PD);
	rep[18] = 2;
	rep[19] = 1;
	ck_assert_int_eq(init_run(&p, rep, 24, &res), IWARP_ERR_MPA_PD_LENGTH);
	/* PD_Length above our limit (siw's 256) */
	{
		uint8_t big[20 + 300] = {HDR_REP(0x10, 2, 0)};

		big[18] = 0x01;
		big[19] = 0x01; /* 257 */
		p.max_pd = 256;
		ck_assert_int_eq(init_run(&p, big, sizeof(big), &res),
				 IWARP_ERR_MPA_PD_LENGTH);
		big[19] = 0x00;
		ck_assert_int_eq(init_run(&p, big, sizeof(big), &res), 276);
		ck_assert_uint_eq(res.peer_pdata_len, 252);
	}
	p.rev = 7;
	ck_assert_int_eq(init_run(&p, rep, 24, &res), -EINVAL);
}
END_TEST

START_TEST(test_initiator_ird_ord)
{
	/* peer IRD 4, ORD 200 (> 14-bit range is impossible; 200 > 128) */
	static const uint8_t rep[] = {HDR_REP(0x10, 2, 4), 0x00, 0x04, 0x00,
				      0xc8};
	static const uint8_t rep_ok[] = {HDR_REP(0x10, 2, 4), 0x00, 0x20, 0x00,
					 0x08};
	struct mpa_neg_params p;
	struct mpa_neg_result res;

	mpa_neg_params_init(&p);
	p.ird = 16;
	p.ord = 16;
	ck_assert_int_eq(init_run(&p, rep, 24, &res), 24);
	ck_assert_uint_eq(res.ord, 4);	/* min(our ORD 16, peer IRD 4) */
	ck_assert_uint_eq(res.ird, 16); /* min(our IRD 16, peer ORD 200) */
	ck_assert_int_eq(init_run(&p, rep_ok, 24, &res), 24);
	ck_assert_uint_eq(res.ord, 16);
	ck_assert_uint_eq(res.ird, 8);

	p.strict_ird = true;
	ck_assert_int_eq(init_run(&p, rep, 24, &res), IWARP_ERR_MPA_IRD);
	ck_assert_int_eq(mpa_neg_error_llp_ecode(IWARP_ERR_MPA_IRD),
			 IWARP_LLP_ECODE_INSUFFICIENT_IRD);
	ck_assert_int_eq(init_run(&p, rep_ok, 24, &res), 24);
	p.ord = 33; /* peer IRD 32 < our ORD */
	ck_assert_int_eq(init_run(&p, rep_ok, 24, &res), IWARP_ERR_MPA_IRD);
	p.ord = 16;
	p.ird = 7; /* peer ORD 8 > our IRD */
	ck_assert_int_eq(init_run(&p, rep_ok, 24, &res), IWARP_ERR_MPA_IRD);
}
END_TEST

START_TEST(test_initiator_rtr_rules)
{
	uint8_t rep[24] = {HDR_REP(0x10, 2, 4), 0x80, 0x10, 0x80, 0x10};
	struct mpa_neg_params p;
	struct mpa_neg_result res;

	mpa_neg_params_init(&p);
	p.p2p = true;
	p.rtr_mask = MPA_RTR_WRITE | MPA_RTR_READ;
	p.ird = p.ord = 16;
	ck_assert_int_eq(init_run(&p, rep, 24, &res), 24);
	ck_assert_int_eq(res.rtr, MPA_RTR_WRITE);
	ck_assert(res.p2p);

	/* A not echoed (RFC 6581 §9.2, docs/interop-notes.md §0.2) */
	rep[20] = 0x00;
	ck_assert_int_eq(init_run(&p, rep, 24, &res), IWARP_ERR_MPA_RTR);
	ck_assert_int_eq(mpa_neg_error_llp_ecode(IWARP_ERR_MPA_RTR),
			 IWARP_LLP_ECODE_NO_MATCHING_RTR);
	rep[20] = 0x80;
	rep[22] = 0x00; /* no RTR chosen */
	ck_assert_int_eq(init_run(&p, rep, 24, &res), IWARP_ERR_MPA_RTR);
	rep[22] = 0xc0; /* two chosen */
	ck_assert_int_eq(init_run(&p, rep, 24, &res), IWARP_ERR_MPA_RTR);
	rep[22] = 0x00;
	rep[20] = 0xc0; /* Send chosen, not offered */
	ck_assert_int_eq(init_run(&p, rep, 24, &res), IWARP_ERR_MPA_RTR);
	p.rtr_mask = MPA_RTR_ALL;
	ck_assert_int_eq(init_run(&p, rep, 24, &res), 24);
	ck_assert_int_eq(res.rtr, MPA_RTR_SEND);

	/* Read chosen with peer IRD 0: our ORD is forced to 1 */
	rep[20] = 0x80;
	rep[21] = 0x00;
	rep[22] = 0x40;
	ck_assert_int_eq(init_run(&p, rep, 24, &res), 24);
	ck_assert_int_eq(res.rtr, MPA_RTR_READ);
	ck_assert_uint_eq(res.ord, 1);
	p.ord = 0;
	rep[21] = 0x10;
	ck_assert_int_eq(init_run(&p, rep, 24, &res), 24);
	ck_assert_uint_eq(res.ord, 1);

	/* not P2P: A/RTR bits in the Reply are ignored */
	p.p2p = false;
	ck_assert_int_eq(init_run(&p, rep, 24, &res), 24);
	ck_assert(!res.p2p);
	ck_assert_int_eq(res.rtr, MPA_RTR_NONE);
}
END_TEST

/*
 * The default context attributes as MPA parameters (IWARP_P2P_AUTO, rev 2):
 * A with Write and Read offered (RFC 6581 §5), ORD >= 1 for the Read RTR
 * (§7) also when the ULP asked for 0; with rev 1 or IWARP_P2P_NONE no A
 * (the bits live in the enhanced header). Our responder with the defaults:
 * siw's initiator Request (no A) gets no P2P, so no RTR; cxgb4's default
 * offer (Read only) gets Read; our own default offer gets Write.
 */
START_TEST(test_default_context_offer)
{
	static const uint8_t want[] = {HDR_REQ(0x10, 2, 4), 0x80, 0x80, 0xc0,
				       0x01};
	static const uint8_t siw_req[] = {HDR_REQ(0x10, 2, 4), 0x00, 0x01, 0x00,
					  0x01};
	static const uint8_t cxgb_req[] = {HDR_REQ(0x10, 2, 4), 0x80, 0x10,
					   0x40, 0x10};
	static const uint8_t want_rev1[] = {HDR_REQ(0x00, 1, 0)};
	struct iwarp_context_attr a;
	struct mpa_neg_params p, pr;
	struct mpa_neg_result res;
	struct mpa_neg_reply reply;
	uint8_t out[64];

	unsetenv("IWARP_P2P");
	unsetenv("IWARP_MPA_REV");
	unsetenv("IWARP_CRC");
	unsetenv("IWARP_MARKERS");
	unsetenv("IWARP_RESPONDER_TX_WAIT_MS");
	iwarp_context_attr_init(&a);
	ck_assert_int_eq(a.p2p, IWARP_P2P_AUTO);
	ck_assert_uint_eq(a.responder_tx_wait_ms, 1000);
	cm_attr_mpa_params(&a, &p);
	ck_assert(p.p2p);
	ck_assert_uint_eq(p.rtr_mask, MPA_RTR_WRITE | MPA_RTR_READ);
	p.ord = 0; /* perftest's Write tests ask for initiator_depth 0 */
	ck_assert_int_eq(mpa_neg_request_encode(&p, NULL, 0, out, sizeof(out)),
			 24);
	ck_assert_mem_eq(out, want, sizeof(want));

	cm_attr_mpa_params(&a, &pr);
	ck_assert_int_eq(mpa_neg_responder_process(&pr, want, sizeof(want),
						   &res, &reply),
			 24);
	ck_assert(res.p2p && reply.rr.p2p);
	ck_assert_int_eq(res.rtr, MPA_RTR_WRITE);
	ck_assert_int_eq(mpa_neg_responder_process(
				 &pr, cxgb_req, sizeof(cxgb_req), &res, &reply),
			 24);
	ck_assert(res.p2p && reply.rr.p2p);
	ck_assert_int_eq(res.rtr, MPA_RTR_READ);
	ck_assert_int_eq(mpa_neg_responder_process(
				 &pr, siw_req, sizeof(siw_req), &res, &reply),
			 24);
	ck_assert(!res.p2p && !reply.rr.p2p);
	ck_assert_int_eq(res.rtr, MPA_RTR_NONE);

	/* siw's Reply to our default offer (docs/interop-notes.md §10) */
	{
		static const uint8_t siw_rep[] = {HDR_REP(0x10, 2, 4), 0x80,
						  0x01, 0x80, 0x80};

		ck_assert_int_eq(init_run(&p, siw_rep, sizeof(siw_rep), &res),
				 24);
		ck_assert(res.p2p);
		ck_assert_int_eq(res.rtr, MPA_RTR_WRITE);
	}
	/* a rev 2 responder that does not echo A: with IWARP_P2P_AUTO the
	 * connection runs client-server (no RTR, no error); with an explicit
	 * type it is refused (RFC 6581 §9.2) */
	{
		static const uint8_t noa_rep[] = {HDR_REP(0x10, 2, 4), 0x00,
						  0x10, 0x00, 0x10};

		ck_assert_int_eq(init_run(&p, noa_rep, sizeof(noa_rep), &res),
				 24);
		ck_assert(!res.p2p);
		ck_assert_int_eq(res.rtr, MPA_RTR_NONE);
		a.p2p = IWARP_P2P_WRITE;
		cm_attr_mpa_params(&a, &pr);
		ck_assert_int_eq(init_run(&pr, noa_rep, sizeof(noa_rep), &res),
				 IWARP_ERR_MPA_RTR);
		a.p2p = IWARP_P2P_AUTO;
	}

	a.mpa_rev = 1;
	cm_attr_mpa_params(&a, &p);
	ck_assert(!p.p2p);
	ck_assert_int_eq(mpa_neg_request_encode(&p, NULL, 0, out, sizeof(out)),
			 20);
	ck_assert_mem_eq(out, want_rev1, sizeof(want_rev1));
	a.mpa_rev = 2;
	a.p2p = IWARP_P2P_NONE;
	cm_attr_mpa_params(&a, &p);
	ck_assert(!p.p2p);

	setenv("IWARP_P2P", "none", 1);
	iwarp_context_attr_init(&a);
	ck_assert_int_eq(a.p2p, IWARP_P2P_NONE);
	setenv("IWARP_P2P", "auto", 1);
	a.p2p = IWARP_P2P_NONE;
	iwarp_context_attr_init(&a);
	ck_assert_int_eq(a.p2p, IWARP_P2P_AUTO);
	unsetenv("IWARP_P2P");
}
END_TEST

/*
 * RFC 6581 §7 (cxgb3 96ac7e88): offering a Read RTR needs ORD >= 1 on the
 * active side. Interop bug: with initiator_depth 0 (perftest Write tests)
 * our Request said `80 00 40 00` (ORD 0), siw sized its IRD to 0 and
 * answered the Read RTR with a TERMINATE. The Request must say ORD 1.
 */
START_TEST(test_request_read_rtr_ord)
{
	static const uint8_t want_read[] = {HDR_REQ(0x10, 2, 4), 0x80, 0x00,
					    0x40, 0x01};
	static const uint8_t want_both[] = {HDR_REQ(0x10, 2, 4), 0x80, 0x00,
					    0xc0, 0x01};
	static const uint8_t want_write[] = {HDR_REQ(0x10, 2, 4), 0x80, 0x00,
					     0x80, 0x00};
	static const uint8_t want_nop2p[] = {HDR_REQ(0x10, 2, 4), 0x00, 0x00,
					     0x00, 0x00};
	uint8_t rep[24] = {HDR_REP(0x10, 2, 4), 0x80, 0x00, 0x40, 0x00};
	uint8_t out[MPA_RR_FRAME_MAX];
	struct mpa_neg_params p;
	struct mpa_neg_result res;

	mpa_neg_params_init(&p);
	p.crc = MPA_CRC_OFF;
	p.p2p = true;
	p.rtr_mask = MPA_RTR_READ;
	p.ird = 0;
	p.ord = 0;
	ck_assert_int_eq(mpa_neg_request_encode(&p, NULL, 0, out, sizeof(out)),
			 24);
	ck_assert_mem_eq(out, want_read, sizeof(want_read));
	/* a Reply choosing Read with IRD 0: our ORD (QP) is still 1 */
	ck_assert_int_eq(init_run(&p, rep, 24, &res), 24);
	ck_assert_int_eq(res.rtr, MPA_RTR_READ);
	ck_assert_uint_eq(res.ord, 1);
	/* strict IRD: the peer's IRD 0 is below the ORD 1 we advertised */
	p.strict_ird = true;
	ck_assert_int_eq(init_run(&p, rep, 24, &res), IWARP_ERR_MPA_IRD);
	rep[21] = 0x01;
	ck_assert_int_eq(init_run(&p, rep, 24, &res), 24);
	ck_assert_uint_eq(res.ord, 1);
	p.strict_ird = false;

	p.rtr_mask = MPA_RTR_WRITE | MPA_RTR_READ;
	ck_assert_int_eq(mpa_neg_request_encode(&p, NULL, 0, out, sizeof(out)),
			 24);
	ck_assert_mem_eq(out, want_both, sizeof(want_both));
	/* Write only, or no P2P: the ULP's ORD 0 is sent as is */
	p.rtr_mask = MPA_RTR_WRITE;
	ck_assert_int_eq(mpa_neg_request_encode(&p, NULL, 0, out, sizeof(out)),
			 24);
	ck_assert_mem_eq(out, want_write, sizeof(want_write));
	p.p2p = false;
	p.rtr_mask = MPA_RTR_READ;
	ck_assert_int_eq(mpa_neg_request_encode(&p, NULL, 0, out, sizeof(out)),
			 24);
	ck_assert_mem_eq(out, want_nop2p, sizeof(want_nop2p));
	/* an ORD the ULP asked for is kept */
	p.p2p = true;
	p.ord = 7;
	ck_assert_int_eq(mpa_neg_request_encode(&p, NULL, 0, out, sizeof(out)),
			 24);
	ck_assert_uint_eq(out[23], 7);
}
END_TEST

START_TEST(test_params)
{
	struct mpa_neg_params p;
	uint8_t out[MPA_RR_FRAME_MAX];
	static uint8_t pd[MPA_RR_PD_MAX];

	mpa_neg_params_init(&p);
	ck_assert_int_eq(mpa_neg_params_check(&p), 0);
	ck_assert_uint_eq(p.rev, 2);
	ck_assert_uint_eq(p.max_pd, 512);
	ck_assert_uint_eq(p.ird, 128);
	ck_assert_uint_eq(p.ord, 128);
	ck_assert_int_eq(p.crc, MPA_CRC_REQUEST);
	ck_assert_uint_eq(p.rtr_mask, MPA_RTR_WRITE | MPA_RTR_READ);

	ck_assert_int_eq(mpa_neg_request_encode(&p, pd, 508, out, sizeof(out)),
			 532);
	ck_assert_int_eq(mpa_neg_request_encode(&p, pd, 509, out, sizeof(out)),
			 -EINVAL);
	ck_assert_int_eq(mpa_neg_request_encode(&p, pd, 0, out, 23), -ENOSPC);
	p.rev = 1;
	ck_assert_int_eq(mpa_neg_request_encode(&p, pd, 512, out, sizeof(out)),
			 532);
	p.p2p = true; /* P2P needs rev 2 */
	ck_assert_int_eq(mpa_neg_params_check(&p), -EINVAL);
	ck_assert_int_eq(mpa_neg_request_encode(&p, NULL, 0, out, sizeof(out)),
			 -EINVAL);
	p.rev = 2;
	ck_assert_int_eq(mpa_neg_params_check(&p), 0);
	p.rtr_mask = 0; /* P2P with nothing to offer */
	ck_assert_int_eq(mpa_neg_params_check(&p), -EINVAL);
	p.rtr_mask = 0x8;
	ck_assert_int_eq(mpa_neg_params_check(&p), -EINVAL);
	mpa_neg_params_init(&p);
	p.rev = 0;
	ck_assert_int_eq(mpa_neg_params_check(&p), -EINVAL);
	p.rev = 3;
	ck_assert_int_eq(mpa_neg_params_check(&p), -EINVAL);
	mpa_neg_params_init(&p);
	p.ord = 129;
	ck_assert_int_eq(mpa_neg_params_check(&p), -EINVAL);
	p.ord = 0;
	p.max_pd = 513;
	ck_assert_int_eq(mpa_neg_params_check(&p), -EINVAL);
	p.max_pd = 0;
	p.crc = (enum mpa_crc_policy)7;
	ck_assert_int_eq(mpa_neg_params_check(&p), -EINVAL);
}
END_TEST

/* Our initiator against our responder: both ends agree on everything. */
START_TEST(test_loopback_both_roles)
{
	static const uint16_t irds[] = {0, 1, 16, 128};
	uint8_t req[MPA_RR_FRAME_MAX], rep[MPA_RR_FRAME_MAX];
	struct mpa_neg_params pi, pr;
	struct mpa_neg_result ri, rr;
	struct mpa_neg_reply reply;
	unsigned int combo;
	int nq, np;

	for (combo = 0; combo < 4096; combo++) {
		mpa_neg_params_init(&pi);
		mpa_neg_params_init(&pr);
		pi.rev = (combo & 1) ? 1 : 2;
		pi.crc = (enum mpa_crc_policy)((combo >> 1) % 3);
		pr.crc = (enum mpa_crc_policy)((combo >> 3) % 3);
		pi.markers_rx = (combo >> 5) & 1;
		pr.markers_rx = (combo >> 6) & 1;
		pi.p2p = pi.rev == 2 && ((combo >> 7) & 1);
		pi.rtr_mask =
			(uint8_t)(((combo >> 8) & 3) + 1 + ((combo >> 8) & 4));
		pi.rtr_mask &= MPA_RTR_ALL;
		pi.ird = irds[(combo >> 1) & 3];
		pi.ord = irds[(combo >> 3) & 3];
		pr.ird = irds[(combo >> 9) & 3];
		pr.ord = irds[(combo >> 5) & 3];
		pr.rtr_mask = (uint8_t)((combo >> 10) & MPA_RTR_ALL);
		if (pi.p2p && !pi.rtr_mask)
			pi.rtr_mask = MPA_RTR_WRITE;

		nq = mpa_neg_request_encode(&pi, (const uint8_t *)"hi", 2, req,
					    sizeof(req));
		ck_assert_int_gt(nq, 0);
		np = mpa_neg_responder_process(&pr, req, (size_t)nq, &rr,
					       &reply);
		ck_assert(reply.send);
		if (np < 0) {
			ck_assert(reply.rr.r);
			ck_assert_int_eq(np, IWARP_ERR_MPA_RTR);
			ck_assert(pi.p2p);
		} else {
			ck_assert_int_eq(np, nq);
			ck_assert_mem_eq(rr.peer_pdata, "hi", 2);
		}
		np = mpa_neg_reply_encode(&reply, (const uint8_t *)"yo", 2, rep,
					  sizeof(rep));
		ck_assert_int_gt(np, 0);
		nq = mpa_neg_initiator_process(&pi, rep, (size_t)np, &ri);
		if (reply.rr.r) {
			ck_assert_int_eq(nq, IWARP_ERR_MPA_REJECTED);
			continue;
		}
		ck_assert_int_eq(nq, np);
		ck_assert_mem_eq(ri.peer_pdata, "yo", 2);
		ck_assert(ri.crc == rr.crc);
		ck_assert(ri.crc ==
			  (pi.crc != MPA_CRC_OFF || pr.crc != MPA_CRC_OFF));
		ck_assert(ri.markers_tx == rr.markers_rx);
		ck_assert(ri.markers_rx == rr.markers_tx);
		ck_assert(ri.markers_rx == pi.markers_rx);
		ck_assert(ri.p2p == rr.p2p);
		ck_assert_int_eq(ri.rtr, rr.rtr);
		ck_assert_uint_eq(ri.rev, rr.rev);
		ck_assert(ri.enhanced == (pi.rev == 2));
		if (ri.enhanced) {
			/* RFC 6581 §5: each side's ORD <= the peer's IRD */
			ck_assert_uint_le(ri.ord, rr.ird);
			ck_assert_uint_le(rr.ord, ri.ird);
			ck_assert_uint_le(ri.ird, pi.ird);
			ck_assert_uint_le(rr.ird, pr.ird);
		}
		if (ri.rtr != MPA_RTR_NONE) {
			ck_assert(pi.rtr_mask & ri.rtr);
			ck_assert(pr.rtr_mask & ri.rtr);
		}
		if (ri.rtr == MPA_RTR_READ) {
			ck_assert_uint_ge(ri.ord, 1);
			ck_assert_uint_ge(rr.ird, 1);
		}
	}
}
END_TEST

START_TEST(test_rtr_messages)
{
	struct mpa_rtr_msg m;

	ck_assert_int_eq(mpa_rtr_msg_get(MPA_RTR_WRITE, &m), 0);
	ck_assert(m.tagged && !m.uses_ord);
	ck_assert_uint_eq(m.rdmap_opcode, 0x0);
	/* never STag 0 (docs/interop-notes.md §0.3) */
	ck_assert_uint_ne(m.stag, 0);
	ck_assert_uint_eq(m.stag, 1);
	ck_assert_uint_eq(m.to, 0);
	ck_assert_uint_eq(m.len, 0);

	ck_assert_int_eq(mpa_rtr_msg_get(MPA_RTR_READ, &m), 0);
	ck_assert(!m.tagged && m.uses_ord);
	ck_assert_uint_eq(m.rdmap_opcode, 0x1);
	ck_assert_uint_eq(m.stag, 1);
	ck_assert_uint_eq(m.sink_stag, 1);
	ck_assert_uint_eq(m.to, 0);
	ck_assert_uint_eq(m.sink_to, 0);
	ck_assert_uint_eq(m.len, 0);

	ck_assert_int_eq(mpa_rtr_msg_get(MPA_RTR_SEND, &m), 0);
	ck_assert(!m.tagged && !m.uses_ord);
	ck_assert_uint_eq(m.rdmap_opcode, 0x3);

	ck_assert_int_eq(mpa_rtr_msg_get(MPA_RTR_NONE, &m), -EINVAL);
	ck_assert_int_eq(
		mpa_rtr_msg_get((enum mpa_rtr)(MPA_RTR_WRITE | MPA_RTR_READ),
				&m),
		-EINVAL);

	ck_assert_str_eq(mpa_rtr_name(MPA_RTR_NONE), "none");
	ck_assert_str_eq(mpa_rtr_name(MPA_RTR_SEND), "send");
	ck_assert_str_eq(mpa_rtr_name(MPA_RTR_WRITE), "write");
	ck_assert_str_eq(mpa_rtr_name(MPA_RTR_READ), "read");
	ck_assert_str_eq(mpa_rtr_name((enum mpa_rtr)6), "invalid");
}
END_TEST

START_TEST(test_error_llp_codes)
{
	static const int req_rep[] = {
		IWARP_ERR_MPA_KEY,	 IWARP_ERR_MPA_REV,
		IWARP_ERR_MPA_PD_LENGTH, IWARP_ERR_MPA_ENHANCED_PD,
		IWARP_ERR_MPA_RESERVED,	 IWARP_ERR_MPA_MARKERS,
		IWARP_ERR_MPA_REQ_REP,	 IWARP_ERR_MPA_CRC_REQUIRED,
	};
	size_t i;

	for (i = 0; i < sizeof(req_rep) / sizeof(req_rep[0]); i++)
		ck_assert_int_eq(mpa_neg_error_llp_ecode(req_rep[i]), 0x04);
	ck_assert_int_eq(mpa_neg_error_llp_ecode(IWARP_ERR_MPA_IRD), 0x06);
	ck_assert_int_eq(mpa_neg_error_llp_ecode(IWARP_ERR_MPA_RTR), 0x07);
	ck_assert_int_eq(mpa_neg_error_llp_ecode(IWARP_ERR_TRUNCATED), -EINVAL);
	ck_assert_int_eq(mpa_neg_error_llp_ecode(IWARP_ERR_MPA_CRC), -EINVAL);
	ck_assert_int_eq(mpa_neg_error_llp_ecode(-EIO), -EINVAL);
}
END_TEST

static Suite *mpa_negotiate_suite(void)
{
	Suite *s = suite_create("mpa_negotiate");
	TCase *tr = tcase_create("responder");
	TCase *ti = tcase_create("initiator");
	TCase *tm = tcase_create("misc");

	tcase_add_loop_test(tr, test_responder_siw_rows, 0,
			    (int)(sizeof(resp_rows) / sizeof(resp_rows[0])));
	tcase_add_test(tr, test_responder_truncation);
	tcase_add_loop_test(tr, test_rdmap_ext_offer, 0, 4);
	tcase_add_test(tr, test_responder_results);
	tcase_add_test(tr, test_responder_rev1_locals);
	tcase_add_test(tr, test_responder_crc_policies);
	tcase_add_test(tr, test_responder_markers);
	tcase_add_test(tr, test_responder_rtr_choice);
	tcase_add_test(tr, test_responder_read_rtr_ird);
	tcase_add_test(tr, test_responder_refusals);
	tcase_add_test(tr, test_reply_encode_pdata_and_app_reject);
	tcase_add_loop_test(ti, test_initiator_siw_rows, 0,
			    (int)(sizeof(init_rows) / sizeof(init_rows[0])));
	tcase_add_test(ti, test_initiator_rejected_pdata);
	tcase_add_test(ti, test_initiator_crc);
	tcase_add_test(ti, test_initiator_markers);
	tcase_add_test(ti, test_initiator_rev_mismatch);
	tcase_add_test(ti, test_initiator_decode_errors);
	tcase_add_test(ti, test_initiator_ird_ord);
	tcase_add_test(ti, test_initiator_rtr_rules);
	tcase_add_test(ti, test_request_read_rtr_ord);
	tcase_add_test(ti, test_default_context_offer);
	tcase_add_test(tm, test_params);
	tcase_add_test(tm, test_loopback_both_roles);
	tcase_add_test(tm, test_rtr_messages);
	tcase_add_test(tm, test_error_llp_codes);
	suite_add_tcase(s, tr);
	suite_add_tcase(s, ti);
	suite_add_tcase(s, tm);
	return s;
}

IW_TEST_MAIN(mpa_negotiate_suite)
