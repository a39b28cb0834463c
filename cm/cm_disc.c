/*
 * cm/cm_disc.c: when a connection the peer ended raises DISCONNECTED.
 *
 * The datapath reports the end of a connection (on_close) in the same
 * engine pass that completed the last work requests: the peer's last
 * message lands, our last Send completes, the peer's FIN (or TERMINATE,
 * or reset) follows in the same receive. Queued at once, DISCONNECTED can
 * reach an application before it has polled those completions, and
 * applications built on siw's timing take it as "everything outstanding
 * is lost": libfabric's RxM reports its own outstanding Sends as flushed
 * when it handles the disconnect first, although they completed
 * successfully (fi_pingpong -e rdm: "work request flushed"). siw raises
 * its disconnect from work queues after the FIN was handled, so a polling
 * application has usually reaped the completions by then.
 *
 * So when the peer ended the connection, DISCONNECTED waits until the QP's
 * completions other than flushes have left its CQs (polled, or purged by
 * iwarp_destroy_qp), at most id->disc_hold_ms (the context's
 * IWARP_DISCONNECT_HOLD_MS, default 100, 0 = never wait). Flushes are not
 * waited for: they tell nothing the event does not. A close the
 * application asked for (iwarp_cm_disconnect) raises DISCONNECTED at once:
 * the application is waiting for it. TIMEWAIT_EXIT always follows
 * DISCONNECTED. Engine thread throughout.
 */
#include "config.h"

#include "cm/cm_int.h"
#include "verbs/verbs.h"

/* How often the CQs are looked at while DISCONNECTED waits. */
#define CM_DISC_POLL_MS 1

static bool cm_disc_drained(const struct cm_id *id)
{
	const struct iwarp_qp *qp = id->pub.qp;

	if (!qp)
		return true; /* destroyed: its completions went with it */
	if (qp->send_cq &&
	    cq_has_unflushed(cq_from_pub(qp->send_cq), qp->qp_num))
		return false;
	return !qp->recv_cq ||
	       !cq_has_unflushed(cq_from_pub(qp->recv_cq), qp->qp_num);
}

/* DISCONNECTED waits exactly while the poll timer is armed: cm_disc_check
 * either re-arms it or raises, and raising disarms it. */
static bool cm_disc_held(const struct cm_id *id)
{
	return engine_timer_armed(&id->dischold);
}

static void cm_disc_raise(struct cm_id *id)
{
	engine_timer_cancel(id->eng, &id->dischold);
	cm_event_push(id, NULL, IWARP_CM_EVENT_DISCONNECTED, id->disc_err, NULL,
		      0, 0, 0);
	id->disconnected = true;
	if (id->disc_reaped && id->state == CM_S_ESTABLISHED) {
		/* the datapath went meanwhile (cm_conn.c cm_reap_cb) */
		id->state = CM_S_CLOSED;
		cm_event_push(id, NULL, IWARP_CM_EVENT_TIMEWAIT_EXIT, 0, NULL,
			      0, 0, 0);
	}
}

static void cm_disc_check(void *arg)
{
	struct cm_id *id = arg;

	if (cm_disc_drained(id) ||
	    engine_now_ns() - id->disc_since_ns >=
		    (uint64_t)id->disc_hold_ms * 1000000u ||
	    engine_timer_start(id->eng, &id->dischold, CM_DISC_POLL_MS,
			       cm_disc_check, id))
		cm_disc_raise(id);
}

void cm_disc_on_close(struct cm_id *id, int err)
{
	id->disc_err = err;
	id->disc_reaped = false;
	if (id->disc_local || !id->pub.qp || !id->disc_hold_ms) {
		cm_disc_raise(id);
		return;
	}
	id->disc_since_ns = engine_now_ns();
	cm_disc_check(id);
}

bool cm_disc_reaped(struct cm_id *id)
{
	if (!cm_disc_held(id))
		return false;
	id->disc_reaped = true;
	return true;
}

void cm_disc_release(struct cm_id *id)
{
	if (cm_disc_held(id))
		cm_disc_raise(id);
}

void cm_disc_cancel(struct cm_id *id)
{
	engine_timer_cancel(id->eng, &id->dischold);
}
