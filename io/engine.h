/*
 * io/engine.h: the progress engine, a generic io_uring event loop.
 *
 * The engine knows nothing about iWARP. One engine = one io_uring and (unless
 * ENGINE_MODE_INLINE) one progress thread that owns every socket of the
 * engine. Protocol code above it is sans-I/O and is driven through endpoints
 * (io/ep.h) whose owners hand out iovecs.
 *
 * Threads: everything in io/ runs on the engine thread unless its comment
 * says "any thread". From other threads, use engine_call() or
 * engine_call_sync() (or an engine_work item) to get onto the engine thread.
 * In ENGINE_MODE_INLINE the "engine thread" is whichever thread is inside
 * engine_run_once() at the moment.
 */
#ifndef IWARP_IO_ENGINE_H
#define IWARP_IO_ENGINE_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct engine;

/* How the engine waits for work. Same values as enum iwarp_progress_mode. */
enum engine_mode {
	ENGINE_MODE_ADAPTIVE =
		0, /* thread: busy-poll an adaptive window, then sleep */
	ENGINE_MODE_LATENCY = 1, /* thread: always busy-poll (uses one core) */
	ENGINE_MODE_CPU = 2, /* thread: always sleep in the kernel when idle */
	ENGINE_MODE_INLINE = 3, /* no thread: engine_run_once() drives it */
};

/* Default upper bound of the ADAPTIVE busy-poll window, in microseconds. */
#define ENGINE_BUSY_POLL_US_DEFAULT 100

struct engine_attr {
	enum engine_mode mode;
	uint32_t busy_poll_us;		/* ADAPTIVE window bound; 0 = default */
	const char *congestion_control; /* TCP_CONGESTION for our sockets; NULL
					   = system's */
	uint32_t ring_entries;		/* SQ size; 0 = 256 */
	/* thread modes: plain TCP sockets are read and written with
	 * recvmsg(2)/sendmsg(2) on epoll readiness instead of io_uring
	 * operations, so that a thread other than the progress thread can
	 * drive them (engine_drive_begin, engine_assist); ignored in INLINE */
	bool direct_io;
};

/*
 * Creates an engine (and, unless ENGINE_MODE_INLINE, starts its thread).
 * |attr| NULL = ADAPTIVE with defaults. Any thread.
 * Returns NULL with errno: ENOSYS (kernel without io_uring, or without an
 * opcode we need), EPERM (io_uring disabled by sysctl or seccomp), ENOENT /
 * EPERM from TCP_CONGESTION when |congestion_control| cannot be used,
 * EINVAL (bad mode), ENOMEM, or what io_uring_queue_init / pthread_create said.
 */
struct engine *engine_create(const struct engine_attr *attr);

/*
 * Stops the thread and frees the engine. Any thread but the engine thread.
 * Owners should have closed their endpoints, listeners and connects; any that
 * remain are aborted without callbacks. Queued engine_call()s still run.
 */
void engine_destroy(struct engine *eng);

/*
 * Drives the engine once: runs queued work and due timers, reaps completions,
 * submits. When nothing happened, waits up to |timeout_ms| (-1 = forever,
 * 0 = do not wait) for an event, then polls again.
 * ENGINE_MODE_INLINE only (-EINVAL otherwise). Any thread, one at a time
 * (concurrent callers serialize).
 * Returns the number of events handled (>= 0) or -errno.
 */
int engine_run_once(struct engine *eng, int timeout_ms);

/* The mode the engine runs in. Any thread. */
enum engine_mode engine_get_mode(const struct engine *eng);

/* True when the calling thread is the engine thread of |eng|. Any thread. */
bool engine_in_thread(const struct engine *eng);

/* The engine's congestion control name ("" = system default). Any thread. */
const char *engine_cc(const struct engine *eng);

/* Monotonic clock in nanoseconds (CLOCK_MONOTONIC). Any thread. */
uint64_t engine_now_ns(void);

/*
 * Receive accounting for the owners' placement choice. engine_rx_count is
 * called by an endpoint when one of its receives completed (engine thread);
 * engine_rx_shared is true when the last reap batch completed two or more
 * receives. An endpoint has one receive outstanding, and its next one is
 * normally submitted after the batch, so those are receives of two or more
 * endpoints: the engine's CPU is shared by several incoming streams, and a
 * receive that saves a system call by copying costs more than it saves.
 */
void engine_rx_count(struct engine *eng);
bool engine_rx_shared(const struct engine *eng);

/* ---- work items: allocation-free, coalescing doorbells ---- */

/*
 * A work item runs |fn(arg)| once on the engine thread after being queued.
 * Queuing an item that is already queued (and not yet started) is a no-op,
 * so an owner can embed one per object as its doorbell (e.g. one per QP:
 * post_send queues it, the engine drains the send queue).
 * The item must stay valid until it ran (or the engine is destroyed).
 */
struct engine_work {
	struct engine_work *next;
	void (*fn)(void *arg);
	void *arg;
	atomic_bool queued;
};

/* Initializes |w| (not queued). */
void engine_work_init(struct engine_work *w, void (*fn)(void *arg), void *arg);

/*
 * Queues |w| on |eng|. Any thread. From another thread this wakes the engine
 * only if it is (or may be) asleep: an atomic push, plus one eventfd write
 * when the engine sleeps. Items run in FIFO order per queuing thread.
 */
void engine_work_queue(struct engine *eng, struct engine_work *w);

/* ---- cross-thread calls ---- */

/*
 * Runs fn(arg) on the engine thread, asynchronously (queue + doorbell; in
 * INLINE mode on the next engine_run_once). Any thread; from the engine
 * thread it runs after the current callback returns.
 * Returns 0 or -ENOMEM.
 */
int engine_call(struct engine *eng, void (*fn)(void *arg), void *arg);

/*
 * Runs fn(arg) on the engine thread and waits until it returned. Any thread:
 * on the engine thread itself it runs fn directly. In INLINE mode, when no
 * thread is inside engine_run_once, the caller runs fn itself (it holds the
 * engine while doing so). With a progress thread the caller sleeps on a
 * one-shot flag the engine sets after fn returned (util/oneshot.h: no lock
 * for the woken caller to wait on). Returns 0 or -ENOMEM.
 */
int engine_call_sync(struct engine *eng, void (*fn)(void *arg), void *arg);

/*
 * engine_call_sync, but with direct_io (not INLINE), when no thread holds
 * the engine, the caller takes it and runs the work queued before and
 * fn itself, instead of waking the progress thread and sleeping until it
 * answered; what only the progress thread does (submissions it owns,
 * timers) is left to it. For calls whose timing no peer or application
 * thread races with (connection set-up): teardown calls keep the
 * hand-off, whose pace stock programs' own races depend on
 * (bench/README.md, "Where connection set-up goes").
 */
int engine_call_sync_here(struct engine *eng, void (*fn)(void *arg), void *arg);

/*
 * Runs |w| on |eng| without waiting for its progress thread: at once on
 * the engine thread; with direct_io, when no thread holds the engine,
 * here, holding it (as engine_call_sync_here); on an INLINE engine as
 * engine_call_sync does; else queued (engine_work_queue), to run after
 * the work queued before it. |w| must stay valid until it ran.
 */
void engine_work_here_or_queue(struct engine *eng, struct engine_work *w);

/* ---- direct sockets: other threads drive the engine ---- */

/*
 * With engine_attr.direct_io, a thread that is about to block waiting for
 * something the engine will produce (a completion channel's event) can be
 * the one that reads the sockets, so that an arriving message wakes that
 * thread alone, as a blocking recv(2) would, instead of waking the
 * progress thread which then wakes it. io_uring cannot do that: it runs a
 * receive's completion work in the task that submitted the receive.
 *
 *   efd = engine_drive_begin(eng);     // -EBUSY: another thread drives
 *   engine_drive_watch(eng, my_fd);    // once per fd
 *   engine_drive_pass(eng, false);     // run the queued work
 *   while (!what I wait for)
 *           engine_drive_wait(eng);    // sleep, read what is ready, run
 *   engine_drive_end(eng);
 *
 * (or, without engine_drive_watch: poll({my_fd, efd}), then
 * engine_drive_pass(eng, true) when efd was readable.)
 *
 * While a thread drives, the progress thread does not watch the direct
 * sockets (it still runs work, timers and io_uring completions). Any
 * thread but the progress thread; one driver at a time.
 * engine_drive_pass reads the sockets only with |edges| (after a poll
 * found the fd readable: the first pass of a wait only runs the work).
 * engine_drive_begin returns the fd to poll for readiness (>= 0),
 * -EOPNOTSUPP without direct_io (or in INLINE mode), or -EBUSY.
 *
 * engine_drive_watch adds an eventfd-like |fd| (readable when what the
 * caller waits for is there; written by other threads) to the sockets'
 * set, edge-triggered, until the fd is closed: engine_drive_wait then
 * also ends when it becomes readable. 0 or -errno.
 * engine_drive_wait sleeps in one epoll_wait(2) on the sockets' set and
 * hands what it returned to the sockets, then runs the work, as a pass
 * would: the sleep and the readiness report are one system call.
 * Returns 1 when a watched fd became readable, 0 otherwise (a socket
 * event, or nothing the caller waits for), -EINTR (a signal).
 * Driver only.
 */
int engine_drive_begin(struct engine *eng);
void engine_drive_pass(struct engine *eng, bool edges);
int engine_drive_watch(struct engine *eng, int fd);
int engine_drive_wait(struct engine *eng);
void engine_drive_end(struct engine *eng);

/*
 * The hand-back timer's push policy (engine_drive_begin): true when a
 * timer due at |due| should be moved out by a driver arriving at |now|,
 * with a grace period of |grace| (all in ns, CLOCK_MONOTONIC). Pure.
 */
bool engine_tfd_push_due(uint64_t now, uint64_t due, uint64_t grace);

/* True when the engine's plain sockets use direct I/O. Any thread. */
bool engine_direct(const struct engine *eng);

/*
 * Queues |w| like engine_work_queue but without waking the engine; the
 * caller then calls engine_assist() (outside any lock |w|'s function
 * takes). Any thread.
 */
void engine_work_queue_quiet(struct engine *eng, struct engine_work *w);

/*
 * With direct_io, runs the queued work on the calling thread when the
 * progress thread sleeps and nobody else holds the engine (a post_send's
 * message then leaves in the poster's own sendmsg(2), without a wake-up);
 * otherwise wakes the engine if it sleeps. Any thread.
 */
void engine_assist(struct engine *eng);

/*
 * engine_assist for work queued while a pass is bound to come anyway (an
 * inbound message owed to the work's connection, whose receiver runs the
 * queued work after it): while the sockets are with the waiting threads,
 * leaves the work to that pass or to the poster's own next wait, which
 * then send all that was queued meanwhile at once; while the progress
 * thread has them, as engine_assist. Any thread.
 */
void engine_assist_owed(struct engine *eng);

/* ---- one-shot timers (engine thread) ---- */

/* Embed one per timeout; engine_timer_init before first use. */
struct engine_timer {
	uint64_t deadline_ns;
	void (*cb)(void *arg);
	void *arg;
	uint32_t idx; /* position in the engine's heap, or UINT32_MAX */
};

/* Initializes |t| (not armed). */
void engine_timer_init(struct engine_timer *t);

/*
 * Reserves room for |n| more armed timers, so that engine_timer_start of
 * the timers an object owns cannot fail later (reserve when the object is
 * created, where an error can still be reported; unreserve when it goes).
 * Engine thread. Returns 0 or -ENOMEM.
 */
int engine_timer_reserve(struct engine *eng, uint32_t n);
void engine_timer_unreserve(struct engine *eng, uint32_t n);

/*
 * Arms |t| to call cb(arg) on the engine thread in |ms| milliseconds (0 = on
 * the next loop iteration). Re-arming an armed timer moves it.
 * Returns 0, or -ENOMEM (only when more timers are armed than reserved).
 */
int engine_timer_start(struct engine *eng, struct engine_timer *t, uint64_t ms,
		       void (*cb)(void *arg), void *arg);

/* Disarms |t|; its callback will not run. No-op when not armed. */
void engine_timer_cancel(struct engine *eng, struct engine_timer *t);

/* True when |t| is armed. */
bool engine_timer_armed(const struct engine_timer *t);

#endif /* IWARP_IO_ENGINE_H */
