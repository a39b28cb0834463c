/*
 * tools/ping/loop.c: context set-up and the single-threaded event loop.
 *
 * rping runs a CM thread and a CQ thread that block forever; here one
 * poll() covers the CM event channel, the completion channel, the async
 * event fd and the SIGINT/SIGTERM self-pipe (tools/common/stop.h), and every
 * wait is bounded by the nearest session deadline (--timeout), so a silent
 * peer fails the run instead of hanging it.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>

#include "tools/common/stop.h"
#include "tools/ping/session.h"

/* Makes |fd| non-blocking: the get-event calls then return -EAGAIN. */
static void loop_nonblock(int fd)
{
	int fl = fcntl(fd, F_GETFL);

	if (fl >= 0)
		fcntl(fd, F_SETFL, fl | O_NONBLOCK);
}

/* Opens the context with the options' MPA settings. */
static int loop_open(struct ping_loop *l)
{
	const struct ping_opts *o = l->o;
	struct iwarp_context_attr attr;
	int err;

	iwarp_context_attr_init(&attr);
	if (o->crc >= 0)
		attr.crc = (enum iwarp_crc_policy)o->crc;
	if (o->markers >= 0)
		attr.markers = o->markers;
	if (o->mpa_rev >= 0)
		attr.mpa_rev = o->mpa_rev;
	if (o->p2p >= 0)
		attr.p2p = (enum iwarp_p2p_rtr)o->p2p;

	l->ctx = iwarp_open_context(&attr);
	if (!l->ctx) {
		err = errno;
		if (err == ENOSYS || err == EPERM) {
			fprintf(stderr,
				"iwarp_ping: io_uring is unavailable on this system: %s\n",
				strerror(err));
			return PING_EXIT_NO_URING;
		}
		fprintf(stderr,
			"iwarp_ping: cannot open a libiwarp context: %s\n",
			iwarp_strerror(-err));
		return PING_EXIT_FAIL;
	}
	if (!iwarp_query_context(l->ctx, &attr))
		l->inline_progress = attr.progress == IWARP_PROGRESS_INLINE;
	if (o->debug && !iwarp_query_context(l->ctx, &attr))
		printf("context: mpa_rev %d crc %d markers %d p2p %d progress %d fpdu_max %u\n",
		       attr.mpa_rev, (int)attr.crc, attr.markers, (int)attr.p2p,
		       (int)attr.progress, attr.fpdu_max);

	l->cm_ch = iwarp_cm_create_event_channel();
	if (!l->cm_ch) {
		fprintf(stderr, "iwarp_ping: rdma_create_event_channel: %s\n",
			iwarp_strerror(-errno));
		return PING_EXIT_FAIL;
	}
	l->comp_ch = iwarp_create_comp_channel(l->ctx);
	if (!l->comp_ch) {
		fprintf(stderr, "iwarp_ping: ibv_create_comp_channel: %s\n",
			iwarp_strerror(-errno));
		return PING_EXIT_FAIL;
	}
	loop_nonblock(l->cm_ch->fd);
	loop_nonblock(l->comp_ch->fd);
	if (iwarp_async_fd(l->ctx) >= 0)
		loop_nonblock(iwarp_async_fd(l->ctx));
	return PING_EXIT_OK;
}

/* Handles every pending CM event. */
static void loop_cm_events(struct ping_loop *l)
{
	struct iwarp_cm_event *ev;
	struct ping_sess *s;
	int ret;

	for (;;) {
		ret = iwarp_cm_get_event(l->cm_ch, &ev);
		if (ret == -EAGAIN || ret == -EINTR)
			return;
		if (ret) {
			fprintf(stderr, "iwarp_ping: rdma_get_cm_event: %s\n",
				iwarp_strerror(ret));
			l->failures++;
			l->stop = 1;
			return;
		}
		s = ev->id ? ev->id->context : NULL;
		ping_dbg(l->o, "cma_event type %s cma_id %p (%s) status %d\n",
			 iwarp_cm_event_str(ev->event), (void *)ev->id,
			 s && s->server ? "child" : "parent", ev->status);
		if (ev->event == IWARP_CM_EVENT_CONNECT_REQUEST)
			server_connect_request(l, ev);
		else if (s && s->server)
			server_cm_event(s, ev);
		else if (s)
			client_cm_event(s, ev);
		else if (ev->event == IWARP_CM_EVENT_DEVICE_REMOVAL) {
			fprintf(stderr,
				"iwarp_ping: cma detected device removal\n");
			l->failures++;
			l->stop = 1;
		}
		iwarp_cm_ack_event(ev);
	}
}

/* Handles every pending CQ event: re-arm, then drain the CQ. */
static void loop_cq_events(struct ping_loop *l)
{
	struct iwarp_wc wc;
	struct iwarp_cq *cq;
	struct ping_sess *s;
	void *cq_ctx;
	int ret;

	for (;;) {
		ret = iwarp_get_cq_event(l->comp_ch, &cq, &cq_ctx);
		if (ret == -EAGAIN || ret == -EINTR)
			return;
		if (ret) {
			fprintf(stderr, "iwarp_ping: ibv_get_cq_event: %s\n",
				iwarp_strerror(ret));
			l->failures++;
			l->stop = 1;
			return;
		}
		iwarp_ack_cq_events(cq, 1);
		s = cq_ctx;
		ret = iwarp_req_notify_cq(cq, 0);
		if (ret) {
			sess_fail(s, "req_notify_cq: %s", iwarp_strerror(ret));
			continue;
		}
		while (s->state != SESS_DONE &&
		       (ret = iwarp_poll_cq(cq, 1, &wc)) == 1) {
			/* after a signal, what was in flight no longer
			 * matters: DISCONNECTED or the deadline ends it */
			if (l->interrupted && s->state == SESS_DISCONNECTING)
				continue;
			if (s->server)
				server_wc(s, &wc);
			else
				client_wc(s, &wc);
		}
		if (ret < 0)
			sess_fail(s, "poll_cq: %s", iwarp_strerror(ret));
	}
}

/* Reports asynchronous QP/CQ errors (the WC or CM event fails the run). */
static void loop_async_events(struct ping_loop *l)
{
	struct iwarp_async_event ev;

	while (!iwarp_get_async_event(l->ctx, &ev)) {
		if (ev.event_type == IWARP_EVENT_COMM_EST ||
		    ev.event_type == IWARP_EVENT_SQ_DRAINED ||
		    ev.event_type == IWARP_EVENT_QP_LAST_WQE_REACHED)
			ping_dbg(l->o, "async event %s\n",
				 iwarp_event_type_str(ev.event_type));
		else if (ev.term.layer || ev.term.etype || ev.term.ecode ||
			 ev.term_received)
			fprintf(stderr,
				"iwarp_ping: async event %s: TERMINATE %s %s\n",
				iwarp_event_type_str(ev.event_type),
				ev.term_received ? "from the peer:" : "sent:",
				iwarp_term_strerror(ev.term.layer,
						    ev.term.etype,
						    ev.term.ecode));
		else
			fprintf(stderr, "iwarp_ping: async event %s\n",
				iwarp_event_type_str(ev.event_type));
		iwarp_ack_async_event(&ev);
	}
}

/* Milliseconds until the nearest deadline (rounded up), -1 if none. */
static int loop_timeout(struct ping_loop *l, uint64_t now)
{
	uint64_t next = l->listen_deadline;
	struct ping_sess *s;

	for (s = l->sessions; s; s = s->next)
		if (s->deadline && (!next || s->deadline < next))
			next = s->deadline;
	if (!next)
		return -1;
	if (next <= now)
		return 0;
	if (next - now > UINT64_C(3600000) * UINT64_C(1000000))
		return 3600000;
	return (int)((next - now + 999999) / 1000000);
}

/* Fails every session (and the listener) whose deadline has passed. */
static void loop_deadlines(struct ping_loop *l)
{
	uint64_t now = ping_now_ns();
	struct ping_sess *s;

	if (l->listen_deadline && l->listen_deadline <= now) {
		fprintf(stderr,
			"iwarp_ping: no connection request within %d ms\n",
			l->o->listen_timeout_ms);
		l->failures++;
		l->stop = 1;
	}
	for (s = l->sessions; s; s = s->next) {
		if (!s->deadline || s->deadline > now)
			continue;
		if (s->state == SESS_DISCONNECTING) {
			fprintf(stderr,
				"iwarp_ping: warning: no DISCONNECTED event within %d ms\n",
				s->loop->interrupted ? PING_INTERRUPT_MS
						     : s->o->timeout_ms);
			sess_end(s, 0);
			continue;
		}
		sess_fail(s, "timeout after %d ms waiting for %s",
			  s->o->timeout_ms, s->waiting);
	}
}

/* Frees finished sessions; decides whether the loop ends. */
static void loop_reap(struct ping_loop *l)
{
	struct ping_sess *s, *next;

	for (s = l->sessions; s; s = next) {
		next = s->next;
		if (s->state != SESS_DONE)
			continue;
		if (!s->rejected) {
			l->sessions_done++;
			if (s->result)
				l->failures++;
			if (!s->server) {
				client_print_stats(s);
				l->stop = 1;
			} else if (!l->o->persistent) {
				l->stop = 1;
			}
		}
		sess_free(s);
	}
}

/*
 * SIGINT/SIGTERM: no new connection; every connected session disconnects
 * now (its DISCONNECTED event, or PING_INTERRUPT_MS, ends it), a session
 * still being set up is dropped (destroying its cm_id resets the stream).
 * The loop ends when no session is left.
 */
static void loop_interrupt(struct ping_loop *l)
{
	struct ping_sess *s;

	fprintf(stderr, "iwarp_ping: %s, stopping\n",
		tool_stop_signal() == SIGINT ? "SIGINT" : "SIGTERM");
	l->interrupted = 1;
	l->listen_deadline = 0;
	if (l->listen_id) {
		iwarp_cm_destroy_id(l->listen_id);
		l->listen_id = NULL;
	}
	for (s = l->sessions; s; s = s->next)
		sess_interrupt(s);
}

/* Runs until the loop is told to stop. */
static void loop_run(struct ping_loop *l)
{
	struct pollfd pfd[4];
	int n, i, timeout;

	pfd[0].fd = l->cm_ch->fd;
	pfd[1].fd = l->comp_ch->fd;
	pfd[2].fd = iwarp_async_fd(l->ctx);
	pfd[3].fd = tool_stop_fd();
	for (i = 0; i < 4; i++)
		pfd[i].events = POLLIN;

	for (;;) {
		if (tool_stop_signal() && !l->interrupted)
			loop_interrupt(l);
		loop_reap(l);
		if (l->interrupted && !l->sessions)
			l->stop = 1;
		if (l->stop)
			break;
		for (i = 0; i < 4; i++)
			pfd[i].revents = 0;
		timeout = loop_timeout(l, ping_now_ns());
		if (l->inline_progress) {
			/* no library thread: this loop drives the engine, and
			 * sleeps at most 1 ms between passes */
			iwarp_progress(l->ctx);
			if (timeout < 0 || timeout > 1)
				timeout = 1;
		}
		/* after a signal the self-pipe stays readable: leave it out */
		n = poll(pfd, l->interrupted ? 3 : 4, timeout);
		if (n < 0 && errno != EINTR) {
			perror("iwarp_ping: poll");
			l->failures++;
			break;
		}
		if (n > 0) {
			if (pfd[0].revents & POLLIN)
				loop_cm_events(l);
			if (pfd[1].revents & POLLIN)
				loop_cq_events(l);
			if (pfd[2].revents & POLLIN)
				loop_async_events(l);
		}
		loop_deadlines(l);
	}
}

int ping_run(const struct ping_opts *o)
{
	struct ping_loop l;
	int ret;

	memset(&l, 0, sizeof(l));
	l.o = o;
	if (o->self_qp)
		ping_dbg(o, "-q: the QP is always created through the CM\n");
	if (tool_stop_init()) {
		perror("iwarp_ping: signal handlers");
		return PING_EXIT_FAIL;
	}
	ret = loop_open(&l);
	if (ret == PING_EXIT_OK) {
		if (o->server)
			ret = server_start(&l);
		else
			ret = client_start(&l);
		if (ret)
			l.failures++;
		else
			loop_run(&l);
		/* a failed start may leave a finished session behind */
		loop_reap(&l);
		while (l.sessions)
			sess_free(l.sessions);
		ret = l.failures ? PING_EXIT_FAIL : PING_EXIT_OK;
	}
	if (l.listen_id)
		iwarp_cm_destroy_id(l.listen_id);
	if (l.comp_ch)
		iwarp_destroy_comp_channel(l.comp_ch);
	if (l.cm_ch)
		iwarp_cm_destroy_event_channel(l.cm_ch);
	if (l.ctx)
		iwarp_close_context(l.ctx);
	return ret;
}
