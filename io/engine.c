/*
 * io/engine.c: the progress engine loop, its thread and wait modes, the
 * doorbell, work items and cross-thread calls.
 */
#include "config.h"

#include <errno.h>
#include <liburing.h>
#include <pthread.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <sys/timerfd.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <time.h>
#include <unistd.h>

#include "io/engine_duty.h"
#include "io/engine_int.h"
#include "io/ep.h"
#include "util/mem.h"
#include "util/oneshot.h"
#include "util/thread.h"

#define ENGINE_RING_DEFAULT 256
#define ENGINE_BUSY_MIN_NS  1000u /* the ADAPTIVE window never shrinks below */
#ifndef ENGINE_YIELD_EVERY
#define ENGINE_YIELD_EVERY                                                     \
	64u /* LATENCY: sched_yield once per this many empty polls */
#endif
/* A gap this long between two of our empty polls means we were descheduled:
 * the cores are oversubscribed and spinning only delays the threads we wait
 * for (the application, the peer, softirq). */
#define ENGINE_PREEMPT_NS 20000u
/* How long the direct sockets stay with a thread that stopped driving
 * (engine_drive_end) before the progress thread watches them again: a
 * thread that waits for every message (a ping-pong, an MPI progress
 * thread) is back well within it, so the progress thread is not woken
 * for a message the waiter will read; a message that comes while nobody
 * waits is read at most this late. */
/* epoll data of the hand-back timer in the progress thread's set (the
 * ring's fd and the sockets' set carry 0) */
#define ENGINE_PS_TIMER 1u
#ifndef ENGINE_DRIVE_GRACE_NS
#define ENGINE_DRIVE_GRACE_NS 200000u
#endif
/* The timer that ends the grace period wakes the progress thread. A
 * driver that comes back while it is pending pushes it out
 * (engine_drive_begin), and a timer that still finds a driver in (one
 * asleep in its wait since before the push was due) did so for nothing:
 * either way the period doubles up to this, so a thread that waits for
 * every message costs a timer system call per period and no wake-ups;
 * a hand-back resets it. */
#define ENGINE_DRIVE_GRACE_MAX_NS (16u * ENGINE_DRIVE_GRACE_NS)

/* The engine whose loop the current thread runs (NULL: none). */
static __thread struct engine *tls_engine;
/* True on a progress thread: the only threads that submit to a ring in the
 * thread modes (see engine_ring_init). */
static __thread bool tls_progress;

uint64_t engine_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

bool engine_in_thread(const struct engine *eng)
{
	return tls_engine == eng;
}

enum engine_mode engine_get_mode(const struct engine *eng)
{
	return eng->mode;
}

const char *engine_cc(const struct engine *eng)
{
	return eng->cc;
}

/* ---- SQEs ---- */

struct io_uring_sqe *engine_sqe(struct engine *eng)
{
	struct io_uring_sqe *sqe = io_uring_get_sqe(&eng->ring);
	int i;

	for (i = 0; !sqe && i < 64; i++) {
		int rc = io_uring_submit(&eng->ring);

		if (rc < 0 && rc != -EAGAIN && rc != -EBUSY && rc != -EINTR)
			return NULL;
		sqe = io_uring_get_sqe(&eng->ring);
	}
	return sqe;
}

void engine_submit(struct engine *eng)
{
	/* A thread driving a direct engine leaves its SQEs to the progress
	 * thread (engine_drive_pass rings it). */
	if (eng->mode != ENGINE_MODE_INLINE && !tls_progress)
		return;
	if (io_uring_sq_ready(&eng->ring) > 0)
		io_uring_submit(&eng->ring);
}

/* ---- live objects ---- */

void engine_obj_add(struct engine *eng, struct engine_obj *obj,
		    void (*abort_fn)(struct engine_obj *obj))
{
	obj->abort = abort_fn;
	obj->next = eng->objs.next;
	obj->prev = &eng->objs;
	eng->objs.next->prev = obj;
	eng->objs.next = obj;
	eng->n_objs++;
}

void engine_obj_del(struct engine *eng, struct engine_obj *obj)
{
	if (!obj->next)
		return;
	obj->prev->next = obj->next;
	obj->next->prev = obj->prev;
	obj->next = obj->prev = NULL;
	eng->n_objs--;
}

/* ---- doorbell and work items ---- */

static void engine_efd_arm(struct engine *eng);

static void engine_efd_complete(struct engine_op *op, int res, uint32_t flags)
{
	struct engine *eng = io_container_of(op, struct engine, efd_op);

	(void)res;
	(void)flags;
	/* Reset before re-arming: a queuer that still saw rung == 1 pushed its
	 * work before our next look at work_in (seq_cst), see engine_poll. */
	atomic_store(&eng->rung, false);
	engine_efd_arm(eng);
}

static void engine_efd_arm(struct engine *eng)
{
	struct io_uring_sqe *sqe = engine_sqe(eng);

	if (!sqe)
		return;
	io_uring_prep_read(sqe, eng->efd, &eng->efd_val, sizeof(eng->efd_val),
			   0);
	io_uring_sqe_set_data(sqe, &eng->efd_op);
}

/* Wakes the engine if it sleeps (or is about to). Any thread. */
static void engine_ring_bell(struct engine *eng)
{
	uint64_t one = 1;

	if (atomic_load(&eng->sleeping) && !atomic_exchange(&eng->rung, true)) {
		ssize_t rc = write(eng->efd, &one, sizeof(one));

		(void)rc; /* an eventfd write only fails on overflow: awake
			     anyway */
	}
}

void engine_work_init(struct engine_work *w, void (*fn)(void *arg), void *arg)
{
	w->next = NULL;
	w->fn = fn;
	w->arg = arg;
	atomic_init(&w->queued, false);
}

void engine_work_queue(struct engine *eng, struct engine_work *w)
{
	struct engine_work *head;

	if (atomic_exchange(&w->queued, true))
		return;
	if (engine_in_thread(eng)) {
		w->next = NULL;
		if (eng->work_tail)
			eng->work_tail->next = w;
		else
			eng->work_head = w;
		eng->work_tail = w;
		return;
	}
	head = atomic_load_explicit(&eng->work_in, memory_order_relaxed);
	do {
		w->next = head;
	} while (!atomic_compare_exchange_weak(&eng->work_in, &head, w));
	engine_ring_bell(eng);
}

/* Moves the remotely pushed items (newest first) to the local FIFO. */
static void engine_work_collect(struct engine *eng)
{
	struct engine_work *w, *rev = NULL, *next;

	if (!atomic_load_explicit(&eng->work_in, memory_order_relaxed))
		return;
	w = atomic_exchange(&eng->work_in, NULL);
	for (; w; w = next) {
		next = w->next;
		w->next = rev;
		rev = w;
	}
	while (rev) {
		next = rev->next;
		rev->next = NULL;
		if (eng->work_tail)
			eng->work_tail->next = rev;
		else
			eng->work_head = rev;
		eng->work_tail = rev;
		rev = next;
	}
}

/* Runs the items queued so far (not the ones they queue). */
static int engine_work_run(struct engine *eng)
{
	struct engine_work *w, *last;
	int n = 0;

	engine_work_collect(eng);
	last = eng->work_tail;
	if (!last)
		return 0;
	do {
		w = eng->work_head;
		eng->work_head = w->next;
		if (!eng->work_head)
			eng->work_tail = NULL;
		w->next = NULL;
		atomic_store(&w->queued, false);
		w->fn(w->arg);
		n++;
	} while (w != last && eng->work_head);
	return n;
}

/* ---- cross-thread calls ---- */

struct engine_call_item {
	struct engine_work work;
	void (*fn)(void *arg);
	void *arg;
};

static void engine_call_run(void *arg)
{
	struct engine_call_item *c = arg;

	c->fn(c->arg);
	iw_free(c);
}

int engine_call(struct engine *eng, void (*fn)(void *arg), void *arg)
{
	struct engine_call_item *c = iw_malloc(sizeof(*c));

	if (!c)
		return -ENOMEM;
	c->fn = fn;
	c->arg = arg;
	engine_work_init(&c->work, engine_call_run, c);
	engine_work_queue(eng, &c->work);
	return 0;
}

/*
 * A call engine_call_sync waits for, on the caller's stack. With a
 * progress thread the caller sleeps on |woken| (util/oneshot.h: the
 * engine wakes it without a lock the woken caller would then wait for);
 * in INLINE mode it waits on |cond| with a timeout, to take over the
 * engine if the thread running it leaves first.
 */
struct engine_sync_item {
	struct engine_work work;
	void (*fn)(void *arg);
	void *arg;
	bool use_cond;
	struct iw_oneshot woken;
	pthread_mutex_t lock;
	pthread_cond_t cond;
	bool done;
};

static void engine_sync_run(void *arg)
{
	struct engine_sync_item *s = arg;

	s->fn(s->arg);
	if (!s->use_cond) {
		iw_oneshot_set(&s->woken); /* |s| may be gone after this */
		return;
	}
	pthread_mutex_lock(&s->lock);
	s->done = true;
	pthread_cond_signal(&s->cond);
	pthread_mutex_unlock(&s->lock);
}

static void engine_foreign_call(struct engine *eng, void (*fn)(void *arg),
				void *arg);

/* Runs fn(arg) here, holding the engine, when it is a direct (not INLINE)
 * engine nobody holds and this is not its thread: direct sockets let
 * whoever holds the engine run it. False when it did not run. */
static bool engine_try_call_here(struct engine *eng, void (*fn)(void *arg),
				 void *arg)
{
	if (engine_in_thread(eng) || !eng->direct ||
	    eng->mode == ENGINE_MODE_INLINE ||
	    pthread_mutex_trylock(&eng->run_lock) != 0)
		return false;
	engine_foreign_call(eng, fn, arg);
	return true;
}

int engine_call_sync_here(struct engine *eng, void (*fn)(void *arg), void *arg)
{
	if (engine_try_call_here(eng, fn, arg))
		return 0;
	return engine_call_sync(eng, fn, arg);
}

void engine_work_here_or_queue(struct engine *eng, struct engine_work *w)
{
	if (engine_try_call_here(eng, w->fn, w->arg))
		return;
	if (engine_in_thread(eng) || eng->mode == ENGINE_MODE_INLINE)
		engine_call_sync(eng, w->fn, w->arg); /* runs it at once */
	else
		engine_work_queue(eng, w);
}

int engine_call_sync(struct engine *eng, void (*fn)(void *arg), void *arg)
{
	struct engine_sync_item s;

	if (engine_in_thread(eng)) {
		fn(arg);
		return 0;
	}
	if (eng->mode == ENGINE_MODE_INLINE &&
	    pthread_mutex_trylock(&eng->run_lock) == 0) {
		/* Nobody drives the engine: we are its thread for now. Earlier
		 * queued work runs first (FIFO with engine_call). */
		tls_engine = eng;
		engine_work_collect(eng);
		while (eng->work_head)
			engine_work_run(eng);
		fn(arg);
		engine_submit(eng);
		tls_engine = NULL;
		pthread_mutex_unlock(&eng->run_lock);
		return 0;
	}
	s.fn = fn;
	s.arg = arg;
	s.use_cond = eng->mode == ENGINE_MODE_INLINE;
	iw_oneshot_init(&s.woken);
	s.done = false;
	if (s.use_cond) {
		pthread_mutex_init(&s.lock, NULL);
		pthread_cond_init(&s.cond, NULL);
	}
	engine_work_init(&s.work, engine_sync_run, &s);
	engine_work_queue(eng, &s.work);
	if (!s.use_cond) {
		iw_oneshot_wait(&s.woken);
		return 0;
	}
	pthread_mutex_lock(&s.lock);
	while (!s.done) {
		/* The runner may leave before our item ran: take over if it
		 * does. */
		struct timespec ts;

		clock_gettime(CLOCK_REALTIME, &ts);
		ts.tv_nsec += 1000000;
		if (ts.tv_nsec >= 1000000000) {
			ts.tv_sec++;
			ts.tv_nsec -= 1000000000;
		}
		pthread_cond_timedwait(&s.cond, &s.lock, &ts);
		if (!s.done && pthread_mutex_trylock(&eng->run_lock) == 0) {
			pthread_mutex_unlock(&s.lock);
			tls_engine = eng;
			engine_work_collect(eng);
			while (eng->work_head)
				engine_work_run(eng);
			engine_submit(eng);
			tls_engine = NULL;
			pthread_mutex_unlock(&eng->run_lock);
			pthread_mutex_lock(&s.lock);
		}
	}
	pthread_mutex_unlock(&s.lock);
	pthread_mutex_destroy(&s.lock);
	pthread_cond_destroy(&s.cond);
	return 0;
}

/* ---- the loop ---- */

/* Reaps every completion available now. */
static int engine_reap(struct engine *eng)
{
	struct io_uring_cqe *cqes[64];
	unsigned int i, n;
	int total = 0;

	/* COOP_TASKRUN: the kernel does not interrupt us for completions
	 * (no IPI); it raises IORING_SQ_TASKRUN and we enter to run them. */
	if (!io_uring_cq_ready(&eng->ring) &&
	    (IO_URING_READ_ONCE(*eng->ring.sq.kflags) & IORING_SQ_TASKRUN))
		io_uring_get_events(&eng->ring);
	do {
		n = io_uring_peek_batch_cqe(&eng->ring, cqes, 64);
		for (i = 0; i < n; i++) {
			struct engine_op *op = io_uring_cqe_get_data(cqes[i]);
			int res = cqes[i]->res;
			uint32_t flags = cqes[i]->flags;

			/* advance first: complete() may queue SQEs */
			io_uring_cq_advance(&eng->ring, 1);
			if (op)
				op->complete(op, res, flags);
		}
		total += (int)n;
	} while (n == 64);
	return total;
}

/* Closes the receive batch of one pass (engine_rx_shared). */
static void engine_rx_batch_end(struct engine *eng)
{
	if (eng->rx_in_batch > 0) {
		eng->rx_last_batch = eng->rx_in_batch;
		eng->rx_in_batch = 0;
	}
}

/* Direct sockets: takes the readiness edges from the epoll set and hands
 * them to their sockets, which queue work. Returns how many. */
static int engine_direct_collect(struct engine *eng)
{
	struct epoll_event ev[64];
	int i, n, total = 0;

	do {
		n = epoll_wait(eng->epfd, ev, 64, 0);
		for (i = 0; i < n; i++) {
			struct engine_pollee *pe = ev[i].data.ptr;

			pe->ready(pe, ev[i].events);
		}
		if (n > 0)
			total += n;
	} while (n == 64);
	return total;
}

int engine_pollee_add(struct engine *eng, int fd, struct engine_pollee *pe)
{
	struct epoll_event ev;

	memset(&ev, 0, sizeof(ev));
	ev.events = EPOLLIN | EPOLLOUT | EPOLLRDHUP | EPOLLET;
	ev.data.ptr = pe;
	if (epoll_ctl(eng->epfd, EPOLL_CTL_ADD, fd, &ev) < 0)
		return -errno;
	return 0;
}

void engine_pollee_del(struct engine *eng, int fd)
{
	(void)epoll_ctl(eng->epfd, EPOLL_CTL_DEL, fd, NULL);
}

void engine_pollee_release(struct engine *eng, struct engine_pollee *pe,
			   void (*free_fn)(struct engine_pollee *pe))
{
	/* seq_cst against engine_drive_wait: a driver that announces its
	 * sleep after this load polls a set that no longer holds |pe| */
	if (!atomic_load(&eng->drive_waiting)) {
		free_fn(pe);
		return;
	}
	pe->free_fn = free_fn;
	pe->retired_next = eng->retired;
	eng->retired = pe;
}

/* Frees the pollees released while a driver slept, once it is back (a
 * poster's assist may hold the engine while it still sleeps). Engine
 * held. */
static void engine_retired_free(struct engine *eng)
{
	if (atomic_load(&eng->drive_waiting))
		return;
	while (eng->retired) {
		struct engine_pollee *pe = eng->retired;

		eng->retired = pe->retired_next;
		pe->free_fn(pe);
	}
}

/* The pollee of the fds engine_drive_watch adds: their edges only end a
 * driver's sleep (its caller then looks at what the fd announces). */
static void engine_watch_ready(struct engine_pollee *pe, uint32_t events)
{
	(void)pe;
	(void)events;
}

static struct engine_pollee engine_watch_pollee = {
	.ready = engine_watch_ready,
};

bool engine_direct(const struct engine *eng)
{
	return eng->direct;
}

void engine_rx_count(struct engine *eng)
{
	eng->rx_in_batch++;
}

bool engine_rx_shared(const struct engine *eng)
{
	return eng->rx_last_batch >= 2;
}

uint8_t *engine_rx_scratch(struct engine *eng)
{
	/* not zeroed: the kernel writes before anyone reads */
	if (!eng->rx_scratch)
		eng->rx_scratch = iw_malloc(EP_RX_PROVIDED_MAX);
	return eng->rx_scratch;
}

/* One non-blocking pass: completions, work, timers, then submit. */
static int engine_poll(struct engine *eng)
{
	int n = engine_reap(eng);

	/* while a thread drives, the direct sockets are its to read */
	if (eng->direct &&
	    !atomic_load_explicit(&eng->driver, memory_order_relaxed))
		n += engine_direct_collect(eng);
	n += engine_work_run(eng);
	if (eng->n_timers)
		n += engine_timers_run(eng, engine_now_ns());
	engine_submit(eng);
	engine_rx_batch_end(eng);
	return n;
}

/* engine_poll on a progress thread: with direct_io other threads may run
 * engine code, so the pass holds the engine. */
static int engine_poll_progress(struct engine *eng)
{
	int n;

	if (!eng->direct)
		return engine_poll(eng);
	pthread_mutex_lock(&eng->run_lock);
	n = engine_poll(eng);
	pthread_mutex_unlock(&eng->run_lock);
	return n;
}

static void engine_take_sockets(struct engine *eng);

/*
 * Direct mode's sleep (progress thread): on the epoll set holding the
 * ring's fd and, unless a thread drives, the direct sockets' set. The
 * thread's own io_uring completion work interrupts the wait (it runs on
 * the way out) and its CQE then makes the ring's fd readable.
 */
static void engine_sleep_direct(struct engine *eng)
{
	struct epoll_event ev[4];
	struct timespec ts;
	uint64_t wait_ns = UINT64_MAX;
	bool pending;

	atomic_store(&eng->sleeping, 1);
	pthread_mutex_lock(&eng->run_lock);
	/* Dekker with engine_ring_bell, as engine_sleep */
	pending = atomic_load(&eng->work_in) || eng->work_head ||
		  atomic_load(&eng->stop) || io_uring_cq_ready(&eng->ring);
	if (!pending) {
		if (io_uring_sq_ready(&eng->ring) > 0)
			io_uring_submit(&eng->ring);
		if (eng->n_timers)
			wait_ns = engine_timers_next(eng, engine_now_ns());
	}
	pthread_mutex_unlock(&eng->run_lock);
	if (!pending && wait_ns > 0) {
		int i, n;

		ts.tv_sec = (time_t)(wait_ns / 1000000000u);
		ts.tv_nsec = (long)(wait_ns % 1000000000u);
		n = epoll_pwait2(eng->psfd, ev, 4,
				 wait_ns == UINT64_MAX ? NULL : &ts, NULL);
		for (i = 0; i < n; i++)
			if (ev[i].data.u64 == ENGINE_PS_TIMER)
				engine_take_sockets(eng);
	}
	atomic_store(&eng->sleeping, 0);
}

/* Blocks in the kernel until a completion, a due timer or |timeout_ms|. */
static void engine_sleep(struct engine *eng, int timeout_ms)
{
	struct __kernel_timespec ts;
	struct io_uring_cqe *cqe;
	uint64_t wait_ns = UINT64_MAX;

	if (eng->direct && timeout_ms < 0) {
		engine_sleep_direct(eng);
		return;
	}
	atomic_store(&eng->sleeping, 1);
	/* Dekker with engine_ring_bell: after announcing sleep, look again. */
	if (atomic_load(&eng->work_in) || eng->work_head ||
	    atomic_load(&eng->stop)) {
		atomic_store(&eng->sleeping, 0);
		return;
	}
	if (timeout_ms >= 0)
		wait_ns = (uint64_t)timeout_ms * 1000000u;
	if (eng->n_timers) {
		uint64_t t = engine_timers_next(eng, engine_now_ns());

		if (t < wait_ns)
			wait_ns = t;
	}
	if (wait_ns == UINT64_MAX) {
		io_uring_submit_and_wait_timeout(&eng->ring, &cqe, 1, NULL,
						 NULL);
	} else if (wait_ns > 0) {
		ts.tv_sec = (long long)(wait_ns / 1000000000u);
		ts.tv_nsec = (long long)(wait_ns % 1000000000u);
		io_uring_submit_and_wait_timeout(&eng->ring, &cqe, 1, &ts,
						 NULL);
	}
	atomic_store(&eng->sleeping, 0);
}

int engine_run_once(struct engine *eng, int timeout_ms)
{
	struct engine *prev;
	int n;

	if (eng->mode != ENGINE_MODE_INLINE)
		return -EINVAL;
	pthread_mutex_lock(&eng->run_lock);
	prev = tls_engine;
	tls_engine = eng;
	n = engine_poll(eng);
	if (n == 0 && timeout_ms != 0) {
		engine_sleep(eng, timeout_ms);
		n = engine_poll(eng);
	}
	tls_engine = prev;
	pthread_mutex_unlock(&eng->run_lock);
	return n;
}

/* ---- other threads driving a direct engine ---- */

/* Deadline of the earliest armed timer, UINT64_MAX if none. */
static uint64_t engine_first_deadline(const struct engine *eng)
{
	return eng->n_timers ? eng->heap[0]->deadline_ns : UINT64_MAX;
}

/*
 * The end of a foreign thread's turn holding the engine (taken with
 * |prev| its tls_engine before, |first| the earliest timer then): ends
 * the receive batch, lets go of the engine, and wakes the progress thread
 * when it has something to do: |work_left|, SQEs to submit, or a timer
 * earlier than it sleeps for.
 */
static void engine_foreign_leave(struct engine *eng, struct engine *prev,
				 uint64_t first, bool work_left)
{
	bool bell;

	engine_rx_batch_end(eng);
	bell = work_left || io_uring_sq_ready(&eng->ring) > 0 ||
	       engine_first_deadline(eng) < first;
	tls_engine = prev;
	pthread_mutex_unlock(&eng->run_lock);
	if (bell)
		engine_ring_bell(eng);
}

/*
 * One pass as a thread other than the progress thread, holding the
 * engine: the readiness edges (|edges|) and the queued work, until nothing is
 * left (bounded). What only the progress thread does (submitting SQEs, timers
 * due, io_uring completions) is left to it, woken when needed.
 */
static void engine_foreign_pass_events(struct engine *eng,
				       const struct epoll_event *ev, int n_ev,
				       bool edges)
{
	struct engine *prev = tls_engine;
	uint64_t first = engine_first_deadline(eng);
	int i;

	tls_engine = eng;
	/* edges the driver took while the engine was not held: their
	 * pollees are alive or released to |retired| (ready() sees them
	 * dead), freed once these are handed out */
	for (i = 0; i < n_ev; i++) {
		struct engine_pollee *pe = ev[i].data.ptr;

		pe->ready(pe, ev[i].events);
	}
	engine_retired_free(eng);
	/* edges that come during the pass are the next pass's (the driver
	 * polls |epfd|; a poster leaves them to their reader) */
	if (edges)
		engine_direct_collect(eng);
	for (i = 0; i < 256 && (eng->work_head || atomic_load(&eng->work_in));
	     i++)
		engine_work_run(eng);
	engine_foreign_leave(eng, prev, first,
			     eng->work_head || atomic_load(&eng->work_in));
}

static void engine_foreign_pass(struct engine *eng, bool edges)
{
	engine_foreign_pass_events(eng, NULL, 0, edges);
}

/*
 * engine_call_sync on a direct engine that nobody holds (run_lock taken by
 * the caller): the caller runs the work queued before the call (the order
 * engine_call promises) and |fn| itself, instead of waking the progress
 * thread and sleeping until it answered; a CM call costs no hand-off.
 * What only the progress thread does is left to it, as after a pass.
 */
static void engine_foreign_call(struct engine *eng, void (*fn)(void *arg),
				void *arg)
{
	struct engine *prev = tls_engine;
	uint64_t first = engine_first_deadline(eng);

	tls_engine = eng;
	engine_work_run(eng);
	fn(arg);
	engine_foreign_leave(eng, prev, first,
			     eng->work_head || atomic_load(&eng->work_in));
}

/* Arms the hand-back timer to fire in |ns|. */
static void engine_tfd_arm(struct engine *eng, uint64_t ns)
{
	struct itimerspec its;

	atomic_store(&eng->tfd_due_ns, engine_now_ns() + ns);
	memset(&its, 0, sizeof(its));
	its.it_value.tv_sec = (time_t)(ns / 1000000000u);
	its.it_value.tv_nsec = (long)(ns % 1000000000u);
	(void)timerfd_settime(eng->tfd, 0, &its, NULL);
}

/* Doubles the grace period up to its bound; returns the new period. */
static uint64_t engine_grace_double(struct engine *eng, uint64_t grace)
{
	if (grace < ENGINE_DRIVE_GRACE_MAX_NS) {
		grace *= 2;
		atomic_store(&eng->grace_ns, grace);
	}
	return grace;
}

bool engine_tfd_push_due(uint64_t now, uint64_t due, uint64_t grace)
{
	return due < now + grace / 2;
}

/*
 * A driver is back while the hand-back timer its predecessor armed is
 * pending: if that timer fires within half the grace period, move it a
 * (doubled) grace period out. A thread that waits for every message then
 * pushes the timer once per grace period from its own wait, without a
 * context switch, where letting it fire would wake the progress thread
 * once per grace period (into a CPU the round trip may be running on) to
 * find the driver in. When the driver leaves for good the timer still
 * fires one grace period at most after its last push.
 */
static void engine_tfd_push(struct engine *eng)
{
	uint64_t grace;

	if (!atomic_load(&eng->tfd_armed))
		return;
	grace = atomic_load(&eng->grace_ns);
	if (!engine_tfd_push_due(engine_now_ns(), atomic_load(&eng->tfd_due_ns),
				 grace))
		return;
	engine_tfd_arm(eng, engine_grace_double(eng, grace));
}

int engine_drive_begin(struct engine *eng)
{
	if (!eng->direct || engine_in_thread(eng))
		return -EOPNOTSUPP;
	if (atomic_exchange(&eng->driver, true))
		return -EBUSY;
	engine_tfd_push(eng);
	/* the progress thread stops watching the sockets (if it took them
	 * back): their edges wake the driver alone */
	pthread_mutex_lock(&eng->ps_lock);
	if (eng->ps_sockets) {
		(void)epoll_ctl(eng->psfd, EPOLL_CTL_DEL, eng->epfd, NULL);
		eng->ps_sockets = false;
	}
	pthread_mutex_unlock(&eng->ps_lock);
	return eng->epfd;
}

void engine_drive_pass(struct engine *eng, bool edges)
{
	pthread_mutex_lock(&eng->run_lock);
	engine_foreign_pass(eng, edges);
}

int engine_drive_watch(struct engine *eng, int fd)
{
	struct epoll_event ev;

	memset(&ev, 0, sizeof(ev));
	ev.events = EPOLLIN | EPOLLET;
	ev.data.ptr = &engine_watch_pollee;
	if (epoll_ctl(eng->epfd, EPOLL_CTL_ADD, fd, &ev) < 0 && errno != EEXIST)
		return -errno;
	return 0;
}

int engine_drive_wait(struct engine *eng)
{
	struct epoll_event ev[64];
	bool watched = false;
	int i, n, err = 0;

	/* the edges are taken here without the engine (the sleep must not
	 * hold it): a pollee released meanwhile stays until they are out */
	atomic_store(&eng->drive_waiting, true);
	n = epoll_wait(eng->epfd, ev, 64, -1);
	if (n < 0) {
		err = -errno;
		n = 0;
	}
	pthread_mutex_lock(&eng->run_lock);
	atomic_store(&eng->drive_waiting, false);
	for (i = 0; i < n; i++)
		watched = watched || ev[i].data.ptr == &engine_watch_pollee;
	/* a full batch: more may be ready */
	engine_foreign_pass_events(eng, ev, n, n == 64);
	if (err)
		return err;
	return watched ? 1 : 0;
}

void engine_drive_end(struct engine *eng)
{
	atomic_store(&eng->drive_end_ns, engine_now_ns());
	atomic_store(&eng->driver, false);
	/* one timer in flight at most: a driver that waits for every
	 * message costs a timer system call per grace period, not per
	 * message */
	if (!atomic_exchange(&eng->tfd_armed, true))
		engine_tfd_arm(eng, atomic_load(&eng->grace_ns));
}

/*
 * The hand-back timer fired (progress thread). If a driver is in, nothing
 * to do (its drive_end arms the timer again); if the last one left less
 * than the grace period ago, wait for the rest of it; else nobody waits
 * for the sockets: watch them again (edges that came meanwhile are in
 * |epfd| and wake this thread at once).
 */
static void engine_take_sockets(struct engine *eng)
{
	struct epoll_event ev;
	uint64_t v, since, grace;

	if (read(eng->tfd, &v, sizeof(v)) != (ssize_t)sizeof(v))
		return;
	atomic_store(&eng->tfd_armed, false);
	grace = atomic_load(&eng->grace_ns);
	if (atomic_load(&eng->driver)) {
		/* woken for nothing: wait longer next time */
		(void)engine_grace_double(eng, grace);
		return;
	}
	since = engine_now_ns() - atomic_load(&eng->drive_end_ns);
	if (since < grace) {
		if (!atomic_exchange(&eng->tfd_armed, true))
			engine_tfd_arm(eng, grace - since);
		return;
	}
	atomic_store(&eng->grace_ns, ENGINE_DRIVE_GRACE_NS);
	memset(&ev, 0, sizeof(ev));
	ev.events = EPOLLIN;
	pthread_mutex_lock(&eng->ps_lock);
	if (!atomic_load(&eng->driver) && !eng->ps_sockets) {
		(void)epoll_ctl(eng->psfd, EPOLL_CTL_ADD, eng->epfd, &ev);
		eng->ps_sockets = true;
	}
	pthread_mutex_unlock(&eng->ps_lock);
}

void engine_work_queue_quiet(struct engine *eng, struct engine_work *w)
{
	struct engine_work *head;

	if (!eng->direct || engine_in_thread(eng)) {
		engine_work_queue(eng, w);
		return;
	}
	if (atomic_exchange(&w->queued, true))
		return;
	head = atomic_load_explicit(&eng->work_in, memory_order_relaxed);
	do {
		w->next = head;
	} while (!atomic_compare_exchange_weak(&eng->work_in, &head, w));
}

void engine_assist(struct engine *eng)
{
	if (!eng->direct || engine_in_thread(eng))
		return;
	/* While the sockets are with the waiting threads (a driver is in,
	 * or left less than the grace period ago: an event-driven program)
	 * and the progress thread sleeps and nobody else is in, run the work
	 * here (no wake-up). Not while the progress thread has the sockets:
	 * a program that streams posts faster than one system call each, and
	 * the progress thread gathers what accumulated into one sendmsg.
	 * Otherwise whoever is in runs it, or the bell wakes the sleeper
	 * (Dekker as engine_work_queue: it looks at work_in after announcing
	 * its sleep). */
	if (!atomic_load(&eng->ps_sockets) && atomic_load(&eng->sleeping) &&
	    pthread_mutex_trylock(&eng->run_lock) == 0) {
		engine_foreign_pass(eng, false);
		return;
	}
	engine_ring_bell(eng);
}

void engine_assist_owed(struct engine *eng)
{
	/* the progress thread, awake or woken by the bell, sends at once:
	 * left to the next inbound message, a request could reach a peer
	 * that has run out of work by then */
	if (!eng->direct || atomic_load(&eng->ps_sockets))
		engine_assist(eng);
}

static inline void engine_cpu_relax(void)
{
#if defined(__x86_64__) || defined(__i386__)
	__builtin_ia32_pause();
#elif defined(__aarch64__)
	__asm__ __volatile__("yield");
#endif
}

/*
 * ADAPTIVE: after the last event, keep polling for busy_win_ns, then sleep.
 * When polling finds work inside the window, the window doubles (up to
 * busy_max_ns); when it expires empty, it shrinks to a quarter (down to
 * 1 µs). When the thread was descheduled while polling (a gap of
 * ENGINE_PREEMPT_NS between two polls: more spinners than cores), it sleeps
 * at once with the smallest window: a thread woken from a sleep preempts a
 * spinner, a spinner that yields waits for the others' time slices.
 * A thread that works more than ENGINE_DUTY_HIGH_PCT of its time sleeps at
 * once instead: it streams, its next work is queued behind the work it
 * just did (a socket that keeps filling, a peer limited by its window),
 * and every poll of the window is a system call (epoll_wait on direct
 * sockets) that would only add to the CPU the stream already takes.
 */
static int engine_probe(struct io_uring *ring);
static void engine_teardown(struct engine *eng);

/*
 * Sets up the ring (COOP_TASKRUN when the kernel has it). io_uring
 * remembers the task that creates a ring and, when the ring is closed,
 * sends that task a signal-like notification from a kernel worker, which
 * makes a blocking epoll_wait() of that task fail with EINTR at some later
 * moment. An application thread that opened and closed a context (as
 * libfabric's fi_getinfo does) must not get that, so in the thread modes
 * only the progress thread creates the ring and submits to it (its own
 * notifications go with it when it exits).
 */
static int engine_ring_init(struct engine *eng)
{
	int rc = io_uring_queue_init(eng->ring_entries, &eng->ring,
				     eng->ring_flags);

	if (rc == -EINVAL && eng->ring_flags) /* kernel < 5.19 */
		rc = io_uring_queue_init(eng->ring_entries, &eng->ring, 0);
	if (rc < 0)
		return rc;
	rc = engine_probe(&eng->ring);
	if (rc < 0)
		io_uring_queue_exit(&eng->ring);
	return rc;
}

static void engine_thread_started(struct engine *eng, int rc)
{
	uint64_t one = 1;
	ssize_t wr;

	eng->start_rc = rc;
	wr = write(eng->start_efd, &one, sizeof(one));
	(void)wr;
}

static void *engine_thread_main(void *arg)
{
	struct engine *eng = arg;
	uint64_t idle_since = 0, last_poll = 0;
	struct engine_duty duty = {0};
	unsigned int spins = 0;
	int rc;

	rc = engine_ring_init(eng);
	if (rc < 0) {
		engine_thread_started(eng, rc);
		return NULL;
	}
	tls_engine = eng;
	tls_progress = true;
	if (eng->direct) {
		struct epoll_event ev;

		memset(&ev, 0, sizeof(ev));
		ev.events = EPOLLIN;
		if (epoll_ctl(eng->psfd, EPOLL_CTL_ADD, eng->ring.ring_fd,
			      &ev) < 0) {
			rc = -errno;
			io_uring_queue_exit(&eng->ring);
			engine_thread_started(eng, rc);
			return NULL;
		}
	}
	engine_thread_started(eng, rc);
	/* The doorbell read is ours: with COOP_TASKRUN its completion work
	 * runs in the task that submitted it. */
	pthread_mutex_lock(&eng->run_lock);
	engine_efd_arm(eng);
	engine_submit(eng);
	pthread_mutex_unlock(&eng->run_lock);
	while (!atomic_load_explicit(&eng->stop, memory_order_relaxed)) {
		int n = engine_poll_progress(eng);
		uint64_t now;

		if (n > 0) {
			if (eng->mode == ENGINE_MODE_ADAPTIVE && !duty.working)
				engine_duty_note(&duty, true, engine_now_ns());
			if (idle_since && eng->mode == ENGINE_MODE_ADAPTIVE) {
				eng->busy_win_ns *= 2;
				if (eng->busy_win_ns > eng->busy_max_ns)
					eng->busy_win_ns = eng->busy_max_ns;
			}
			idle_since = 0;
			last_poll = 0;
			continue;
		}
		switch (eng->mode) {
		case ENGINE_MODE_LATENCY:
			/* Give the core away now and then: on a VM with few
			 * cores, softirq threads and the peer must still run.
			 */
			if (++spins % ENGINE_YIELD_EVERY == 0)
				sched_yield();
			else
				engine_cpu_relax();
			break;
		case ENGINE_MODE_ADAPTIVE:
			now = engine_now_ns();
			engine_duty_note(&duty, false, now);
			if (!idle_since && engine_duty_high(&duty)) {
				engine_sleep(eng, -1);
			} else if (!idle_since) {
				idle_since = now;
			} else if (last_poll &&
				   now - last_poll >= ENGINE_PREEMPT_NS) {
				eng->busy_win_ns = ENGINE_BUSY_MIN_NS;
				idle_since = 0;
				engine_sleep(eng, -1);
			} else if (now - idle_since >= eng->busy_win_ns) {
				eng->busy_win_ns /= 4;
				if (eng->busy_win_ns < ENGINE_BUSY_MIN_NS)
					eng->busy_win_ns = ENGINE_BUSY_MIN_NS;
				idle_since = 0;
				engine_sleep(eng, -1);
			} else {
				engine_cpu_relax();
			}
			/* after a sleep, the next gap is not a preemption */
			last_poll = idle_since ? now : 0;
			break;
		case ENGINE_MODE_CPU:
		case ENGINE_MODE_INLINE:
		default:
			engine_sleep(eng, -1);
			break;
		}
	}
	pthread_mutex_lock(&eng->run_lock);
	engine_teardown(eng); /* submits to the ring: here, not in the caller */
	pthread_mutex_unlock(&eng->run_lock);
	tls_engine = NULL;
	tls_progress = false;
	return NULL;
}

/* ---- create / destroy ---- */

/* The opcodes the engine uses; a kernel without one is "no io_uring". */
static int engine_probe(struct io_uring *ring)
{
	static const int need[] = {
		IORING_OP_SENDMSG,	IORING_OP_RECVMSG,
		IORING_OP_ACCEPT,	IORING_OP_CONNECT,
		IORING_OP_READ,		IORING_OP_LINK_TIMEOUT,
		IORING_OP_ASYNC_CANCEL,
	};
	struct io_uring_probe *p = io_uring_get_probe_ring(ring);
	size_t i;
	int rc = 0;

	if (!p)
		return -ENOSYS;
	for (i = 0; i < sizeof(need) / sizeof(need[0]); i++)
		if (!io_uring_opcode_supported(p, need[i]))
			rc = -ENOSYS;
	io_uring_free_probe(p);
	return rc;
}

/* Checks that |cc| can be set on our sockets. */
static int engine_check_cc(const char *cc)
{
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	int rc = 0;

	if (fd < 0)
		return -errno;
	if (setsockopt(fd, IPPROTO_TCP, TCP_CONGESTION, cc,
		       (socklen_t)strlen(cc)) < 0)
		rc = -errno;
	close(fd);
	return rc;
}

struct engine *engine_create(const struct engine_attr *attr)
{
	struct engine_attr def = {.mode = ENGINE_MODE_ADAPTIVE};
	struct engine *eng;
	unsigned int entries;
	int rc;

	if (!attr)
		attr = &def;
	switch (attr->mode) {
	case ENGINE_MODE_ADAPTIVE:
	case ENGINE_MODE_LATENCY:
	case ENGINE_MODE_CPU:
	case ENGINE_MODE_INLINE:
		break;
	default:
		errno = EINVAL;
		return NULL;
	}
	if (attr->congestion_control &&
	    strlen(attr->congestion_control) >= sizeof(eng->cc)) {
		errno = EINVAL;
		return NULL;
	}
	if (attr->congestion_control && attr->congestion_control[0]) {
		rc = engine_check_cc(attr->congestion_control);
		if (rc < 0) {
			errno = -rc;
			return NULL;
		}
	}
	eng = iw_calloc(1, sizeof(*eng));
	if (!eng)
		return NULL;
	entries = attr->ring_entries ? attr->ring_entries : ENGINE_RING_DEFAULT;
	eng->mode = attr->mode;
	eng->busy_max_ns = (attr->busy_poll_us ? attr->busy_poll_us
					       : ENGINE_BUSY_POLL_US_DEFAULT) *
			   1000u;
	if (eng->busy_max_ns < ENGINE_BUSY_MIN_NS)
		eng->busy_max_ns = ENGINE_BUSY_MIN_NS;
	eng->busy_win_ns = eng->busy_max_ns;
	if (attr->congestion_control)
		strcpy(eng->cc, attr->congestion_control);
	eng->objs.next = eng->objs.prev = &eng->objs;
	eng->efd_op.complete = engine_efd_complete;
	atomic_init(&eng->stop, false);
	atomic_init(&eng->sleeping, 0);
	atomic_init(&eng->rung, false);
	atomic_init(&eng->work_in, NULL);
	pthread_mutex_init(&eng->run_lock, NULL);

	/*
	 * No IPI per completion (~20-40 µs on this VM): the kernel raises
	 * IORING_SQ_TASKRUN and the submitting task runs the completion work
	 * when it next enters the kernel. The progress thread notices the flag
	 * while polling (engine_reap calls io_uring_get_events) and is woken
	 * from io_uring_enter. In INLINE mode engine_run_once does the same;
	 * a task sleeping anywhere in the kernel is still woken to run its
	 * completion work, a task spinning in user space runs it at its next
	 * system call or tick.
	 */
	eng->ring_entries = entries;
	eng->ring_flags = IORING_SETUP_COOP_TASKRUN | IORING_SETUP_TASKRUN_FLAG;
	eng->epfd = eng->psfd = eng->tfd = -1;
	eng->direct = attr->direct_io && eng->mode != ENGINE_MODE_INLINE;
	atomic_init(&eng->driver, false);
	atomic_init(&eng->tfd_armed, false);
	atomic_init(&eng->tfd_due_ns, 0);
	atomic_init(&eng->drive_end_ns, 0);
	atomic_init(&eng->grace_ns, ENGINE_DRIVE_GRACE_NS);
	pthread_mutex_init(&eng->ps_lock, NULL);
	if (eng->direct) {
		struct epoll_event ev;

		memset(&ev, 0, sizeof(ev));
		ev.events = EPOLLIN;
		eng->epfd = epoll_create1(EPOLL_CLOEXEC);
		eng->psfd = epoll_create1(EPOLL_CLOEXEC);
		eng->tfd = timerfd_create(CLOCK_MONOTONIC,
					  TFD_CLOEXEC | TFD_NONBLOCK);
		if (eng->epfd < 0 || eng->psfd < 0 || eng->tfd < 0 ||
		    epoll_ctl(eng->psfd, EPOLL_CTL_ADD, eng->epfd, &ev) < 0) {
			rc = -errno;
			goto err_epoll;
		}
		ev.data.u64 = ENGINE_PS_TIMER;
		if (epoll_ctl(eng->psfd, EPOLL_CTL_ADD, eng->tfd, &ev) < 0) {
			rc = -errno;
			goto err_epoll;
		}
		eng->ps_sockets = true;
	}
	eng->efd = eventfd(0, EFD_CLOEXEC);
	if (eng->efd < 0) {
		rc = -errno;
		goto err_epoll;
	}
	if (eng->mode == ENGINE_MODE_INLINE) {
		rc = engine_ring_init(eng);
		if (rc < 0)
			goto err_efd;
		engine_efd_arm(eng);
		io_uring_submit(&eng->ring);
	} else {
		uint64_t v;
		ssize_t r;

		eng->start_efd = eventfd(0, EFD_CLOEXEC);
		if (eng->start_efd < 0) {
			rc = -errno;
			goto err_efd;
		}
		/* the progress thread blocks the application's asynchronous
		 * signals (util/thread.h); it sets the ring up first */
		rc = iw_thread_create(&eng->thread, engine_thread_main, eng);
		if (rc < 0) {
			close(eng->start_efd);
			goto err_efd;
		}
		do {
			r = read(eng->start_efd, &v, sizeof(v));
		} while (r < 0 && errno == EINTR);
		close(eng->start_efd);
		rc = eng->start_rc;
		if (rc < 0) {
			pthread_join(eng->thread, NULL);
			goto err_efd;
		}
		eng->has_thread = true;
	}
	return eng;

err_efd:
	close(eng->efd);
err_epoll:
	if (eng->epfd >= 0)
		close(eng->epfd);
	if (eng->psfd >= 0)
		close(eng->psfd);
	if (eng->tfd >= 0)
		close(eng->tfd);
	pthread_mutex_destroy(&eng->ps_lock);
	pthread_mutex_destroy(&eng->run_lock);
	iw_free(eng);
	errno = -rc;
	return NULL;
}

/* Runs the queued calls, aborts the objects left and lets the kernel
 * release them: on the progress thread when there is one, else on the
 * caller of engine_destroy (INLINE), as the engine thread. */
static void engine_teardown(struct engine *eng)
{
	struct engine_obj *o, *next;
	int i;

	/* Queued calls first (they may close objects), then abort leftovers
	 * (no callback after that) and let the kernel release them. */
	for (i = 0; i < 100 && (eng->work_head || atomic_load(&eng->work_in));
	     i++)
		engine_work_run(eng);
	for (o = eng->objs.next; o != &eng->objs; o = next) {
		next = o->next;
		o->abort(o);
	}
	for (i = 0; i < 1000 && (eng->work_head || atomic_load(&eng->work_in) ||
				 eng->n_objs);
	     i++) {
		struct __kernel_timespec ts = {.tv_nsec = 1000000};
		struct io_uring_cqe *cqe;

		if (!engine_poll(eng))
			io_uring_submit_and_wait_timeout(&eng->ring, &cqe, 1,
							 &ts, NULL);
	}
}

void engine_destroy(struct engine *eng)
{
	uint64_t one = 1;
	ssize_t wr;

	if (!eng)
		return;
	if (eng->has_thread) {
		atomic_store(&eng->stop, true);
		wr = write(eng->efd, &one, sizeof(one));
		(void)wr;
		pthread_join(eng->thread, NULL);
	}
	pthread_mutex_lock(&eng->run_lock);
	if (!eng->has_thread) {
		tls_engine = eng;
		engine_teardown(eng);
	}
	tls_engine = NULL;
	engine_retired_free(eng); /* no driver is left */
	engine_timers_fini(eng);
	io_uring_queue_exit(&eng->ring);
	iw_free(eng->rx_scratch);
	close(eng->efd);
	if (eng->direct) {
		close(eng->epfd);
		close(eng->psfd);
		close(eng->tfd);
	}
	pthread_mutex_unlock(&eng->run_lock);
	pthread_mutex_destroy(&eng->run_lock);
	pthread_mutex_destroy(&eng->ps_lock);
	iw_free(eng);
}
