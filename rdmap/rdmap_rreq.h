/*
 * rdmap/rdmap_rreq.h: RDMA Read Request codec (RFC 5040 §4.4).
 *
 * A Read Request is an untagged DDP message on QN 1 (RFC 5040 §5.1), MO 0,
 * L=1, opcode 1, whose 28-octet RDMAP header follows the 18-octet untagged
 * DDP header:
 *   Sink STag(32) Sink TO(64) RDMA Read Message Size(32)
 *   Source STag(32) Source TO(64)                     = 4+8+4+4+8 = 28
 * The whole ULPDU is 18 + 28 = 46 octets (docs/interop-notes.md §6.7).
 */
#ifndef IWARP_RDMAP_RREQ_H
#define IWARP_RDMAP_RREQ_H

#include <stddef.h>
#include <stdint.h>

#include "ddp/ddp_hdr.h"

/* 4 sink STag + 8 sink TO + 4 size + 4 source STag + 8 source TO */
#define RDMAP_RREQ_HDR_LEN 28
/* 18 + 28 = 46 */
#define RDMAP_RREQ_MSG_LEN (DDP_UNTAGGED_HDR_LEN + RDMAP_RREQ_HDR_LEN)

/* The Read Request header, field names as in RFC 5040 §4.4. */
struct rdmap_rreq {
	uint32_t sink_stag; /* Data Sink STag (where the Read Response goes) */
	uint64_t sink_to;   /* Data Sink Tagged Offset */
	uint32_t size;	    /* RDMA Read Message Size, octets */
	uint32_t src_stag;  /* Data Source STag (what is read) */
	uint64_t src_to;    /* Data Source Tagged Offset */
};

/*
 * Encodes the 28-octet RDMAP header of |rr| into |out| (at least
 * RDMAP_RREQ_HDR_LEN octets). Returns RDMAP_RREQ_HDR_LEN.
 */
size_t rdmap_rreq_encode(uint8_t *out, const struct rdmap_rreq *rr);

/*
 * Decodes the 28-octet RDMAP header at |buf| (the octets right after the
 * untagged DDP header) into |rr|.
 * Returns RDMAP_RREQ_HDR_LEN, or IWARP_ERR_TRUNCATED if |len| < 28.
 */
int rdmap_rreq_decode(struct rdmap_rreq *rr, const uint8_t *buf, size_t len);

/*
 * Builds the whole Read Request ULPDU (the octets after MPA's ULPDU_Length)
 * into |out| (at least RDMAP_RREQ_MSG_LEN octets): untagged DDP header with
 * T=0 L=1 DV=1, RV=1 opcode 1, RsvdULP 0, QN 1, MSN |msn|, MO 0
 * (RFC 5040 §4.4, §5.1; MSNs start at 1, RFC 5041 §5.1), then |rr|.
 * Returns RDMAP_RREQ_MSG_LEN.
 */
size_t rdmap_rreq_msg_encode(uint8_t *out, uint32_t msn,
			     const struct rdmap_rreq *rr);

/*
 * Decodes a whole Read Request ULPDU of |len| octets at |ulpdu|: the DDP
 * header into |h| (may be NULL), the Read Request header into |rr|.
 * Validates the header with rdmap_hdr_check() and requires opcode 1 and
 * a single-segment message (L=1, MO 0).
 * Returns RDMAP_RREQ_MSG_LEN, or
 *   IWARP_ERR_TRUNCATED      |len| < 46 (or < the DDP header); the codec
 *                            cannot tell a short buffer from a short
 *                            ULPDU, the caller knows ULPDU_Length
 *   IWARP_ERR_RDMAP_VERSION, IWARP_ERR_RDMAP_OPCODE, IWARP_ERR_DDP_QN
 *                            from rdmap_hdr_check(), or opcode != 1
 *   IWARP_ERR_DDP_MO         MO != 0 or L=0 (the 28-octet header is one
 *                            segment: RFC 5040 §4.4)
 *   IWARP_ERR_DDP_MSG_TOO_LONG  |len| > 46: the QN 1 buffer holds exactly
 *                            one 28-octet header (RFC 5041 §7, ecode 0x05)
 */
int rdmap_rreq_msg_decode(struct ddp_hdr *h, struct rdmap_rreq *rr,
			  const uint8_t *ulpdu, size_t len);

#endif /* IWARP_RDMAP_RREQ_H */
