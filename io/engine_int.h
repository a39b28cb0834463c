/*
 * io/engine_int.h: engine internals shared by the io/ files (only io/
 * includes this, and only io/ includes liburing).
 */
#ifndef IWARP_IO_ENGINE_INT_H
#define IWARP_IO_ENGINE_INT_H

#include <liburing.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "io/engine.h"

/* The struct holding |ptr| as its |member|. */
#define io_container_of(ptr, type, member)                                     \
	((type *)(void *)((char *)(ptr)-offsetof(type, member)))

/*
 * One io_uring operation in flight. The SQE's user_data points at it; the
 * engine calls complete(op, cqe->res, cqe->flags) for its CQE. user_data 0
 * (cancel requests, linked timeouts) is ignored.
 */
struct engine_op {
	void (*complete)(struct engine_op *op, int res, uint32_t flags);
};

/*
 * Something the engine must abort if its owner leaked it at engine_destroy
 * (endpoints, listeners, connects). abort() starts the close (no owner
 * callback after it); the object unlinks itself (engine_obj_del) when it is
 * freed, after the kernel released it. engine_destroy polls until none is
 * left.
 */
struct engine_obj {
	struct engine_obj *prev, *next;
	void (*abort)(struct engine_obj *obj);
};

struct engine {
	struct io_uring ring;
	enum engine_mode mode;
	uint32_t busy_max_ns, busy_win_ns;
	char cc[32];

	pthread_t thread;
	bool has_thread;
	atomic_bool stop;
	/* thread modes: the progress thread sets the ring up (so that only it
	 * is known to io_uring as the ring's task) and reports the result */
	unsigned int ring_entries, ring_flags;
	int start_rc;
	int start_efd; /* written once by the thread when |start_rc| is set */

	/* doorbell: |sleeping| is set while the engine may block in the
	 * kernel; remote queuers write |efd| only then, once (|rung|) */
	atomic_int sleeping;
	atomic_bool rung;
	int efd;
	uint64_t efd_val;
	struct engine_op efd_op;

	/* MPSC stack of queued work (pushed by any thread, newest first) */
	_Atomic(struct engine_work *) work_in;
	struct engine_work *work_head, *work_tail; /* engine-local FIFO */

	/* INLINE mode: one runner at a time */
	pthread_mutex_t run_lock;

	/* timers: binary min-heap by deadline */
	struct engine_timer **heap;
	uint32_t n_timers, heap_cap;
	uint32_t timers_reserved; /* engine_timer_reserve: heap_cap >= this */

	/* receive completions of the current reap batch, and of the last
	 * one: two or more means several connections are streaming in at
	 * once (engine_rx_shared) */
	uint32_t rx_in_batch, rx_last_batch;

	/* direct_io (thread modes): |epfd| holds the direct sockets
	 * (edge-triggered), |psfd| is what the progress thread sleeps on:
	 * the ring's fd and, unless a thread drives (|driver|), |epfd|.
	 * Whoever runs engine code holds |run_lock| then. */
	bool direct;
	int epfd, psfd;
	atomic_bool driver;
	/* a driver sleeps in epoll_wait on |epfd| without the engine: the
	 * pollees released meanwhile wait on |retired| (run_lock) */
	atomic_bool drive_waiting;
	struct engine_pollee *retired;
	/* After a driver leaves, the sockets stay unwatched for a grace
	 * period (its next wait usually comes sooner): |tfd| (in |psfd|)
	 * then hands them back to the progress thread. |ps_lock| guards
	 * |ps_sockets| (|epfd| is in |psfd|); |tfd_armed| keeps one arm
	 * pending at most, |tfd_due_ns| is when that arm fires (a hint for
	 * engine_drive_begin's push), |drive_end_ns| is when the last
	 * driver left. */
	int tfd;
	pthread_mutex_t ps_lock;
	atomic_bool ps_sockets;
	atomic_bool tfd_armed;
	_Atomic uint64_t tfd_due_ns;
	_Atomic uint64_t drive_end_ns;
	_Atomic uint64_t grace_ns; /* the grace period now */

	/* receive memory the synchronous backends' endpoints share
	 * (engine_rx_scratch), allocated at first use */
	uint8_t *rx_scratch;

	/* live objects, aborted at destroy */
	struct engine_obj objs;
	unsigned int n_objs;
};

/* An SQE to fill (submits to make room when the SQ is full). NULL only when
 * the kernel refuses submission. Engine thread. */
struct io_uring_sqe *engine_sqe(struct engine *eng);

/* Submits the queued SQEs now (latency: do not wait for the loop's end). */
void engine_submit(struct engine *eng);

/*
 * EP_RX_PROVIDED_MAX octets of receive memory shared by the endpoints of
 * synchronous backends (io_backend_ops.recv_sync): its contents live only
 * from one receive to the end of that receive's rx_done. NULL when it
 * cannot be allocated. Engine thread.
 */
uint8_t *engine_rx_scratch(struct engine *eng);

/* Tracks |obj| for engine_destroy / stops tracking it. Engine thread (or
 * the creating thread before the object is published). */
void engine_obj_add(struct engine *eng, struct engine_obj *obj,
		    void (*abort_fn)(struct engine_obj *obj));
void engine_obj_del(struct engine *eng, struct engine_obj *obj);

/*
 * A direct socket registered with the engine's epoll set: ready() runs
 * (engine thread, with the engine held) with the epoll events that
 * arrived; it must only note them and queue work, not call owners.
 */
struct engine_pollee {
	void (*ready)(struct engine_pollee *pe, uint32_t events);
	/* engine_pollee_release: freed later, by free_fn */
	struct engine_pollee *retired_next;
	void (*free_fn)(struct engine_pollee *pe);
};

/* Adds |fd| (edge-triggered, in and out) / removes it. Engine thread.
 * 0 or -errno. */
int engine_pollee_add(struct engine *eng, int fd, struct engine_pollee *pe);
void engine_pollee_del(struct engine *eng, int fd);

/*
 * Frees |pe| (after engine_pollee_del) with |free_fn|: at once, or, while a
 * driver sleeps in engine_drive_wait, when it is back: the events it took
 * from the kernel may still name |pe| (ready() then still runs on it, so
 * the owner must mark itself dead first). Engine held.
 */
void engine_pollee_release(struct engine *eng, struct engine_pollee *pe,
			   void (*free_fn)(struct engine_pollee *pe));

/* Runs due timers; returns how many fired. Engine thread. */
int engine_timers_run(struct engine *eng, uint64_t now);

/* Nanoseconds until the next timer (0 if due), or UINT64_MAX if none. */
uint64_t engine_timers_next(struct engine *eng, uint64_t now);

/* Frees the timer heap. */
void engine_timers_fini(struct engine *eng);

#endif /* IWARP_IO_ENGINE_INT_H */
