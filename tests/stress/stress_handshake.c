/*
 * tests/stress/stress_handshake.c: one side destroys its cm_id (and QP)
 * while the MPA exchange (RFC 5044 §7.1) is under way, at a random point:
 *  - the client, right after iwarp_cm_connect (random pause up to 4 ms,
 *    log-uniform), with
 *    iwarp_cm_destroy_qp + iwarp_cm_destroy_id, or with iwarp_destroy_qp on
 *    its QP first and iwarp_cm_destroy_id after (librdmacm allows that
 *    order);
 *  - the server, right after iwarp_cm_accept (random pause up to 2 ms:
 *    races the MPA Reply), in either order;
 *  - half the time with a random gap between the QP's destroy and the
 *    id's (the exchange may complete in it);
 *  - the server, destroying the request's id without accept or reject.
 * The other side must reach an end in bounded time (ESTABLISHED then
 * DISCONNECTED, or REJECTED / CONNECT_ERROR / UNREACHABLE), nothing may
 * touch freed memory (ASan), nothing may leak.
 */
#include "config.h"

#include <string.h>

#include "sx.h"

enum how {
	CLI_CM_ORDER, /* iwarp_cm_destroy_qp, iwarp_cm_destroy_id */
	CLI_QP_FIRST, /* iwarp_destroy_qp, iwarp_cm_destroy_id */
	SRV_CM_ORDER,
	SRV_QP_FIRST,
	SRV_NO_ANSWER, /* request id destroyed without accept/reject */
	HOW_COUNT
};

static const char *const names[HOW_COUNT] = {
	"client cm_destroy_qp+destroy_id", "client destroy_qp then destroy_id",
	"server cm_destroy_qp+destroy_id after accept",
	"server destroy_qp then destroy_id after accept",
	"server destroys the request id"};

/* A pause below |max| µs, as often under 16 µs as between 1 and 2 ms:
 * uniform in the exponent, so every phase of the exchange gets hit. */
static unsigned int pause_us(uint64_t r, unsigned int max)
{
	unsigned int bits = (unsigned int)(r % 13u);

	return (unsigned int)((r >> 8) & ((1u << bits) - 1u)) % max;
}

/* Destroys |id|'s QP, then (after |gap_us|: the engine may finish the
 * exchange in between) the id. */
static void destroy(struct iwarp_cm_id *id, bool qp_first, unsigned int gap_us)
{
	if (qp_first && id->qp)
		SX_OK(iwarp_destroy_qp(id->qp));
	else
		iwarp_cm_destroy_qp(id);
	if (gap_us)
		sx_usleep(gap_us);
	SX_OK(iwarp_cm_destroy_id(id));
}

/* An end event of a connection attempt (or of the connection). */
static bool is_end(enum iwarp_cm_event_type t)
{
	return t == IWARP_CM_EVENT_DISCONNECTED ||
	       t == IWARP_CM_EVENT_REJECTED ||
	       t == IWARP_CM_EVENT_CONNECT_ERROR ||
	       t == IWARP_CM_EVENT_UNREACHABLE;
}

/* Server: QP + accept of a request whose client may be gone; false when
 * iwarp_cm_accept refused (then no event of this id follows). */
static bool accept_tolerant(struct sx_net *n, struct iwarp_cm_id *id)
{
	struct iwarp_qp_init_attr qa;
	struct iwarp_conn_param cp;
	int rc;

	memset(&qa, 0, sizeof(qa));
	qa.send_cq = n->srv.cq;
	qa.recv_cq = n->srv.cq;
	qa.qp_type = IWARP_QPT_RC;
	qa.cap.max_send_wr = 16;
	qa.cap.max_recv_wr = 16;
	qa.cap.max_send_sge = 1;
	qa.cap.max_recv_sge = 1;
	SX_OK(iwarp_cm_create_qp(id, n->srv.pd, &qa));
	memset(&cp, 0, sizeof(cp));
	cp.responder_resources = 16;
	cp.initiator_depth = 16;
	rc = iwarp_cm_accept(id, &cp);
	return rc == 0;
}

/*
 * The surviving side |ch|: waits for the end of |id| (NULL on the server
 * until a request comes: then accepts it). |quiet_ms|: on the server, how
 * long without events means no request is coming (the client may have gone
 * before its SYN).
 */
static void survive(struct sx_net *n, struct iwarp_event_channel *ch,
		    struct iwarp_cm_id *id, bool server, int quiet_ms)
{
	struct iwarp_cm_event *ev;
	bool ended = false;
	enum iwarp_cm_event_type t;

	sx_phase(server ? "server: wait for the end"
			: "client: wait for the end");
	while (!ended) {
		ev = sx_cm_next(n, ch, id ? SX_WAIT_MS : quiet_ms);
		if (!ev) {
			SX_CHECK(!id, "%s: no end event within %d ms",
				 server ? "server" : "client", SX_WAIT_MS);
			return; /* server: no request came */
		}
		t = ev->event;
		if (t == IWARP_CM_EVENT_CONNECT_REQUEST) {
			SX_CHECK(server && !id, "unexpected CONNECT_REQUEST");
			id = ev->id;
			if (accept_tolerant(n, id)) {
				SX_OK(iwarp_cm_ack_event(ev));
				continue;
			}
			/* the client is gone already: accept may refuse */
			SX_OK(iwarp_cm_ack_event(ev));
			break;
		}
		SX_CHECK(ev->id == id, "%s for another id",
			 iwarp_cm_event_str(t));
		SX_CHECK(t == IWARP_CM_EVENT_ESTABLISHED ||
				 t == IWARP_CM_EVENT_TIMEWAIT_EXIT || is_end(t),
			 "%s: event %s (status %d)",
			 server ? "server" : "client", iwarp_cm_event_str(t),
			 ev->status);
		ended = is_end(t);
		SX_OK(iwarp_cm_ack_event(ev));
	}
	sx_phase(server ? "server: destroy" : "client: destroy");
	destroy(id, false, 0);
}

static void iter(int it)
{
	long base = sx_mem_live();
	enum how how = (enum how)sx_pick(it, names, HOW_COUNT);
	uint64_t r = sx_rand();
	/* half the time a gap between the QP's destroy and the id's */
	unsigned int gap = (r >> 40) & 1 ? pause_us(r >> 41, 2048u) : 0;
	struct iwarp_cm_event *ev;
	struct sx_opts o;
	struct sx_net n;
	struct sx_conn k;

	memset(&o, 0, sizeof(o));
	o.progress =
		(r >> 8) & 1 ? IWARP_PROGRESS_CPU : IWARP_PROGRESS_ADAPTIVE;
	/* the initiator hands the stream over after this pause (0..2 ms):
	 * the destroy can land before, in or after it */
	o.grace_ms = (uint32_t)((r >> 10) % 3u);
	sx_net_open(&n, &o);
	n.drain_stray = true;
	sx_connect_start(&n, &k, &o);
	if (how == CLI_CM_ORDER || how == CLI_QP_FIRST) {
		sx_usleep(pause_us(r >> 16, 4096u));
		sx_phase(names[how]);
		destroy(k.c, how == CLI_QP_FIRST, gap);
		survive(&n, n.srv.ech, NULL, true, 200);
	} else {
		sx_phase("server waits for the request");
		ev = sx_cm_next(&n, n.srv.ech, SX_WAIT_MS);
		SX_CHECK(ev != NULL, "no CONNECT_REQUEST");
		SX_CHECK(ev->event == IWARP_CM_EVENT_CONNECT_REQUEST,
			 "server got %s (%d)", iwarp_cm_event_str(ev->event),
			 ev->status);
		k.s = ev->id;
		if (how != SRV_NO_ANSWER)
			sx_accept(&n, &k, k.s, &o);
		SX_OK(iwarp_cm_ack_event(ev));
		sx_usleep(pause_us(r >> 16, 2048u));
		sx_phase(names[how]);
		destroy(k.s, how == SRV_QP_FIRST, gap);
		survive(&n, n.cli.ech, k.c, false, 0);
	}
	sx_net_close(&n, base);
}

int main(void)
{
	return sx_main("handshake", 40, iter);
}
