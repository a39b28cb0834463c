/*
 * cm/cm_int.h: internals of the connection manager (librdmacm-shaped API
 * over TCP + MPA, RFC 5044 §7.1 / RFC 6581).
 *
 * Objects:
 * - struct cm_channel: an event queue with a pollable eventfd (readable
 *   exactly while the queue is non-empty) and the list of its ids.
 * - struct cm_id: one iwarp_cm_id. Its connection state (endpoint, MPA
 *   handshake, timers, listener, datapath) is touched only on the engine
 *   thread of its context; API calls get there with engine_call_sync().
 *   A listener's accepted connections are child ids that stay hidden
 *   (on the listener's pending list) until their MPA Request arrived and
 *   CONNECT_REQUEST is raised.
 * - struct cm_event: a queued event plus a copy of its private data.
 *
 * Locks: cm_channel.lock guards the queue, the channel's id list, each
 * id's |events_out| (delivered, not yet acked) and the INLINE-progress
 * bookkeeping (|driving|). The default context has its own global lock
 * (cm_ctx.c). The id <-> QP link (id->pub.qp, qp->cm_id) changes only on
 * the engine thread under the link lock of cm_id.c (cm/cm_qp.h). Nothing
 * else is shared between threads.
 */
#ifndef IWARP_CM_CM_INT_H
#define IWARP_CM_CM_INT_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>

#include "cm/cm_mpa.h"
#include "io/engine.h"
#include "iwarp/iwarp.h"

struct endpoint;
struct listener;
struct connect_req;
struct qp_conn;
struct io_tls_ctx;

/* Largest private data an event carries (iwarp_conn_param's uint8 length). */
#define CM_EVENT_PD_MAX 255
/* Acked events a channel keeps for reuse (cm_channel.spare). */
#define CM_CHANNEL_SPARE_MAX 256

/* How long an orderly close waits for the peer's FIN before resetting. */
#define CM_LINGER_MS 2000

/*
 * Most hidden children per listener: TCP connections accepted whose MPA
 * Request has not arrived yet (each holds a socket and an MPA buffer until
 * the Request completes or mpa_req_timeout_ms frees it). A connection
 * accepted beyond it is reset at once, so a flood of peers that connect
 * and never speak MPA cannot exhaust descriptors or memory. See
 * iwarp_cm_listen(3).
 */
#define CM_PENDING_MAX 256

/* The MPA Request deadline of a hidden child when the context's
 * mpa_req_timeout_ms is 0 (the attribute's documented default). */
#define CM_MPA_REQ_TIMEOUT_DEFAULT_MS 5000u

/* A listener's counters (diagnostics and tests). */
struct cm_listen_stats {
	unsigned int pending;	  /* hidden children now */
	unsigned int pending_max; /* highest |pending| seen */
	unsigned long refused;	  /* reset at once: CM_PENDING_MAX reached */
	unsigned long accepted;	  /* TCP connections accepted (incl. refused) */
};

struct cm_channel {
	struct iwarp_event_channel pub;
	pthread_mutex_t lock;
	pthread_cond_t acked;	      /* an event was acked */
	struct cm_event *head, *tail; /* queued, oldest first */
	/* acked events kept for the next push (CM_CHANNEL_SPARE_MAX): the
	 * engine thread allocates events and the application frees them,
	 * and glibc's free of another thread's chunk waits for that
	 * thread's arena lock (a connection storm met it on every ack) */
	struct cm_event *spare;
	unsigned int n_spare;
	struct cm_id *ids;     /* ids on this channel (list) */
	unsigned int n_inline; /* of them, ids of INLINE contexts */
	/* INLINE progress: iwarp_cm_get_event runs the engines of the ids'
	 * contexts outside the lock; cm_channel_del_id waits for those runs
	 * (the id's context may be closed right after) */
	unsigned int driving;  /* get_event calls running engines */
	unsigned int draining; /* del_id waiting: start no new run */
	pthread_cond_t drove;  /* |driving| dropped to 0 */
	/* pushes raising the fd's counter after they unlocked
	 * (cm_event_push): the channel's destroy waits for them */
	unsigned int raising;
};

/* Connection state of an id (engine thread). */
enum cm_state {
	CM_S_IDLE = 0,	    /* created */
	CM_S_BOUND,	    /* bind_addr done */
	CM_S_ADDR_RESOLVED, /* resolve_addr done */
	CM_S_ROUTE_RESOLVED,
	CM_S_LISTEN,	   /* listening */
	CM_S_CONNECTING,   /* initiator: TCP connect in progress */
	CM_S_MPA_REQ_SENT, /* initiator: Request queued, want the Reply */
	CM_S_GRACE,	   /* initiator: Reply good, first-FPDU delay */
	CM_S_MPA_WAIT_REQ, /* responder child (hidden): want the Request */
	CM_S_CONN_REQ,	   /* responder: CONNECT_REQUEST raised */
	CM_S_ACCEPTING,	   /* responder: accepting Reply being sent */
	CM_S_RTR_WAIT,	   /* responder P2P: Reply sent, want the RTR FPDU */
	CM_S_ESTABLISHED,  /* datapath runs */
	CM_S_CLOSING,	   /* FIN sent (reject, error), waiting the peer's */
	CM_S_CLOSED,	   /* over: no endpoint, no further event but
			      TIMEWAIT_EXIT */
	CM_S_DEAD,	   /* destroyed: no event at all */
};

struct cm_id {
	struct iwarp_cm_id pub;
	struct cm_channel *ch;
	struct cm_id *ch_prev, *ch_next; /* channel list (ch->lock) */
	unsigned int events_out;	 /* delivered, not acked (ch->lock) */
	bool migrating;			 /* cm_channel_move: its events go
					    (both channels' locks) */
	bool default_ctx;		 /* holds a default-context reference */
	struct engine *eng;
	int grace_ms;	  /* initiator first-FPDU delay */
	int resp_wait_ms; /* responder: first-FPDU wait before TX (0: none) */
	/*
	 * The engine may touch the id: set by the application thread in
	 * iwarp_cm_connect / iwarp_cm_listen before the id goes to its
	 * engine, and at birth for a listener's children. Until then the
	 * id's calls run on the calling thread (cm_id.c, cm_call_here).
	 */
	bool engine_owned;
	struct engine_work connect_work; /* iwarp_cm_connect's TCP connect */

	/* ---- engine thread ---- */
	enum cm_state state;
	bool sock_held;		       /* |sock| is ours (not yet listening
					  or connecting) */
	int sock;		       /* TCP socket bound by bind_addr or
					  resolve_addr: it holds the port */
	struct listener *lst;	       /* CM_S_LISTEN */
	bool listened;		       /* was a listener (children may run
					  on every engine) */
	struct cm_id *pending;	       /* listener: hidden children */
	struct cm_id *parent;	       /* hidden child: its listener */
	struct cm_id *p_prev, *p_next; /* listener's pending list */
	struct cm_listen_stats lstats; /* listener: counters */
	struct connect_req *creq;      /* CM_S_CONNECTING */
	struct endpoint *ep;	       /* owned by the CM (not datapath) */
	struct qp_conn *conn;	       /* datapath, once handed over */
	bool conn_closed;	       /* the datapath's on_close ran */
	bool disconnected;	       /* DISCONNECTED raised */
	bool disc_local;	      /* iwarp_cm_disconnect asked (set once) */
	bool disc_reaped;	      /* datapath gone while it waited */
	int disc_err;		      /* its status */
	uint32_t disc_hold_ms;	      /* its bound (ctx->disc_hold_ms) */
	uint64_t disc_since_ns;	      /* the datapath's end */
	struct engine_timer dischold; /* cm_disc.c */
	struct engine_timer timer;    /* MPA deadline, grace, linger */
	struct engine_timer reap;     /* deferred qp_conn_destroy */
	struct engine_timer txopen;   /* responder_tx_wait_ms */
	uint64_t held_since_ms;	      /* responder: first seen TX held */
	bool held_reported;	      /* IWARP_EVENT_QP_TX_HELD raised */
	struct cm_mpa *mpa;	      /* handshake state (allocated) */
	uint8_t conn_ird, conn_ord;   /* connect/accept IRD/ORD */
	uint64_t req_sent_ms;	      /* initiator: MPA Request queued */
	struct io_tls_ctx *tls;	      /* TLS 1.3 credentials (NULL: plain
					 TCP); children share the listener's */
};

struct cm_event {
	struct iwarp_cm_event pub; /* first: handed to the application */
	struct cm_event *next;
	struct cm_id *owner; /* whose events_out counts it */
	uint8_t pdata[CM_EVENT_PD_MAX];
};

static inline struct cm_id *cm_id_from_pub(struct iwarp_cm_id *id)
{
	return (struct cm_id *)id;
}

static inline struct cm_channel *
cm_channel_from_pub(struct iwarp_event_channel *ch)
{
	return (struct cm_channel *)(void *)ch; /* pub is the first member */
}

/* ---- cm_event.c ---- */

/*
 * Queues event |type| for |id| (its channel), with |status|, the peer's
 * private data |pd| (|len| octets, truncated to CM_EVENT_PD_MAX) and the
 * IRD/ORD to report as responder_resources / initiator_depth. For
 * CONNECT_REQUEST, |id| is the new child and |listen_id| the listener, whose
 * events_out counts the event (as librdmacm); else |listen_id| is NULL.
 * Engine thread. Returns 0 or -ENOMEM (the event is lost).
 */
int cm_event_push(struct cm_id *id, struct cm_id *listen_id,
		  enum iwarp_cm_event_type type, int status, const uint8_t *pd,
		  size_t len, uint8_t rr, uint8_t id_depth);

/* Adds |id| to / removes it from its channel's list. Any thread; removing
 * waits until no iwarp_cm_get_event still runs an engine it found through
 * the list (application thread only). */
void cm_channel_add_id(struct cm_id *id);
void cm_channel_del_id(struct cm_id *id);

/*
 * Removes the queued (undelivered) events of |id|: those whose event id or
 * owner is |id|. CONNECT_REQUEST events owned by |id| (a listener) whose
 * child was never delivered are returned in *children (linked through
 * p_next) for the caller to destroy. Any thread.
 */
void cm_channel_purge(struct cm_id *id, struct cm_id **children);

/* Waits until every event delivered for |id| was acked. App thread. */
void cm_channel_wait_acked(struct cm_id *id);

/*
 * Moves |id| to channel |to| (iwarp_cm_migrate_id): its queued events,
 * and for a listener its undelivered CONNECT_REQUESTs with their child ids
 * and the children's events, leave id->ch for the tail of |to|'s queue in
 * their order; |id| (and those children) join |to|'s id list and
 * id->ch/pub.channel become |to|. Both channels are locked, in address
 * order. -EAGAIN (nothing moved) while an event delivered for |id| is not
 * acked. Engine thread of |id| (so no event for |id| is queued meanwhile).
 */
int cm_channel_move(struct cm_id *id, struct cm_channel *to);

/* Waits until no iwarp_cm_get_event on |ch| runs an engine it found
 * through the channel's id list before the list changed. App thread. */
void cm_channel_settle(struct cm_channel *ch);

/* ---- cm_ctx.c ---- */

/*
 * The context for a new id: |verbs| itself, or (NULL) the process-wide
 * default context, opened on first use and referenced (*is_default set).
 * App thread. NULL with errno set.
 */
struct iwarp_context *cm_ctx_get(struct iwarp_context *verbs, bool *is_default);

/* Takes one more reference on the default context. Any thread. */
void cm_ctx_ref_default(void);

/* Drops a default-context reference; closes it with the last one (when it
 * can: -EBUSY from iwarp_close_context keeps it open). Never on an engine
 * thread. */
void cm_ctx_put_default(void);

/* The engine for a new id of |ctx| (ctx_engine_pick: round-robin). */
struct engine *cm_ctx_engine(struct iwarp_context *ctx);

/* Fills |p| with the MPA parameters of |ctx|'s attributes. */
void cm_ctx_mpa_params(struct iwarp_context *ctx, struct mpa_neg_params *p);
/* The same from context attributes |a| (unit tests use it directly). */
void cm_attr_mpa_params(const struct iwarp_context_attr *a,
			struct mpa_neg_params *p);

/* FPDU size cap of |ctx| (0 = the TCP MSS). */
size_t cm_ctx_fpdu_max(struct iwarp_context *ctx);

/* ---- cm_conn.c (engine thread) ---- */

/* Milliseconds on the engine's monotonic clock. Any thread. */
uint64_t cm_now_ms(void);

/* Starts listening on id->pub.src_addr; fills the bound port. 0 or -errno. */
int cm_conn_listen(struct cm_id *id, int backlog);

/*
 * The initiator's connect with ULP private data |pd|, in two halves: the
 * checks and the MPA Request (|pd| copied), to CM_S_CONNECTING, which
 * touch nothing of the engine (also on the application thread before the
 * id is engine_owned); then the TCP connect (engine thread). On failure
 * each leaves the id as it was (CM_S_ROUTE_RESOLVED or before).
 */
int cm_conn_connect_prepare(struct cm_id *id, const uint8_t *pd, size_t len);
int cm_conn_connect_start(struct cm_id *id);

/* Responder: sends the accepting Reply (|ird|/|ord| < 0: negotiated). */
int cm_conn_accept(struct cm_id *id, const uint8_t *pd, size_t len, int ird,
		   int ord);

/* Responder: sends a rejecting Reply, then closes. */
int cm_conn_reject(struct cm_id *id, const uint8_t *pd, size_t len);

/*
 * Orderly close: abandons a connection attempt (0), or returns 1 when the
 * datapath runs and the caller must move the QP to ERR (iwarp_modify_qp),
 * which makes the datapath close the stream. 0 when already closed,
 * -EINVAL when the id never connected.
 */
int cm_conn_disconnect(struct cm_id *id);

/*
 * Tears down everything |id| runs on the engine (listener and the hidden
 * children on its engine, connect, endpoint, timers, datapath): no callback
 * or event for |id| follows. Engine thread. A listener's children on the
 * context's other engines go with cm_conn_free_children on each.
 */
void cm_conn_teardown(struct cm_id *id);

/* Frees a hidden child or an undelivered one (engine thread). */
void cm_conn_free_child(struct cm_id *child);

/*
 * Frees the hidden children of listener |l| that run on |eng| (the
 * calling engine thread). After |l| stopped accepting, this on every
 * engine leaves |l| without children: the hand-offs already queued to an
 * engine run before it (engine work is FIFO).
 */
void cm_conn_free_children(struct cm_id *l, struct engine *eng);

/* Takes (|lock|) or drops the lock of every listener's pending list and
 * counters; for op_migrate and op_stats on the listener's engine. */
void cm_conn_lock_pending(bool lock);

/* ---- cm_disc.c (engine thread) ---- */

/*
 * The datapath of |id| (ESTABLISHED) ended with status |err|: raises
 * DISCONNECTED now, or once the completions queued before the end were
 * polled when the peer ended it (bounded; see cm_disc.c).
 */
void cm_disc_on_close(struct cm_id *id, int err);

/* The datapath was destroyed (cm_reap_cb): true when DISCONNECTED still
 * waits, which then raises TIMEWAIT_EXIT after it; false: raise it now. */
bool cm_disc_reaped(struct cm_id *id);

/* Raises a waiting DISCONNECTED now (the QP goes away). */
void cm_disc_release(struct cm_id *id);

/* Drops a waiting DISCONNECTED without an event (the id goes away). */
void cm_disc_cancel(struct cm_id *id);

/* ---- cm_id.c ---- */

/* Copies the counters of listener |id| into *out. Any application thread;
 * 0 or -errno. */
int cm_listen_stats_get(struct iwarp_cm_id *id, struct cm_listen_stats *out);

#endif /* IWARP_CM_CM_INT_H */
