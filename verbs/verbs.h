/*
 * verbs/verbs.h: internal definitions of the verbs objects, shared by
 * verbs/ (which owns them), the QP datapath (qp_conn: RDMAP/DDP/MPA glue that
 * turns WRs into FPDUs and places received data) and cm/.
 *
 * Threads: application threads post WRs and poll CQs; the context's progress
 * engine thread runs every connection. The rules below say who may touch what.
 *
 * Public structs are embedded as the first member of the internal ones, so
 * a public pointer converts with the *_from_pub() helpers.
 */
#ifndef IWARP_VERBS_VERBS_H
#define IWARP_VERBS_VERBS_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "iwarp/iwarp.h"
#include "rdmap/rdmap_wr.h"

#define IW_MAX_QP      65536 /* thousands of connections per context */
#define IW_MAX_QP_WR   32768
#define IW_MAX_SGE     RDMAP_MAX_SGE /* 6, as siw */
#define IW_MAX_SGE_RD  1	     /* RFC 5040: a Read sink is one buffer */
#define IW_MAX_INLINE  RDMAP_MAX_INLINE /* 128 */
#define IW_MAX_IRD_ORD 128		/* as siw */
#define IW_MAX_CQE     (1 << 22)
#define IW_MAX_MR                                                              \
	(1 << 20) /* STag index space is 24 bits; we cap the table             \
		   */
#define IW_MAX_PRIVATE_DATA 512 /* RFC 5044 §7.1 */
#define IW_MAX_PD	    IW_MAX_QP
#define IW_MAX_CQ	    (2 * IW_MAX_QP)
#define IW_MAX_SRQ	    1024
#define IW_MAX_SRQ_WR	    IW_MAX_QP_WR
#define IW_MAX_CHANNEL	    1024

/*
 * Shared QP fields that the engine reads without qp->lock (pub.state,
 * sq_head, sq_next, sq_tail, access_flags) are written with __atomic
 * stores (also under the lock) and read with __atomic loads there, so no
 * plain access races an atomic one (C11 data-race rules, TSan).
 *
 * Ring indices (SQ, RQ, SRQ) are free-running uint32 counters; a ring's
 * size is a power of two and the slot of index i is i & (size - 1). For the
 * SQ, RQ and SRQ "head" is the producer (next to post) and "tail" the
 * consumer (oldest posted); head - tail is the number of posted entries.
 * (The CQ ring is different: see struct iw_cq.)
 */

struct engine;	/* io/engine.h */
struct qp_conn; /* the QP's connection (verbs/qp_conn.h), engine thread */

/* ---- context ---- */
struct iwarp_context {
	struct iwarp_context_attr attr; /* validated at open; never changes */
	char cc_name[32];      /* attr.congestion_control points here */
	uint32_t disc_hold_ms; /* IWARP_DISCONNECT_HOLD_MS (cm/cm_disc.c) */
	uint32_t rnr_wait_ms;  /* IWARP_RNR_WAIT_MS (verbs/qp_engine.c) */
	/* progress engines (IWARP_ENGINES, docs/engine-threads.md): engine
	 * is engines[0], the one INLINE callers drive (INLINE has one) */
	struct engine *engine;
	struct engine **engines;
	unsigned int n_engines;
	unsigned int next_engine; /* round-robin pick (atomic) */
	pthread_mutex_t lock;	  /* object lists, handles, async queue */
	uint32_t next_handle;
	uint32_t next_qp_num;
	struct mr_table *mrs;
	/* async events: queue + eventfd (iwarp_async_fd) */
	int async_fd;
	struct iw_async_node *async_head, *async_tail;
	/* connected QPs (verbs/qp_conn.c), also those destroyed whose I/O
	 * has not drained yet: deregistration revokes memory from them. One
	 * list per engine (conns[i]: the conns engines[i] runs and frees) */
	pthread_mutex_t conn_lock;
	struct qp_conn **conns;
	/* live objects, so close can refuse with -EBUSY */
	int n_pd, n_cq, n_qp, n_srq, n_mr, n_channel;
};

#define IW_MAX_ENGINES 64 /* IWARP_ENGINES upper bound */

/*
 * The engine for a new connection or listener: engines[] round-robin.
 * Any thread.
 */
struct engine *ctx_engine_pick(struct iwarp_context *ctx);

/*
 * The index in ctx->engines of the engine whose thread calls this, or 0
 * when no engine of |ctx| runs on it (tests driving a conn by hand, INLINE
 * callers outside the engine).
 */
unsigned int ctx_engine_self(const struct iwarp_context *ctx);

/* Queues an async event and signals async_fd. Any thread. */
void ctx_async_push(struct iwarp_context *ctx,
		    const struct iwarp_async_event *ev);

/*
 * Drops every queued (not yet fetched) async event whose element is
 * |element| (a CQ, QP or SRQ being destroyed), so iwarp_get_async_event()
 * never returns a dangling pointer. Any thread.
 */
void ctx_async_purge(struct iwarp_context *ctx, const void *element);

/*
 * Waits until |fd| is readable, unless |fd| is O_NONBLOCK. Returns 0 when
 * readable, -EAGAIN for a non-blocking fd, or -errno of fcntl/poll. Used by
 * iwarp_get_cq_event() and iwarp_get_async_event().
 */
int verbs_wait_fd(int fd);

/*
 * One step of the eventfd |fd|'s counter: adds 1 (|up|) or reads it (all
 * of it, or one count on an EFD_SEMAPHORE fd). A read the counter cannot
 * serve yet (its raise still in flight in another thread) waits for it,
 * also on a program's O_NONBLOCK fd. Retries EINTR.
 */
void verbs_efd_step(int fd, bool up);

/*
 * Adjusts one of the live-object counters of |ctx| by |delta| under
 * ctx->lock, refusing to go beyond |max|. Returns 0 or -ENOMEM (limit).
 */
int ctx_count(struct iwarp_context *ctx, int *counter, int delta, int max);

/* ---- protection domains ---- */
struct iw_pd {
	struct iwarp_pd pub;
	int refs; /* MRs, QPs and SRQs using the PD (atomic) */
};

static inline struct iw_pd *pd_from_pub(struct iwarp_pd *pd)
{
	return (struct iw_pd *)pd;
}

/* Takes / drops a reference on |pd| (atomic; any thread). */
void pd_get(struct iwarp_pd *pd);
void pd_put(struct iwarp_pd *pd);

/* ---- memory regions: STag = 24-bit index << 8 | 8-bit key ---- */
#define MR_STAG_INDEX(stag) ((stag) >> 8)
#define MR_STAG_KEY(stag)   ((uint8_t)((stag)&0xffu))

struct iw_mr {
	struct iwarp_mr pub;
	int access; /* enum iwarp_access_flags */
};

/*
 * Creates / destroys the STag table of a context (index 0 is never used,
 * so STag 0 and the RTR's STag 1 never match a registration).
 * mr_table_create returns NULL with errno set.
 */
struct mr_table *mr_table_create(void);
void mr_table_destroy(struct mr_table *t);

/*
 * Result of a remote access check (RFC 5040 §8 / RFC 5041 §7 order):
 * STag unknown or stale key -> IWARP_ERR_RDMAP_STAG (tagged DDP:
 * IWARP_ERR_DDP_STAG); MR of another PD -> IWARP_ERR_RDMAP_STAG_STREAM (DDP:
 * ..._STAG_STREAM); missing REMOTE_READ/REMOTE_WRITE -> IWARP_ERR_RDMAP_ACCESS;
 * [to, to+len) outside [addr, addr+length) -> IWARP_ERR_RDMAP_BOUNDS (DDP:
 * ..._BOUNDS); to + len wraps 2^64 -> IWARP_ERR_RDMAP_TO_WRAP (DDP:
 * ..._TO_WRAP). On success *dst points at the octet for |to| (TO is the virtual
 * address, as in ibverbs: remote_addr). Checked in the order listed, except
 * that TO wrap is checked before the bounds (a wrapping range is always out of
 * bounds too). An access of 0 checks nothing but the STag, PD and bounds. Read
 * sink rule (docs/interop-notes.md §0.8): |access| IWARP_ACCESS_LOCAL_WRITE
 * (placing a Read Response) is granted by LOCAL_WRITE or REMOTE_WRITE, as iWARP
 * apps register the sink with REMOTE_WRITE. Thread-safe against concurrent
 * (de)registration (read lock, no allocation). |dst| may be NULL.
 */
int mr_check_remote(struct iwarp_context *ctx, uint32_t stag,
		    const struct iwarp_pd *pd, int access, uint64_t to,
		    uint64_t len, bool tagged_ddp, uint8_t **dst);

/*
 * Local SGE check for posting/processing: lkey valid, same PD, inside the MR,
 * |access| (e.g. IWARP_ACCESS_LOCAL_WRITE for a receive or Read sink) granted.
 * Returns 0 or -EINVAL (bad lkey) / -EACCES (access) / -EFAULT (bounds) /
 * -EPERM (PD). An SGE with length 0 is always valid. Checked in the order lkey,
 * PD, bounds (incl. wrap), access. IWARP_ACCESS_LOCAL_WRITE is also granted by
 * REMOTE_WRITE (Read sink rule, see mr_check_remote). Thread-safe.
 */
int mr_check_local(struct iwarp_context *ctx, const struct iwarp_sge *sge,
		   const struct iwarp_pd *pd, int access);

/*
 * mr_check_remote, and on success takes a reference on the region and
 * sets *ref to the region's STag: until mr_put(ctx, *ref), iwarp_dereg_mr
 * of it does not return (it revokes the region from the engine and waits,
 * verbs/mr.c). For a memory window the reference is on the region it is
 * bound to (*ref is that region's STag). Engine thread.
 */
int mr_get(struct iwarp_context *ctx, uint32_t stag, const struct iwarp_pd *pd,
	   int access, uint64_t to, uint64_t len, bool tagged_ddp,
	   uint8_t **dst, uint32_t *ref);

/* Gives back a reference taken by mr_get (|stag|: its *ref). Any thread. */
void mr_put(struct iwarp_context *ctx, uint32_t stag);

/*
 * Invalidates the STag |stag| of PD |pd| for an inbound Send with
 * Invalidate (RFC 5040 §5.3, §6.4). Only a bound type 2 memory window may
 * be invalidated remotely. Returns 0, IWARP_ERR_RDMAP_INVALIDATE_OP (a
 * region, a type 1 window, an unknown or unbound STag: left as it was) or
 * IWARP_ERR_RDMAP_INVALIDATE (an STag of another PD). Engine thread.
 */
int mr_invalidate(struct iwarp_context *ctx, uint32_t stag,
		  const struct iwarp_pd *pd);

/*
 * Local invalidation (IWARP_WR_LOCAL_INV): a region of |pd| stops granting
 * any access until deregistered; a type 2 window is unbound. Returns 0,
 * -EINVAL (unknown/stale/unbound STag, or a type 1 window) or -EPERM
 * (another PD). Any thread.
 */
int mr_local_invalidate(struct iwarp_context *ctx, uint32_t stag,
			const struct iwarp_pd *pd);

/* ---- memory windows (verbs/mw.c; their STags live in the MR table) ---- */
struct iw_qp;

struct iw_mw {
	struct iwarp_mw pub;
};

/* A bind as the table sees it. */
struct mw_bind_req {
	uint32_t mw_stag;      /* the window's STag when the bind was posted */
	uint32_t new_stag;     /* its STag after the bind (same index) */
	uint32_t mr_lkey;      /* the region */
	uint64_t addr, length; /* length 0: unbind */
	int access;	       /* IWARP_ACCESS_REMOTE_WRITE / _REMOTE_READ */
};

/* Takes a table entry for a window of |type| (unbound). 0 or -ENOMEM. */
int mr_mw_alloc(struct iwarp_context *ctx, const struct iwarp_pd *pd, int type,
		uint32_t *stag);

/* Unbinds and frees window entry |stag|. Any thread. */
void mr_mw_free(struct iwarp_context *ctx, uint32_t stag);

/*
 * Binds window entry b->mw_stag of |pd| to b->mr_lkey (RFC 5040 §2.1,
 * ibverbs rules): returns 0, -EINVAL (unknown window/region, other PD,
 * index changed, or the key unchanged), -EBUSY (a type 2 window still
 * bound), -EACCES (region without IWARP_ACCESS_MW_BIND, or remote write
 * asked of a region without local write), -EFAULT (outside the region).
 * A rebind replaces the old binding and key. Any thread.
 */
int mr_mw_bind(struct iwarp_context *ctx, const struct iwarp_pd *pd,
	       const struct mw_bind_req *b);

/*
 * Post-time checks of a bind WR on |qp| (verbs/mw.c): |mw| of |type| and
 * of the QP's PD, |rkey| with the window's index, rights only
 * REMOTE_READ/REMOTE_WRITE, the region of the same PD allowing binds and
 * (remote write) local write, the range inside it. 0 or -EINVAL / -EACCES.
 */
int mw_bind_wr_check(const struct iw_qp *qp,
		     const struct iwarp_mw_bind_info *bi,
		     const struct iwarp_mw *mw, uint32_t rkey,
		     enum iwarp_mw_type type);

/* iwarp_post_send, whose IWARP_WR_BIND_MW WRs bind windows of
 * |bind_type| (iwarp_bind_mw posts type 1 binds through it). */
int qp_post_send(struct iwarp_qp *qp, struct iwarp_send_wr *wr,
		 struct iwarp_send_wr **bad_wr, enum iwarp_mw_type bind_type);

/* Copies a bind WR's window, new STag and binding into WQE |w|. */
void mw_bind_wqe_fill(struct rdmap_wqe *w, const struct iwarp_send_wr *wr);

/*
 * Runs local WQE |w| (IWARP_WR_BIND_MW, IWARP_WR_LOCAL_INV) for a QP of
 * |pd| when the send queue reaches it (the engine's ops->sq_local).
 * Returns IWARP_WC_SUCCESS or IWARP_WC_MW_BIND_ERR.
 */
enum iwarp_wc_status mw_sq_local(struct iwarp_context *ctx,
				 const struct iwarp_pd *pd,
				 const struct rdmap_wqe *w);

/* ---- completion queues ---- */
struct iw_cq {
	struct iwarp_cq pub;
	pthread_spinlock_t lock;
	struct iwarp_wc *ring; /* capacity = size (= pub.cqe) */
	uint32_t size, head,
		tail;	/* head: next to poll, tail: next to fill (mod size) */
	uint32_t count; /* completions in the ring */
	int refs;	/* QPs using this CQ (atomic) */
	int armed;	/* 0, 1 = next completion, 2 = solicited only */
	bool overflow;	/* set once: CQ_ERR async event raised */
	unsigned int events_queued,
		events_acked;	 /* given out by get_cq_event / acked */
	struct iw_cq *chan_next; /* pending-event list of the channel */
	bool on_chan_list;	 /* an event is pending (at most one per CQ) */
};

/* A completion channel: an eventfd (EFD_SEMAPHORE) readable while its list
 * is non-empty (comp_channel.c). */
struct iw_channel {
	struct iwarp_comp_channel pub;
	pthread_mutex_t lock;	   /* the pending list and the fd's counter */
	struct iw_cq *head, *tail; /* CQs with a pending event, oldest first */
	bool fd_on; /* the counter's changes decided so far leave it at 1 */
	bool fd_watched; /* the fd is in the engine's sockets' set (wait.c) */
};

static inline struct iw_channel *channel_from_pub(struct iwarp_comp_channel *ch)
{
	return (struct iw_channel *)ch;
}

/* Queues one event for |cq| on its channel (coalesced while pending). */
void channel_fire(struct iw_cq *cq);

/* Removes |cq| from its channel's pending list (CQ destruction). */
void channel_remove_cq(struct iw_cq *cq);

static inline struct iw_cq *cq_from_pub(struct iwarp_cq *cq)
{
	return (struct iw_cq *)cq;
}

/*
 * Adds one completion (any thread). |solicited|: the completion of a Send
 * with Solicited Event or an error (fires a solicited-only arm).
 * Fires the channel when armed. Returns 0, or -ENOSPC on overflow (the CQ is
 * then in error: CQ_ERR async event, further pushes dropped).
 */
int cq_push(struct iw_cq *cq, const struct iwarp_wc *wc, bool solicited);

/*
 * Removes the completions of QP |qp_num| from |cq| (iwarp_destroy_qp, after
 * the QP is detached from the engine): none of a destroyed QP is polled
 * later, as with rdma-core's hardware providers, which clean the CQ when a
 * QP is destroyed. The order of the others is kept. |keep_recv|: a QP on a
 * shared receive queue keeps its receive completions (their buffers were
 * the SRQ's; dropping them would lose the buffers).
 */
void cq_purge_qp(struct iw_cq *cq, uint32_t qp_num, bool keep_recv);

/*
 * True while |cq| holds a completion of QP |qp_num| that is not a flush
 * (IWARP_WC_WR_FLUSH_ERR): one the application has yet to poll and learn
 * from (the CM holds a peer's DISCONNECTED meanwhile, cm/cm_disc.c).
 * Any thread.
 */
bool cq_has_unflushed(struct iw_cq *cq, uint32_t qp_num);

/* ---- shared receive queues and receive WQEs ---- */
/* A receive WQE is the engine's struct rdmap_rqe (rdmap/rdmap_wr.h). */
#define iw_rqe rdmap_rqe

struct iw_srq {
	struct iwarp_srq pub;
	pthread_spinlock_t lock;
	struct iw_rqe *ring;
	uint32_t size, head, tail, count;
	struct iwarp_srq_attr attr;
	bool limit_armed;
	int refs; /* QPs using this SRQ (atomic) */
};

static inline struct iw_srq *srq_from_pub(struct iwarp_srq *srq)
{
	return (struct iw_srq *)srq;
}

/* Smallest power of two >= |n| (at least 1): the size of a WQE ring. */
uint32_t verbs_ring_size(uint32_t n);

/*
 * Copies receive WR |wr| into |rqe| after checking num_sge <= |max_sge|
 * (and a non-NULL sg_list). Returns 0 or -EINVAL.
 */
int verbs_rqe_fill(struct iw_rqe *rqe, const struct iwarp_recv_wr *wr,
		   uint32_t max_sge);

/*
 * Takes the oldest WQE of |srq| into |out|; raises SRQ_LIMIT_REACHED
 * when armed and fewer than srq_limit remain. Returns 0 or -ENOENT.
 */
int srq_pop(struct iw_srq *srq, struct iw_rqe *out);

/* ---- queue pairs ---- */
/* A send WQE is the engine's struct rdmap_wqe (rdmap/rdmap_wr.h). */
#define iw_wqe rdmap_wqe

struct iw_qp {
	struct iwarp_qp pub;
	pthread_mutex_t
		lock; /* state, sq/rq indices (short critical sections) */
	/* The send queue's consumer side: sq_tail advances (completions,
	 * flushes) under sq_lock, taken after |lock| where both are held. A
	 * poster (|lock|) and the engine completing Writes (sq_lock) thus never
	 * wait for each other; the poster reads sq_tail with an acquire load,
	 * and a completion moves sq_tail past a WQE before its CQE is pushed,
	 * so a thread that polled the CQE finds the slot free. */
	pthread_mutex_t sq_lock;
	/* The same for the receive queue: rq_tail advances (the engine taking
	 * a receive, flushes) under rq_lock, and iwarp_post_recv (|lock|)
	 * reads it with an acquire load. */
	pthread_mutex_t rq_lock;
	struct iwarp_qp_cap cap;
	bool sq_sig_all;
	/* send queue ring: [sq_tail, sq_head) posted, not yet completed;
	 * the engine transmits in order from sq_next (sq_tail <= sq_next <=
	 * sq_head) */
	struct iw_wqe *sq;
	uint32_t sq_size, sq_head, sq_next, sq_tail;
	/* receive queue ring (unused with an SRQ) */
	struct iw_rqe *rq;
	uint32_t rq_size, rq_head, rq_tail;
	bool rx_wait;	  /* the engine waits for a receive WQE: posting one
			     rings the doorbell (verbs/qp_conn.c ops_rx_wait) */
	uint8_t ird, ord; /* negotiated Read limits (max_dest_rd_atomic /
			     max_rd_atomic) */
	struct qp_conn
		*conn; /* engine-side wire state; NULL when not connected */
	struct iwarp_cm_id *cm_id;
	struct iwarp_term_cause
		term;	    /* why the QP went to ERR, if a TERMINATE did it */
	bool term_valid;    /* |term| is set */
	bool term_received; /* the peer sent it (set before qp_set_error) */
	int access_flags;   /* IWARP_QP_ACCESS_FLAGS (remote access allowed) */
	bool rdmap_ext;	    /* RFC 7306 negotiated on the connection */
};

/* Slot of SQ index |i| / RQ index |i| (see "Ring indices" above). */
static inline struct iw_wqe *qp_sq_wqe(struct iw_qp *qp, uint32_t i)
{
	return &qp->sq[i & (qp->sq_size - 1)];
}

static inline struct iw_rqe *qp_rq_rqe(struct iw_qp *qp, uint32_t i)
{
	return &qp->rq[i & (qp->rq_size - 1)];
}

static inline struct iw_qp *qp_from_pub(struct iwarp_qp *qp)
{
	return (struct iw_qp *)qp;
}

/*
 * Takes the oldest receive WQE for an incoming Send (from the SRQ if the QP
 * has one). Returns 0 and fills |out|, or -ENOENT when none is posted.
 * Engine thread. Raises SRQ_LIMIT_REACHED when an armed SRQ drops below its
 * limit. The popped WQE belongs to the caller from then on: it must complete it
 * (cq_push on recv_cq, IWARP_WC_RECV), also when the QP fails meanwhile
 * (qp_set_error flushes only WQEs still in the ring).
 */
int qp_rq_pop(struct iw_qp *qp, struct iw_rqe *out);

/*
 * Moves the QP to ERR (any thread): records |term| (may be NULL), flushes
 * every posted-but-uncompleted send WQE and every receive WQE with
 * IWARP_WC_WR_FLUSH_ERR into the CQs (in order), raises IWARP_EVENT_QP_FATAL
 * (or QP_REQ_ERR / QP_ACCESS_ERR per |term|) when |async| is true.
 * The engine calls this after it stopped transmitting for the QP.
 * Every flushed send WQE gets a completion, signaled or not (ibverbs).
 * A QP with an SRQ raises IWARP_EVENT_QP_LAST_WQE_REACHED (|async| true).
 * Set qp->term_received before the call when the peer sent the TERMINATE.
 */
void qp_set_error(struct iw_qp *qp, const struct iwarp_term_cause *term,
		  bool async);

/* The completion opcode of send WR opcode |op|. */
enum iwarp_wc_opcode qp_wc_opcode(enum iwarp_wr_opcode op);

/* Completes send WQEs [sq_tail, upto) in order: signaled ones get a
 * completion with |status| (IWARP_WC_SUCCESS normally). Engine thread.
 * With an error status every WQE of the range gets a completion. |upto| is
 * clamped to sq_head; a range already flushed is ignored. In SQD, raises
 * IWARP_EVENT_SQ_DRAINED when the SQ becomes empty. Returns 0, or -ENOSPC
 * when a completion could not be queued (CQ overflow). */
int qp_sq_complete(struct iw_qp *qp, uint32_t upto,
		   enum iwarp_wc_status status);

/* ---- hooks the engine provides to verbs (io/engine.h implements) ---- */
/* Called after WRs were added to the SQ (doorbell); |reads_only| when each
 * of them is a Read or an atomic (it is answered by a response). */
void engine_qp_kick(struct iw_qp *qp, bool reads_only);
/* Called when the application moves a connected QP to ERR or SQD, or destroys
 * it; the engine sends what the RFC asks (TERMINATE / orderly close) and
 * detaches. verbs calls it (without holding qp->lock) for every application
 * move to ERR, SQD or RESET, whether or not the QP is connected (the engine
 * ignores a QP it does not run). IWARP_QPS_RESET means detach: it is also what
 * iwarp_destroy_qp passes (after ERR); once it returns, the engine must not
 * touch the QP again. */
void engine_qp_state_change(struct iw_qp *qp, enum iwarp_qp_state new_state);
/* Inline progress mode: poll_cq calls this before reading the ring. */
int engine_progress(struct engine *eng);
/*
 * Region |stag| is being deregistered and still referenced: the engine
 * lets go of it (qp_conn_revoke_all, on the engine thread). Any thread but
 * the engine thread.
 */
void engine_mem_revoke(struct iwarp_context *ctx, uint32_t stag);

#endif /* IWARP_VERBS_VERBS_H */
