/* rdmap/rdmap_opcode.c: the RDMAP opcode table and header check. */
#include "config.h"

#include "rdmap/rdmap_opcode.h"

#include "iwarp/iwarp.h"
#include "rdmap/rdmap_ext.h"

/* RDMAP header after the DDP header of a Read Request (RFC 5040 §4.4). */
#define RREQ_HDR_LEN 28

#define UNTAGGED(nm, q, hl, se, inv)                                           \
	{                                                                      \
		.name = (nm), .valid = true, .tagged = false, .qn = (q),       \
		.hdr_len = (hl), .solicited = (se), .invalidate = (inv),       \
	}
#define TAGGED(nm)                                                             \
	{                                                                      \
		.name = (nm), .valid = true, .tagged = true,                   \
		.qn = RDMAP_QN_NONE, .hdr_len = 0, .solicited = false,         \
		.invalidate = false,                                           \
	}
#define UNSUPPORTED(nm, t, q)                                                  \
	{                                                                      \
		.name = (nm), .valid = false, .tagged = (t), .qn = (q),        \
		.hdr_len = 0, .solicited = false, .invalidate = false,         \
	}
#define EXT(nm, q, hl, se)                                                     \
	{                                                                      \
		.name = (nm), .valid = false, .tagged = false, .qn = (q),      \
		.hdr_len = (hl), .solicited = (se), .invalidate = false,       \
		.ext = true,                                                   \
	}

/*
 * RFC 5040 §4.2 (opcodes), §5.1 (queue numbers), §4.4 (Read Request
 * header), §4.8 (Terminate: its control word and optional headers are its
 * payload, so hdr_len 0). 0x8-0xB: RFC 7306 §5.1 (accepted only when
 * negotiated; siw rejects them, docs/interop-notes.md §1.4); 0xC-0xF
 * reserved.
 */
const struct rdmap_opcode_info rdmap_opcode_table[RDMAP_OPCODE_COUNT] = {
	[RDMAP_OP_WRITE] = TAGGED("Write"),
	[RDMAP_OP_READ_REQUEST] = UNTAGGED("Read Request", DDP_QN_READ_REQUEST,
					   RREQ_HDR_LEN, false, false),
	[RDMAP_OP_READ_RESPONSE] = TAGGED("Read Response"),
	[RDMAP_OP_SEND] = UNTAGGED("Send", DDP_QN_SEND, 0, false, false),
	[RDMAP_OP_SEND_INV] =
		UNTAGGED("Send with Invalidate", DDP_QN_SEND, 0, false, true),
	[RDMAP_OP_SEND_SE] =
		UNTAGGED("Send with SE", DDP_QN_SEND, 0, true, false),
	[RDMAP_OP_SEND_SE_INV] = UNTAGGED("Send with SE and Invalidate",
					  DDP_QN_SEND, 0, true, true),
	[RDMAP_OP_TERMINATE] =
		UNTAGGED("Terminate", DDP_QN_TERMINATE, 0, false, false),
	/* RFC 7306 §5.1: Immediate Data on the Send queue, atomics on QN 3
	 * (requests) and QN 4 (responses) */
	[RDMAP_OP_IMM_DATA] =
		EXT("Immediate Data", DDP_QN_SEND, RDMAP_IMM_LEN, false),
	[RDMAP_OP_IMM_DATA_SE] =
		EXT("Immediate Data with SE", DDP_QN_SEND, RDMAP_IMM_LEN, true),
	[RDMAP_OP_ATOMIC_REQUEST] =
		EXT("Atomic Request", RDMAP_QN_ATOMIC_REQUEST,
		    RDMAP_ATOMIC_REQ_LEN, false),
	[RDMAP_OP_ATOMIC_RESPONSE] =
		EXT("Atomic Response", RDMAP_QN_ATOMIC_RESPONSE,
		    RDMAP_ATOMIC_RESP_LEN, false),
	[0xC] = UNSUPPORTED("Reserved", false, RDMAP_QN_NONE),
	[0xD] = UNSUPPORTED("Reserved", false, RDMAP_QN_NONE),
	[0xE] = UNSUPPORTED("Reserved", false, RDMAP_QN_NONE),
	[0xF] = UNSUPPORTED("Reserved", false, RDMAP_QN_NONE),
};

const struct rdmap_opcode_info *rdmap_opcode_get(uint8_t opcode)
{
	return &rdmap_opcode_table[opcode & RDMAP_CTRL_OPCODE_MASK];
}

const char *rdmap_opcode_name(uint8_t opcode)
{
	return rdmap_opcode_get(opcode)->name;
}

int rdmap_hdr_check(const struct ddp_hdr *h)
{
	return rdmap_hdr_check_ext(h, false);
}

int rdmap_hdr_check_ext(const struct ddp_hdr *h, bool ext)
{
	const struct rdmap_opcode_info *op;

	/* RFC 5040 §4.1: RV must be 1; §7: RemoteOp 0x05 otherwise. */
	if (h->rv != RDMAP_VERSION)
		return IWARP_ERR_RDMAP_VERSION;
	/* RFC 5040 §7: reserved/unsupported opcode is RemoteOp 0x06. */
	if (h->opcode >= RDMAP_OPCODE_COUNT)
		return IWARP_ERR_RDMAP_OPCODE;
	op = &rdmap_opcode_table[h->opcode];
	if (!op->valid && !(ext && op->ext))
		return IWARP_ERR_RDMAP_OPCODE;
	/* RFC 5040 §4.2: each opcode has one buffer model. */
	if (h->tagged != op->tagged)
		return IWARP_ERR_RDMAP_OPCODE;
	/* RFC 5040 §5.1 / RFC 5041 §7: wrong untagged queue -> invalid QN. */
	if (!h->tagged && h->qn != op->qn)
		return IWARP_ERR_DDP_QN;
	return 0;
}

size_t rdmap_hdr_len(const uint8_t *first2, uint16_t ulpdu_len)
{
	const struct rdmap_opcode_info *op;
	size_t need;

	if (ulpdu_len < 2)
		return ulpdu_len;
	if (first2[0] & DDP_CTRL_T)
		return DDP_TAGGED_HDR_LEN < ulpdu_len ? DDP_TAGGED_HDR_LEN
						      : ulpdu_len;
	op = rdmap_opcode_get(first2[1]);
	need = DDP_UNTAGGED_HDR_LEN + (op->tagged ? 0u : op->hdr_len);
	return need < ulpdu_len ? need : ulpdu_len;
}
