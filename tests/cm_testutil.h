/*
 * tests/cm_testutil.h: the scaffolding of the Check suites that connect
 * ids over real loopback TCP (cm_test, cm_lifetime_test, cm_migrate_test,
 * tls_test): one side's context, CM channel, PD and CQ; bounded event
 * waits; a loopback listener on a kernel-chosen port; a QP's state read
 * through the public query (also for conn_test and the stack suites).
 * Every wait takes its bound from the caller; none asserts on timing.
 */
#ifndef IWARP_TESTS_CM_TESTUTIL_H
#define IWARP_TESTS_CM_TESTUTIL_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/socket.h>

#include "iwarp/iwarp.h"

struct cmt_side {
	struct iwarp_context *ctx;
	struct iwarp_event_channel *ch;
	struct iwarp_pd *pd;
	struct iwarp_cq *cq;
};

/* Opens a context with |a| and its channel, PD and a CQ of |cq_depth|. */
void cmt_side_open(struct cmt_side *s, const struct iwarp_context_attr *a,
		   int cq_depth);
/* Destroys what cmt_side_open made (a NULL channel is skipped). */
void cmt_side_close(struct cmt_side *s);

/* True when |ch| has an event within |ms|. */
bool cmt_ch_ready(struct iwarp_event_channel *ch, int ms);

/* The next event of |ch| within |wait_ms|, which must be |type|. */
struct iwarp_cm_event *cmt_expect_ev(struct iwarp_event_channel *ch,
				     enum iwarp_cm_event_type type,
				     int wait_ms);

/* Port of an IPv4 or IPv6 address, host order. */
uint16_t cmt_sa_port(const struct sockaddr_storage *ss);

/* RC QP attributes on the side's CQ: |depth| WRs each way, one SGE. */
void cmt_qp_attr(const struct cmt_side *s, struct iwarp_qp_init_attr *qa,
		 uint32_t depth);

/* A listener of |s| on 127.0.0.1, port chosen by the kernel (*|port|). */
struct iwarp_cm_id *cmt_listen(struct cmt_side *s, int backlog, uint16_t *port);

/* A client id of |s| toward 127.0.0.1:|port|, address resolution started
 * (its events not taken). */
struct iwarp_cm_id *cmt_resolving(struct cmt_side *s, uint16_t port);

/* cmt_resolving, then ADDR_RESOLVED taken, the route resolved and
 * ROUTE_RESOLVED taken, each event within |wait_ms|. */
struct iwarp_cm_id *cmt_resolved(struct cmt_side *s, uint16_t port,
				 int wait_ms);

/* A client id of |s| toward 127.0.0.1:|port|, address and route resolved
 * (both events taken within |wait_ms|), with a QP of |depth| WRs. */
struct iwarp_cm_id *cmt_client(struct cmt_side *s, uint16_t port,
			       uint32_t depth, int wait_ms);

/* The state of |qp| as an application reads it while the engine thread may
 * change it: through iwarp_query_qp (under the QP's lock), not the public
 * field itself (asserts that the query succeeds). */
enum iwarp_qp_state cmt_qp_state(struct iwarp_qp *qp);

#endif
