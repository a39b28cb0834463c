/*
 * tests/stack_harness.h: helpers for the integration suites
 * (tests/stack_*_test.c) that run the whole stack the way an application
 * does: two contexts, the connection manager over real loopback TCP, the
 * public verbs. Every wait is bounded (ST_WAIT_MS): a hang fails the test
 * instead of blocking it. Waits block in poll(2) on the library's fds
 * (completion channel, async fd, CM channel), never in sleeps.
 */
#ifndef IWARP_TESTS_STACK_HARNESS_H
#define IWARP_TESTS_STACK_HARNESS_H

#include <check.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "cm_testutil.h"
#include "iwarp/iwarp.h"

#define ST_WAIT_MS 30000 /* upper bound of any single wait */
/* How long a test watches for an event that must not come, where no later
 * event can show that it did not: a slow machine only makes such a check
 * weaker, never makes it fail. */
#define ST_QUIET_MS 1000
#define ST_GUARD    0xEE /* fill of memory nothing may touch */

/* A CQ with its own completion channel. */
struct st_cq {
	struct iwarp_comp_channel *ch;
	struct iwarp_cq *cq;
};

/* One side: a context, its CM event channel and a PD. */
struct st_side {
	struct iwarp_context *ctx;
	struct iwarp_event_channel *ech;
	struct iwarp_pd *pd;
};

/* A server and a client side, and the server's listener on 127.0.0.1. */
struct st_net {
	struct st_side srv, cli;
	struct iwarp_cm_id *l;
	uint16_t port;
};

/* One connection: client id (active), server child id, their CQs. */
struct st_conn {
	struct iwarp_cm_id *c, *s;
	struct st_cq ccq, scq;	   /* per-connection CQs (unless shared) */
	struct st_cq *cq_c, *cq_s; /* the CQs its QPs use */
};

/* QP options of st_conn_open (zeroed = defaults). */
struct st_qp_opts {
	uint32_t max_send_wr;	   /* default 64 */
	uint32_t max_recv_wr;	   /* default 64 */
	struct iwarp_srq *srv_srq; /* server QP uses this SRQ */
	struct iwarp_pd *srv_pd;   /* server QP in this PD (default srv.pd) */
	struct st_cq *cli_cq; /* shared CQs instead of per-connection ones */
	struct st_cq *srv_cq;
	int sq_sig_all;
};

/* Registered test memory (plain malloc, so iw_mem_outstanding() only
 * counts library allocations). */
struct st_buf {
	uint8_t *p;
	size_t len;
	struct iwarp_mr *mr;
};

/* Context attributes: |rev|, |crc| (both sides REQUEST or OFF), |markers|,
 * PROGRESS_CPU, short MPA timeouts. */
void st_attr(struct iwarp_context_attr *a, int rev, enum iwarp_crc_policy crc,
	     int markers);

/* Opens both sides with |a| and listens on 127.0.0.1 (port 0). */
void st_net_open(struct st_net *n, const struct iwarp_context_attr *a);

/* st_net_open with different attributes for the server and the client. */
void st_net_open2(struct st_net *n, const struct iwarp_context_attr *srv,
		  const struct iwarp_context_attr *cli);

/* Destroys the listener and both sides (all connections closed before). */
void st_net_close(struct st_net *n);

/* CQ of |cqe| entries with a channel. */
void st_cq_open(struct st_cq *c, struct iwarp_context *ctx, int cqe);
void st_cq_close(struct st_cq *c);

/*
 * Connects a client to the listener of |n| through the CM: QPs created
 * with |o| (NULL = defaults), private data carrying |tag|, both sides
 * ESTABLISHED, both QPs in RTS.
 */
void st_conn_open(struct st_net *n, struct st_conn *k,
		  const struct st_qp_opts *o);

/*
 * Opens |count| connections at once (all connects first, then the server
 * accepts the requests in whatever order they come).
 */
void st_conn_open_many(struct st_net *n, struct st_conn *k, int count,
		       const struct st_qp_opts *o);

/*
 * Disconnects from the client (|from_server| false) or the server side:
 * DISCONNECTED and TIMEWAIT_EXIT on both sides, both QPs in ERR. Events of
 * other ids must not be pending on the channels.
 */
void st_conn_disconnect(struct st_net *n, struct st_conn *k, bool from_server);

/* Destroys QPs, ids and per-connection CQs of |k|. */
void st_conn_close(struct st_conn *k);

/* Waits (bounded) for the next CM event on |ch|, which must be |type|
 * (and for |id| unless NULL); acks it and returns its status. */
int st_cm_expect(struct iwarp_event_channel *ch, enum iwarp_cm_event_type type,
		 struct iwarp_cm_id *id);

/*
 * Polls |c| until |want| completions were read into |wc| or |ms| passed,
 * sleeping on the completion channel between polls. Returns the count read.
 */
int st_poll(struct st_cq *c, struct iwarp_wc *wc, int want, int ms);

/* st_poll that asserts |want| completions arrived. */
void st_poll_n(struct st_cq *c, struct iwarp_wc *wc, int want);

/*
 * Reads |want| completions of |c|, sleeping in iwarp_get_cq_event between
 * polls: the waiting thread reads the engine's sockets itself (direct
 * socket I/O). Not bounded by ST_WAIT_MS: the test case's timeout bounds
 * a wake-up that never comes.
 */
void st_reap_blocking(struct st_cq *c, struct iwarp_wc *wc, int want);

/* Asserts that no completion is pending on |c| right now. Only for use
 * once every WR posted to the CQ's queues has completed (and was checked
 * by wr_id): nothing is left that could complete later, so an entry here
 * can only be one already queued twice or out of thin air. */
void st_cq_empty(struct st_cq *c);

/* Asserts the fields of |wc|. */
void st_wc_check(const struct iwarp_wc *wc, uint64_t wr_id,
		 enum iwarp_wc_status status, enum iwarp_wc_opcode opcode,
		 uint32_t byte_len, unsigned int flags);

/* Waits (bounded) for an async event of |ctx|: true and *ev (acked). */
bool st_async_wait(struct iwarp_context *ctx, struct iwarp_async_event *ev,
		   int ms);

/* Registers |len| (+ nothing) bytes filled with ST_GUARD, |access|. */
void st_buf_reg(struct st_buf *b, struct iwarp_pd *pd, size_t len, int access);
void st_buf_free(struct st_buf *b);

/* Asserts |len| bytes at |p| are all |v|. */
void st_check_fill(const uint8_t *p, size_t len, uint8_t v);

/* Posts one receive of [addr, addr+len) in |mr| (len 0: no SGE). */
int st_post_recv(struct iwarp_qp *qp, uint64_t wr_id, struct iwarp_mr *mr,
		 void *addr, uint32_t len);
int st_post_srq_recv(struct iwarp_srq *srq, uint64_t wr_id, struct iwarp_mr *mr,
		     void *addr, uint32_t len);

/* Posts one send WR (one SGE, none when len is 0). */
int st_post_send(struct iwarp_qp *qp, uint64_t wr_id, enum iwarp_wr_opcode op,
		 unsigned int flags, struct iwarp_mr *mr, void *addr,
		 uint32_t len, uint64_t raddr, uint32_t rkey,
		 uint32_t inv_rkey);

/* Asserts iw_mem_outstanding() is back to |base| (everything closed). */
void st_wait_mem(long base);

/*
 * Runs |s| like iw_test_run_suite, but exits 77 (automake: skipped) when
 * this kernel has no usable io_uring (a context cannot be opened: ENOSYS
 * or EPERM).
 */
int st_run_suite(Suite *s);

#define ST_TEST_MAIN(suite_fn)                                                 \
	int main(void)                                                         \
	{                                                                      \
		return st_run_suite(suite_fn());                               \
	}

/* Monotonic milliseconds. */
uint64_t st_now_ms(void);

#endif
