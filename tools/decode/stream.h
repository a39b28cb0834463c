/*
 * tools/decode/stream.h: one direction of a TCP connection, reassembled by
 * sequence number (RFC 9293 §3.4, §3.10.7.4).
 *
 * Segments may arrive retransmitted, overlapping or out of order; the
 * stream hands its consumer every octet exactly once, in order, with its
 * stream offset (0 = first octet after the SYN). Data that arrives ahead
 * of a hole is copied and kept until the hole fills. A hole that never
 * fills is visible after the capture through dec_stream_gap().
 * The first copy of an octet wins; later copies are only counted.
 */
#ifndef IWARP_DECODE_STREAM_H
#define IWARP_DECODE_STREAM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Upper bound of out-of-order data held per stream (octets). */
#define DEC_STREAM_MAX_OOO (64u << 20)

/* Receives in-order data: |len| octets at stream offset |off|. */
typedef void (*dec_stream_deliver_fn)(void *ctx, uint64_t off,
				      const uint8_t *data, size_t len);

struct dec_ooo;

struct dec_stream {
	bool started;	     /* |base| is known */
	bool syn;	     /* a SYN was seen: offset 0 is really the start */
	uint32_t base;	     /* sequence number of stream offset 0 */
	uint64_t next;	     /* next offset to deliver */
	struct dec_ooo *ooo; /* held segments, sorted by offset */
	size_t ooo_bytes;
	bool fin, rst;
	uint64_t fin_off;	  /* stream offset of the FIN */
	uint64_t end_off;	  /* highest offset + 1 seen in any segment */
	uint64_t retrans_bytes;	  /* octets seen again (first copy wins) */
	uint64_t ooo_segments;	  /* segments that arrived ahead of a hole */
	uint64_t truncated_bytes; /* octets cut by the capture's snap length */
	bool overflow; /* DEC_STREAM_MAX_OOO exceeded: data dropped */
};

/* Initialises |s| (no allocation). */
void dec_stream_init(struct dec_stream *s);

/*
 * Adds one segment: sequence number |seq|, TCP flags |flags| (DEC_TCP_*),
 * |len| captured payload octets at |data| of |wire_len| on the wire.
 * In-order octets go to |fn|(|ctx|, ...) before this returns, including any
 * held data the segment made contiguous. Returns 0, or -ENOMEM when held
 * data could not be stored (|overflow| is set, the data is dropped and
 * becomes a gap).
 */
int dec_stream_segment(struct dec_stream *s, uint32_t seq, uint8_t flags,
		       const uint8_t *data, size_t len, size_t wire_len,
		       dec_stream_deliver_fn fn, void *ctx);

/*
 * The first hole that never filled, if any: it starts at |*off| (== next),
 * is |*len| octets long, and |*after| octets were received beyond it (held
 * and never delivered). A FIN beyond |next| counts as a hole with
 * |*after| = 0. Returns true when there is a hole.
 */
bool dec_stream_gap(const struct dec_stream *s, uint64_t *off, uint64_t *len,
		    uint64_t *after);

/* Frees held data; |s| may be reinitialised afterwards. */
void dec_stream_release(struct dec_stream *s);

#endif /* IWARP_DECODE_STREAM_H */
