/*
 * mpa/mpa_negotiate.h: MPA connection setup for both roles (RFC 5044 §7.1,
 * RFC 6581 §5-§9), as pure functions over the Request/Reply frames.
 *
 * Initiator:  mpa_neg_request_encode() -> send; when mpa_rr_peek() says the
 *             Reply is complete, mpa_neg_initiator_process() -> result.
 * Responder:  when mpa_rr_peek() says the Request is complete,
 *             mpa_neg_responder_process() -> result + Reply template; the
 *             CM appends its ULP private data with mpa_neg_reply_encode()
 *             (after setting reply.rr.r for an application reject).
 *
 * Interop decisions (docs/interop-notes.md §0, §1.2, §10):
 * - The responder answers with the requester's revision (0, 1 or 2) and is
 *   enhanced exactly when the request is; the local |rev| only chooses what
 *   the initiator asks for.
 * - CRC is on when either frame has C=1 (RFC 5044 §7.1). A responder with
 *   MPA_CRC_REQUIRE sets C=1 in its Reply, which turns CRC on for both, so
 *   it never refuses a request with C=0; an initiator with MPA_CRC_REQUIRE
 *   refuses a Reply with C=0 (as siw's mpa_crc_required does).
 * - Markers are per direction: a frame's M asks the OTHER side to insert
 *   markers toward the frame's sender (RFC 5044 §7.1). We support markers,
 *   so a peer's M=1 is honoured (markers_tx) and never rejected.
 * - RFC 6581 §9.2: a responder echoes A; it picks exactly one RTR type
 *   among those offered and locally acceptable, preferring Write, then
 *   Read, then Send (siw picks Write); a request with A and no RTR bits
 *   gets the most preferred locally acceptable type (siw: Write).
 * - IRD/ORD (RFC 6581 §5): each side's ORD must be <= the peer's IRD.
 *   Both roles use ird = min(local IRD, peer ORD) and
 *   ord = min(local ORD, peer IRD), which for a responder with IRD=ORD=128
 *   is exactly siw's reply (IRD = min(req ORD,128), ORD = min(req IRD,128)).
 *   A Read RTR needs ORD >= 1 on the initiator and IRD >= 1 on the
 *   responder; both are forced. Without the enhanced header (rev 0/1 or
 *   rev 2 without 0x10) nothing is exchanged and ird/ord are the local
 *   values (siw uses 0/0 there, which breaks RDMA Reads).
 * - Reserved flag bits from the peer are ignored (lax decode; siw echoes
 *   its GSO bit 0x08); ours are sent as zero, except MPA_RR_FLAG_RDMAP_EXT:
 *   an initiator with rdmap_ext sets it in its Request, a responder with
 *   rdmap_ext echoes it only when the Request had it, and the RFC 7306
 *   extensions are on only when both frames carry it (docs/rdmap-ext.md).
 */
#ifndef IWARP_MPA_NEGOTIATE_H
#define IWARP_MPA_NEGOTIATE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "mpa/mpa_rr.h"

#define MPA_NEG_IRD_ORD_MAX 128 /* local IRD/ORD limit (as siw) */

/* RFC 5044 §7.1 C bit policy. */
enum mpa_crc_policy {
	MPA_CRC_OFF = 0,     /* do not ask; CRC on if the peer asks */
	MPA_CRC_REQUEST = 1, /* ask (C=1): CRC is on */
	MPA_CRC_REQUIRE = 2, /* ask; initiator refuses a Reply with C=0 */
};

/* Local connection parameters. Set defaults with mpa_neg_params_init(). */
struct mpa_neg_params {
	uint8_t rev; /* 1 or 2 (2 = RFC 6581 enhanced) */
	enum mpa_crc_policy crc;
	bool markers_rx;   /* our M bit: peer inserts markers to us */
	bool p2p;	   /* initiator: ask for RFC 6581 P2P (A) */
	bool p2p_optional; /* initiator: a Reply without A is client-server */
	uint8_t rtr_mask;  /* set of enum mpa_rtr offered/acceptable */
	uint16_t ird;	   /* inbound RDMA Read capacity, <= 128 */
	uint16_t ord;	   /* outbound RDMA Reads, <= 128 */
	uint16_t max_pd;   /* max PD_Length accepted, <= 512 */
	bool strict_ird;   /* refuse instead of clamping IRD/ORD */
	bool rdmap_ext;	   /* offer/accept the RFC 7306 extensions */
};

/* Outcome of a successful negotiation. */
struct mpa_neg_result {
	bool crc;	  /* CRC32c generated and checked both ways */
	bool markers_tx;  /* we insert markers toward the peer */
	bool markers_rx;  /* the peer inserts markers toward us */
	uint8_t rev;	  /* revision of the exchange (the Request's) */
	bool enhanced;	  /* RFC 6581 IRD/ORD header exchanged */
	uint16_t ird;	  /* our inbound Read capacity */
	uint16_t ord;	  /* Reads we may have outstanding */
	bool p2p;	  /* RFC 6581 peer-to-peer model */
	enum mpa_rtr rtr; /* the one chosen RTR type, or MPA_RTR_NONE */
	bool rdmap_ext;	  /* RFC 7306 extensions: both sides asked */
	const uint8_t *peer_pdata; /* the peer's ULP private data (in buf) */
	size_t peer_pdata_len;
	struct mpa_rr peer; /* the peer's decoded frame */
};

/* The responder's Reply, header fields only (rr.pdata is NULL). */
struct mpa_neg_reply {
	bool send; /* a Reply (accept or R=1 reject) must be sent */
	struct mpa_rr rr;
};

/*
 * Fills |p| with the defaults: rev 2, MPA_CRC_REQUEST, no markers, no P2P,
 * rtr_mask Write|Read (siw's rtr_type), IRD = ORD = 128, max_pd 512,
 * relaxed IRD.
 */
void mpa_neg_params_init(struct mpa_neg_params *p);

/*
 * Checks |p|: rev 1 or 2, known CRC policy, rtr_mask within MPA_RTR_ALL,
 * IRD/ORD <= 128, max_pd <= 512, P2P only with rev 2 and a non-empty
 * rtr_mask. Returns 0 or -EINVAL.
 */
int mpa_neg_params_check(const struct mpa_neg_params *p);

/*
 * Initiator: encodes the MPA Request for |p| with ULP private data |ulp_pd|
 * (|ulp_len| octets; the 4 IRD/ORD octets come first when rev 2) into
 * |out| (|cap| octets). With P2P and Read in rtr_mask the advertised ORD
 * is at least 1 (RFC 6581 §7: the Read RTR needs an ORD slot), also when
 * p->ord is 0; mpa_neg_initiator_process() uses the same ORD.
 * Returns the frame length, -EINVAL on bad params or when the private data
 * exceeds 512 octets in total, -ENOSPC when |cap| is too small.
 */
int mpa_neg_request_encode(const struct mpa_neg_params *p,
			   const uint8_t *ulp_pd, size_t ulp_len, uint8_t *out,
			   size_t cap);

/*
 * Initiator: processes the Reply at |buf| (|len| octets) to the Request
 * that mpa_neg_request_encode(|p|, ...) built, filling |res|.
 * Returns the Reply length consumed (bytes after it are FPDUs), or:
 *   IWARP_ERR_TRUNCATED         need more bytes
 *   -EINVAL                     bad |p|
 *   decode errors of mpa_rr_decode() (lax)
 *   IWARP_ERR_MPA_KEY           a Request key where a Reply was expected
 *   IWARP_ERR_MPA_PD_LENGTH     PD_Length > p->max_pd
 *   IWARP_ERR_MPA_REJECTED      R=1; res->peer/peer_pdata are still set
 *   IWARP_ERR_MPA_REQ_REP       revision/enhanced mode differs from ours
 *   IWARP_ERR_MPA_CRC_REQUIRED  MPA_CRC_REQUIRE and the Reply has C=0
 *   IWARP_ERR_MPA_IRD           strict_ird and the Reply's IRD < our ORD
 *                               or its ORD > our IRD
 *   IWARP_ERR_MPA_RTR           we asked P2P and the Reply lacks A or does
 *                               not choose exactly one offered RTR type
 * |res->peer| is filled whenever the frame decoded.
 */
int mpa_neg_initiator_process(const struct mpa_neg_params *p,
			      const uint8_t *buf, size_t len,
			      struct mpa_neg_result *res);

/*
 * Responder: processes the Request at |buf| (|len| octets), filling |res|
 * and the Reply template |reply|.
 * Returns the Request length consumed on accept (reply->send is true,
 * reply->rr.r false), or a negative error:
 *   IWARP_ERR_TRUNCATED         need more bytes (reply->send false)
 *   -EINVAL                     bad |p| (reply->send false)
 *   no Reply, close the stream (reply->send false): IWARP_ERR_MPA_KEY (also
 *   a Reply key), IWARP_ERR_MPA_REV, IWARP_ERR_MPA_PD_LENGTH (> 512),
 *   IWARP_ERR_MPA_REQ_REP (R set), as siw does;
 *   reject with a Reply R=1 (reply->send true, reply->rr.r true):
 *   IWARP_ERR_MPA_ENHANCED_PD   0x10 with PD_Length < 4 (as siw)
 *   IWARP_ERR_MPA_PD_LENGTH     PD_Length > p->max_pd (but <= 512)
 *   IWARP_ERR_MPA_RTR           A set, no acceptable RTR type
 *   IWARP_ERR_MPA_IRD           strict_ird and the requested ORD > our IRD
 */
int mpa_neg_responder_process(const struct mpa_neg_params *p,
			      const uint8_t *buf, size_t len,
			      struct mpa_neg_result *res,
			      struct mpa_neg_reply *reply);

/*
 * Responder: encodes |reply| with ULP private data |ulp_pd| (|ulp_len|
 * octets) into |out| (|cap| octets). To reject at the application's
 * request set reply->rr.r = true first. Returns the frame length, -EINVAL
 * when reply->send is false or the private data exceeds 512 octets in
 * total, -ENOSPC when |cap| is too small.
 */
int mpa_neg_reply_encode(const struct mpa_neg_reply *reply,
			 const uint8_t *ulp_pd, size_t ulp_len, uint8_t *out,
			 size_t cap);

/*
 * The LLP (layer 2, etype MPA 0) TERMINATE error code for negotiation
 * error |err| (RFC 5044 §8, RFC 6581 §6): 0x06 for IWARP_ERR_MPA_IRD,
 * 0x07 for IWARP_ERR_MPA_RTR, 0x04 (invalid Request/Reply) for the other
 * Request/Reply errors. An initiator sends it as a TERMINATE after the
 * Reply (siw does); a responder rejects or closes instead. Returns the
 * code, or -EINVAL for IWARP_ERR_MPA_REJECTED (the peer refused: just
 * close), IWARP_ERR_TRUNCATED and anything else.
 */
int mpa_neg_error_llp_ecode(int err);

/* The zero-length message an RTR type stands for (RFC 6581 §5, §7). */
struct mpa_rtr_msg {
	uint8_t rdmap_opcode; /* RFC 5040 §4.3: 0x0 Write, 0x1 Read Req, 0x3
				 Send */
	bool tagged;	      /* DDP tagged (Write) */
	uint32_t stag;	      /* Write: sink STag; Read: source STag */
	uint64_t to;	      /* Write: sink TO; Read: source TO */
	uint32_t sink_stag;   /* Read only: sink STag of the Read Request */
	uint64_t sink_to;     /* Read only */
	uint32_t len;	      /* always 0 */
	bool uses_ord;	      /* Read: takes one ORD slot, answered by a
			       * zero-length Read Response */
};

/* STag used in RTR frames: never 0 (Chelsio rejects it,
 * docs/interop-notes.md §0.3). */
#define MPA_RTR_STAG 1

/*
 * Describes the RTR message for |rtr| (one of SEND, WRITE, READ) in |m|.
 * The initiator sends it as its first FPDU when res->rtr != MPA_RTR_NONE;
 * the responder sends nothing before it has received it (RFC 6581 §7).
 * Returns 0, or -EINVAL for MPA_RTR_NONE or a set of several types.
 */
int mpa_rtr_msg_get(enum mpa_rtr rtr, struct mpa_rtr_msg *m);

/* "none", "send", "write", "read", or "invalid". */
const char *mpa_rtr_name(enum mpa_rtr rtr);

#endif /* IWARP_MPA_NEGOTIATE_H */
