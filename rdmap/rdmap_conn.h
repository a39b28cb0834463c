/*
 * rdmap/rdmap_conn.h: the per-connection RDMAP engine, sans-I/O.
 *
 * An rdmap_conn runs one connection in full MPA operation (after the MPA
 * Request/Reply): it turns the owner's send WQEs and the Read Responses it
 * owes into FPDUs handed out as iovecs (headers from per-FPDU scratch,
 * payload straight from registered memory, no copy), and it consumes
 * received stream octets, placing payload in order straight into the
 * target memory (the region at the tagged offset, or the receive WQE at
 * the message offset) and reporting completions. It never touches sockets,
 * io_uring, clocks or the verbs objects: it reaches memory, queues,
 * completions and its driver only through struct rdmap_ops, supplied by
 * its owner (verbs/qp_conn.c binds a QP to it; tests use fake ops).
 *
 * Reading order for a newcomer: this header; rdmap_conn_rx.c (the receive
 * state machine: deframe, dispatch by the opcode table, place, complete);
 * rdmap_conn_tx.c (WQEs, Read Responses and the TERMINATE to FPDUs);
 * rdmap_conn_term.c (failing a connection, a received TERMINATE);
 * rdmap_conn.c (lifetime, completions, the move to ERR).
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
 *   (Write) message (RFC 5041 §5.1), and in bounded bursts
 *   (RDMAP_CONN_RESP_BURST FPDUs) so that inbound Read Requests cannot
 *   starve the send queue.
 * - RX: bulk receive into a 1 MiB buffer parsed in place (mpa_rx bulk mode;
 *   the owner may provide that memory per receive, so that connections
 *   share it: nothing stays in it from one receive to the next);
 *   large payloads are received straight into their destination
 *   (mpa_rx_payload_iov / mpa_rx_commit), with a bulk tail after them that
 *   catches the trailer and the next header in the same receive. A
 *   connection whose bounded receive came back full is behind and reads
 *   the whole buffer instead (fewer receives, one more copy), unless the
 *   owner says other connections are receiving on the same CPU
 *   (rdmap_conn_set_rx_shared). Every
 *   header is validated before any payload of its segment is placed; a
 *   violation is reported after the FPDU's CRC was verified (a corrupted
 *   FPDU is a CRC error, not a protocol error), and nothing of a failed
 *   message is completed successfully.
 * - Memory: every region the engine places into or reads from is held by a
 *   reference (ops->mem_get / mem_put) for as long as the engine or a
 *   transport operation it started may touch it; rdmap_conn_mem_revoke
 *   asks the engine to let go of a region being deregistered.
 * - Errors: a protocol violation by the peer sends a TERMINATE with the
 *   RFC's cause and the offending DDP header attached, then the stream is
 *   shut down and the owner moves the QP to ERR (ops->set_error). A
 *   received TERMINATE fails the WR it names with the matching remote
 *   status. Connection loss flushes.
 * - RFC 6581 P2P: the initiator's first FPDU is the negotiated zero-length
 *   RTR (Write: STag 1 TO 0; Read: sink STag 1, size 0, one ORQ slot; Send);
 *   the responder transmits nothing before the first inbound FPDU (also in
 *   client-server mode, where the active side sends first, RFC 5044 §7.1).
 *
 * - RFC 7306 (only with cfg.rdmap_ext, negotiated by both sides; else its
 *   opcodes are refused on receive, RDMAP/RemoteOp/0x06, and never sent):
 *   Immediate Data (8/9, QN 0) consumes a receive WQE and completes it
 *   with the immediate value; RDMA Write with Immediate is a Write followed
 *   by an Immediate Data message. An Atomic Request (0xA, QN 3) takes an
 *   ORD credit like a Read; the responder queues it in the IRQ (IRD) and
 *   executes it when it reaches the IRQ head, so responses (Read and
 *   Atomic) leave in request order, then sends the Atomic Response (0xB,
 *   QN 4) whose original value completes the requester's WQE.
 *
 * Threads: every rdmap_conn_* call happens on one thread (the owner's
 * engine thread); ops are called on that thread.
 */
#ifndef IWARP_RDMAP_RDMAP_CONN_H
#define IWARP_RDMAP_RDMAP_CONN_H

#include <stdatomic.h>
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
#include "rdmap/rdmap_ext.h"
#include "rdmap/rdmap_rreq.h"
#include "rdmap/rdmap_term.h"
#include "rdmap/rdmap_wr.h"

/* Tunables. */
#define RDMAP_CONN_RX_BUF (1u << 20) /* bulk receive buffer, one per conn */
#define RDMAP_CONN_DP_MIN                                                      \
	4096u /* receive payload at least this long in place */
#define RDMAP_CONN_DP_BIG                                                      \
	16384u /* "large FPDU" payload: stream them in place */
#define RDMAP_CONN_RX_LOOKAHEAD                                                \
	512u /* bulk octets read after/between large FPDUs */
#define RDMAP_CONN_RX_BIG_CREDIT                                               \
	8u /* small FPDUs after a large one still bounded */
#define RDMAP_CONN_RX_UNTAGGED_CREDIT                                          \
	64u /* tagged FPDUs after an untagged one until it is "lately" */
#define RDMAP_CONN_TX_SLOTS 128u /* FPDUs framed ahead (power of two) */
/*
 * A connection uses only this many slots (and 8 iovecs each) while its
 * FPDUs are large: 32 full-size FPDUs are about 2 MiB framed ahead, more
 * than one sendmsg of a streaming socket takes, and a thousand streaming
 * connections then touch 5 pages of rings each instead of 13 (page
 * faults on the engine thread). It uses all RDMAP_CONN_TX_SLOTS once the
 * slots ran out while the FPDUs framed averaged fewer than
 * RDMAP_CONN_TX_SMALL_FPDU octets (small messages: one sendmsg should
 * carry many of them), and goes back when they averaged more; the size
 * changes only when everything framed was sent.
 */
#define RDMAP_CONN_TX_SLOTS_FEW	 32u
#define RDMAP_CONN_TX_SMALL_FPDU 8192u
/*
 * iovecs of the framed FPDUs, shared by the slots as a ring (a power of
 * two: its units run free through 2^32): each FPDU takes what it needs.
 * Without markers an FPDU of one payload piece takes 3 (length field and
 * header | payload | pad and CRC), so 8 per slot keep every slot usable.
 * Sized at creation: a streaming connection touches all of its ring, and
 * with thousands of them its first pass is page faults (64 KiB Writes on
 * 1,000 QPs spent their first second in them).
 */
#define RDMAP_CONN_TX_IOVS_FOR(slots) ((slots)*8u)
#define RDMAP_CONN_TX_IOVS	      RDMAP_CONN_TX_IOVS_FOR(RDMAP_CONN_TX_SLOTS)
/*
 * With markers (RFC 5044 §5) an FPDU is copied whole into a staging ring
 * of this many octets (a power of two) and goes out as one iovec: markers
 * every 512 octets cut a 64 KiB FPDU into about 260 pieces, and the
 * kernel's copy into the socket costs per piece (bench/README.md,
 * "Markers: where the time goes").
 */
#define RDMAP_CONN_TX_STAGE	(1u << 20)
#define RDMAP_CONN_FPDU_DEFAULT 1448u /* fpdu_max 0 and no MSS known */
#define RDMAP_CONN_RESP_BURST                                                  \
	16u /* Read Response FPDUs before the SQ gets a turn */
#define RDMAP_CONN_MAX_IRD_ORD 128u /* as siw */
#define RDMAP_CONN_TERM_BODY                                                   \
	(RDMAP_TERM_MAX_LEN - DDP_UNTAGGED_HDR_LEN) /* 52 */
/* How long a queued TERMINATE may wait for TCP to take it (a peer that
 * stopped reading) before the connection ends without it. */
#define RDMAP_CONN_TERM_LINGER_MS 1000u

/* Memory the engine may touch, held by a reference (ops->mem_get). */
struct rdmap_mem {
	uint8_t *ptr; /* the octet at the requested TO */
	uint32_t ref; /* the reference to give back (ops->mem_put); 0: none */
};

/*
 * What the engine asks of its owner. Every callback runs on the engine's
 * thread; |owner| is the pointer given to rdmap_conn_create. All are
 * required unless marked optional.
 */
struct rdmap_ops {
	/* ---- memory (RFC 5040 §8, RFC 5041 §7) ---- */
	/*
	 * Resolves STag |stag| for a remote access of |len| octets at |to|
	 * with rights |access| (IWARP_ACCESS_REMOTE_WRITE, _REMOTE_READ, or
	 * _LOCAL_WRITE for a Read Response sink), checking validity, the
	 * stream's PD, rights, TO wrap and bounds. On success fills |out| and
	 * takes a reference that keeps the memory from being released until
	 * mem_put(out->ref). Returns 0 or the IWARP_ERR_* of the first failed
	 * check (DDP tagged codes when |tagged_ddp|, else RDMAP codes).
	 */
	int (*mem_get)(void *owner, uint32_t stag, int access, uint64_t to,
		       uint64_t len, bool tagged_ddp, struct rdmap_mem *out);
	/* Gives back a reference taken by mem_get. */
	void (*mem_put)(void *owner, uint32_t ref);
	/* Local SGE check (lkey, PD, bounds, |access|): 0 or -errno. */
	int (*mem_check_local)(void *owner, const struct iwarp_sge *sge,
			       int access);
	/* Remote invalidation of |stag| (Send with Invalidate, RFC 5040 §6.2):
	 * 0 or IWARP_ERR_RDMAP_INVALIDATE / _STAG / _STAG_STREAM. */
	int (*invalidate)(void *owner, uint32_t stag);
	/* The stream's own access rights (RFC 5040 §8) include |access|. */
	bool (*stream_allows)(void *owner, int access);

	/* ---- receive queue ---- */
	/* Takes the oldest receive WQE (RQ or SRQ) into |out|: 0 or -ENOENT.
	 * The engine then owns it and completes it (recv_complete). */
	int (*recv_take)(void *owner, struct rdmap_rqe *out);
	/* Reports the completion |wc| of a receive WQE taken before.
	 * |solicited|: fires a solicited-only notification. Returns 0, or
	 * -ENOSPC when the completion could not be queued (CQ overflow). */
	int (*recv_complete)(void *owner, const struct iwarp_wc *wc,
			     bool solicited);

	/* ---- send queue (free-running indices) ---- */
	/* The next WQE not yet started, if the queue may start one now (QP
	 * in RTS): sets *idx and returns it, else NULL. */
	const struct rdmap_wqe *(*sq_next)(void *owner, uint32_t *idx);
	/* WQE |idx| was started (or failed a local check): the next one to
	 * offer is idx + 1. */
	void (*sq_started)(void *owner, uint32_t idx);
	/* True when WQEs were posted that sq_next has not offered yet. */
	bool (*sq_pending)(void *owner);
	/* Index of the oldest uncompleted WQE. */
	uint32_t (*sq_oldest)(void *owner);
	/* Completes WQEs [oldest, upto) with IWARP_WC_SUCCESS (signaled
	 * ones). Returns 0 or -ENOSPC (CQ overflow). */
	int (*sq_complete)(void *owner, uint32_t upto);
	/* Completes the oldest WQE with |status| and |vendor_err| (signaled
	 * or not). Returns 0 or -ENOSPC. */
	int (*sq_fail_one)(void *owner, enum iwarp_wc_status status,
			   uint32_t vendor_err);

	/* ---- state ---- */
	/* The connection failed or ended: move the QP to ERR, flushing what
	 * is still queued. |cause|: why (may be NULL); |received|: the peer
	 * sent that TERMINATE; |async|: raise the matching async event. */
	void (*set_error)(void *owner, const struct iwarp_term_cause *cause,
			  bool received, bool async);
	/* Called once when the connection is over (after set_error): |err| 0
	 * for an orderly end, else the reason; |cause| as for set_error.
	 * The owner may destroy the conn later, not inside the callback. */
	void (*closed)(void *owner, int err,
		       const struct iwarp_term_cause *cause);

	/* ---- driver (optional) ---- */
	/* tx_iov has something to offer now. */
	void (*kick_tx)(void *owner);
	/* Send FIN once everything offered was sent. */
	void (*shutdown)(void *owner);
	/* A TERMINATE is queued: call rdmap_conn_term_expired after
	 * RDMAP_CONN_TERM_LINGER_MS unless the connection ended before. */
	void (*term_queued)(void *owner);
	/* Make the outstanding receive complete soon (it may target memory
	 * being revoked); rx_done or closed follows. */
	void (*cancel_rx)(void *owner);
	/*
	 * Waiting for a receive WQE (rdmap_conn_set_rx_wait). |wait| true: a
	 * Send-queue message found no receive WQE posted. Returns 0 when
	 * the owner will call rdmap_conn_rx_resume once one is posted and
	 * rdmap_conn_rx_wait_expired after its bound; -EAGAIN when one was
	 * posted meanwhile (taken at once); other -errno: no wait, the
	 * message fails now (RFC 5041 §7.2). |wait| false: the wait is over
	 * (resumed, expired, or the connection ended); the return is
	 * ignored.
	 */
	int (*rx_wait)(void *owner, bool wait);
	/* rx_iov offers room again (a wait ended). */
	void (*kick_rx)(void *owner);

	/* ---- local memory operations (optional) ---- */
	/* Runs a WQE that never goes on the wire (IWARP_WR_BIND_MW,
	 * IWARP_WR_LOCAL_INV) when the SQ reaches it; it completes in SQ
	 * order. Returns IWARP_WC_SUCCESS or the WQE's error status. NULL:
	 * such WQEs fail with IWARP_WC_LOC_QP_OP_ERR. */
	enum iwarp_wc_status (*sq_local)(void *owner,
					 const struct rdmap_wqe *w);
};

/* What rdmap_conn_create needs to know (the MPA negotiation's result). */
struct rdmap_conn_cfg {
	bool initiator; /* active side (sends first, RFC 5044 §7.1) */
	bool crc;	/* MPA CRC (RFC 5044 §6) */
	bool markers_tx, markers_rx; /* MPA markers per direction (§5) */
	bool p2p;		     /* RFC 6581 peer-to-peer mode */
	enum mpa_rtr rtr;  /* the negotiated RTR (MPA_RTR_NONE without p2p) */
	uint32_t ird, ord; /* negotiated Read limits (capped at 128) */
	size_t fpdu_max;   /* largest FPDU; 0 = set later or 1448 */
	uint32_t sq_first; /* index of the first WQE this conn offers */
	bool rdmap_ext;	   /* RFC 7306 negotiated by both sides */
};

/* Connection state. */
enum rdmap_conn_state {
	RDMAP_CONN_RUN,	   /* full operation */
	RDMAP_CONN_TERM,   /* TERMINATE queued/being sent; input discarded */
	RDMAP_CONN_CLOSED, /* over: set_error and closed ran (or detached) */
};

/* One FPDU framed for transmission. */
struct rdmap_slot {
	/* pad, CRC and the length field, which the header right after it
	 * joins in one iovec (with markers the FPDU is copied into
	 * rdmap_conn.stage) */
	struct mpa_tx_fixed fixed;
	uint8_t ulp[RDMAP_TERM_MAX_LEN]; /* DDP/RDMAP header (Terminate: all) */
	uint8_t inl[RDMAP_MAX_INLINE];	 /* inline payload of this FPDU */
	struct iovec *iov;		 /* into rdmap_conn.iovs */
	uint32_t niov;
	uint32_t iov_mark;    /* rdmap_conn.iov_tail before this FPDU */
	uint32_t iov_units;   /* ring units it holds (niov + skipped end) */
	uint32_t stage_mark;  /* rdmap_conn.stage_tail before this FPDU */
	uint32_t stage_units; /* staging octets it holds (+ skipped end) */
	size_t wire_len;
	uint64_t pos;	  /* mpa_tx.pos before this FPDU */
	uint32_t sq_done; /* SQ index + 1 sent with it, if has_sq */
	uint32_t mem_ref; /* reference on the payload's region */
	bool has_sq;
	bool sq_signaled; /* has_sq and that WQE asked for a completion */
	bool is_term;
};

/* Outstanding Read Request we sent (requester side, RFC 5040 §5.2). */
struct rdmap_orq {
	uint32_t sq_idx; /* its WQE (if in_sq) */
	bool in_sq;	 /* false for the RFC 6581 Read RTR */
	uint32_t sink_stag;
	uint64_t sink_to;
	uint32_t size;
	uint32_t got; /* Read Response octets received */
	/* RFC 7306 Atomic Request (requester side) */
	bool atomic;
	uint32_t req_id;       /* its Request Identifier */
	struct iwarp_sge sink; /* where the original value goes (8 octets) */
};

/* Inbound Read Request to answer (responder side). Its source is looked
 * up again (and referenced) for every Read Response segment. */
struct rdmap_irq {
	struct rdmap_rreq rr;
	bool atomic; /* an RFC 7306 Atomic Request (ar), not a Read */
	struct rdmap_atomic_req ar;
};

/* What the FPDU being received is. */
enum rdmap_rx_kind {
	RXK_NONE,
	RXK_DISCARD,  /* error pending: payload dropped */
	RXK_WRITE,    /* RDMA Write segment */
	RXK_RRESP,    /* Read Response segment */
	RXK_SEND,     /* Send-family segment into the RQE */
	RXK_SEND_RTR, /* RFC 6581 zero-length Send RTR */
	RXK_RREQ,     /* Read Request */
	RXK_TERM,     /* Terminate */
	RXK_IMM,      /* RFC 7306 Immediate Data into the RQE */
	RXK_AREQ,     /* RFC 7306 Atomic Request */
	RXK_ARESP,    /* RFC 7306 Atomic Response */
};

/* Largest header the engine keeps: untagged DDP + Atomic Request. */
#define RDMAP_CONN_HDR_MAX (DDP_UNTAGGED_HDR_LEN + RDMAP_ATOMIC_REQ_LEN)

/* The FPDU being received. */
struct rdmap_rx_cur {
	enum rdmap_rx_kind kind;
	int err; /* deferred protocol error (after CRC) */
	uint16_t ulpdu_len;
	uint32_t pay_len; /* payload octets in this segment */
	struct ddp_hdr h;
	uint8_t hdr[RDMAP_CONN_HDR_MAX]; /* raw header octets (for TERMINATE) */
	size_t hdr_len;
	struct ddp_rx_seg seg;	      /* where it goes, whether it completes */
	struct rdmap_mem dst;	      /* tagged: first payload octet's target */
	struct rdmap_rreq rr;	      /* RXK_RREQ */
	struct rdmap_atomic_req ar;   /* RXK_AREQ */
	struct rdmap_atomic_resp are; /* RXK_ARESP */
	enum iwarp_wc_status rqe_status; /* status for the RQE on error */
};

/* The RDMAP engine of one connection. */
struct rdmap_conn {
	const struct rdmap_ops *ops;
	void *owner;
	bool bound; /* ops may be called (false once detached) */
	enum rdmap_conn_state state;

	/* negotiated */
	bool initiator;
	bool p2p;
	enum mpa_rtr rtr;
	uint32_t ird, ord;
	size_t fpdu_max;
	bool ext; /* RFC 7306 extensions negotiated */

	/* failure */
	struct iwarp_term_cause cause;
	bool cause_valid;
	bool cause_received; /* the peer sent |cause| */
	int close_err;

	/* ---- transmit ---- */
	struct mpa_tx mtx;
	struct ddp_tx_queues txq;
	bool tx_enabled;  /* responder: first FPDU received */
	bool rtr_pending; /* P2P initiator: RTR still to frame */
	bool tx_busy;	  /* a tx_iov set is outstanding */
	bool drop_unsent; /* drop framed FPDUs not yet accepted */
	bool term_framed;
	struct rdmap_term term;	       /* the TERMINATE we send */
	struct rdmap_slot *slots;      /* RDMAP_CONN_TX_SLOTS allocated */
	uint32_t slot_cap;	       /* of which in use: _SLOTS_FEW or all */
	uint32_t slot_cap_next;	       /* slot_cap after the next rewind */
	uint32_t slot_head, slot_tail; /* [head, tail) framed, head oldest */
	struct iovec *iovs;	     /* RDMAP_CONN_TX_IOVS allocated, a ring */
	uint32_t iov_cap;	     /* of which in use: slot_cap * 8 */
	uint32_t iov_head, iov_tail; /* free-running ring units */
	/* with markers only (else NULL): the FPDU being framed (its markers
	 * and iovecs) and the staging ring its octets are copied into */
	uint8_t (*marks)[MPA_MARKER_LEN];
	struct iovec *stage_iov;
	uint8_t *stage;			 /* RDMAP_CONN_TX_STAGE octets */
	uint32_t stage_head, stage_tail; /* free-running octets */
	size_t head_off;     /* octets of the head slot already sent */
	uint32_t resp_burst; /* Read Response FPDUs framed in a row */
	/* the SQ message in progress */
	bool sq_active;
	uint32_t sq_idx;
	const struct rdmap_wqe *sq_w; /* the WQE in progress (in the owner's
				      ring until it completes) */
	struct ddp_seg_iter sq_it;
	uint32_t sq_sent;   /* WQEs before this are handed to TCP */
	bool sq_imm;	    /* the message in progress is Immediate Data */
	uint32_t atomic_id; /* last Atomic Request Identifier used */
	bool loc_err;	    /* a WQE failed a local check */
	uint32_t loc_err_idx;
	enum iwarp_wc_status loc_err_status;
	/* the Read Response in progress */
	bool rs_active;
	struct ddp_seg_iter rs_it;
	/* ORQ / IRQ rings (sizes are powers of two >= ord / ird) */
	struct rdmap_orq *orq;
	uint32_t orq_size, orq_head, orq_tail;
	/* the ORQ is not empty and the connection runs: a response is owed
	 * (rdmap_conn_response_owed reads it from other threads at each
	 * post), stored only when it changes, and with cache lines of its
	 * own: next to the ORQ's indices every Read's update of them lost
	 * its line to the poster's read */
	char owed_pad_before[64];
	atomic_bool orq_owed;
	char owed_pad_after[64];
	struct rdmap_irq *irq;
	uint32_t irq_size, irq_head, irq_tail;

	/* ---- receive ---- */
	struct mpa_rx mrx;
	struct ddp_rx drx;
	uint8_t *rxbuf;	      /* RDMAP_CONN_RX_BUF, at the first receive */
	bool rx_provided;     /* bulk octets go to the owner's memory */
	bool dp_active;	      /* last rx_iov was a direct placement */
	size_t dp_len;	      /* its placement octets (a bulk tail follows) */
	uint32_t rx_big;      /* credit: large FPDUs seen lately */
	size_t rx_req;	      /* octets the last rx_iov set asked for */
	bool rx_behind;	      /* it was filled: read the whole buffer */
	bool rx_shared;	      /* the owner's CPU serves other streams too */
	uint32_t rx_untagged; /* credit: Send-queue messages seen lately */
	bool rx_wait_ok;      /* may wait for a receive WQE (ops->rx_wait) */
	bool rx_waiting;      /* a Send-queue message waits for a WQE */
	uint8_t *rx_stash;    /* octets received behind its header */
	size_t rx_stash_len;
	bool first_rx;	     /* an FPDU was received */
	bool rx_after_write; /* the last inbound message was an RDMA Write */
	struct rdmap_rx_cur cur;
	bool have_rqe; /* a receive WQE bound to the Send in progress */
	struct rdmap_rqe rqe;
	uint8_t term_buf[RDMAP_TERM_MAX_LEN];
};

/*
 * Creates the engine of one connection with the negotiated |cfg|, calling
 * |ops| with |owner|. Returns NULL with errno (ENOMEM, EINVAL).
 */
struct rdmap_conn *rdmap_conn_create(const struct rdmap_conn_cfg *cfg,
				     const struct rdmap_ops *ops, void *owner);

/*
 * Stops calling the QP-side ops: a receive WQE still bound completes
 * flushed, and no op but mem_put runs afterwards. Idempotent.
 */
void rdmap_conn_detach(struct rdmap_conn *c);

/*
 * Frees |c| and gives back every memory reference it holds. Only when no
 * transport operation still uses its buffers or the memory it referenced
 * (the owner waits for the transport to drain first). Does not call
 * set_error or closed.
 */
void rdmap_conn_destroy(struct rdmap_conn *c);

/* Sets the largest FPDU (before the first FPDU is framed). */
void rdmap_conn_set_fpdu_max(struct rdmap_conn *c, size_t fpdu_max);

/*
 * Placement hint of the owner, given before rdmap_conn_rx_iov: |shared|
 * when other connections are receiving on the same CPU at the same time.
 * A connection that is behind (its bounded receive was filled) then keeps
 * receiving large payloads in place instead of switching to whole-buffer
 * receives, whose copy out of the bulk buffer the shared CPU cannot spare
 * (bench/README.md, "Many QPs: where the receive goes").
 */
void rdmap_conn_set_rx_shared(struct rdmap_conn *c, bool shared);

/*
 * True when untagged messages of the Send queue (Send, Send with
 * Invalidate/SE, Immediate Data) arrived lately, i.e. within the last
 * RDMAP_CONN_RX_UNTAGGED_CREDIT inbound FPDUs. Each takes a receive WQE
 * that the application posts again only at the rate it reaps, so an owner
 * weighing whole-buffer receives (rdmap_conn_set_rx_shared) may keep such
 * a connection on bounded ones: a whole buffer of Sends placed at once
 * can outrun the receive queue, which on iWARP ends the connection (RFC
 * 5041 §7.2, no buffer).
 */
bool rdmap_conn_rx_untagged(const struct rdmap_conn *c);

/*
 * Whether a Read Response or an RFC 7306 Atomic Response is owed to |c|
 * (a request of ours is outstanding, RFC 5040 §5.2) while it runs: its
 * arrival is bound to come, or the connection ends, and whoever receives
 * it then runs the owner's queued work. Any thread. The value is
 * published with sequentially consistent stores after each change, so a
 * poster that queued work (a sequentially consistent exchange) before
 * reading true knows that the receive which clears it runs after the
 * work was queued.
 */
bool rdmap_conn_response_owed(const struct rdmap_conn *c);

/*
 * Lets the engine wait for a receive WQE instead of failing at once when a
 * Send, Send with Invalidate/SE or Immediate Data finds none posted: the
 * receive pauses after that message's header (rdmap_conn_rx_iov offers no
 * room; octets already received behind it are kept), so the peer's further
 * messages wait in TCP's window, until the owner posts a WQE
 * (rdmap_conn_rx_resume) or gives up (rdmap_conn_rx_wait_expired: the
 * message then fails as without waiting, DDP untagged "no buffer
 * available", RFC 5041 §7.2). Nothing of it shows on the wire: the peer
 * sees a slow reader, as an InfiniBand sender sees RNR NAKs. Needs
 * ops->rx_wait and ops->kick_rx; off by default.
 */
void rdmap_conn_set_rx_wait(struct rdmap_conn *c, bool on);

/* True while a message waits for a receive WQE. */
bool rdmap_conn_rx_waiting(const struct rdmap_conn *c);

/* A receive WQE may have been posted: takes it for the waiting message and
 * receives on (kick_rx). No-op when nothing waits. */
void rdmap_conn_rx_resume(struct rdmap_conn *c);

/* The owner's bound ran out: the waiting message fails (TERMINATE, DDP
 * untagged 0x02) and the receive goes on to send it. No-op when nothing
 * waits. */
void rdmap_conn_rx_wait_expired(struct rdmap_conn *c);

/*
 * Octets received before the engine's first receive (those the CM read
 * past the MPA Reply); processed at once. 0, or -EPIPE when over.
 */
int rdmap_conn_rx_prefill(struct rdmap_conn *c, const void *buf, size_t len);

/* ---- the transport callbacks (io/ep.h struct ep_ops semantics) ---- */

/* Where the next received octets go: up to |cap| iovecs; 0 = pause. */
int rdmap_conn_rx_iov(struct rdmap_conn *c, struct iovec *iov, int cap);
/* |n| octets landed at the start of the last rx_iov set (0: none; the
 * receive ended without data, e.g. cancelled). */
void rdmap_conn_rx_done(struct rdmap_conn *c, size_t n);
/*
 * rdmap_conn_rx_done for a connection whose bulk octets go to memory its
 * owner provides: rx_iov's last iovec then has iov_base NULL (the owner
 * fills it in, io/ep.h EP_RX_PROVIDED), and |bulk| is where that iovec's
 * octets landed; they are consumed before this returns.
 */
void rdmap_conn_rx_done_at(struct rdmap_conn *c, size_t n, const uint8_t *bulk);
/* From now on the bulk octets go to provided memory (above); the
 * connection keeps no receive buffer of its own. Before its first
 * receive. */
void rdmap_conn_set_rx_provided(struct rdmap_conn *c);
/* FPDU octets to send now: up to |cap| iovecs; 0 = nothing. */
int rdmap_conn_tx_iov(struct rdmap_conn *c, struct iovec *iov, int cap);
/* The first |n| octets of the last tx_iov set were accepted by TCP. */
void rdmap_conn_tx_done(struct rdmap_conn *c, size_t n);
/* The stream ended: EOF (0) or -errno. */
void rdmap_conn_closed(struct rdmap_conn *c, int err);

/* ---- owner events ---- */

/* Doorbell: new send WQEs were posted. */
void rdmap_conn_sq_kick(struct rdmap_conn *c);

/*
 * The application moved the QP to |state|: ERR ends the connection
 * (orderly FIN after what was already offered, closed(0)); SQD stops
 * starting new WQEs; RESET detaches.
 */
void rdmap_conn_app_state(struct rdmap_conn *c, enum iwarp_qp_state state);

/* The queued TERMINATE's linger expired: end without it. */
void rdmap_conn_term_expired(struct rdmap_conn *c);

/* True when tx_iov would offer octets. */
bool rdmap_conn_tx_pending(const struct rdmap_conn *c);

/* Responder: transmit before the initiator's first FPDU arrived. */
void rdmap_conn_tx_open(struct rdmap_conn *c);

/* Responder: true while the way out is still closed (no first FPDU from
 * the initiator yet, RFC 5044 §7.1) and the send queue holds work. */
bool rdmap_conn_tx_held(const struct rdmap_conn *c);

/* Responder: true while the way out is still closed (work or not). */
bool rdmap_conn_tx_waiting(const struct rdmap_conn *c);

/*
 * Region reference |ref| is being revoked (deregistration): the engine
 * stops using it as soon as it can. An inbound segment being placed into
 * it is discarded and the connection fails with the tagged-buffer error
 * (RFC 5041 §7, invalid STag); a Read Response that reads from it fails
 * with RDMAP "invalid STag" (RFC 5040 §7) and its FPDUs not yet handed to
 * TCP are dropped. A receive in flight into it is cancelled
 * (ops->cancel_rx); that reference, and those of FPDUs being sent, are
 * given back when the transport returns them (rx_done, tx_done, closed).
 * Returns true while the conn still holds |ref|.
 */
bool rdmap_conn_mem_revoke(struct rdmap_conn *c, uint32_t ref);

/* vendor_err encoding of a TERMINATE cause: layer << 16 | etype << 8 | ecode.
 */
static inline uint32_t rdmap_vendor_err(const struct iwarp_term_cause *t)
{
	return (uint32_t)t->layer << 16 | (uint32_t)t->etype << 8 | t->ecode;
}

#endif /* IWARP_RDMAP_RDMAP_CONN_H */
