/*
 * tests/stress/sx.h: the stress harness (tests/stress/stress_*.c).
 *
 * Each stress program runs one scenario for N iterations (IWARP_STRESS_ITERS,
 * else the program's short default), each iteration under a watchdog
 * (alarm(2), SX_ITER_LIMIT_S; IWARP_STRESS_ONLY=<text> repeats the one
 * variant whose name contains <text>): a hang prints the scenario, the
 * iteration and the phase it was in, then exits 1. A failed check prints the
 * same and the reason, then exits 1; nothing is silent. At the end a line
 *   stress <name>: N iterations, N passed (<variant counts>)
 * is printed. The programs use only the public API, plus the allocator seam
 * (util/mem.h), which tests/stress/sx_mem.c replaces with a quarantining
 * allocator: freed blocks of SX_QUARANTINE_MIN octets or more stay mapped,
 * filled with a canary, and are checked after every iteration (once the
 * contexts are closed) for writes after free (e.g. by the kernel, which no
 * sanitizer sees); without ASan, smaller library blocks each get their own
 * pages, PROT_NONE once freed, so a use after free faults.
 */
#ifndef IWARP_TESTS_STRESS_SX_H
#define IWARP_TESTS_STRESS_SX_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "iwarp/iwarp.h"

#define SX_ITER_LIMIT_S	  120	/* watchdog of one iteration */
#define SX_WAIT_MS	  20000 /* bound of any single wait for an event */
#define SX_QUARANTINE_MIN ((size_t)64 << 10)
#define SX_MIB		  ((size_t)1 << 20)

/* ---- running ---------------------------------------------------------- */

/* What the current iteration is doing (printed on failure or timeout;
 * with IWARP_STRESS_TRACE set, every phase is printed with its time). */
void sx_phase(const char *phase);

/* Prints "stress <name> iteration <i> [<phase>]: <file>:<line>: <msg>" and
 * exits 1 (stops the program: the state after a failure is unknown). */
void sx_fail_at(const char *file, int line, const char *fmt, ...)
	__attribute__((format(printf, 3, 4), noreturn));
void sx_check_failed(const char *file, int line, const char *cond,
		     const char *fmt, ...)
	__attribute__((format(printf, 4, 5), noreturn));
#define SX_FAIL(...) sx_fail_at(__FILE__, __LINE__, __VA_ARGS__)
#define SX_CHECK(cond, ...)                                                    \
	do {                                                                   \
		if (!(cond))                                                   \
			sx_check_failed(__FILE__, __LINE__, #cond,             \
					__VA_ARGS__);                          \
	} while (0)
/* rc of a library call must be 0 (prints iwarp_strerror otherwise). */
#define SX_OK(call)                                                            \
	do {                                                                   \
		int sx_rc_ = (call);                                           \
		if (sx_rc_ != 0)                                               \
			sx_fail_at(__FILE__, __LINE__, "%s = %d (%s)", #call,  \
				   sx_rc_, iwarp_strerror(sx_rc_));            \
	} while (0)

/* Names the variant the current iteration runs (printed on failure; the
 * iteration is counted under it when it passes). */
void sx_variant(const char *variant);

/* The variant iteration |it| runs: it % count, or, when IWARP_STRESS_ONLY
 * is set, always the first of |names| that contains it (to repeat one
 * failing variant). Also sets it with sx_variant. */
int sx_pick(int it, const char *const *names, int count);

/* Counts one iteration of variant |v| (shown in the summary line). */
void sx_count(const char *variant);

/* Seed of the current iteration (derived from the scenario and the index). */
uint64_t sx_rand(void);

/*
 * Runs |iter| IWARP_STRESS_ITERS times (default |short_iters|), each under
 * the watchdog, with the quarantine checked after each. Returns the exit
 * status (0, or 77 when this kernel has no io_uring).
 */
int sx_main(const char *name, int short_iters, void (*iter)(int i));

/* ---- quarantining allocator (sx_mem.c) ------------------------------------
 */

/* Buffers for test memory that the library may write into (MRs): the same
 * quarantine as library blocks, whatever their size. */
void *sx_buf_alloc(size_t len);
void sx_buf_free(void *p);
/* Checks every quarantined block; reports each damaged one. Releases the
 * blocks freed before the previous check. Returns the number damaged. */
int sx_mem_check(void);
/* Prints |n| return addresses, each named by addr2line(1) (module and
 * offset when it is missing). */
void sx_print_frames(void *const *frames, uint32_t n);
/* If |addr| is in a freed block, says which (allocation backtrace):
 * for the crash handler. */
void sx_mem_describe(const void *addr);
/* Library blocks live (the seam's count). */
long sx_mem_live(void);

/* ---- the stack -------------------------------------------------------- */

struct sx_side {
	struct iwarp_context *ctx;
	struct iwarp_event_channel *ech;
	struct iwarp_pd *pd;
	struct iwarp_comp_channel *ch;
	struct iwarp_cq *cq;
};

struct sx_net {
	struct sx_side srv, cli;
	struct iwarp_cm_id *l;
	uint16_t port;
	bool inl;	  /* IWARP_PROGRESS_INLINE: waits drive both engines */
	bool drain_stray; /* at close, a late CONNECT_REQUEST is acked and its
			   * id destroyed instead of failing */
};

struct sx_conn {
	struct iwarp_cm_id *c, *s;
};

struct sx_opts {
	enum iwarp_progress_mode progress;
	int cqe;	      /* CQ entries of each side (default 1024) */
	int cli_cqe, srv_cqe; /* per side, overriding cqe */
	uint32_t max_send_wr; /* default 128 */
	uint32_t max_recv_wr; /* default 128 */
	int crc;	      /* request CRC */
	uint32_t grace_ms;    /* mpa_reply_grace_ms (default 0) */
};

/* Both contexts (|o| NULL: defaults), a CQ per side, the listener. */
void sx_net_open(struct sx_net *n, const struct sx_opts *o);
/* Destroys the listener, CQs, PDs, channels, contexts; then the quarantine
 * check and the leak check (library blocks back to |base|). */
void sx_net_close(struct sx_net *n, long base);

/* Client id resolved, QP created, connect sent. */
void sx_connect_start(struct sx_net *n, struct sx_conn *k,
		      const struct sx_opts *o);
/* Server: QP for the request |id|, accept. */
void sx_accept(struct sx_net *n, struct sx_conn *k, struct iwarp_cm_id *id,
	       const struct sx_opts *o);
/* Full connection: both ESTABLISHED, both QPs in RTS. */
void sx_connect(struct sx_net *n, struct sx_conn *k, const struct sx_opts *o);

/* Next CM event of |ch| within SX_WAIT_MS (driving INLINE engines);
 * returns it unacked, or NULL when |ms| passed. */
struct iwarp_cm_event *sx_cm_next(struct sx_net *n,
				  struct iwarp_event_channel *ch, int ms);
/* Next event must be |type| for |id| (NULL: any id); acks; returns status. */
int sx_cm_expect(struct sx_net *n, struct iwarp_event_channel *ch,
		 enum iwarp_cm_event_type type, struct iwarp_cm_id *id);

/* Disconnect from one side; DISCONNECTED and TIMEWAIT_EXIT on both. */
void sx_disconnect(struct sx_net *n, struct sx_conn *k, bool from_server);
/* Ends |k| whatever state it is in (a TERMINATE may have ended it):
 * disconnect from the client (its result ignored), then DISCONNECTED and
 * TIMEWAIT_EXIT on both sides; pending async events are drained. */
void sx_finish(struct sx_net *n, struct sx_conn *k);
/* Acks every async event pending on |ctx|; returns how many. */
int sx_drain_async(struct sx_net *n, struct iwarp_context *ctx);
/* Destroys the QPs and ids of |k| (rdma_destroy_qp + rdma_destroy_id). */
void sx_conn_close(struct sx_conn *k);

/* Polls |cq| until |want| completions are in |wc| (bounded: SX_WAIT_MS
 * without a new one fails). Drives INLINE engines of |n|. */
void sx_poll(struct sx_net *n, struct iwarp_cq *cq, struct iwarp_wc *wc,
	     int want);

/* Checks |cnt| completions: wr_ids first.. in order, a success prefix then
 * IWARP_WC_WR_FLUSH_ERR (|alt_err|, when not SUCCESS, is accepted as the one
 * completion between them). Returns the successes. */
int sx_check_prefix(const struct iwarp_wc *wc, int cnt, uint64_t first,
		    enum iwarp_wc_status alt_err);

/* Waits (bounded) for an async event of |ctx| into |ev| (acked). */
bool sx_async_wait(struct sx_net *n, struct iwarp_context *ctx,
		   struct iwarp_async_event *ev, int ms);

/* Post helpers: one SGE (none when len is 0). */
int sx_post_recv(struct iwarp_qp *qp, uint64_t wr_id, struct iwarp_mr *mr,
		 void *addr, uint32_t len);
int sx_post_send(struct iwarp_qp *qp, uint64_t wr_id, enum iwarp_wr_opcode op,
		 unsigned int flags, struct iwarp_mr *mr, void *addr,
		 uint32_t len, uint64_t raddr, uint32_t rkey);

/* The state of |qp| (iwarp_query_qp). */
enum iwarp_qp_state sx_qp_state(struct iwarp_qp *qp);

/* Drives the engines of an INLINE net once (no-op otherwise). */
void sx_drive(struct sx_net *n);

uint64_t sx_now_ms(void);
/* Sleeps |us| microseconds. */
void sx_usleep(unsigned int us);

#endif
