/*
 * tools/decode/conn.h: internal state of one TCP connection inside the
 * decoder (decoder.c owns the table, follow.c the MPA state, rdmap_chk.c
 * the DDP/RDMAP checks). Not used outside tools/decode/.
 */
#ifndef IWARP_DECODE_CONN_H
#define IWARP_DECODE_CONN_H

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "decoder.h"
#include "fpdu.h"
#include "mpa/mpa_rr.h"
#include "stream.h"

/* Octets scanned for an MPA key before a direction is "not iWARP". */
#define DEC_SCAN_MAX 4096u
/* Octets held after the Request while the Reply is awaited. */
#define DEC_HOLD_MAX (1u << 20)
/* Findings held back while one unit is built (shown after its line). */
#define DEC_MAX_DEFERRED 16u
/* Findings printed per direction before the rest is only counted. */
#define DEC_MAX_REPORTED 25u

/* What one direction is doing. */
enum dec_half_state {
	HALF_START,  /* scanning the stream start for an MPA key */
	HALF_RR,     /* gathering the MPA Request/Reply frame */
	HALF_HOLD,   /* frame done; waiting for the peer's frame */
	HALF_FPDU,   /* full operation: FPDUs */
	HALF_DONE,   /* nothing more may come (rejected, Terminate sent) */
	HALF_IGNORE, /* not iWARP, or decoding abandoned */
};

/* An RDMA Read Request awaiting its Read Response (RFC 5040 §4.4, §5.2). */
struct dec_rreq {
	uint32_t sink_stag;
	uint64_t sink_to;
	uint32_t size;
	uint64_t off; /* stream offset of the request, for messages */
};

/* Untagged queue state (RFC 5041 §5.3): QN 0, 1, 2, and the RFC 7306 §8
 * queues 3 (Atomic Requests) and 4 (Atomic Responses). */
struct dec_uq {
	uint32_t next_msn; /* MSN the next message must carry (starts at 1) */
	bool in_msg;	   /* a message has segments without L yet */
	uint32_t msn;
	uint32_t mo; /* MO the next segment must carry */
	uint8_t opcode;
};

/* A tagged message in progress (RFC 5041 §5.2). */
struct dec_tq {
	bool in_msg;
	uint32_t stag;
	uint64_t to;  /* TO the next segment must carry */
	uint64_t len; /* octets so far */
};

#define DEC_NQN 5
/* Atomic Requests outstanding per direction that we keep track of. */
#define DEC_MAX_ATOMIC 64u
/* STags invalidated by Send with Invalidate remembered per direction. */
#define DEC_MAX_INV 64u

/* One direction of a connection. */
struct dec_half {
	enum dec_half_state state;
	struct dec_stream st;
	/* MPA key scan and Request/Reply frame */
	uint8_t *scan; /* DEC_SCAN_MAX octets */
	size_t scan_len;
	uint64_t scan_off; /* stream offset of scan[0] */
	uint8_t rr[MPA_RR_FRAME_MAX];
	size_t rr_len;
	uint64_t rr_off;
	bool have_frame;
	bool frame_valid; /* decoded without error */
	struct mpa_rr frame;
	/* data held until the peer's frame is known */
	uint8_t *hold;
	size_t hold_len;
	uint64_t hold_off;
	bool hold_early; /* data came before the Reply */
	/* full operation */
	struct dec_fpdu_rx fx;
	bool fx_init;
	bool crc, markers;
	bool sent_fpdu;
	bool sent_terminate;
	uint64_t nfpdus;
	struct dec_uq uq[DEC_NQN];
	struct dec_tq tq_write;
	struct dec_tq tq_rresp;
	struct dec_rreq *rreq; /* Read Requests this direction sent */
	size_t rreq_len, rreq_cap;
	bool rtr_checked; /* RFC 6581 RTR check done */
	/* RFC 7306 §5.2: Request Identifiers of this direction's Atomic
	 * Requests not answered yet */
	uint32_t atomic_id[DEC_MAX_ATOMIC];
	size_t natomic;
	bool atomic_overflow;
	/* STags this direction's Send with Invalidate named (the peer's
	 * memory, RFC 5040 §4.3): later tagged access the same way is odd */
	uint32_t inv_stag[DEC_MAX_INV];
	size_t ninv, inv_next;
	uint64_t messages[DEC_NOPCODES];
	uint64_t payload[DEC_NOPCODES];
	unsigned errors, warnings, reported;
	bool overflow_reported;
};

/* One TCP connection. */
struct dec_conn {
	struct dec_conn *next;
	struct dec_decoder *d;
	unsigned id;
	struct dec_endpoint ep[2]; /* [DEC_AB] = A, [DEC_BA] = B */
	struct dec_half h[2];
	uint64_t first_frame, last_frame;
	bool any_data;
	bool iwarp;    /* an MPA key was seen */
	int initiator; /* dir of the Request, -1 none yet */
	bool have_req, have_rep, rejected, established;
	bool crc, enhanced, p2p;
	uint8_t rtr; /* chosen RTR type (enum mpa_rtr) */
	unsigned errors, warnings;
	char end_note[96];
};

/* decoder.c: the frame number being fed. */
uint64_t dec_current_frame(const struct dec_decoder *d);

/*
 * decoder.c: a unit is being built: findings reported until the next
 * dec_emit_unit() are shown after the unit's line.
 */
void dec_unit_begin(struct dec_conn *c);

/* decoder.c: hands a unit to the sink (fills conn/frame), then the
 * findings held back since dec_unit_begin(). */
void dec_emit_unit(struct dec_conn *c, struct dec_unit *u);

/*
 * decoder.c: reports a finding on |c| (direction |dir| or -1, stream
 * offset |off| or UINT64_MAX) with a printf-style text; counts it.
 */
void dec_report(struct dec_conn *c, int dir, uint64_t off,
		enum dec_severity sev, const char *what, const char *fmt, ...)
	__attribute__((format(printf, 6, 7)));

/* follow.c: in-order stream data of direction |dir|. */
void dec_follow_data(struct dec_conn *c, int dir, uint64_t off,
		     const uint8_t *data, size_t len);

/* follow.c: end of capture for |c|: flush and judge how it ended. */
void dec_follow_finish(struct dec_conn *c);

/* follow.c: frees what the follower allocated in |c|. */
void dec_follow_release(struct dec_conn *c);

/* Whether either side of |c| sent a Terminate: the connection is being
 * torn down (RFC 5040 §5.4), so its streams may end anywhere. */
static inline bool dec_conn_terminated(const struct dec_conn *c)
{
	return c->h[0].sent_terminate || c->h[1].sent_terminate;
}

/* rdmap_chk.c: validates and describes one FPDU of direction |dir|. */
void dec_rdmap_fpdu(struct dec_conn *c, int dir, const struct dec_fpdu *f);

/* rdmap_chk.c: end-of-capture checks of DDP/RDMAP state of |dir|. */
void dec_rdmap_finish(struct dec_conn *c, int dir, bool closed);

#endif /* IWARP_DECODE_CONN_H */
