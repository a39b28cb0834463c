/* tests/rdmap_test.c: RDMAP opcode table, header check, Read Request codec. */
#include "config.h"

#include <string.h>

#include "ddp/ddp_hdr.h"
#include "iwarp/iwarp.h"
#include "rdmap/rdmap_ext.h"
#include "rdmap/rdmap_opcode.h"
#include "rdmap/rdmap_rreq.h"
#include "testutil.h"

/* RFC 5040 §4.2, §5.1; names as in Wireshark (docs/interop-notes.md
 * §2.2). */
START_TEST(test_opcode_table)
{
	static const struct {
		const char *name;
		bool valid, tagged;
		uint8_t qn, hdr_len;
		bool se, inv;
	} want[RDMAP_OPCODE_COUNT] = {
		{"Write", true, true, RDMAP_QN_NONE, 0, false, false},
		{"Read Request", true, false, 1, 28, false, false},
		{"Read Response", true, true, RDMAP_QN_NONE, 0, false, false},
		{"Send", true, false, 0, 0, false, false},
		{"Send with Invalidate", true, false, 0, 0, false, true},
		{"Send with SE", true, false, 0, 0, true, false},
		{"Send with SE and Invalidate", true, false, 0, 0, true, true},
		{"Terminate", true, false, 2, 0, false, false},
		/* RFC 7306 §5.1: only with the extensions negotiated */
		{"Immediate Data", false, false, 0, 8, false, false},
		{"Immediate Data with SE", false, false, 0, 8, true, false},
		{"Atomic Request", false, false, 3, 52, false, false},
		{"Atomic Response", false, false, 4, 12, false, false},
		{"Reserved", false, false, RDMAP_QN_NONE, 0, false, false},
		{"Reserved", false, false, RDMAP_QN_NONE, 0, false, false},
		{"Reserved", false, false, RDMAP_QN_NONE, 0, false, false},
		{"Reserved", false, false, RDMAP_QN_NONE, 0, false, false},
	};
	unsigned int i;

	for (i = 0; i < RDMAP_OPCODE_COUNT; i++) {
		const struct rdmap_opcode_info *op =
			rdmap_opcode_get((uint8_t)i);

		ck_assert_ptr_eq(op, &rdmap_opcode_table[i]);
		ck_assert_str_eq(op->name, want[i].name);
		ck_assert_str_eq(rdmap_opcode_name((uint8_t)i), want[i].name);
		ck_assert(op->valid == want[i].valid);
		ck_assert(op->tagged == want[i].tagged);
		ck_assert_uint_eq(op->qn, want[i].qn);
		ck_assert_uint_eq(op->hdr_len, want[i].hdr_len);
		ck_assert(op->solicited == want[i].se);
		ck_assert(op->invalidate == want[i].inv);
		ck_assert(op->ext == (i >= 8 && i <= 0xB));
	}
	ck_assert_uint_eq(rdmap_opcode_table[RDMAP_OP_READ_REQUEST].hdr_len,
			  RDMAP_RREQ_HDR_LEN);
	/* only the low 4 bits index the table */
	ck_assert_ptr_eq(rdmap_opcode_get(0x17), &rdmap_opcode_table[7]);
}
END_TEST

static struct ddp_hdr hdr_for(uint8_t opcode)
{
	const struct rdmap_opcode_info *op = rdmap_opcode_get(opcode);
	struct ddp_hdr h;

	memset(&h, 0, sizeof(h));
	h.tagged = op->tagged;
	h.last = true;
	h.dv = DDP_VERSION;
	h.rv = RDMAP_VERSION;
	h.opcode = opcode;
	if (!op->tagged)
		h.qn = op->qn;
	h.msn = 1;
	return h;
}

START_TEST(test_hdr_check_valid)
{
	uint8_t op;
	struct ddp_hdr h;

	for (op = 0; op <= RDMAP_OP_TERMINATE; op++) {
		h = hdr_for(op);
		ck_assert_int_eq(rdmap_hdr_check(&h), 0);
		/* reserved RDMAP bits are ignored on receive (RFC 5040 §4.2) */
		h.rdmap_rsv = 3;
		ck_assert_int_eq(rdmap_hdr_check(&h), 0);
	}
}
END_TEST

START_TEST(test_hdr_check_version)
{
	uint8_t rv;
	struct ddp_hdr h = hdr_for(RDMAP_OP_SEND);

	for (rv = 0; rv < 4; rv++) {
		h.rv = rv;
		ck_assert_int_eq(rdmap_hdr_check(&h),
				 rv == 1 ? 0 : IWARP_ERR_RDMAP_VERSION);
	}
	/* version is checked before the opcode (RemoteOp 0x05 wins) */
	h.rv = 2;
	h.opcode = 0xC;
	ck_assert_int_eq(rdmap_hdr_check(&h), IWARP_ERR_RDMAP_VERSION);
}
END_TEST

START_TEST(test_hdr_check_opcode)
{
	uint8_t op;
	struct ddp_hdr h;

	/* RFC 7306 and reserved opcodes, either buffer model, any QN */
	for (op = 8; op < 16; op++) {
		h = hdr_for(RDMAP_OP_SEND);
		h.opcode = op;
		ck_assert_int_eq(rdmap_hdr_check(&h), IWARP_ERR_RDMAP_OPCODE);
		h.tagged = true;
		ck_assert_int_eq(rdmap_hdr_check(&h), IWARP_ERR_RDMAP_OPCODE);
	}
	h = hdr_for(RDMAP_OP_SEND);
	h.opcode = 16; /* not representable on the wire: still refused */
	ck_assert_int_eq(rdmap_hdr_check(&h), IWARP_ERR_RDMAP_OPCODE);
}
END_TEST

START_TEST(test_hdr_check_model_and_qn)
{
	uint8_t op;
	uint32_t qn;
	struct ddp_hdr h;

	for (op = 0; op <= RDMAP_OP_TERMINATE; op++) {
		const struct rdmap_opcode_info *info = rdmap_opcode_get(op);

		/* wrong buffer model -> unexpected opcode */
		h = hdr_for(op);
		h.tagged = !info->tagged;
		ck_assert_int_eq(rdmap_hdr_check(&h), IWARP_ERR_RDMAP_OPCODE);
		if (info->tagged)
			continue;
		/* wrong queue -> DDP invalid QN */
		for (qn = 0; qn < 6; qn++) {
			h = hdr_for(op);
			h.qn = qn;
			ck_assert_int_eq(rdmap_hdr_check(&h),
					 qn == info->qn ? 0 : IWARP_ERR_DDP_QN);
		}
		h.qn = 0xFFFFFFFFu;
		ck_assert_int_eq(rdmap_hdr_check(&h), IWARP_ERR_DDP_QN);
	}
	/* tagged headers carry no QN: a stray value is not looked at */
	h = hdr_for(RDMAP_OP_WRITE);
	h.qn = 7;
	ck_assert_int_eq(rdmap_hdr_check(&h), 0);
}
END_TEST

/* A Read Request siw put on the wire (tests/data/mpa-lo.pcapng frame 204). */
static const uint8_t siw_rreq[RDMAP_RREQ_MSG_LEN] = {
	0x41, 0x41, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
	0x01, 0x00, 0x00, 0x00, 0x01, 0x00, 0x00, 0x00, 0x00, /* DDP */
	0x7f, 0x60, 0xe4, 0x00,				      /* sink STag */
	0x00, 0x00, 0x7f, 0x2b, 0x04, 0x00, 0x0e, 0x00,	      /* sink TO */
	0x00, 0x00, 0x00, 0x40,				      /* size 64 */
	0x00, 0x00, 0x12, 0x34,				      /* src STag */
	0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x10, 0x00,	      /* src TO */
};

START_TEST(test_rreq_kat_siw)
{
	struct rdmap_rreq rr, want = {
				      .sink_stag = 0x7f60e400,
				      .sink_to = 0x00007f2b04000e00ull,
				      .size = 64,
				      .src_stag = 0x1234,
				      .src_to = 0x1000,
			      };
	struct ddp_hdr h;
	uint8_t buf[RDMAP_RREQ_MSG_LEN + 4];

	ck_assert_int_eq(
		rdmap_rreq_msg_decode(&h, &rr, siw_rreq, sizeof(siw_rreq)),
		RDMAP_RREQ_MSG_LEN);
	ck_assert(!h.tagged && h.last);
	ck_assert_uint_eq(h.qn, 1);
	ck_assert_uint_eq(h.msn, 1);
	ck_assert_uint_eq(h.mo, 0);
	ck_assert_uint_eq(rr.sink_stag, want.sink_stag);
	ck_assert(rr.sink_to == want.sink_to);
	ck_assert_uint_eq(rr.size, want.size);
	ck_assert_uint_eq(rr.src_stag, want.src_stag);
	ck_assert(rr.src_to == want.src_to);

	memset(buf, 0xEE, sizeof(buf));
	ck_assert_uint_eq(rdmap_rreq_msg_encode(buf, 1, &want),
			  RDMAP_RREQ_MSG_LEN);
	ck_assert_mem_eq(buf, siw_rreq, sizeof(siw_rreq));
	ck_assert_uint_eq(buf[RDMAP_RREQ_MSG_LEN], 0xEE);
	/* NULL DDP header out-parameter is allowed */
	ck_assert_int_eq(
		rdmap_rreq_msg_decode(NULL, &rr, siw_rreq, sizeof(siw_rreq)),
		RDMAP_RREQ_MSG_LEN);
}
END_TEST

START_TEST(test_rreq_hdr_kat)
{
	static const uint8_t kat[RDMAP_RREQ_HDR_LEN] = {
		0x11, 0x22, 0x33, 0x44, 0x01, 0x02, 0x03, 0x04, 0x05, 0x06,
		0x07, 0x08, 0xde, 0xad, 0xbe, 0xef, 0xaa, 0xbb, 0xcc, 0xdd,
		0xf1, 0xf2, 0xf3, 0xf4, 0xf5, 0xf6, 0xf7, 0xf8,
	};
	struct rdmap_rreq rr =
				  {
					  .sink_stag = 0x11223344,
					  .sink_to = 0x0102030405060708ull,
					  .size = 0xdeadbeef,
					  .src_stag = 0xaabbccdd,
					  .src_to = 0xf1f2f3f4f5f6f7f8ull,
				  },
			  d;
	uint8_t buf[RDMAP_RREQ_HDR_LEN];
	size_t n;

	ck_assert_uint_eq(rdmap_rreq_encode(buf, &rr), RDMAP_RREQ_HDR_LEN);
	ck_assert_mem_eq(buf, kat, sizeof(kat));
	memset(&d, 0, sizeof(d));
	ck_assert_int_eq(rdmap_rreq_decode(&d, kat, sizeof(kat)),
			 RDMAP_RREQ_HDR_LEN);
	ck_assert_uint_eq(d.sink_stag, rr.sink_stag);
	ck_assert(d.sink_to == rr.sink_to);
	ck_assert_uint_eq(d.size, rr.size);
	ck_assert_uint_eq(d.src_stag, rr.src_stag);
	ck_assert(d.src_to == rr.src_to);
	for (n = 0; n < RDMAP_RREQ_HDR_LEN; n++)
		ck_assert_int_eq(rdmap_rreq_decode(&d, kat, n),
				 IWARP_ERR_TRUNCATED);
}
END_TEST

START_TEST(test_rreq_round_trip)
{
	uint64_t seed = 42;
	uint8_t buf[RDMAP_RREQ_MSG_LEN];
	struct rdmap_rreq rr, d;
	struct ddp_hdr h;
	uint32_t msn;
	int i;

	for (i = 0; i < 200; i++) {
		rr.sink_stag = (uint32_t)iw_test_rand(&seed);
		rr.sink_to = iw_test_rand(&seed);
		rr.size = (uint32_t)iw_test_rand(&seed);
		rr.src_stag = (uint32_t)iw_test_rand(&seed);
		rr.src_to = iw_test_rand(&seed);
		msn = (uint32_t)iw_test_rand(&seed);
		ck_assert_uint_eq(rdmap_rreq_msg_encode(buf, msn, &rr),
				  RDMAP_RREQ_MSG_LEN);
		ck_assert_uint_eq(buf[0], 0x41);
		ck_assert_uint_eq(buf[1], 0x41);
		ck_assert_int_eq(
			rdmap_rreq_msg_decode(&h, &d, buf, sizeof(buf)),
			RDMAP_RREQ_MSG_LEN);
		ck_assert_uint_eq(h.msn, msn);
		ck_assert_uint_eq(h.qn, DDP_QN_READ_REQUEST);
		ck_assert_uint_eq(h.rsvdulp, 0);
		ck_assert_uint_eq(d.sink_stag, rr.sink_stag);
		ck_assert(d.sink_to == rr.sink_to);
		ck_assert_uint_eq(d.size, rr.size);
		ck_assert_uint_eq(d.src_stag, rr.src_stag);
		ck_assert(d.src_to == rr.src_to);
	}
}
END_TEST

START_TEST(test_rreq_msg_errors)
{
	uint8_t buf[RDMAP_RREQ_MSG_LEN + 1];
	struct rdmap_rreq rr;
	size_t n;

	/* every truncation */
	for (n = 0; n < RDMAP_RREQ_MSG_LEN; n++)
		ck_assert_int_eq(rdmap_rreq_msg_decode(NULL, &rr, siw_rreq, n),
				 IWARP_ERR_TRUNCATED);
	/* one octet too many: the QN 1 buffer is exactly 28 octets */
	memcpy(buf, siw_rreq, sizeof(siw_rreq));
	buf[RDMAP_RREQ_MSG_LEN] = 0;
	ck_assert_int_eq(rdmap_rreq_msg_decode(NULL, &rr, buf, sizeof(buf)),
			 IWARP_ERR_DDP_MSG_TOO_LONG);
	/* RDMAP version 2 */
	memcpy(buf, siw_rreq, sizeof(siw_rreq));
	buf[1] = 0x81;
	ck_assert_int_eq(
		rdmap_rreq_msg_decode(NULL, &rr, buf, RDMAP_RREQ_MSG_LEN),
		IWARP_ERR_RDMAP_VERSION);
	/* a Send, not a Read Request, on QN 1 */
	memcpy(buf, siw_rreq, sizeof(siw_rreq));
	buf[1] = 0x43;
	ck_assert_int_eq(
		rdmap_rreq_msg_decode(NULL, &rr, buf, RDMAP_RREQ_MSG_LEN),
		IWARP_ERR_DDP_QN);
	/* a Send on its own queue is still no Read Request */
	buf[9] = 0x00;
	ck_assert_int_eq(
		rdmap_rreq_msg_decode(NULL, &rr, buf, RDMAP_RREQ_MSG_LEN),
		IWARP_ERR_RDMAP_OPCODE);
	/* Read Request on QN 0 */
	memcpy(buf, siw_rreq, sizeof(siw_rreq));
	buf[9] = 0x00;
	ck_assert_int_eq(
		rdmap_rreq_msg_decode(NULL, &rr, buf, RDMAP_RREQ_MSG_LEN),
		IWARP_ERR_DDP_QN);
	/* tagged Read Request */
	memcpy(buf, siw_rreq, sizeof(siw_rreq));
	buf[0] = 0xC1;
	ck_assert_int_eq(
		rdmap_rreq_msg_decode(NULL, &rr, buf, RDMAP_RREQ_MSG_LEN),
		IWARP_ERR_RDMAP_OPCODE);
	/* MO != 0 and L = 0 */
	memcpy(buf, siw_rreq, sizeof(siw_rreq));
	buf[17] = 0x04;
	ck_assert_int_eq(
		rdmap_rreq_msg_decode(NULL, &rr, buf, RDMAP_RREQ_MSG_LEN),
		IWARP_ERR_DDP_MO);
	memcpy(buf, siw_rreq, sizeof(siw_rreq));
	buf[0] = 0x01;
	ck_assert_int_eq(
		rdmap_rreq_msg_decode(NULL, &rr, buf, RDMAP_RREQ_MSG_LEN),
		IWARP_ERR_DDP_MO);
}
END_TEST

START_TEST(test_hdr_len)
{
	static const uint8_t send[2] = {0x41, 0x43};
	static const uint8_t rreq[2] = {0x41, 0x41};
	static const uint8_t rreq_odd[2] = {0x7D, 0xF1}; /* rsvd, RV set */
	static const uint8_t write[2] = {0xC1, 0x40};
	static const uint8_t write_op1[2] = {0x81, 0x41};
	static const uint8_t term[2] = {0x41, 0x47};

	ck_assert_uint_eq(rdmap_hdr_len(write, 14), 14);
	ck_assert_uint_eq(rdmap_hdr_len(write, 65535), 14);
	ck_assert_uint_eq(rdmap_hdr_len(write_op1, 100), 14);
	ck_assert_uint_eq(rdmap_hdr_len(send, 18), 18);
	ck_assert_uint_eq(rdmap_hdr_len(send, 34), 18);
	ck_assert_uint_eq(rdmap_hdr_len(term, 22), 18);
	ck_assert_uint_eq(rdmap_hdr_len(rreq, 46), 46);
	ck_assert_uint_eq(rdmap_hdr_len(rreq, 1000), 46);
	ck_assert_uint_eq(rdmap_hdr_len(rreq_odd, 1000), 46);
	/* clamped to the ULPDU */
	ck_assert_uint_eq(rdmap_hdr_len(rreq, 30), 30);
	ck_assert_uint_eq(rdmap_hdr_len(send, 10), 10);
	ck_assert_uint_eq(rdmap_hdr_len(write, 2), 2);
	/* fewer than 2 octets: |first2| is not read */
	ck_assert_uint_eq(rdmap_hdr_len(NULL, 1), 1);
	ck_assert_uint_eq(rdmap_hdr_len(NULL, 0), 0);
}
END_TEST

/* RFC 7306 opcodes pass only with the extensions negotiated, on their QN. */
START_TEST(test_hdr_check_ext)
{
	struct ddp_hdr h;
	uint8_t op;

	for (op = RDMAP_OP_IMM_DATA; op <= RDMAP_OP_ATOMIC_RESPONSE; op++) {
		h = hdr_for(op);
		ck_assert_int_eq(rdmap_hdr_check(&h), IWARP_ERR_RDMAP_OPCODE);
		ck_assert_int_eq(rdmap_hdr_check_ext(&h, false),
				 IWARP_ERR_RDMAP_OPCODE);
		ck_assert_int_eq(rdmap_hdr_check_ext(&h, true), 0);
		h.qn = (h.qn + 1) % 5;
		ck_assert_int_eq(rdmap_hdr_check_ext(&h, true),
				 IWARP_ERR_DDP_QN);
		h = hdr_for(op);
		h.tagged = true;
		ck_assert_int_eq(rdmap_hdr_check_ext(&h, true),
				 IWARP_ERR_RDMAP_OPCODE);
	}
	/* reserved opcodes stay refused, RFC 5040 ones stay valid */
	for (op = 0xC; op < 16; op++) {
		h = hdr_for(RDMAP_OP_SEND);
		h.opcode = op;
		ck_assert_int_eq(rdmap_hdr_check_ext(&h, true),
				 IWARP_ERR_RDMAP_OPCODE);
	}
	for (op = 0; op <= RDMAP_OP_TERMINATE; op++) {
		h = hdr_for(op);
		ck_assert_int_eq(rdmap_hdr_check_ext(&h, true), 0);
	}
	ck_assert_uint_eq(rdmap_opcode_table[RDMAP_OP_IMM_DATA].qn, 0);
	ck_assert_uint_eq(rdmap_opcode_table[RDMAP_OP_ATOMIC_REQUEST].qn, 3);
	ck_assert_uint_eq(rdmap_opcode_table[RDMAP_OP_ATOMIC_RESPONSE].qn, 4);
}
END_TEST

/* Header lengths of the RFC 7306 messages (deframer view). */
START_TEST(test_hdr_len_ext)
{
	static const uint8_t imm[2] = {0x41, 0x48};
	static const uint8_t imm_se[2] = {0x41, 0x49};
	static const uint8_t areq[2] = {0x41, 0x4A};
	static const uint8_t aresp[2] = {0x41, 0x4B};

	ck_assert_uint_eq(rdmap_hdr_len(imm, 26), 26);
	ck_assert_uint_eq(rdmap_hdr_len(imm_se, 100), 26);
	ck_assert_uint_eq(rdmap_hdr_len(areq, 70), 70);
	ck_assert_uint_eq(rdmap_hdr_len(areq, 60), 60);
	ck_assert_uint_eq(rdmap_hdr_len(aresp, 30), 30);
	ck_assert_uint_eq(rdmap_hdr_len(aresp, 1000), 30);
}
END_TEST

/* Known answer: every field at its RFC 7306 §5.2.1 offset, big-endian. */
START_TEST(test_atomic_req_kat)
{
	static const uint8_t want[RDMAP_ATOMIC_REQ_LEN] = {
		0x00, 0x00, 0x00, 0x02,				/* CmpSwap */
		0x11, 0x22, 0x33, 0x44,				/* req id */
		0xAA, 0xBB, 0xCC, 0xDD,				/* STag */
		0x01, 0x02, 0x03, 0x04, 0x05, 0x06, 0x07, 0x08, /* TO */
		0x10, 0x20, 0x30, 0x40, 0x50, 0x60, 0x70, 0x80, /* swap */
		0xFF, 0xFF, 0xFF, 0xFF, 0x00, 0x00, 0x00, 0x00, /* swap mask */
		0x99, 0x88, 0x77, 0x66, 0x55, 0x44, 0x33, 0x22, /* compare */
		0x00, 0x00, 0x00, 0x00, 0xFF, 0xFF, 0xFF, 0xFF, /* cmp mask */
	};
	struct rdmap_atomic_req r = {
		.op = RDMAP_ATOMIC_CMP_SWAP,
		.req_id = 0x11223344,
		.stag = 0xAABBCCDD,
		.to = 0x0102030405060708ull,
		.add_swap = 0x1020304050607080ull,
		.add_swap_mask = 0xFFFFFFFF00000000ull,
		.cmp = 0x9988776655443322ull,
		.cmp_mask = 0x00000000FFFFFFFFull,
	};
	struct rdmap_atomic_req d;
	uint8_t buf[RDMAP_ATOMIC_REQ_LEN + 4];

	ck_assert_uint_eq(rdmap_atomic_req_encode(buf, &r),
			  RDMAP_ATOMIC_REQ_LEN);
	ck_assert_mem_eq(buf, want, sizeof(want));
	memset(&d, 0xEE, sizeof(d));
	ck_assert_int_eq(rdmap_atomic_req_decode(&d, want, sizeof(want)),
			 RDMAP_ATOMIC_REQ_LEN);
	ck_assert_uint_eq(d.op, r.op);
	ck_assert_uint_eq(d.req_id, r.req_id);
	ck_assert_uint_eq(d.stag, r.stag);
	ck_assert_uint_eq(d.to, r.to);
	ck_assert_uint_eq(d.add_swap, r.add_swap);
	ck_assert_uint_eq(d.add_swap_mask, r.add_swap_mask);
	ck_assert_uint_eq(d.cmp, r.cmp);
	ck_assert_uint_eq(d.cmp_mask, r.cmp_mask);
	/* reserved bits are ignored on receive (RFC 5040 §4.2) */
	memcpy(buf, want, sizeof(want));
	buf[0] = 0xFF;
	buf[3] = 0xF0;
	ck_assert_int_eq(rdmap_atomic_req_decode(&d, buf, sizeof(want)),
			 RDMAP_ATOMIC_REQ_LEN);
	ck_assert_uint_eq(d.op, RDMAP_ATOMIC_FETCH_ADD);
	ck_assert_int_eq(rdmap_atomic_req_decode(&d, want, 51),
			 IWARP_ERR_TRUNCATED);
}
END_TEST

START_TEST(test_atomic_resp_kat)
{
	static const uint8_t want[RDMAP_ATOMIC_RESP_LEN] = {
		0xDE, 0xAD, 0xBE, 0xEF, 0x01, 0x23,
		0x45, 0x67, 0x89, 0xAB, 0xCD, 0xEF,
	};
	struct rdmap_atomic_resp r = {0xDEADBEEF, 0x0123456789ABCDEFull}, d;
	uint8_t buf[RDMAP_ATOMIC_RESP_LEN];

	ck_assert_uint_eq(rdmap_atomic_resp_encode(buf, &r),
			  RDMAP_ATOMIC_RESP_LEN);
	ck_assert_mem_eq(buf, want, sizeof(want));
	ck_assert_int_eq(rdmap_atomic_resp_decode(&d, want, sizeof(want)),
			 RDMAP_ATOMIC_RESP_LEN);
	ck_assert_uint_eq(d.req_id, r.req_id);
	ck_assert_uint_eq(d.orig, r.orig);
	ck_assert_int_eq(rdmap_atomic_resp_decode(&d, want, 11),
			 IWARP_ERR_TRUNCATED);
}
END_TEST

/* RFC 7306 §4.2 semantics, plain and masked. */
START_TEST(test_atomic_apply)
{
	struct rdmap_atomic_req r;
	uint64_t t;

	memset(&r, 0, sizeof(r));
	r.op = RDMAP_ATOMIC_FETCH_ADD;
	r.add_swap = 5;
	ck_assert_uint_eq(rdmap_atomic_apply(&r, 10), 15);
	ck_assert_uint_eq(rdmap_atomic_apply(&r, UINT64_MAX), 4); /* wraps */
	/* two 32-bit fields: no carry from the low into the high one */
	r.add_swap = 1;
	r.add_swap_mask = 0x8000000080000000ull;
	ck_assert_uint_eq(rdmap_atomic_apply(&r, 0x00000007FFFFFFFFull),
			  0x0000000700000000ull);
	r.add_swap = 0x0000000100000001ull;
	ck_assert_uint_eq(rdmap_atomic_apply(&r, 0x00000002FFFFFFFFull),
			  0x0000000300000000ull);
	/* masked swap */
	r.op = RDMAP_ATOMIC_SWAP;
	r.add_swap = 0x1111111111111111ull;
	r.add_swap_mask = 0x00000000FFFFFFFFull;
	ck_assert_uint_eq(rdmap_atomic_apply(&r, 0xAAAAAAAAAAAAAAAAull),
			  0xAAAAAAAA11111111ull);
	/* compare-and-swap: match, mismatch, masked compare */
	r.op = RDMAP_ATOMIC_CMP_SWAP;
	r.add_swap = 42;
	r.add_swap_mask = UINT64_MAX;
	r.cmp = 7;
	r.cmp_mask = UINT64_MAX;
	ck_assert_uint_eq(rdmap_atomic_apply(&r, 7), 42);
	ck_assert_uint_eq(rdmap_atomic_apply(&r, 8), 8);
	r.cmp_mask = 0xFF;
	ck_assert_uint_eq(rdmap_atomic_apply(&r, 0x1234500000000007ull), 42);
	/* execution returns the original value and stores the new one */
	t = 7;
	r.cmp_mask = UINT64_MAX;
	ck_assert_uint_eq(rdmap_atomic_exec(&r, &t), 7);
	ck_assert_uint_eq(t, 42);
	ck_assert_uint_eq(rdmap_atomic_exec(&r, &t), 42); /* no match now */
	ck_assert_uint_eq(t, 42);
	r.op = RDMAP_ATOMIC_FETCH_ADD;
	r.add_swap = 3;
	r.add_swap_mask = 0;
	ck_assert_uint_eq(rdmap_atomic_exec(&r, &t), 42);
	ck_assert_uint_eq(t, 45);
	ck_assert(rdmap_atomic_op_valid(0) && rdmap_atomic_op_valid(1) &&
		  rdmap_atomic_op_valid(2));
	ck_assert(!rdmap_atomic_op_valid(3) && !rdmap_atomic_op_valid(15));
}
END_TEST

static Suite *rdmap_suite(void)
{
	Suite *s = suite_create("rdmap");
	TCase *tc = tcase_create("opcode");

	tcase_add_test(tc, test_opcode_table);
	tcase_add_test(tc, test_hdr_check_valid);
	tcase_add_test(tc, test_hdr_check_version);
	tcase_add_test(tc, test_hdr_check_opcode);
	tcase_add_test(tc, test_hdr_check_model_and_qn);
	tcase_add_test(tc, test_hdr_len);
	suite_add_tcase(s, tc);

	tc = tcase_create("rreq");
	tcase_add_test(tc, test_rreq_kat_siw);
	tcase_add_test(tc, test_rreq_hdr_kat);
	tcase_add_test(tc, test_rreq_round_trip);
	tcase_add_test(tc, test_rreq_msg_errors);
	suite_add_tcase(s, tc);

	tc = tcase_create("rfc7306");
	tcase_add_test(tc, test_hdr_check_ext);
	tcase_add_test(tc, test_hdr_len_ext);
	tcase_add_test(tc, test_atomic_req_kat);
	tcase_add_test(tc, test_atomic_resp_kat);
	tcase_add_test(tc, test_atomic_apply);
	suite_add_tcase(s, tc);
	return s;
}

IW_TEST_MAIN(rdmap_suite)
