/*
 * tests/stack_pipe.h: two connected QPs of one context over the in-memory
 * transport (io/testio.h io_pipe_create), optionally through the fault
 * injector (io_fault_wrap), with every octet each side hands to the
 * transport captured ("tap"), for deterministic integration runs: the
 * whole datapath (qp_conn + engine glue + endpoint + progress thread) as
 * the CM would set it up after the MPA exchange, without sockets.
 */
#ifndef IWARP_TESTS_STACK_PIPE_H
#define IWARP_TESTS_STACK_PIPE_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "io/testio.h"
#include "iwarp/iwarp.h"
#include "stack_harness.h"

struct qp_conn;
struct sp_tap;

/* One end. */
struct sp_side {
	struct iwarp_qp *qp;
	struct st_cq cq;
	struct qp_conn *conn;
	struct sp_tap *tap;
	/* set by on_close (engine thread), under sp_pair.lock */
	bool closed;
	int close_err;
	bool have_cause;
	struct iwarp_term_cause cause;
};

/* Options of sp_open (zeroed = no CRC, no markers, no faults). */
struct sp_opts {
	bool crc, markers;
	uint32_t fpdu_max; /* 0 = 1448 */
	size_t pipe_cap;   /* 0 = 64 KiB per direction */
	uint32_t max_wr;   /* 0 = 64 */
	bool fault[2];	   /* wrap side i's transport with cfg[i] */
	struct io_fault_cfg cfg[2];
};

/* Side 0 is the initiator (sends first), side 1 the responder. */
struct sp_pair {
	struct iwarp_context *ctx;
	struct iwarp_pd *pd, *pd2; /* pd2: a second PD for "wrong PD" */
	struct sp_side s[2];
	pthread_mutex_t lock;
	pthread_cond_t cond;
};

/* Opens the context (PROGRESS_CPU), QPs, conns over the pipe. */
void sp_open(struct sp_pair *p, const struct sp_opts *o);

/*
 * Waits (bounded by |ms|) until side |i|'s connection is over (on_close
 * ran). Returns true when it is.
 */
bool sp_wait_closed(struct sp_pair *p, int i, int ms);

/*
 * Copies what side |i| handed to the transport so far (from its first
 * octet) into |out|; returns the total captured (may exceed |cap|).
 */
size_t sp_captured(struct sp_pair *p, int i, uint8_t *out, size_t cap);

/* Ends what is still running (QP to ERR), frees conns, QPs, CQs, PDs and
 * the context. */
void sp_close(struct sp_pair *p);

#endif
