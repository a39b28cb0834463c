/*
 * tools/decode/decoder.h: the iwarp_decode engine, independent of pcap.
 *
 * A decoder is fed TCP segments in capture order (dec_seg: endpoints, seq,
 * flags, payload). It tracks every TCP connection, reassembles each
 * direction by sequence number (stream.h), recognises MPA connections by
 * the Request/Reply keys (RFC 5044 §7.1) and validates MPA, DDP and RDMAP
 * (follow.h). What it finds goes to a dec_sink: one dec_unit per MPA
 * Request/Reply/FPDU, one dec_finding per error or warning, and one
 * dec_conn_info per connection at dec_decoder_finish().
 *
 * It does no I/O and needs no pcap: a fuzz target can build dec_segs from
 * arbitrary bytes and feed them.
 */
#ifndef IWARP_DECODE_DECODER_H
#define IWARP_DECODE_DECODER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* TCP flags as in the TCP header (RFC 9293 §3.1). */
#define DEC_TCP_FIN 0x01
#define DEC_TCP_SYN 0x02
#define DEC_TCP_RST 0x04
#define DEC_TCP_ACK 0x10

/* An IPv4 (family 4, addr[0..3]) or IPv6 (family 6) endpoint. */
struct dec_endpoint {
	uint8_t family;
	uint8_t addr[16];
	uint16_t port;
};

/* One TCP segment as captured. */
struct dec_seg {
	struct dec_endpoint src;
	struct dec_endpoint dst;
	uint32_t seq;
	uint8_t flags; /* DEC_TCP_* */
	const uint8_t *payload;
	size_t len;	 /* captured payload octets */
	size_t wire_len; /* payload octets on the wire (>= len) */
	uint64_t frame;	 /* 1-based frame number in the capture */
	double ts;	 /* seconds since the epoch */
};

/* Direction inside a connection: A is the side seen first (normally the SYN
 * sender). */
enum dec_dir {
	DEC_AB = 0,
	DEC_BA = 1,
};

/* What a dec_unit describes. */
enum dec_unit_kind {
	DEC_UNIT_MPA_REQ,
	DEC_UNIT_MPA_REP,
	DEC_UNIT_FPDU,
};

/* One decoded MPA Request/Reply or FPDU (with its DDP segment and RDMAP
 * message). */
struct dec_unit {
	unsigned conn; /* 1-based connection number */
	enum dec_dir dir;
	uint64_t off;	/* stream offset of the unit's first octet */
	uint64_t frame; /* frame that completed the unit */
	enum dec_unit_kind kind;
	/* MPA Request/Reply */
	uint8_t rr_flags, rr_rev;
	uint16_t pd_len;
	bool enhanced;
	bool have_ird_ord;
	uint16_t ird, ord; /* raw 16-bit words incl. control bits */
	/* FPDU */
	uint16_t ulpdu_len;
	bool ddp_valid; /* DDP header decoded */
	bool tagged, last;
	uint8_t opcode;
	uint32_t stag, qn, msn, mo, inv_stag;
	uint64_t to;
	uint32_t payload_len; /* ULPDU octets after the DDP header */
	int crc;	      /* 1 ok, 0 bad, -1 not checked */
	unsigned markers;     /* markers inside this FPDU */
	char text[320];	      /* the summary line body */
};

/* Severity of a dec_finding. */
enum dec_severity {
	DEC_ERROR,   /* the traffic is invalid: exit status 1 */
	DEC_WARNING, /* worth knowing, not a protocol violation */
};

/* An error or warning. */
struct dec_finding {
	unsigned conn;	/* 0: not tied to a connection */
	int dir;	/* enum dec_dir, or -1 for the connection */
	uint64_t off;	/* stream offset, or UINT64_MAX when none */
	uint64_t frame; /* frame number, 0 when unknown */
	enum dec_severity severity;
	const char *what; /* short category: "crc", "mpa-reject", "gap", ... */
	char text[320];
};

/* Connection classification for the summary. */
enum dec_conn_kind {
	DEC_CONN_IWARP,	    /* an MPA Request was found */
	DEC_CONN_NOT_IWARP, /* TCP payload, but no MPA Request */
	DEC_CONN_NO_DATA,   /* no TCP payload at all */
};

/* RDMAP opcodes counted per direction (RFC 5040 §4.3 and RFC 7306: 0..15). */
#define DEC_NOPCODES 16

/* Per-direction summary. */
struct dec_dir_info {
	uint64_t bytes; /* in-order stream octets */
	uint64_t fpdus;
	uint64_t messages[DEC_NOPCODES]; /* complete messages (L=1) by opcode */
	uint64_t payload[DEC_NOPCODES];	 /* DDP payload octets by opcode */
	uint64_t retrans_bytes;		 /* octets received more than once */
	uint64_t ooo_segments; /* segments that arrived ahead of a hole */
	bool syn, fin, rst;
	bool crc, markers; /* negotiated for this direction */
	unsigned errors;
};

/* Per-connection summary, passed to the sink at the end. */
struct dec_conn_info {
	unsigned conn;
	struct dec_endpoint a, b;
	enum dec_conn_kind kind;
	uint64_t first_frame, last_frame;
	bool have_req, have_rep, rejected, established;
	int initiator; /* enum dec_dir of the Request sender, -1 if none */
	uint8_t req_flags, req_rev, rep_flags, rep_rev;
	bool enhanced; /* RFC 6581 enhanced mode in use */
	uint16_t req_ird, req_ord, rep_ird, rep_ord; /* raw words */
	bool crc;
	struct dec_dir_info dir[2];
	unsigned errors, warnings;
	char state[96]; /* how it ended, e.g. "closed (FIN both ways)" */
};

/* Where a decoder reports. Any callback may be NULL. */
struct dec_sink {
	void *ctx;
	void (*unit)(void *ctx, const struct dec_unit *u);
	void (*finding)(void *ctx, const struct dec_finding *f);
	void (*conn)(void *ctx, const struct dec_conn_info *c);
};

struct dec_decoder;

/*
 * Creates a decoder reporting to |sink| (copied). Returns NULL with errno
 * ENOMEM.
 */
struct dec_decoder *dec_decoder_new(const struct dec_sink *sink);

/* Frees |d| and every connection; NULL is a no-op. */
void dec_decoder_free(struct dec_decoder *d);

/*
 * Feeds one segment. Returns 0, or -ENOMEM (the decoder stays usable but
 * the affected stream is abandoned and reported).
 */
int dec_decoder_feed(struct dec_decoder *d, const struct dec_seg *seg);

/*
 * Convenience for tests and fuzz targets: feeds |len| octets at |data| as
 * a segment of the single connection between A = 10.0.0.1:40000 and
 * B = 10.0.0.2:4791, in direction |dir| (enum dec_dir), with sequence
 * number |seq| and TCP flags |flags|. Frame numbers count up by one per
 * call. Returns as dec_decoder_feed().
 */
int dec_decoder_feed_dir(struct dec_decoder *d, int dir, uint32_t seq,
			 uint8_t flags, const uint8_t *data, size_t len);

/*
 * Reports a problem found outside the decoder (e.g. an IP fragment, an
 * unsupported link type) as a finding not tied to a connection.
 */
void dec_decoder_note(struct dec_decoder *d, enum dec_severity sev,
		      const char *what, uint64_t frame, const char *text);

/*
 * End of capture: flushes every stream (gaps that never filled, FPDUs cut
 * by the end of the capture), emits the per-connection summaries in
 * connection order. Call once, before dec_decoder_free().
 */
void dec_decoder_finish(struct dec_decoder *d);

/*
 * Whether a well-formed Terminate counts as an error (default: a warning).
 * A Terminate is how a conforming peer reports a violation it saw; the
 * capture itself stays valid iWARP unless the Terminate is malformed or the
 * violation is visible on the wire (then that finding is an error anyway).
 */
void dec_decoder_set_terminate_error(struct dec_decoder *d, bool on);
bool dec_decoder_terminate_error(const struct dec_decoder *d);

/* Totals after dec_decoder_finish(). */
unsigned dec_decoder_errors(const struct dec_decoder *d);
unsigned dec_decoder_warnings(const struct dec_decoder *d);
unsigned dec_decoder_connections(const struct dec_decoder *d);

/* "A->B" / "B->A". */
const char *dec_dir_name(int dir);

/* Formats |ep| as "1.2.3.4:80" or "[::1]:80" into |buf|; returns |buf|. */
char *dec_endpoint_format(const struct dec_endpoint *ep, char *buf, size_t len);

#endif /* IWARP_DECODE_DECODER_H */
