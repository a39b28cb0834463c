/*
 * verbs/qp_conn.h: a connected QP: binds an iw_qp to its RDMAP engine
 * (rdmap/rdmap_conn.h) and implements the engine's struct rdmap_ops over
 * the verbs objects (SQ/RQ/SRQ rings, the STag table with references, the
 * CQs, the move to ERR and async events).
 *
 * The owner (the CM, or a test harness) drives it with the five transport
 * callbacks (qp_conn_rx_iov / rx_done / tx_iov / tx_done / closed), or
 * attaches it to an io/ep.h endpoint (qp_conn_attach_ep, verbs/qp_engine.c)
 * so that the context's progress engine drives it.
 *
 * Call order for the CM (after the MPA exchange succeeded):
 *   conn = qp_conn_create(qp, &neg_result, initiator, fpdu_max, on_close, arg);
 *   qp_conn_rx_prefill(conn, bytes_after_reply, n);     (if any)
 *   qp_conn_attach_ep(conn, ep, carry, carry_len);     (engine glue; or drive
 *                                                       the five callbacks)
 *   ... on_close(arg, err, cause) runs once when the connection is over ...
 *   qp_conn_destroy(conn);
 *
 * Lifetimes: after qp_conn_destroy() returns, the conn no longer touches
 * the QP and calls nothing back. Its buffers (the receive buffer, framed
 * FPDUs) and the memory references it holds are released once the
 * endpoint's I/O has drained: a receive or send the kernel still runs keeps
 * them alive until its completion came back (io/ep.h ep_close_then).
 *
 * Threads: every qp_conn_* call happens on the context's engine thread
 * (or, without an endpoint, on the one thread that drives it).
 */
#ifndef IWARP_VERBS_QP_CONN_H
#define IWARP_VERBS_QP_CONN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/uio.h>

#include "iwarp/iwarp.h"
#include "mpa/mpa_negotiate.h"
#include "rdmap/rdmap_conn.h"
#include "verbs/verbs.h"

struct endpoint;

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

/* Requests to the conn's driver (any may be NULL). */
struct qp_conn_io {
	/* tx_iov has something to offer now (after a doorbell or a receive). */
	void (*kick_tx)(void *io_arg);
	/* send FIN once everything offered was sent (after a TERMINATE). */
	void (*shutdown)(void *io_arg);
	/* a TERMINATE is queued: call qp_conn_term_expired after
	 * RDMAP_CONN_TERM_LINGER_MS unless the connection ended before. */
	void (*term_queued)(void *io_arg);
	/* make the outstanding receive complete soon (memory revoked). */
	void (*cancel_rx)(void *io_arg);
	/* |wait| true: a Send waits for a receive WQE; call
	 * qp_conn_rx_wait_expired when the wait's bound runs out. 0, or
	 * -errno when the driver does not wait (the Send then fails at
	 * once). |wait| false: the wait is over, stop its timer. */
	int (*rx_wait)(void *io_arg, bool wait);
	/* receive again (the wait for a receive WQE ended). */
	void (*kick_rx)(void *io_arg);
};

/* A connected QP. */
struct qp_conn {
	struct rdmap_conn *rc; /* the RDMAP engine */
	struct iw_qp *qp;      /* NULL once detached */
	struct iwarp_context *ctx;
	const struct iwarp_pd *pd;
	qp_conn_close_fn on_close;
	void *close_arg;
	const struct qp_conn_io *io;
	void *io_arg;
	struct endpoint *ep; /* qp_engine.c */
	void *glue;	     /* qp_engine.c private */
	/* closes the endpoint; calls qp_conn_free once its I/O drained */
	void (*glue_free)(struct qp_conn *conn);
	struct qp_conn *ctx_prev,
		*ctx_next; /* the context's conns[list] (conn_lock) */
	unsigned int list; /* index of the engine that runs (and frees) it */
};

/*
 * Creates the connection of |qp| with the negotiated parameters |neg| (crc,
 * markers_tx/markers_rx, ird/ord, p2p/rtr), |initiator| true on the active
 * side. |fpdu_max|: largest FPDU on the wire (0: the endpoint's MSS once
 * attached, else RDMAP_CONN_FPDU_DEFAULT). Moves the QP to RTS and sets
 * qp->conn, qp->ird/ord. |on_close| runs once when the connection is over.
 * Returns NULL with errno (ENOMEM, EINVAL: bad arguments, EBUSY: the QP
 * already has a conn or is not in INIT/RTR/RTS).
 */
struct qp_conn *qp_conn_create(struct iw_qp *qp,
			       const struct mpa_neg_result *neg, bool initiator,
			       size_t fpdu_max, qp_conn_close_fn on_close,
			       void *arg);

/*
 * Ends |conn|: detaches it from the QP (a QP still attached moves to ERR,
 * flushed, no async event), closes the endpoint if one was attached, and
 * frees it once no I/O is in flight. Does not run on_close.
 */
void qp_conn_destroy(struct qp_conn *conn);

/* The last step of qp_conn_destroy (the glue calls it when the endpoint
 * drained; engine thread). */
void qp_conn_free(struct qp_conn *conn);

/* Sets the driver requests; |io| must outlive conn. */
void qp_conn_set_io(struct qp_conn *conn, const struct qp_conn_io *io,
		    void *io_arg);

/*
 * Hands over |len| octets the CM received after the MPA Request/Reply
 * (the start of the FPDU stream); processed at once, as if received.
 * Returns 0, or -EPIPE when the connection is already over.
 */
int qp_conn_rx_prefill(struct qp_conn *conn, const void *buf, size_t len);

/* ---- the five transport callbacks (rdmap/rdmap_conn.h semantics) ---- */
int qp_conn_rx_iov(struct qp_conn *conn, struct iovec *iov, int cap);
void qp_conn_rx_done(struct qp_conn *conn, size_t n);
int qp_conn_tx_iov(struct qp_conn *conn, struct iovec *iov, int cap);
void qp_conn_tx_done(struct qp_conn *conn, size_t n);
void qp_conn_closed(struct qp_conn *conn, int err);

/* ---- application-driven events (engine thread) ---- */
void qp_conn_sq_kick(struct qp_conn *conn);
void qp_conn_app_state(struct qp_conn *conn, enum iwarp_qp_state state);
void qp_conn_term_expired(struct qp_conn *conn);
/* rdmap_conn_rx_resume / rdmap_conn_rx_wait_expired of the connection. */
void qp_conn_rx_resume(struct qp_conn *conn);
void qp_conn_rx_wait_expired(struct qp_conn *conn);
bool qp_conn_tx_pending(const struct qp_conn *conn);
void qp_conn_tx_open(struct qp_conn *conn);

/* rdmap_conn_tx_held() of the connection. */
bool qp_conn_tx_held(const struct qp_conn *conn);
/* rdmap_conn_tx_waiting() of the connection. */
bool qp_conn_tx_waiting(const struct qp_conn *conn);

/*
 * Region |stag| is being deregistered: every conn of |ctx| lets go of it
 * (rdmap_conn_mem_revoke). Engine thread. Returns true while some conn
 * still holds it in flight.
 */
bool qp_conn_revoke_all(struct iwarp_context *ctx, uint32_t stag);

/*
 * Engine glue (verbs/qp_engine.c): makes |conn| the owner of endpoint
 * |ep| (ep_set_owner with |carry|, the octets the CM received past the MPA
 * Reply), uses ep_mss for fpdu_max when it was 0 at create. Engine thread.
 * Returns 0 or the error of ep_set_owner.
 */
int qp_conn_attach_ep(struct qp_conn *conn, struct endpoint *ep,
		      const void *carry, size_t len);

#endif /* IWARP_VERBS_QP_CONN_H */
