/*
 * rdmap/rdmap_term.h: Terminate message codec (RFC 5040 §4.8).
 *
 * A Terminate is an untagged DDP message on QN 2 (RFC 5040 §5.1), MSN 1 for
 * the first, MO 0, L=1, opcode 7 (docs/interop-notes.md §6.6). Its payload,
 * after the 18-octet untagged DDP header:
 *
 *   Terminate Control, one 32-bit big-endian word:
 *     Layer(31-28) EType(27-24) ErrorCode(23-16)
 *     Hdrct: M(bit 15) D(bit 14) R(bit 13)  Reserved(12-0)
 *   if D: DDP Segment Length (16 bits), then the Terminated DDP Header:
 *         14 octets if its T bit is set, 18 if not
 *   if R: the Terminated RDMAP Header, 28 octets (a Read Request header)
 *
 * M says whether the DDP Segment Length value is valid; the field itself is
 * present exactly when D is set. This is how both siw (which attaches the
 * failed frame's 16/20-octet header with its 2-octet MPA length rewritten
 * to the DDP segment length) and Wireshark lay it out
 * (docs/interop-notes.md §1.4, §2.2). Sizes: bare 18+4 = 22; largest
 * 18+4+2+18+28 = 70.
 *
 * siw (Linux 6.1) fills the control word with little-endian bitfields:
 * Layer and EType swap nibbles in octet 0 and M/D/R are bits 0x01/0x02/0x04
 * of octet 2 (LLP/MPA/CRC goes out as `02 02 00 00`, RFC: `20 02 00 00`,
 * docs/interop-notes.md §10). rdmap_term_decode() recognises it; we always
 * encode per the RFC.
 */
#ifndef IWARP_RDMAP_TERM_H
#define IWARP_RDMAP_TERM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ddp/ddp_hdr.h"
#include "iwarp/iwarp.h"
#include "rdmap/rdmap_rreq.h"

/* Terminate Control word (RFC 5040 §4.8), as a host-order uint32_t. */
#define RDMAP_TERM_LAYER_SHIFT 28
#define RDMAP_TERM_ETYPE_SHIFT 24
#define RDMAP_TERM_ECODE_SHIFT 16
#define RDMAP_TERM_NIBBLE_MASK 0x0Fu
#define RDMAP_TERM_ECODE_MASK  0xFFu
#define RDMAP_TERM_HDRCT_M     0x00008000u /* DDP Segment Length valid */
#define RDMAP_TERM_HDRCT_D     0x00004000u /* DDP header included */
#define RDMAP_TERM_HDRCT_R     0x00002000u /* RDMAP header included */
#define RDMAP_TERM_RSVD_MASK   0x00001FFFu

/* siw's little-endian bitfield layout of the same word
 * (docs/interop-notes.md §10). */
#define RDMAP_TERM_SIW_HDRCT_M 0x00000100u /* octet 2, 0x01 */
#define RDMAP_TERM_SIW_HDRCT_D 0x00000200u /* octet 2, 0x02 */
#define RDMAP_TERM_SIW_HDRCT_R 0x00000400u /* octet 2, 0x04 */

#define RDMAP_TERM_CTRL_LEN   4
#define RDMAP_TERM_SEGLEN_LEN 2
#define RDMAP_TERM_BARE_LEN                                                    \
	(DDP_UNTAGGED_HDR_LEN + RDMAP_TERM_CTRL_LEN) /* 22 */
#define RDMAP_TERM_MAX_LEN                                                     \
	(RDMAP_TERM_BARE_LEN + RDMAP_TERM_SEGLEN_LEN + DDP_UNTAGGED_HDR_LEN +  \
	 RDMAP_RREQ_HDR_LEN) /* 22 + 2 + 18 + 28 = 70 */

/* A Terminate message's payload, decoded or to be encoded. */
struct rdmap_term {
	struct iwarp_term_cause cause; /* layer, etype, ecode */
	bool m;			       /* DDP Segment Length valid */
	bool d;			       /* Terminated DDP Header included */
	bool r;			       /* Terminated RDMAP Header included */
	uint16_t ddp_seg_len;	       /* on the wire iff d; meaningful iff m */
	uint8_t ddp_hdr_len; /* 14 or 18 (by the header's T bit), iff d */
	uint8_t ddp_hdr[DDP_UNTAGGED_HDR_LEN]; /* iff d */
	uint8_t rdmap_hdr[RDMAP_RREQ_HDR_LEN]; /* iff r */
	/* decode only: */
	uint16_t rsvd;		 /* the 13 reserved bits as received */
	bool siw_nibble_swapped; /* control word was in siw's layout */
};

/*
 * Whether (|layer|, |etype|, |ecode|) is a TERMINATE cause the RFCs define:
 *   RDMAP (RFC 5040 §4.8, §7): etype 0 ecode 0x00; etype 1 (remote
 *     protection) 0x00-0x04, 0x09, 0xFF; etype 2 (remote operation)
 *     0x05-0x09, 0xFF.
 *   DDP (RFC 5041 §7): etype 0 ecode 0x00; etype 1 (tagged) 0x00-0x04;
 *     etype 2 (untagged) 0x01-0x06. Etype 3 (reserved for the LLP) is not.
 *   LLP (RFC 5044 §8, RFC 6581 §6): etype 0 (MPA) 0x01-0x07.
 * Returns true if defined.
 */
bool rdmap_term_cause_valid(uint8_t layer, uint8_t etype, uint8_t ecode);

/*
 * Fills the optional parts of |t| from the offending segment: copies its
 * DDP header from |seg| (|avail| octets available, starting at the DDP
 * control octet; 14 or 18 by the T bit) and sets D; sets M and
 * ddp_seg_len when |seg_len| >= 0 (the failed segment's ULPDU_Length);
 * when |with_rreq|, also copies the 28-octet Read Request header that
 * follows an untagged header and sets R (RFC 5040 §4.8: for errors in a
 * Read Request). Leaves cause untouched.
 * Returns 0, IWARP_ERR_TRUNCATED if |avail| is too short, or -EINVAL if
 * |seg_len| > 65535 or |with_rreq| with a tagged header.
 */
int rdmap_term_attach(struct rdmap_term *t, const uint8_t *seg, size_t avail,
		      long seg_len, bool with_rreq);

/*
 * Length of the whole Terminate ULPDU |t| encodes to (22..70).
 */
size_t rdmap_term_len(const struct rdmap_term *t);

/*
 * Builds the whole Terminate ULPDU (the octets after MPA's ULPDU_Length)
 * into |out| of |cap| octets: untagged DDP header (T=0 L=1 DV=1, RV=1
 * opcode 7, RsvdULP 0, QN 2, MSN |msn|, MO 0), the Terminate Control word
 * in the RFC 5040 §4.8 layout (reserved bits zero, siw_nibble_swapped and
 * rsvd ignored), then the optional parts that D and R announce.
 * Returns the length written, or
 *   -EINVAL   layer/etype > 15, M without D, or D with ddp_hdr_len that
 *             does not match the T bit of ddp_hdr[0]
 *   -ENOSPC   |cap| < rdmap_term_len(t)
 */
int rdmap_term_encode(uint8_t *out, size_t cap, uint32_t msn,
		      const struct rdmap_term *t);

/*
 * Decodes the Terminate Control word at |p| (4 octets) in the RFC layout
 * (|siw| false) or in siw's nibble-swapped layout (|siw| true) into the
 * cause, m/d/r and rsvd of |t|.
 */
void rdmap_term_ctrl_decode(struct rdmap_term *t, const uint8_t *p, bool siw);

/*
 * Decodes a whole Terminate ULPDU of |len| octets at |ulpdu|: the DDP
 * header into |h| (may be NULL), the Terminate payload into |t|.
 * The DDP header must be a single-segment untagged message on QN 2 with
 * opcode 7, RV 1 and MO 0 (RFC 5040 §4.8, §5.1); the MSN is the caller's
 * to check. The length must be exactly 22 + (D ? 2 + 14|18 : 0) + (R ? 28
 * : 0).
 * The control word is read per RFC 5040 §4.8 unless that reading gives an
 * undefined cause (rdmap_term_cause_valid()) or a length mismatch while
 * siw's nibble-swapped reading gives a defined cause, the right length and
 * zero reserved bits: then the swapped reading is reported with
 * siw_nibble_swapped = true. A bare Terminate whose word reads as a
 * defined cause both ways (e.g. siw's RDMAP/RemoteOp/0x06, `20 06 00 00`,
 * is also LLP/MPA/0x06 per the RFC) is taken in the RFC reading.
 * An undefined cause in an otherwise well-formed Terminate (RFC reading)
 * is returned as is: the decode succeeds, check rdmap_term_cause_valid().
 * |ulpdu| must be the complete ULPDU: any length problem is malformation.
 * Returns |len|, or IWARP_ERR_RDMAP_TERMINATE for: shorter than 22 octets,
 * tagged, opcode != 7, RV != 1, QN != 2, MO != 0, L=0, or a length that
 * matches neither reading of the control word.
 */
int rdmap_term_decode(struct rdmap_term *t, struct ddp_hdr *h,
		      const uint8_t *ulpdu, size_t len);

#endif /* IWARP_RDMAP_TERM_H */
