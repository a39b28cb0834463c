/*
 * mpa/mpa_rr.h: MPA Request/Reply frame codec (RFC 5044 §7.1) with the
 * RFC 6581 §5 enhanced IRD/ORD header.
 *
 * Layout (all multi-octet fields big-endian):
 *   octets  0..15  Key: "MPA ID Req Frame" or "MPA ID Rep Frame"
 *   octet  16      flags: M(0x80) C(0x40) R(0x20) Res(0x1F)
 *                  RFC 6581 §5 takes 0x10 as the Enhanced flag in rev 2
 *                  frames, leaving Res = 0x0F there.
 *   octet  17      Rev
 *   octets 18..19  PD_Length (<= 512)
 *   octets 20..    Private Data (PD_Length octets). When enhanced, the
 *                  first 4 are |A|B| IRD(14) | C|D| ORD(14)| (RFC 6581 §5)
 *                  and count in PD_Length; the ULP private data follows.
 *
 * Reserved bits: RFC 5044 §7.1 says Res is sent as zero. Bit 0x10 is the
 * Enhanced flag only when Rev is 2; in a rev 0/1 frame it is a reserved bit
 * (and Rev 2 without 0x10 is a plain RFC 5044 exchange, as siw treats it,
 * docs/interop-notes.md §10). siw's experimental GSO bit 0x08 is reserved.
 * A strict decode reports any reserved bit as IWARP_ERR_MPA_RESERVED (for
 * validators); negotiation decodes with MPA_RR_DECODE_LAX, which reports
 * the bits in |rsvd| but accepts the frame (siw echoes 0x08 back).
 *
 * Pure code: no I/O, no allocation.
 */
#ifndef IWARP_MPA_RR_H
#define IWARP_MPA_RR_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define MPA_RR_KEY_LEN	   16
#define MPA_RR_HDR_LEN	   20  /* Key 16 + flags 1 + Rev 1 + PD_Length 2 */
#define MPA_RR_PD_MAX	   512 /* RFC 5044 §7.1 */
#define MPA_RR_IRD_ORD_LEN 4   /* RFC 6581 §5: IRD word + ORD word */
#define MPA_RR_FRAME_MAX   (MPA_RR_HDR_LEN + MPA_RR_PD_MAX)

/* Flags octet (octet 16), RFC 5044 §7.1 and RFC 6581 §5. */
#define MPA_RR_FLAG_M	     0x80
#define MPA_RR_FLAG_C	     0x40
#define MPA_RR_FLAG_R	     0x20
#define MPA_RR_FLAG_ENHANCED 0x10 /* rev 2 only; reserved otherwise */
#define MPA_RR_FLAG_SIW_GSO  0x08 /* siw experiment; a reserved bit */
/* libiwarp's offer of the RFC 7306 RDMAP extensions: a reserved bit that
 * RFC 5044 §7.1 peers send as zero and ignore (docs/rdmap-ext.md) */
#define MPA_RR_FLAG_RDMAP_EXT 0x01
#define MPA_RR_RSVD_MASK      0x1F /* reserved bits of a rev 0/1 frame */
#define MPA_RR_RSVD_MASK_V2   0x0F /* reserved bits of a rev 2 frame */

#define MPA_REV_0 0 /* pre-RFC (Ammasso); accepted like rev 1 */
#define MPA_REV_1 1 /* RFC 5044 */
#define MPA_REV_2 2 /* RFC 6581 */

/* IRD/ORD words, RFC 6581 §5. */
#define MPA_IRD_A	 0x8000 /* peer-to-peer model */
#define MPA_IRD_B	 0x4000 /* zero-length Send (FULPDU) RTR */
#define MPA_ORD_C	 0x8000 /* zero-length RDMA Write RTR */
#define MPA_ORD_D	 0x4000 /* zero-length RDMA Read RTR */
#define MPA_IRD_ORD_MASK 0x3FFF

/*
 * RTR types (RFC 6581 §5): as a set (offered/acceptable, a bit mask) and as
 * the single chosen type. MPA_RTR_NONE: no RTR.
 */
enum mpa_rtr {
	MPA_RTR_NONE = 0,
	MPA_RTR_SEND = 0x1,  /* B: zero-length Send */
	MPA_RTR_WRITE = 0x2, /* C: zero-length RDMA Write */
	MPA_RTR_READ = 0x4,  /* D: zero-length RDMA Read */
};
#define MPA_RTR_ALL (MPA_RTR_SEND | MPA_RTR_WRITE | MPA_RTR_READ)

enum mpa_rr_kind {
	MPA_RR_REQUEST = 0,
	MPA_RR_REPLY = 1,
};

/*
 * A decoded (or to-be-encoded) MPA Request or Reply.
 * |pd_length| is the wire PD_Length (including the 4 IRD/ORD octets when
 * enhanced); |pdata|/|pdata_len| is the ULP private data only. On decode
 * |pdata| points into the input buffer.
 */
struct mpa_rr {
	enum mpa_rr_kind kind;
	bool m;	       /* sender wants markers toward it */
	bool c;	       /* sender wants CRC */
	bool r;	       /* Reply only: connection rejected */
	bool enhanced; /* Rev 2 and flag 0x10 (RFC 6581) */
	uint8_t rsvd;  /* reserved flag bits exactly as on the wire */
	uint8_t rev;
	uint16_t pd_length; /* decode only; encode computes it */
	/*
	 * Enhanced only: the IRD/ORD header was present. Always true for an
	 * enhanced frame except a lax-decoded rejecting Reply without it.
	 */
	bool has_ird_ord;
	bool p2p;	      /* A */
	uint8_t rtr;	      /* set of enum mpa_rtr: B, C, D */
	uint16_t ird;	      /* 14-bit IRD value */
	uint16_t ord;	      /* 14-bit ORD value */
	const uint8_t *pdata; /* ULP private data */
	size_t pdata_len;
};

/* Flags for mpa_rr_decode(). */
enum mpa_rr_decode_flags {
	MPA_RR_DECODE_STRICT = 0,
	/*
	 * Accept reserved flag bits (still reported in |rsvd|), and accept a
	 * rejecting Reply (R=1) that sets Enhanced with PD_Length < 4 (siw
	 * sends `30 02 00 00`, README b): has_ird_ord is false then.
	 */
	MPA_RR_DECODE_LAX = 1 << 0,
};

/*
 * Header-only peek for stream callers. Checks the Key octet by octet as it
 * arrives and, once the 20-octet header is present, PD_Length.
 * Returns the total frame length (20 + PD_Length), IWARP_ERR_TRUNCATED when
 * fewer than 20 octets are present and none of them is wrong,
 * IWARP_ERR_MPA_KEY on a Key that matches neither key, or
 * IWARP_ERR_MPA_PD_LENGTH when PD_Length > 512.
 */
int mpa_rr_peek(const uint8_t *buf, size_t len);

/*
 * Decodes the frame at |buf| (|len| octets available) into |rr|.
 * |flags| is a set of enum mpa_rr_decode_flags.
 * Returns the frame length consumed (20 + PD_Length), or:
 *   IWARP_ERR_TRUNCATED        header or private data not all present
 *   IWARP_ERR_MPA_KEY          Key is neither Req nor Rep
 *   IWARP_ERR_MPA_REV          Rev > 2
 *   IWARP_ERR_MPA_PD_LENGTH    PD_Length > 512
 *   IWARP_ERR_MPA_REQ_REP      R set in a Request
 *   IWARP_ERR_MPA_ENHANCED_PD  Rev 2 + 0x10 with PD_Length < 4
 *   IWARP_ERR_MPA_RESERVED     reserved flag bits set (strict only)
 * Errors decidable from the header are reported before a missing private
 * data part (IWARP_ERR_TRUNCATED). |rr| is undefined on error, except that
 * its header fields are filled once the header was there.
 */
int mpa_rr_decode(struct mpa_rr *rr, const uint8_t *buf, size_t len,
		  unsigned int flags);

/* Encoded length of |rr|: 20 + (enhanced ? 4 : 0) + pdata_len. */
size_t mpa_rr_encoded_len(const struct mpa_rr *rr);

/*
 * Encodes |rr| (Key by |kind|, flags M/C/R/Enhanced plus |rsvd| as given,
 * Rev, computed PD_Length, IRD/ORD words when |enhanced|, then |pdata|)
 * into |out| of |cap| octets. |pd_length| and |has_ird_ord| are ignored.
 * Returns the frame length, -ENOSPC when |cap| is too small, or -EINVAL
 * when the private data exceeds 512 octets in total, |enhanced| is set
 * without Rev 2, R is set in a Request, |rsvd| has non-reserved bits,
 * IRD/ORD exceed 14 bits, |rtr| has unknown bits, or |pdata| is NULL with
 * a non-zero length.
 */
int mpa_rr_encode(uint8_t *out, size_t cap, const struct mpa_rr *rr);

#endif /* IWARP_MPA_RR_H */
