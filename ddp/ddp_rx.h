/*
 * ddp/ddp_rx.h: DDP receive-side validation (RFC 5041 §5.3, §7).
 *
 * Untagged model: one context per queue (QN 0-2; 3, 4 for RFC 7306) holding the
 * expected MSN, the octets received so far of the message in progress (the next
 * valid MO) and the buffer the caller posted for the next message.
 * Tagged model: STag validity is the MR table's decision (passed in as a
 * struct ddp_tagged_buf); DDP checks bounds and TO wrap and tracks the
 * tagged message in progress.
 * The tagged context and the untagged queues are independent, so a tagged
 * segment may arrive between two segments of an untagged message and vice
 * versa; two messages of the same queue (or two tagged messages) may not
 * interleave. A rejected segment changes no state. No I/O, no allocation.
 */
#ifndef IWARP_DDP_RX_H
#define IWARP_DDP_RX_H

#include <stdbool.h>
#include <stdint.h>

#include "ddp/ddp_hdr.h"
#include "ddp/ddp_segment.h"

/* Receive state of one untagged queue (private to ddp_rx.c). */
struct ddp_rx_queue {
	uint32_t msn;	   /* MSN of the current message, or the next one */
	bool in_msg;	   /* a message was started and has not seen L=1 */
	uint32_t mo;	   /* octets of the current message received so far */
	uint32_t buf_len;  /* buffer bound to the current message */
	bool posted;	   /* a buffer is available for the next message */
	uint32_t post_len; /* its length */
};

/* Receive state of the tagged model (private to ddp_rx.c). */
struct ddp_rx_tagged_ctx {
	bool in_msg;	  /* a tagged message was started without L=1 yet */
	uint32_t stag;	  /* its STag */
	uint64_t next_to; /* TO its next segment must carry */
	uint64_t bytes;	  /* payload octets of it so far */
};

/* DDP receive state of one stream (one direction). */
struct ddp_rx {
	struct ddp_rx_queue q[DDP_NUM_QN];
	struct ddp_rx_tagged_ctx tagged;
};

/* Where a validated segment goes and what it completes. */
struct ddp_rx_seg {
	uint64_t offset;  /* untagged: MO (offset in the message buffer);
			   * tagged: TO - base (offset in the buffer) */
	uint32_t len;	  /* payload octets to place */
	bool first;	  /* first segment of a message (untagged: the posted
			   * buffer was bound to it) */
	bool complete;	  /* L=1: the message is complete */
	uint64_t msg_len; /* complete: total payload octets of the message */
};

/* Looked-up STag of a tagged segment, from the verbs MR table. */
enum ddp_stag_state {
	DDP_STAG_VALID = 0,
	DDP_STAG_INVALID,   /* unknown, invalidated or wrong key */
	DDP_STAG_NOT_ASSOC, /* valid, not associated with this stream (PD) */
};

/*
 * What the caller's MR table says about a tagged segment's STag: its state
 * and, when valid, the buffer [base, base + len) in tagged-offset space.
 */
struct ddp_tagged_buf {
	enum ddp_stag_state state;
	uint64_t base; /* first valid TO of the buffer */
	uint64_t len;  /* octets from base (base + len <= 2^64) */
};

/* Initialises |rx|: every queue expects MSN 1 (RFC 5041 §5.3), no buffer
 * posted, no message in progress. */
void ddp_rx_init(struct ddp_rx *rx);

/*
 * Makes a buffer of |len| octets available for the next new message on
 * queue |qn| (replaces a buffer posted before and not yet bound). A
 * message binds (consumes) it on its first segment; the caller posts the
 * following buffer after that (ddp_rx_seg.first tells it when).
 * Returns 0 or IWARP_ERR_DDP_QN.
 */
int ddp_rx_post(struct ddp_rx *rx, uint32_t qn, uint32_t len);

/* Withdraws the buffer posted on |qn| (no-op for an invalid |qn|). */
void ddp_rx_unpost(struct ddp_rx *rx, uint32_t qn);

/*
 * Validates an untagged segment with header |h| and |len| payload octets
 * against |rx| (RFC 5041 §5.3, error codes RFC 5041 §7), in this order:
 *   DV != 1                                 IWARP_ERR_DDP_UNTAGGED_VERSION
 *   QN not 0..4                             IWARP_ERR_DDP_QN
 *   MSN neither the current message's nor the next expected, or the
 *   next one while the current message is incomplete (same-queue
 *   interleave)                             IWARP_ERR_DDP_MSN_RANGE
 *   new message and no buffer posted        IWARP_ERR_DDP_MSN_NO_BUFFER
 *   MO != octets received of this message   IWARP_ERR_DDP_MO
 *   MO + len > buffer length                IWARP_ERR_DDP_MSG_TOO_LONG
 * On success fills |*out|, binds the posted buffer on a message's first
 * segment, and on L=1 reports the total length and advances the expected
 * MSN (modulo 2^32). Returns 0, -EINVAL if |h| is tagged, or an error
 * above (|rx| then unchanged).
 */
int ddp_rx_untagged(struct ddp_rx *rx, const struct ddp_hdr *h, uint32_t len,
		    struct ddp_rx_seg *out);

/*
 * Base/bounds and TO wrap of |len| octets at tagged offset |to| in a
 * buffer [|base|, |base| + |buf_len|) (RFC 5041 §7, RFC 5040 §8.1).
 * Returns 0, IWARP_ERR_DDP_TO_WRAP if |to| + |len| exceeds 2^64, or
 * IWARP_ERR_DDP_BOUNDS if the range leaves the buffer. A zero-length range
 * must still start inside [base, base + buf_len].
 */
int ddp_tagged_bounds(uint64_t base, uint64_t buf_len, uint64_t to,
		      uint64_t len);

/*
 * Stateless checks of a tagged segment with header |h| and |len| payload
 * octets whose STag the caller looked up into |buf| (NULL: not found),
 * in this order (RFC 5041 §7 tagged codes):
 *   DV != 1                       IWARP_ERR_DDP_TAGGED_VERSION
 *   |buf| NULL or DDP_STAG_INVALID IWARP_ERR_DDP_STAG
 *   DDP_STAG_NOT_ASSOC            IWARP_ERR_DDP_STAG_STREAM
 *   TO wrap / bounds              as ddp_tagged_bounds()
 * Access rights are RDMAP's (RFC 5040 §8.1). Returns 0, -EINVAL if |h| is
 * untagged, or an error above.
 */
int ddp_tagged_check(const struct ddp_hdr *h, uint32_t len,
		     const struct ddp_tagged_buf *buf);

/*
 * ddp_tagged_check() plus message tracking in |rx|: while a tagged message
 * is in progress its next segment must carry the same STag and the TO
 * right after the previous segment; anything else is an interleaved tagged
 * message and gives -EPROTO (no RFC 5041 §7 code names it; siw rejects it
 * the same way). Fills |*out| (offset = TO - base) and on L=1 reports the
 * message's total length. Returns 0 or a negative error (|rx| unchanged).
 */
int ddp_rx_tagged(struct ddp_rx *rx, const struct ddp_hdr *h, uint32_t len,
		  const struct ddp_tagged_buf *buf, struct ddp_rx_seg *out);

#endif /* IWARP_DDP_RX_H */
