/*
 * rdmap/rdmap_conn_int.h: functions shared by the engine's files
 * (rdmap_conn.c, rdmap_conn_rx.c, rdmap_conn_tx.c, rdmap_conn_term.c).
 * Not for the owner: it uses rdmap/rdmap_conn.h.
 */
#ifndef IWARP_RDMAP_RDMAP_CONN_INT_H
#define IWARP_RDMAP_RDMAP_CONN_INT_H

#include "rdmap/rdmap_conn.h"

/*
 * Fails the connection with protocol error |err| detected locally: queues
 * a TERMINATE with its cause (iwarp_error_to_term; unmapped errors give
 * RDMAP/RemoteOp/unspecified) and, when |attach|, the DDP header of the
 * segment being received (plus its Read Request header for RDMAP errors in
 * a Read Request). The QP moves to ERR once the TERMINATE was sent.
 */
void conn_fail(struct rdmap_conn *c, int err, bool attach);

/* Fails the connection with cause |cause| (a local error, no header). */
void conn_fail_cause(struct rdmap_conn *c, const struct iwarp_term_cause *t);

/*
 * Ends the connection now: completes what is done, fails what cannot
 * complete any more, has the owner move the QP to ERR (async event when
 * |async|), asks the driver to shut down, runs ops->closed. Idempotent.
 */
void conn_finish(struct rdmap_conn *c, int err, bool async);

/*
 * Publishes whether a response is owed (rdmap_conn_response_owed) after
 * the ORQ or the state changed.
 */
static inline void conn_orq_publish(struct rdmap_conn *c)
{
	bool owed = c->state != RDMAP_CONN_CLOSED && c->orq_head != c->orq_tail;

	/* the engine is the only writer: a store only for a change */
	if (atomic_load_explicit(&c->orq_owed, memory_order_relaxed) != owed)
		atomic_store(&c->orq_owed, owed);
}

/* Ends a wait for a receive WQE without parsing what was kept (the
 * connection is over). */
void conn_rx_wait_end(struct rdmap_conn *c);

/* The TERMINATE received from the peer (decoded): fail as RFC 5040 §5.4. */
void conn_term_received(struct rdmap_conn *c, const struct rdmap_term *t);

/* Completes the SQ prefix that is done (sent, and Reads answered). */
void conn_sq_progress(struct rdmap_conn *c);

/* Completes the oldest SQ WQE with error |status| and |vendor_err|. */
void conn_sq_fail_one(struct rdmap_conn *c, enum iwarp_wc_status status,
		      uint32_t vendor_err);

/* Reports a receive completion for the bound RQE and releases it. */
void conn_rqe_complete(struct rdmap_conn *c, enum iwarp_wc_status status,
		       uint32_t byte_len, unsigned int wc_flags,
		       uint32_t inv_rkey, bool solicited);

/* Completes the bound RQE for an RFC 7306 Immediate Data message:
 * |opcode| IWARP_WC_RECV or _RECV_RDMA_WITH_IMM, |imm| as on the wire. */
void conn_rqe_complete_imm(struct rdmap_conn *c, enum iwarp_wc_opcode opcode,
			   uint32_t imm, bool solicited);

/*
 * A completion could not be queued (the owner's CQ overflowed): the
 * connection fails with a local catastrophic error (ibverbs: the QP goes
 * to ERR; the CQ error is the owner's async event).
 */
void conn_cq_overflow(struct rdmap_conn *c);

/*
 * Drops framed FPDUs the transport has not taken yet (keeps a partially
 * sent one, rewinds the MPA stream position), after a failure.
 */
void conn_tx_drop_unsent(struct rdmap_conn *c);

/* Asks the driver for a tx_iov call (kick_tx) if anything is pending. */
void conn_tx_kick(struct rdmap_conn *c);

/* Gives back a memory reference (0: none) and clears it. */
void conn_mem_put(struct rdmap_conn *c, struct rdmap_mem *m);

/* Gives back the reference of the segment being received, unless a
 * receive in flight may still place into it. */
void conn_rx_release(struct rdmap_conn *c);

/* Gives back the references of framed FPDUs [from, slot_tail). */
/* The slot of free-running index |i| (the ring's size in use, slot_cap). */
static inline struct rdmap_slot *conn_slot(const struct rdmap_conn *c,
					   uint32_t i)
{
	return &c->slots[i & (c->slot_cap - 1u)];
}

void conn_slots_release(struct rdmap_conn *c, uint32_t from);

/* Runs the memory operations (bind, local invalidate) at the head of the
 * SQ while the connection may not transmit yet (rdmap_conn_tx.c). */
void conn_sq_local_head(struct rdmap_conn *c);

#endif /* IWARP_RDMAP_RDMAP_CONN_INT_H */
