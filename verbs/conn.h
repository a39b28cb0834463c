/*
 * verbs/conn.h: the QP datapath ("qp_conn"), a sans-I/O connection object.
 *
 * A qp_conn runs one connected QP in full MPA operation (after the MPA
 * Request/Reply): it turns the QP's send WQEs and the Read Responses it owes
 * into FPDUs handed out as iovecs (headers from per-FPDU scratch, payload
 * straight from registered memory, no copy), and it consumes received stream
 * octets, placing payload in order straight into the target memory (the MR at
 * the tagged offset or the posted receive buffer) and generating completions.
 * It never touches sockets or io_uring: the owner (verbs/conn_engine.c over an
 * io/ep.h endpoint, or a test harness) drives it through the five endpoint
 * callbacks qp_conn_rx_iov / rx_done / tx_iov / tx_done / closed.
 *
 * Protocol (RFC 5040 RDMAP, RFC 5041 DDP, RFC 5044 MPA, RFC 6581):
 * - TX: Send (3), Send with SE (5), Send with Invalidate (4/6), RDMA Write
 *   (0), RDMA Read Request (1, QN 1), Read Response (2) and Terminate (7,
 *   QN 2). Each message is segmented (ddp_seg_next) to the largest ULPDU
 *   whose FPDU fits |fpdu_max| octets at the current stream position
 *   (markers included), then framed with mpa_tx_frame. A Send or Write WQE
 *   completes when all its octets were accepted by the transport (as siw);
 *   a Read WQE when its Read Response has fully arrived. Completions are in
 *   SQ order. At most |ord| Read Requests are outstanding (ORQ); IWARP_SEND_
 *   FENCE waits for prior Reads. Read Responses (IRQ, at most |ird|) are
 *   interleaved with SQ traffic at FPDU granularity, never inside a tagged
 *   (Write) message (RFC 5041 §5.1: tagged messages do not interleave).
 * - RX: bulk receive into a 1 MiB buffer parsed in place (mpa_rx bulk mode);
 *   large payloads are received straight into their destination
 *   (mpa_rx_payload_iov / mpa_rx_commit), with a bulk tail after them that
 *   catches the trailer and the next header in the same receive. While
 *   large FPDUs arrive, bulk receives are bounded to reach just past the
 *   next header, so that their payload is never copied twice. Every header
 *   is validated before any payload of its segment is placed; a violation
 *   is reported after the FPDU's CRC was verified (a corrupted FPDU is a
 *   CRC error, not a protocol error), and nothing of a failed message is
 *   completed.
 * - Errors: a protocol violation by the peer sends a TERMINATE with the
 *   RFC's cause (iwarp_error_to_term) and the offending DDP header attached,
 *   then the stream is shut down, the QP moves to ERR (qp_set_error: flush,
 *   async event) and on_close runs. A received TERMINATE fails the Read it
 *   answers (IWARP_WC_REM_ACCESS_ERR / IWARP_WC_REM_OP_ERR) and does the same
 *   without answering. Connection loss flushes and runs on_close.
 * - RFC 6581 P2P: the initiator's first FPDU is the negotiated zero-length
 *   RTR (Write: STag 1 TO 0; Read: sink STag 1, size 0, one ORQ slot; Send);
 *   the responder transmits nothing before the first inbound FPDU (also in
 *   client-server mode, where the active side sends first, RFC 5044 §7.1).
 *
 * Threads: every qp_conn_* call happens on one thread (the engine thread).
 * Only the SQ/RQ rings and the QP state are shared with application threads,
 * through the rules of verbs/verbs.h.
 *
 * Call order for the CM (after the MPA exchange succeeded):
 *   conn = qp_conn_create(qp, &neg_result, initiator, fpdu_max, on_close, arg);
 *   qp_conn_rx_prefill(conn, bytes_after_reply, n);     (if any)
 *   qp_conn_attach_ep(conn, ep, carry, carry_len);     (engine glue; or drive
 *                                                       the five callbacks)
 *   ... on_close(arg, err, cause) runs once when the connection is over ...
 *   qp_conn_destroy(conn);                             (closes the endpoint)
 */
#ifndef IWARP_VERBS_CONN_H
#define IWARP_VERBS_CONN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/uio.h>

#include "ddp/ddp_rx.h"
#include "ddp/ddp_segment.h"
#include "iwarp/iwarp.h"
#include "mpa/mpa_negotiate.h"
#include "mpa/mpa_rx.h"
#include "mpa/mpa_tx.h"
#include "rdmap/rdmap_rreq.h"
#include "rdmap/rdmap_term.h"
#include "verbs/verbs.h"

struct endpoint;

/* Tunables. */
#define CONN_RX_BUF (1u << 20)  /* bulk receive buffer, one per conn */
#define CONN_DP_MIN 4096u       /* receive payload at least this long in place */
#define CONN_DP_BIG 16384u      /* "large FPDU" payload: stream them in place */
#define CONN_RX_LOOKAHEAD 512u  /* bulk octets read after/between large FPDUs */
#define CONN_RX_BIG_CREDIT 8u   /* small FPDUs after a large one still bounded */
#define CONN_TX_SLOTS 128u      /* FPDUs framed ahead (power of two) */
#define CONN_SLOT_IOV 40u       /* iovecs of one framed FPDU */
#define CONN_MARKER_FPDU 4096u  /* FPDU cap with markers (bounds the iovecs) */
#define CONN_FPDU_DEFAULT 1448u /* fpdu_max 0 and no MSS known */
#define CONN_TERM_BODY (RDMAP_TERM_MAX_LEN - DDP_UNTAGGED_HDR_LEN) /* 52 */
/* How long a queued TERMINATE may wait for TCP to take it (a peer that
 * stopped reading) before the QP goes to ERR without it. */
#define CONN_TERM_LINGER_MS 1000u

/*
 * Called once when the connection is over, after the QP moved to ERR (all
 * WQEs completed or flushed). |err|: 0 for an orderly end (peer EOF, local
 * disconnect), else the reason (-errno of the transport, or an enum
 * iwarp_error; -ECONNABORTED when a TERMINATE ended it, see |cause|).
 * |cause|: the TERMINATE sent or received (qp->term_received tells
 * which), NULL if none. The callee may call qp_conn_destroy() later, not
 * from inside the callback.
 */
typedef void (*qp_conn_close_fn)(void *arg, int err,
				 const struct iwarp_term_cause *cause);

/* Requests from the sans-I/O core to its driver (any may be NULL). */
struct qp_conn_io {
	/* tx_iov has something to offer now (after a doorbell or a receive). */
	void (*kick_tx)(void *io_arg);
	/* send FIN once everything offered was sent (after a TERMINATE). */
	void (*shutdown)(void *io_arg);
	/* a TERMINATE is queued: call qp_conn_term_expired after
	 * CONN_TERM_LINGER_MS unless the connection ended before (optional). */
	void (*term_queued)(void *io_arg);
};

/* Connection state. */
enum conn_state {
	CONN_RUN,       /* full operation */
	CONN_TERM,      /* TERMINATE queued/being sent; input discarded */
	CONN_CLOSED,    /* over: QP in ERR, on_close ran (or detached) */
};

/* One FPDU framed for transmission. */
struct conn_slot {
	struct mpa_tx_scratch s;    /* length field, markers, pad, CRC */
	uint8_t ulp[RDMAP_TERM_MAX_LEN]; /* DDP/RDMAP header (Terminate: all) */
	struct iovec iov[CONN_SLOT_IOV];
	uint32_t niov;
	size_t wire_len;
	uint64_t pos;               /* mpa_tx.pos before this FPDU */
	uint32_t sq_done;           /* SQ index + 1 sent with it, if has_sq */
	bool has_sq;
	bool is_term;
};

/* Outstanding Read Request we sent (requester side, RFC 5040 §5.2). */
struct conn_orq {
	uint32_t sq_idx;   /* its WQE (if in_sq) */
	bool in_sq;        /* false for the RFC 6581 Read RTR */
	uint32_t sink_stag;
	uint64_t sink_to;
	uint32_t size;
	uint32_t got;      /* Read Response octets received */
};

/* Inbound Read Request to answer (responder side). */
struct conn_irq {
	struct rdmap_rreq rr;
	const uint8_t *src; /* validated source (size > 0) */
};

/* What the FPDU being received is. */
enum conn_rx_kind {
	RXK_NONE,
	RXK_DISCARD,   /* error pending: payload dropped */
	RXK_WRITE,     /* RDMA Write segment */
	RXK_RRESP,     /* Read Response segment */
	RXK_SEND,      /* Send-family segment into the RQE */
	RXK_SEND_RTR,  /* RFC 6581 zero-length Send RTR */
	RXK_RREQ,      /* Read Request */
	RXK_TERM,      /* Terminate */
};

/* The FPDU being received. */
struct conn_rx_cur {
	enum conn_rx_kind kind;
	int err;                  /* deferred protocol error (after CRC) */
	uint16_t ulpdu_len;
	uint32_t pay_len;         /* payload octets in this segment */
	uint32_t placed;          /* of them, placed so far */
	struct ddp_hdr h;
	uint8_t hdr[RDMAP_RREQ_MSG_LEN]; /* raw header octets (for TERMINATE) */
	size_t hdr_len;
	struct ddp_rx_seg seg;    /* where it goes, whether it completes */
	uint8_t *dst;             /* tagged: first payload octet's target */
	struct rdmap_rreq rr;     /* RXK_RREQ */
	const uint8_t *src;       /* RXK_RREQ: validated source */
	enum iwarp_wc_status rqe_status; /* status for the RQE on error */
};

/* The QP datapath of one connection. */
struct qp_conn {
	struct iw_qp *qp;          /* NULL once detached */
	struct iwarp_context *ctx;
	const struct iwarp_pd *pd;
	enum conn_state state;
	qp_conn_close_fn on_close;
	void *close_arg;
	const struct qp_conn_io *io;
	void *io_arg;
	struct endpoint *ep;       /* conn_engine.c */
	void *glue;                /* conn_engine.c private */
	void (*glue_free)(struct qp_conn *conn); /* closes ep, frees glue */

	/* negotiated */
	bool initiator;
	bool p2p;
	enum mpa_rtr rtr;
	uint32_t ird, ord;
	size_t fpdu_max;

	/* failure */
	struct iwarp_term_cause cause;
	bool cause_valid;
	int close_err;

	/* ---- transmit ---- */
	struct mpa_tx mtx;
	struct ddp_tx_queues txq;
	bool tx_enabled;           /* responder: first FPDU received */
	bool rtr_pending;          /* P2P initiator: RTR still to frame */
	bool tx_busy;              /* a tx_iov set is outstanding */
	bool drop_unsent;          /* drop framed FPDUs not yet accepted */
	bool term_framed;
	struct rdmap_term term;    /* the TERMINATE we send */
	struct conn_slot *slots;   /* CONN_TX_SLOTS */
	uint32_t slot_head, slot_tail; /* [head, tail) framed, head oldest */
	size_t head_off;           /* octets of the head slot already sent */
	/* the SQ message in progress */
	bool sq_active;
	uint32_t sq_idx;
	struct ddp_seg_iter sq_it;
	uint32_t sq_sent;          /* WQEs before this are handed to TCP */
	bool loc_err;              /* a WQE failed a local check */
	uint32_t loc_err_idx;
	enum iwarp_wc_status loc_err_status;
	/* the Read Response in progress */
	bool rs_active;
	struct ddp_seg_iter rs_it;
	/* ORQ / IRQ rings (sizes are powers of two >= ord / ird) */
	struct conn_orq *orq;
	uint32_t orq_size, orq_head, orq_tail;
	struct conn_irq *irq;
	uint32_t irq_size, irq_head, irq_tail;

	/* ---- receive ---- */
	struct mpa_rx mrx;
	struct ddp_rx drx;
	uint8_t *rxbuf;            /* CONN_RX_BUF */
	bool dp_active;            /* last rx_iov was a direct placement */
	size_t dp_len;             /* its placement octets (a bulk tail follows) */
	uint32_t rx_big;           /* credit: large FPDUs seen lately (bounds
				      bulk reads to reach their headers) */
	size_t rx_req;             /* octets the last rx_iov set asked for */
	bool rx_behind;            /* it was filled: data is queued, so read
				      the whole bulk buffer (fewer receives) */
	bool first_rx;             /* an FPDU was received */
	struct conn_rx_cur cur;
	bool have_rqe;             /* a receive WQE bound to the Send in progress */
	struct iw_rqe rqe;
	uint8_t term_buf[RDMAP_TERM_MAX_LEN];
};

/*
 * Creates the datapath for |qp| with the negotiated parameters |neg| (crc,
 * markers_tx/markers_rx, ird/ord, p2p/rtr), |initiator| true on the active
 * side. |fpdu_max|: largest FPDU on the wire (0: CONN_FPDU_DEFAULT; the
 * engine glue passes the TCP MSS). Moves the QP to RTS and sets qp->conn,
 * qp->ird/ord. |on_close| runs once when the connection is over.
 * Returns NULL with errno (ENOMEM, EINVAL: bad arguments, EBUSY: the QP
 * already has a conn or is not in INIT/RTR/RTS).
 */
struct qp_conn *qp_conn_create(struct iw_qp *qp,
			       const struct mpa_neg_result *neg,
			       bool initiator, size_t fpdu_max,
			       qp_conn_close_fn on_close, void *arg);

/*
 * Frees |conn| (detaches it from the QP first if still attached, closing
 * the endpoint if conn_engine attached one). Does not run on_close.
 * A QP still attached moves to ERR (flushed, no async event).
 */
void qp_conn_destroy(struct qp_conn *conn);

/* Sets the driver requests (kick_tx, shutdown); |io| must outlive conn. */
void qp_conn_set_io(struct qp_conn *conn, const struct qp_conn_io *io,
		    void *io_arg);

/*
 * Hands over |len| octets the CM received after the MPA Request/Reply
 * (the start of the FPDU stream); processed at once, as if received.
 * Returns 0, or -EPIPE when the connection is already over.
 */
int qp_conn_rx_prefill(struct qp_conn *conn, const void *buf, size_t len);

/* ---- the five endpoint callbacks (io/ep.h struct ep_ops semantics) ---- */

/* Where the next received octets go: up to |cap| iovecs; 0 = pause. */
int qp_conn_rx_iov(struct qp_conn *conn, struct iovec *iov, int cap);
/* |n| octets landed at the start of the last rx_iov set. */
void qp_conn_rx_done(struct qp_conn *conn, size_t n);
/* FPDU octets to send now: up to |cap| iovecs; 0 = nothing. */
int qp_conn_tx_iov(struct qp_conn *conn, struct iovec *iov, int cap);
/* The first |n| octets of the last tx_iov set were accepted by TCP. */
void qp_conn_tx_done(struct qp_conn *conn, size_t n);
/* The stream ended: EOF (0) or -errno. */
void qp_conn_closed(struct qp_conn *conn, int err);

/* ---- application-driven events (engine thread) ---- */

/* Doorbell: new send WQEs were posted. */
void qp_conn_sq_kick(struct qp_conn *conn);

/*
 * The application moved the QP to |state| (ERR, SQD or RESET): ERR ends
 * the connection (orderly FIN after what was already offered, on_close
 * with 0); SQD stops starting new WQEs; RESET detaches (after it returns
 * the conn no longer touches the QP).
 */
void qp_conn_app_state(struct qp_conn *conn, enum iwarp_qp_state state);

/*
 * The TERMINATE queued CONN_TERM_LINGER_MS ago has still not been taken by
 * TCP (the peer does not read): end the connection without it, as when the
 * stream is lost (QP to ERR, WRs flushed, on_close). No-op otherwise.
 */
void qp_conn_term_expired(struct qp_conn *conn);

/* True when tx_iov would offer octets (diagnostics, drivers). */
bool qp_conn_tx_pending(const struct qp_conn *conn);
/* Responder: transmit before the initiator's first FPDU arrived (the CM's
 * responder_tx_wait_ms expired; RFC 5044 §7.1 relaxed on request). */
void qp_conn_tx_open(struct qp_conn *conn);

/*
 * Engine glue (verbs/conn_engine.c): makes |conn| the owner of endpoint
 * |ep| (ep_set_owner with |carry|, the octets the CM received past the MPA
 * Reply), uses ep_mss for fpdu_max when it was 0 at create. Engine thread.
 * Returns 0 or the error of ep_set_owner.
 */
int qp_conn_attach_ep(struct qp_conn *conn, struct endpoint *ep,
		      const void *carry, size_t len);


/* ---- internal to verbs/conn_*.c ---- */

/*
 * Fails the connection with protocol error |err| detected locally: queues
 * a TERMINATE with its cause (iwarp_error_to_term; unmapped errors give
 * RDMAP/RemoteOp/unspecified) and, when |attach|, the DDP header of the
 * segment being received (plus its Read Request header for RDMAP errors in
 * a Read Request). The QP moves to ERR once the TERMINATE was sent.
 */
void conn_fail(struct qp_conn *conn, int err, bool attach);

/*
 * Fails the connection with cause |cause| (a local error, no header).
 */
void conn_fail_cause(struct qp_conn *conn, const struct iwarp_term_cause *c);

/*
 * Ends the connection now: completes what is done, moves the QP to ERR
 * (flush; async event when |async|), asks the driver to shut down, runs
 * on_close(err, cause). Idempotent.
 */
void conn_finish(struct qp_conn *conn, int err, bool async);

/* The TERMINATE received from the peer (decoded): fail as RFC 5040 §5.4. */
void conn_term_received(struct qp_conn *conn, const struct rdmap_term *t);

/* Completes the SQ prefix that is done (sent, and Reads answered). */
void conn_sq_progress(struct qp_conn *conn);

/* Completes the oldest SQ WQE with error |status| and |vendor_err|. */
void conn_sq_fail_one(struct qp_conn *conn, enum iwarp_wc_status status,
		      uint32_t vendor_err);

/* Pushes a receive completion for the bound RQE and releases it. */
void conn_rqe_complete(struct qp_conn *conn, enum iwarp_wc_status status,
		       uint32_t byte_len, unsigned int wc_flags,
		       uint32_t inv_rkey, bool solicited);

/*
 * Drops framed FPDUs the transport has not taken yet (keeps a partially
 * sent one, rewinds the MPA stream position), after a failure.
 */
void conn_tx_drop_unsent(struct qp_conn *conn);

/* Asks the driver for a tx_iov call (kick_tx) if anything is pending. */
void conn_tx_kick(struct qp_conn *conn);

/* vendor_err encoding of a TERMINATE cause: layer << 16 | etype << 8 | ecode. */
static inline uint32_t conn_vendor_err(const struct iwarp_term_cause *c)
{
	return (uint32_t)c->layer << 16 | (uint32_t)c->etype << 8 | c->ecode;
}

#endif /* IWARP_VERBS_CONN_H */
