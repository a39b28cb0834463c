/*
 * rdmap/rdmap_ext.h: codecs and semantics of the RDMAP extensions of
 * RFC 7306: Immediate Data (opcodes 0x8 and 0x9, §4.3 / §5.4) and Atomic
 * Operations (Atomic Request 0xA and Atomic Response 0xB, §4.2 / §5.2).
 *
 * All messages are untagged DDP messages of one segment (MO 0, L=1):
 *   Immediate Data [with SE]  QN 0 (the Send queue)  8 octets of data
 *   Atomic Request            QN 3                   52-octet header
 *   Atomic Response           QN 4                   12-octet header
 * The octets follow the 18-octet untagged DDP header; every field is
 * big-endian (network order). Atomic Request header (RFC 7306 §5.2.1):
 *   Reserved(28 bits) | Atomic Operation Code(4 bits)     4
 *   Request Identifier                                    4
 *   Remote STag                                           4
 *   Remote Tagged Offset                                  8
 *   Add or Swap Data                                      8
 *   Add or Swap Mask                                      8
 *   Compare Data                                          8
 *   Compare Mask                                          8  = 52
 * Atomic Response header (RFC 7306 §5.2.2):
 *   Original Request Identifier                           4
 *   Original Remote Data Value                            8  = 12
 */
#ifndef IWARP_RDMAP_RDMAP_EXT_H
#define IWARP_RDMAP_RDMAP_EXT_H

#include <stddef.h>
#include <stdint.h>

#include "ddp/ddp_hdr.h"

#define RDMAP_IMM_LEN		 8  /* Immediate Data octets (RFC 7306 §4.3) */
#define RDMAP_ATOMIC_REQ_LEN	 52 /* Atomic Request header */
#define RDMAP_ATOMIC_RESP_LEN	 12 /* Atomic Response header */
#define RDMAP_QN_ATOMIC_REQUEST	 3
#define RDMAP_QN_ATOMIC_RESPONSE 4

/* Atomic Operation Codes (RFC 7306 §5.2.1); other values are reserved. */
enum rdmap_atomic_op {
	RDMAP_ATOMIC_FETCH_ADD = 0x0,
	RDMAP_ATOMIC_SWAP = 0x1,
	RDMAP_ATOMIC_CMP_SWAP = 0x2,
};

#define RDMAP_ATOMIC_OP_MASK 0x0Fu

/* An Atomic Request header, field names as in RFC 7306 §5.2.1. */
struct rdmap_atomic_req {
	uint8_t op;		/* Atomic Operation Code (low 4 bits) */
	uint32_t req_id;	/* Request Identifier */
	uint32_t stag;		/* Remote STag */
	uint64_t to;		/* Remote Tagged Offset */
	uint64_t add_swap;	/* Add or Swap Data */
	uint64_t add_swap_mask; /* Add or Swap Mask */
	uint64_t cmp;		/* Compare Data */
	uint64_t cmp_mask;	/* Compare Mask */
};

/* An Atomic Response header (RFC 7306 §5.2.2). */
struct rdmap_atomic_resp {
	uint32_t req_id; /* Original Request Identifier */
	uint64_t orig;	 /* Original Remote Data Value */
};

/* Encodes |r| into |out| (52 octets, reserved bits 0). Returns 52. */
size_t rdmap_atomic_req_encode(uint8_t *out, const struct rdmap_atomic_req *r);

/* Decodes 52 octets at |buf| (reserved bits ignored, RFC 5040 §4.2).
 * Returns 52 or IWARP_ERR_TRUNCATED when |len| < 52. */
int rdmap_atomic_req_decode(struct rdmap_atomic_req *r, const uint8_t *buf,
			    size_t len);

/* Encodes |r| into |out| (12 octets). Returns 12. */
size_t rdmap_atomic_resp_encode(uint8_t *out,
				const struct rdmap_atomic_resp *r);

/* Decodes 12 octets at |buf|: 12 or IWARP_ERR_TRUNCATED. */
int rdmap_atomic_resp_decode(struct rdmap_atomic_resp *r, const uint8_t *buf,
			     size_t len);

/*
 * The value an Atomic Request leaves in the 64-bit target whose value was
 * |orig| (RFC 7306 §4.2):
 *   FetchAdd: each field of the target, delimited by the set bits of the
 *     Add Mask (a set bit marks the most significant bit of a field; carry
 *     out of it is not propagated), gets the matching field of Add Data
 *     added to it; an Add Mask of 0 is a plain 64-bit add.
 *   Swap: the bits selected by the Swap Mask take the Swap Data's value.
 *   CmpSwap: when the bits selected by the Compare Mask equal those of
 *     Compare Data, the bits selected by the Swap Mask take the Swap
 *     Data's value; otherwise the target is unchanged.
 * |op| must be one of enum rdmap_atomic_op.
 */
uint64_t rdmap_atomic_apply(const struct rdmap_atomic_req *r, uint64_t orig);

/* True for the Atomic Operation Codes this library executes. */
int rdmap_atomic_op_valid(uint8_t op);

/*
 * Executes |r| on the 8-octet-aligned 64-bit host-order word at |target|,
 * atomically with respect to every other atomic operation of this process
 * (lock-free compare-and-swap on the word itself). Returns the original
 * value.
 */
uint64_t rdmap_atomic_exec(const struct rdmap_atomic_req *r, uint64_t *target);

#endif /* IWARP_RDMAP_RDMAP_EXT_H */
