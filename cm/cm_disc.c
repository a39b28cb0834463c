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
 * iwarp_destroy_qp), at most CM_DISC_HOLD_MS (environment
 * IWARP_DISCONNECT_HOLD_MS, 0 = never wait). Flushes are not waited for:
 * they tell nothing the event does not. A close the
 * application asked for (iwarp_cm_disconnect) raises DISCONNECTED at once:
 * the application is waiting for it. TIMEWAIT_EXIT always follows
 * DISCONNECTED. Engine thread throughout.
 */
#include "config.h"

#include <errno.h>
#include <stdlib.h>

#include "cm/cm_int.h"
#include "verbs/verbs.h"

/* How often the CQs are looked at while DISCONNECTED waits. */
#define CM_DISC_POLL_MS 1

uint32_t cm_disc_hold_ms(void)
{
	const char *v = getenv("IWARP_DISCONNECT_HOLD_MS");
	char *end;
	long n;

	if (!v)
		return CM_DISC_HOLD_MS;
	errno = 0;
	n = strtol(v, &end, 10);
	if (errno || end == v || *end || n < 0 || n > CM_DISC_HOLD_MAX_MS)
		return CM_DISC_HOLD_MS;
	return (uint32_t)n;
}

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

static void cm_disc_raise(struct cm_id *id)
{
	id->disc_held = false;
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
	id->disc_held = true;
	cm_disc_check(id);
}

bool cm_disc_reaped(struct cm_id *id)
{
	if (!id->disc_held)
		return false;
	id->disc_reaped = true;
	return true;
}

void cm_disc_release(struct cm_id *id)
{
	if (id->disc_held)
		cm_disc_raise(id);
}

void cm_disc_cancel(struct cm_id *id)
{
	id->disc_held = false;
	engine_timer_cancel(id->eng, &id->dischold);
}
