/*
 * ddp/ddp_segment.h: DDP transmit side (RFC 5041 §5.1, §5.3): per-queue
 * MSN allocation and segmentation of one DDP message into DDP segments
 * that each fit the MULPDU the MPA layer allows at that stream position.
 *
 * Usage: ddp_seg_init_tagged() or ddp_seg_init_untagged(), then
 * ddp_seg_next(&it, mulpdu, &seg) while it returns 1; each segment is sent
 * as seg.hdr_bytes[0, seg.hdr_len) followed by the message payload
 * [seg.offset, seg.offset + seg.len). The MULPDU may differ per call
 * (markers make it position-dependent, RFC 5044 §5.1).
 */
#ifndef IWARP_DDP_SEGMENT_H
#define IWARP_DDP_SEGMENT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ddp/ddp_hdr.h"

/* Untagged queues RDMAP uses: QN 0, 1, 2 (RFC 5040 §5.1), and QN 3, 4 of
 * the RFC 7306 atomics (RDMAP accepts those only when negotiated). */
#define DDP_NUM_QN 5
/* First MSN of every queue and direction (RFC 5041 §5.3). */
#define DDP_MSN_FIRST 1u
/* A DDP segment is at most 65535 octets: MPA's ULPDU_Length is 16 bits
 * (RFC 5044 §4.1). */
#define DDP_MAX_ULPDU 65535u

/* Next MSN to send on each untagged queue, for one direction of a stream. */
struct ddp_tx_queues {
	uint32_t next_msn[DDP_NUM_QN];
};

/* Sets the next MSN of every queue in |q| to 1 (RFC 5041 §5.3). */
void ddp_tx_queues_init(struct ddp_tx_queues *q);

/*
 * Allocates the MSN of a new message on queue |qn| of |q| into |*msn|;
 * MSNs increase by one per message, modulo 2^32 (RFC 5041 §5.3).
 * Returns 0, or IWARP_ERR_DDP_QN if |qn| is not 0..4.
 */
int ddp_tx_msn_alloc(struct ddp_tx_queues *q, uint32_t qn, uint32_t *msn);

/* Segmentation state of one message; fields are private to ddp_segment.c. */
struct ddp_seg_iter {
	struct ddp_hdr hdr; /* template: T, DV, RV, opcode, STag or QN/MSN */
	uint64_t to0;	    /* tagged: TO of the first payload octet */
	uint32_t total;	    /* payload length of the message */
	uint32_t done;	    /* payload octets already segmented */
	bool finished;	    /* the segment with L=1 has been produced */
};

/* One DDP segment produced by ddp_seg_next(). */
struct ddp_seg {
	struct ddp_hdr hdr;			 /* decoded form of hdr_bytes */
	uint8_t hdr_bytes[DDP_UNTAGGED_HDR_LEN]; /* wire header */
	size_t hdr_len;				 /* 14 tagged, 18 untagged */
	uint32_t offset; /* offset of this payload within the message */
	uint32_t len; /* payload octets in this segment (ULPDU = hdr + len) */
};

/*
 * Starts segmenting a tagged message (RDMA Write, Read Response: RFC 5040
 * §4.2) of |len| payload octets with RDMAP |opcode| to |stag| starting at
 * tagged offset |to|. DV and RV are 1, reserved fields zero (RFC 5041
 * §4.2, RFC 5040 §4.1). |len| may be 0 (one segment, L=1, no payload).
 * Returns 0, -EINVAL if |opcode| > 15, or IWARP_ERR_DDP_TO_WRAP if
 * |to| + |len| exceeds 2^64 (RFC 5041 §7).
 */
int ddp_seg_init_tagged(struct ddp_seg_iter *it, uint8_t opcode, uint32_t stag,
			uint64_t to, uint32_t len);

/*
 * Starts segmenting an untagged message of |len| payload octets with RDMAP
 * |opcode| on queue |qn| with message number |msn| (from
 * ddp_tx_msn_alloc()); MO starts at 0 (RFC 5041 §4.4). |rsvdulp| is the
 * RsvdULP word (Invalidate STag for Send with Invalidate, RFC 5040 §4.1;
 * otherwise 0). |len| may be 0 (one segment, L=1, no payload).
 * Returns 0, -EINVAL if |opcode| > 15, or IWARP_ERR_DDP_QN if |qn| > 4.
 */
int ddp_seg_init_untagged(struct ddp_seg_iter *it, uint8_t opcode, uint32_t qn,
			  uint32_t msn, uint32_t rsvdulp, uint32_t len);

/*
 * Produces the next segment of |it| into |*seg|, whose ULPDU (header +
 * payload) is at most |mulpdu| octets (clamped to DDP_MAX_ULPDU). The
 * header counts against |mulpdu|. L is set only on the last segment; TO
 * (tagged) or MO (untagged) advances by the payload already sent (RFC 5041
 * §5.1, §4.3, §4.4).
 * Returns 1 when a segment was produced, 0 when the message is complete
 * (nothing produced), or -EINVAL when |mulpdu| leaves no room for payload
 * while payload remains (|mulpdu| <= header length; a zero-length message
 * needs |mulpdu| >= header length).
 */
int ddp_seg_next(struct ddp_seg_iter *it, size_t mulpdu, struct ddp_seg *seg);

/* True once the segment with L=1 has been produced. */
static inline bool ddp_seg_done(const struct ddp_seg_iter *it)
{
	return it->finished;
}

#endif /* IWARP_DDP_SEGMENT_H */
