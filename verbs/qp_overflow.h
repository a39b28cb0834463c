/*
 * verbs/qp_overflow.h: CQ overflow reporting between verbs and the engine
 * (ibverbs semantics: a completion that does not fit in its CQ is lost, the
 * CQ raises IWARP_EVENT_CQ_ERR once, and the QP that tried to complete into
 * it goes to ERR with IWARP_EVENT_QP_FATAL, flushing its queues).
 *
 * qp_sq_complete_rc and qp_set_error_rc are qp_sq_complete and
 * qp_set_error (verbs/verbs.h) that also report a lost completion; the
 * void forms call them and ignore the result.
 */
#ifndef IWARP_VERBS_QP_OVERFLOW_H
#define IWARP_VERBS_QP_OVERFLOW_H

#include <stdbool.h>
#include <stdint.h>

#include "verbs/verbs.h"

/*
 * True once |cq| overflowed (sticky: every later cq_push returns -ENOSPC).
 * Any thread (an acquire load, no lock).
 */
bool cq_overflowed(struct iw_cq *cq);

/*
 * qp_sq_complete (verbs/verbs.h). Returns 0, or -ENOSPC when at least one
 * completion was lost because the send CQ overflowed (the WQEs are consumed
 * all the same). Engine thread.
 */
int qp_sq_complete_rc(struct iw_qp *qp, uint32_t upto,
		      enum iwarp_wc_status status);

/*
 * qp_set_error (verbs/verbs.h). Returns 0, or -ENOSPC when at least one
 * flush completion was lost in an overflowed send or receive CQ (the QP is
 * in ERR and its queues are empty all the same). Any thread.
 */
int qp_set_error_rc(struct iw_qp *qp, const struct iwarp_term_cause *term,
		    bool async);

/*
 * Returns -ENOSPC when the send or the receive CQ of |qp| overflowed, else
 * 0. Any thread.
 */
int qp_cq_overflowed(struct iw_qp *qp);

/*
 * Moves |qp| to ERR because one of its completions was lost in an
 * overflowed CQ, the way iwarp_modify_qp(ERR) does it:
 * engine_qp_state_change(qp, IWARP_QPS_ERR) (which runs in place when
 * called on the engine thread), then qp_set_error with IWARP_EVENT_QP_FATAL.
 * No-op for a QP already in ERR or in RESET. Any thread, also the engine
 * thread from inside a completion path; qp->lock must not be held. After
 * it returns on the engine thread, the QP's connection is closed (the
 * caller must not transmit or complete for it any more).
 */
void qp_fail_cq_overflow(struct iw_qp *qp);

#endif /* IWARP_VERBS_QP_OVERFLOW_H */
