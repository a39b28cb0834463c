/*
 * ddp/ddp_hdr.h: DDP segment header codec (RFC 5041 §4) including the
 * RDMAP control octet that DDP carries in its RsvdULP field (RFC 5040 §4).
 *
 * Layout after the 2-octet MPA ULPDU_Length (RFC 5041 §4.2-4.4):
 *   octet 0: T(0x80) L(0x40) Rsvd(0x3C) DV(0x03)               [DDP control]
 *   octet 1: RV(0xC0) Rsv(0x30) Opcode(0x0F)                   [RDMAP control]
 *   tagged   (14 octets total): STag(32) TO(64)
 *   untagged (18 octets total): RsvdULP(32) QN(32) MSN(32) MO(32)
 * The RsvdULP word of an untagged header carries the Invalidate STag for
 * Send with Invalidate (RFC 5040 §4.4); it is zero otherwise.
 */
#ifndef IWARP_DDP_HDR_H
#define IWARP_DDP_HDR_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define DDP_TAGGED_HDR_LEN 14 /* 2 control + 4 STag + 8 TO */
#define DDP_UNTAGGED_HDR_LEN                                                   \
	18 /* 2 control + 4 RsvdULP + 4 QN + 4 MSN + 4 MO */

#define DDP_CTRL_T	 0x80
#define DDP_CTRL_L	 0x40
#define DDP_CTRL_RSVD	 0x3C
#define DDP_CTRL_DV_MASK 0x03
#define DDP_VERSION	 1 /* RFC 5041 §4.2 */

#define RDMAP_CTRL_RV_MASK     0xC0
#define RDMAP_CTRL_RV_SHIFT    6
#define RDMAP_CTRL_RSV_MASK    0x30
#define RDMAP_CTRL_OPCODE_MASK 0x0F
#define RDMAP_VERSION	       1 /* RFC 5040 §4.2 */

/* Queue numbers of RDMAP's untagged queues (RFC 5040 §5.1). */
#define DDP_QN_SEND	    0
#define DDP_QN_READ_REQUEST 1
#define DDP_QN_TERMINATE    2

/* A decoded (or to-be-encoded) DDP header with its RDMAP control octet. */
struct ddp_hdr {
	bool tagged;	   /* T */
	bool last;	   /* L */
	uint8_t ddp_rsvd;  /* reserved bits of octet 0, already shifted: (o0 &
			      0x3C) >> 2 */
	uint8_t dv;	   /* DDP version */
	uint8_t rv;	   /* RDMAP version */
	uint8_t rdmap_rsv; /* reserved bits of octet 1, shifted: (o1 & 0x30) >>
			      4 */
	uint8_t opcode;	   /* RDMAP opcode */
	/* tagged */
	uint32_t stag;
	uint64_t to;
	/* untagged */
	uint32_t rsvdulp; /* Invalidate STag for Send with Invalidate, else 0 */
	uint32_t qn;
	uint32_t msn;
	uint32_t mo;
};

/* Header length for a tagged/untagged header. */
static inline size_t ddp_hdr_len(bool tagged)
{
	return tagged ? DDP_TAGGED_HDR_LEN : DDP_UNTAGGED_HDR_LEN;
}

/*
 * Encodes |h| into |out| (at least ddp_hdr_len(h->tagged) octets).
 * Reserved fields are written as given (zero for a conforming sender).
 * Returns the number of octets written.
 */
size_t ddp_hdr_encode(uint8_t *out, const struct ddp_hdr *h);

/*
 * Decodes the DDP header at |buf| (the octets right after ULPDU_Length).
 * Needs 2 octets to know T, then the full header length.
 * Returns the header length (14 or 18), or IWARP_ERR_TRUNCATED.
 * Does not validate versions or reserved bits: see ddp_hdr_check().
 */
int ddp_hdr_decode(struct ddp_hdr *h, const uint8_t *buf, size_t len);

/*
 * Checks the DDP fields of a decoded header |h| (RFC 5041 §4.2).
 * DV must be 1 (RFC 5041 §4.2); the error depends on the T bit because the
 * TERMINATE codes differ (RFC 5041 §7: tagged etype 1 ecode 0x04,
 * untagged etype 2 ecode 0x06).
 * The reserved bits of the DDP control octet (h->ddp_rsvd) are NOT checked:
 * RFC 5041 §4.2 defines Rsvd as "set to zero on transmit, not checked on
 * receive" (the IETF rule for reserved fields, keeps future extensions
 * compatible); IWARP_ERR_DDP_RESERVED is therefore never returned here.
 * The RDMAP octet (RV, Rsv, opcode) is RDMAP's business (RFC 5040 §4.2).
 * Returns 0, IWARP_ERR_DDP_TAGGED_VERSION or IWARP_ERR_DDP_UNTAGGED_VERSION.
 */
int ddp_hdr_check(const struct ddp_hdr *h);

#endif /* IWARP_DDP_HDR_H */
