/* tests/stress/sx.c: see sx.h. */
#include "config.h"

#include <errno.h>
#include <execinfo.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <arpa/inet.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "sx.h"

#define SX_MAX_VARIANTS 16

static const char *sx_name = "?";
static int sx_iter = -1;
static const char *volatile sx_cur_phase = "start";
static const char *volatile sx_cur_var = "";
static char sx_prefix[128];
static uint64_t sx_seed;
static struct {
	const char *name;
	long count;
} sx_var[SX_MAX_VARIANTS];

uint64_t sx_now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000u + (uint64_t)ts.tv_nsec / 1000000u;
}

void sx_usleep(unsigned int us)
{
	struct timespec ts = {.tv_sec = us / 1000000u,
			      .tv_nsec = (long)(us % 1000000u) * 1000};

	while (nanosleep(&ts, &ts) < 0 && errno == EINTR)
		;
}

void sx_phase(const char *phase)
{
	static int trace = -1;
	static uint64_t t0;

	if (trace < 0) {
		trace = getenv("IWARP_STRESS_TRACE") != NULL;
		t0 = sx_now_ms();
	}
	if (trace)
		fprintf(stderr, "%8llu ms  %s: %s\n",
			(unsigned long long)(sx_now_ms() - t0), sx_prefix,
			phase);
	sx_cur_phase = phase;
}

void sx_variant(const char *variant)
{
	sx_cur_var = variant;
}

void sx_fail_at(const char *file, int line, const char *fmt, ...)
{
	va_list ap;

	fflush(stdout);
	fprintf(stderr, "%s (%s) [%s]: %s:%d: ", sx_prefix, sx_cur_var,
		sx_cur_phase, file, line);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fprintf(stderr, "\nFAIL: stress %s\n", sx_name);
	fflush(stderr);
	/* no exit handlers: a leak report after a failure is noise */
	_exit(1);
}

void sx_check_failed(const char *file, int line, const char *cond,
		     const char *fmt, ...)
{
	char msg[1024];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	sx_fail_at(file, line, "check `%s` failed: %s", cond, msg);
}

static void sx_wr(const char *s)
{
	ssize_t r = write(2, s, strlen(s));

	(void)r;
}

static void sx_watchdog(int sig)
{
	(void)sig;
	sx_wr(sx_prefix);
	sx_wr(" (");
	sx_wr(sx_cur_var);
	sx_wr(") [");
	sx_wr(sx_cur_phase);
	sx_wr("]: watchdog: iteration not done within the limit (hang)\nFAIL: stress ");
	sx_wr(sx_name);
	sx_wr("\n");
	_exit(1);
}

/* A crash says where the iteration was, then the previous handler (the
 * sanitizer's, or the default) takes over: a fault re-executes the
 * faulting instruction, abort() raises again. */
static const int sx_crash_sigs[] = {SIGSEGV, SIGBUS, SIGILL, SIGFPE, SIGABRT};
static struct sigaction
	sx_crash_old[sizeof(sx_crash_sigs) / sizeof(sx_crash_sigs[0])];

static void sx_crash(int sig, siginfo_t *si, void *uc)
{
	void *bt[24];
	size_t i;

	(void)uc;
	sx_wr(sx_prefix);
	sx_wr(" (");
	sx_wr(sx_cur_var);
	sx_wr(") [");
	sx_wr(sx_cur_phase);
	sx_wr("]: crashed: ");
	sx_wr(strsignal(sig));
	sx_wr("\n");
	if (sig == SIGSEGV || sig == SIGBUS) {
		sx_mem_describe(si->si_addr);
		sx_wr("crash backtrace:\n");
		sx_print_frames(bt, (uint32_t)backtrace(bt, 24));
	}
	sx_wr("FAIL: stress ");
	sx_wr(sx_name);
	sx_wr("\n");
	for (i = 0; i < sizeof(sx_crash_sigs) / sizeof(sx_crash_sigs[0]); i++)
		if (sx_crash_sigs[i] == sig)
			sigaction(sig, &sx_crash_old[i], NULL);
	if (sig == SIGABRT)
		raise(sig);
}

static void sx_crash_handlers(void)
{
	struct sigaction sa;
	size_t i;

	memset(&sa, 0, sizeof(sa));
	sa.sa_sigaction = sx_crash;
	sa.sa_flags = SA_NODEFER | SA_SIGINFO;
	for (i = 0; i < sizeof(sx_crash_sigs) / sizeof(sx_crash_sigs[0]); i++)
		sigaction(sx_crash_sigs[i], &sa, &sx_crash_old[i]);
}

int sx_pick(int it, const char *const *names, int count)
{
	const char *only = getenv("IWARP_STRESS_ONLY");
	int i;

	if (only && *only) {
		for (i = 0; i < count; i++)
			if (strstr(names[i], only))
				break;
		if (i == count)
			SX_FAIL("IWARP_STRESS_ONLY=%s names no variant", only);
	} else {
		i = it % count;
	}
	sx_variant(names[i]);
	return i;
}

void sx_count(const char *variant)
{
	int i;

	for (i = 0; i < SX_MAX_VARIANTS && sx_var[i].name; i++)
		if (strcmp(sx_var[i].name, variant) == 0)
			break;
	if (i == SX_MAX_VARIANTS)
		SX_FAIL("too many variants");
	sx_var[i].name = variant;
	sx_var[i].count++;
}

uint64_t sx_rand(void)
{
	/* xorshift64* */
	sx_seed ^= sx_seed >> 12;
	sx_seed ^= sx_seed << 25;
	sx_seed ^= sx_seed >> 27;
	return sx_seed * 0x2545F4914F6CDD1Dull;
}

int sx_main(const char *name, int short_iters, void (*iter)(int i))
{
	struct iwarp_context *probe;
	struct sigaction sa;
	const char *env = getenv("IWARP_STRESS_ITERS");
	uint64_t t0 = sx_now_ms(), h = 1469598103934665603ull;
	int n = short_iters, i;
	const char *c;

	sx_name = name;
	snprintf(sx_prefix, sizeof(sx_prefix), "stress %s", name);
	setvbuf(stdout, NULL, _IOLBF, 0);
	if (env && *env)
		n = atoi(env);
	if (n <= 0)
		n = short_iters;
	probe = iwarp_open_context(NULL);
	if (!probe && (errno == ENOSYS || errno == EPERM)) {
		printf("stress %s: no io_uring here (%s): skipped\n", name,
		       strerror(errno));
		return 77;
	}
	if (probe)
		iwarp_close_context(probe);
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = sx_watchdog;
	sigaction(SIGALRM, &sa, NULL);
	signal(SIGPIPE, SIG_IGN);
	sx_crash_handlers();
	for (c = name; *c; c++)
		h = (h ^ (uint8_t)*c) * 1099511628211ull;
	for (i = 0; i < n; i++) {
		sx_iter = i;
		snprintf(sx_prefix, sizeof(sx_prefix),
			 "stress %s iteration %d/%d", name, i + 1, n);
		sx_seed = h ^ ((uint64_t)i + 1u) * 0x9E3779B97F4A7C15ull;
		if (!sx_seed)
			sx_seed = 1;
		sx_phase("start");
		sx_variant("");
		alarm(SX_ITER_LIMIT_S);
		iter(i);
		alarm(0);
		if (*sx_cur_var)
			sx_count(sx_cur_var);
	}
	sx_phase("final quarantine check");
	SX_CHECK(sx_mem_check() == 0, "writes into freed buffers (above)");
	printf("stress %s: %d iterations, %d passed in %.1f s (", name, n, n,
	       (double)(sx_now_ms() - t0) / 1000.0);
	for (i = 0; i < SX_MAX_VARIANTS && sx_var[i].name; i++)
		printf("%s%s %ld", i ? ", " : "", sx_var[i].name,
		       sx_var[i].count);
	printf(")\n");
	return 0;
}

/* ---- the stack -------------------------------------------------------- */

static void nonblock(int fd)
{
	int fl = fcntl(fd, F_GETFL);

	SX_CHECK(fl >= 0 && fcntl(fd, F_SETFL, fl | O_NONBLOCK) == 0, "%s",
		 strerror(errno));
}

static void side_open(struct sx_side *s, const struct iwarp_context_attr *a,
		      int cqe)
{
	memset(s, 0, sizeof(*s));
	s->ctx = iwarp_open_context(a);
	SX_CHECK(s->ctx != NULL, "iwarp_open_context: %s", strerror(errno));
	s->ech = iwarp_cm_create_event_channel();
	SX_CHECK(s->ech != NULL, "%s", strerror(errno));
	nonblock(s->ech->fd);
	s->pd = iwarp_alloc_pd(s->ctx);
	SX_CHECK(s->pd != NULL, "%s", strerror(errno));
	s->cq = iwarp_create_cq(s->ctx, cqe, NULL, NULL, 0);
	SX_CHECK(s->cq != NULL, "iwarp_create_cq(%d): %s", cqe,
		 strerror(errno));
}

static void side_close(struct sx_net *n, struct sx_side *s, const char *who)
{
	struct iwarp_cm_event *ev;

	if (s->cq)
		SX_OK(iwarp_destroy_cq(s->cq));
	SX_OK(iwarp_dealloc_pd(s->pd));
	while ((ev = sx_cm_next(n, s->ech, 0)) != NULL) {
		if (n->drain_stray &&
		    ev->event == IWARP_CM_EVENT_CONNECT_REQUEST) {
			struct iwarp_cm_id *id = ev->id;

			SX_OK(iwarp_cm_ack_event(ev));
			SX_OK(iwarp_cm_destroy_id(id));
			continue;
		}
		SX_FAIL("%s: CM event %s (status %d) left on the channel", who,
			iwarp_cm_event_str(ev->event), ev->status);
	}
	iwarp_cm_destroy_event_channel(s->ech);
	SX_OK(iwarp_close_context(s->ctx));
	s->ctx = NULL; /* sx_drive skips it */
}

void sx_net_open(struct sx_net *n, const struct sx_opts *o)
{
	struct iwarp_context_attr a;
	struct sockaddr_storage ss;
	int cqe = o && o->cqe ? o->cqe : 1024;

	sx_phase("open contexts");
	memset(n, 0, sizeof(*n));
	iwarp_context_attr_init(&a);
	a.mpa_rev = 2;
	a.crc = o && o->crc ? IWARP_CRC_REQUEST : IWARP_CRC_OFF;
	a.p2p = IWARP_P2P_NONE;
	a.progress = o ? o->progress : IWARP_PROGRESS_CPU;
	a.mpa_req_timeout_ms = 5000;
	a.mpa_rep_timeout_ms = 5000;
	a.mpa_reply_grace_ms = o ? o->grace_ms : 0;
	n->inl = a.progress == IWARP_PROGRESS_INLINE;
	side_open(&n->srv, &a, o && o->srv_cqe ? o->srv_cqe : cqe);
	side_open(&n->cli, &a, o && o->cli_cqe ? o->cli_cqe : cqe);
	SX_OK(iwarp_cm_create_id(n->srv.ech, n->srv.ctx, &n->l, NULL,
				 IWARP_PS_TCP));
	SX_OK(iwarp_cm_getaddr("127.0.0.1", 0, &ss));
	SX_OK(iwarp_cm_bind_addr(n->l, (struct sockaddr *)&ss));
	SX_OK(iwarp_cm_listen(n->l, 128));
	n->port =
		ntohs(((const struct sockaddr_in *)&n->l->src_addr)->sin_port);
	SX_CHECK(n->port != 0, "listener port");
}

void sx_net_close(struct sx_net *n, long base)
{
	int bad;

	sx_phase("close contexts");
	SX_OK(iwarp_cm_destroy_id(n->l));
	side_close(n, &n->cli, "client");
	side_close(n, &n->srv, "server");
	sx_phase("quarantine check");
	bad = sx_mem_check();
	SX_CHECK(bad == 0, "%d freed buffer(s) written after free (above)",
		 bad);
	SX_CHECK(sx_mem_live() == base, "%ld library blocks leaked",
		 sx_mem_live() - base);
}

static void qp_attr(struct iwarp_qp_init_attr *qa, struct iwarp_cq *cq,
		    const struct sx_opts *o)
{
	memset(qa, 0, sizeof(*qa));
	qa->send_cq = cq;
	qa->recv_cq = cq;
	qa->qp_type = IWARP_QPT_RC;
	qa->cap.max_send_wr = o && o->max_send_wr ? o->max_send_wr : 128;
	qa->cap.max_recv_wr = o && o->max_recv_wr ? o->max_recv_wr : 128;
	qa->cap.max_send_sge = 1;
	qa->cap.max_recv_sge = 1;
}

void sx_connect_start(struct sx_net *n, struct sx_conn *k,
		      const struct sx_opts *o)
{
	struct iwarp_qp_init_attr qa;
	struct iwarp_conn_param cp;
	struct sockaddr_storage ss;

	sx_phase("client resolve + connect");
	memset(k, 0, sizeof(*k));
	SX_OK(iwarp_cm_create_id(n->cli.ech, n->cli.ctx, &k->c, k,
				 IWARP_PS_TCP));
	SX_OK(iwarp_cm_getaddr("127.0.0.1", n->port, &ss));
	SX_OK(iwarp_cm_resolve_addr(k->c, NULL, (struct sockaddr *)&ss, 2000));
	sx_cm_expect(n, n->cli.ech, IWARP_CM_EVENT_ADDR_RESOLVED, k->c);
	SX_OK(iwarp_cm_resolve_route(k->c, 2000));
	sx_cm_expect(n, n->cli.ech, IWARP_CM_EVENT_ROUTE_RESOLVED, k->c);
	qp_attr(&qa, n->cli.cq, o);
	SX_OK(iwarp_cm_create_qp(k->c, n->cli.pd, &qa));
	memset(&cp, 0, sizeof(cp));
	cp.responder_resources = 16;
	cp.initiator_depth = 16;
	SX_OK(iwarp_cm_connect(k->c, &cp));
}

void sx_accept(struct sx_net *n, struct sx_conn *k, struct iwarp_cm_id *id,
	       const struct sx_opts *o)
{
	struct iwarp_qp_init_attr qa;
	struct iwarp_conn_param cp;

	sx_phase("server accept");
	k->s = id;
	qp_attr(&qa, n->srv.cq, o);
	SX_OK(iwarp_cm_create_qp(id, n->srv.pd, &qa));
	memset(&cp, 0, sizeof(cp));
	cp.responder_resources = 16;
	cp.initiator_depth = 16;
	SX_OK(iwarp_cm_accept(id, &cp));
}

void sx_connect(struct sx_net *n, struct sx_conn *k, const struct sx_opts *o)
{
	struct iwarp_cm_event *ev;

	sx_connect_start(n, k, o);
	sx_phase("server waits for the request");
	ev = sx_cm_next(n, n->srv.ech, SX_WAIT_MS);
	SX_CHECK(ev != NULL, "no CONNECT_REQUEST");
	SX_CHECK(ev->event == IWARP_CM_EVENT_CONNECT_REQUEST,
		 "server got %s (%d)", iwarp_cm_event_str(ev->event),
		 ev->status);
	sx_accept(n, k, ev->id, o);
	SX_OK(iwarp_cm_ack_event(ev));
	sx_phase("connect: ESTABLISHED");
	sx_cm_expect(n, n->srv.ech, IWARP_CM_EVENT_ESTABLISHED, k->s);
	sx_cm_expect(n, n->cli.ech, IWARP_CM_EVENT_ESTABLISHED, k->c);
	SX_CHECK(sx_qp_state(k->c->qp) == IWARP_QPS_RTS, "client QP state %d",
		 sx_qp_state(k->c->qp));
	SX_CHECK(sx_qp_state(k->s->qp) == IWARP_QPS_RTS, "server QP state %d",
		 sx_qp_state(k->s->qp));
}

enum iwarp_qp_state sx_qp_state(struct iwarp_qp *qp)
{
	struct iwarp_qp_init_attr ia;
	struct iwarp_qp_attr a;

	memset(&a, 0, sizeof(a));
	SX_OK(iwarp_query_qp(qp, &a, IWARP_QP_STATE, &ia));
	return a.qp_state;
}

void sx_drive(struct sx_net *n)
{
	if (!n || !n->inl)
		return;
	if (n->srv.ctx)
		(void)iwarp_progress(n->srv.ctx);
	if (n->cli.ctx)
		(void)iwarp_progress(n->cli.ctx);
}

struct iwarp_cm_event *sx_cm_next(struct sx_net *n,
				  struct iwarp_event_channel *ch, int ms)
{
	uint64_t deadline = sx_now_ms() + (uint64_t)ms;
	struct iwarp_cm_event *ev;
	struct pollfd p;
	int rc;

	for (;;) {
		sx_drive(n);
		rc = iwarp_cm_get_event(ch, &ev);
		if (rc == 0)
			return ev;
		SX_CHECK(rc == -EAGAIN, "iwarp_cm_get_event: %s",
			 iwarp_strerror(rc));
		if (sx_now_ms() >= deadline)
			return NULL;
		p.fd = ch->fd;
		p.events = POLLIN;
		p.revents = 0;
		(void)poll(&p, 1, n && n->inl ? 1 : 50);
	}
}

int sx_cm_expect(struct sx_net *n, struct iwarp_event_channel *ch,
		 enum iwarp_cm_event_type type, struct iwarp_cm_id *id)
{
	struct iwarp_cm_event *ev = sx_cm_next(n, ch, SX_WAIT_MS);
	int status;

	SX_CHECK(ev != NULL, "no CM event within %d ms, wanted %s", SX_WAIT_MS,
		 iwarp_cm_event_str(type));
	SX_CHECK(ev->event == type, "got %s (status %d: %s), wanted %s",
		 iwarp_cm_event_str(ev->event), ev->status,
		 iwarp_strerror(ev->status), iwarp_cm_event_str(type));
	SX_CHECK(!id || ev->id == id, "%s for another id",
		 iwarp_cm_event_str(type));
	status = ev->status;
	SX_OK(iwarp_cm_ack_event(ev));
	return status;
}

void sx_disconnect(struct sx_net *n, struct sx_conn *k, bool from_server)
{
	sx_phase(from_server ? "server disconnects" : "client disconnects");
	SX_OK(iwarp_cm_disconnect(from_server ? k->s : k->c));
	sx_cm_expect(n, n->cli.ech, IWARP_CM_EVENT_DISCONNECTED, k->c);
	sx_cm_expect(n, n->srv.ech, IWARP_CM_EVENT_DISCONNECTED, k->s);
	sx_cm_expect(n, n->cli.ech, IWARP_CM_EVENT_TIMEWAIT_EXIT, k->c);
	sx_cm_expect(n, n->srv.ech, IWARP_CM_EVENT_TIMEWAIT_EXIT, k->s);
	SX_CHECK(sx_qp_state(k->c->qp) == IWARP_QPS_ERR, "client QP state %d",
		 sx_qp_state(k->c->qp));
	SX_CHECK(sx_qp_state(k->s->qp) == IWARP_QPS_ERR, "server QP state %d",
		 sx_qp_state(k->s->qp));
}

static void wait_end(struct sx_net *n, struct iwarp_event_channel *ch,
		     struct iwarp_cm_id *id, const char *who)
{
	struct iwarp_cm_event *ev;
	bool disc = false;

	for (;;) {
		ev = sx_cm_next(n, ch, SX_WAIT_MS);
		SX_CHECK(ev != NULL, "%s: no %s within %d ms", who,
			 disc ? "TIMEWAIT_EXIT" : "DISCONNECTED", SX_WAIT_MS);
		SX_CHECK(ev->id == id, "%s: %s for another id", who,
			 iwarp_cm_event_str(ev->event));
		SX_CHECK(ev->event == (disc ? IWARP_CM_EVENT_TIMEWAIT_EXIT
					    : IWARP_CM_EVENT_DISCONNECTED),
			 "%s: got %s (status %d), wanted %s", who,
			 iwarp_cm_event_str(ev->event), ev->status,
			 disc ? "TIMEWAIT_EXIT" : "DISCONNECTED");
		SX_OK(iwarp_cm_ack_event(ev));
		if (disc)
			return;
		disc = true;
	}
}

void sx_finish(struct sx_net *n, struct sx_conn *k)
{
	(void)iwarp_cm_disconnect(k->c);
	wait_end(n, n->cli.ech, k->c, "client");
	wait_end(n, n->srv.ech, k->s, "server");
	sx_drain_async(n, n->cli.ctx);
	sx_drain_async(n, n->srv.ctx);
}

int sx_drain_async(struct sx_net *n, struct iwarp_context *ctx)
{
	struct iwarp_async_event ev;
	int cnt = 0;

	while (sx_async_wait(n, ctx, &ev, 0))
		cnt++;
	return cnt;
}

void sx_conn_close(struct sx_conn *k)
{
	sx_phase("destroy QPs and ids");
	if (k->c) {
		iwarp_cm_destroy_qp(k->c);
		SX_OK(iwarp_cm_destroy_id(k->c));
	}
	if (k->s) {
		iwarp_cm_destroy_qp(k->s);
		SX_OK(iwarp_cm_destroy_id(k->s));
	}
	memset(k, 0, sizeof(*k));
}

void sx_poll(struct sx_net *n, struct iwarp_cq *cq, struct iwarp_wc *wc,
	     int want)
{
	uint64_t last = sx_now_ms();
	int got = 0, r;

	while (got < want) {
		r = iwarp_poll_cq(cq, want - got, wc + got);
		SX_CHECK(r >= 0, "iwarp_poll_cq: %s", iwarp_strerror(r));
		if (r) {
			got += r;
			last = sx_now_ms();
			continue;
		}
		SX_CHECK(sx_now_ms() - last < SX_WAIT_MS,
			 "%d of %d completions, none for %d ms", got, want,
			 SX_WAIT_MS);
		sx_drive(n);
		sx_usleep(100);
	}
}

int sx_check_prefix(const struct iwarp_wc *wc, int cnt, uint64_t first,
		    enum iwarp_wc_status alt_err)
{
	bool bad = false;
	int i, ok = 0;

	for (i = 0; i < cnt; i++) {
		SX_CHECK(
			wc[i].wr_id == first + (uint64_t)i,
			"completion %d: wr_id %llu, wanted %llu (posting order)",
			i, (unsigned long long)wc[i].wr_id,
			(unsigned long long)(first + (uint64_t)i));
		if (wc[i].status == IWARP_WC_SUCCESS) {
			SX_CHECK(!bad,
				 "wr %llu: success after an error completion",
				 (unsigned long long)wc[i].wr_id);
			ok++;
			continue;
		}
		SX_CHECK(wc[i].status == IWARP_WC_WR_FLUSH_ERR ||
				 (!bad && alt_err != IWARP_WC_SUCCESS &&
				  wc[i].status == alt_err),
			 "wr %llu: status %s (vendor_err %#x)",
			 (unsigned long long)wc[i].wr_id,
			 iwarp_wc_status_str(wc[i].status), wc[i].vendor_err);
		bad = true;
	}
	return ok;
}

bool sx_async_wait(struct sx_net *n, struct iwarp_context *ctx,
		   struct iwarp_async_event *ev, int ms)
{
	uint64_t deadline = sx_now_ms() + (uint64_t)ms;
	struct pollfd p;

	for (;;) {
		sx_drive(n);
		p.fd = iwarp_async_fd(ctx);
		p.events = POLLIN;
		p.revents = 0;
		if (poll(&p, 1, n && n->inl ? 1 : 50) == 1)
			break;
		if (sx_now_ms() >= deadline)
			return false;
	}
	SX_OK(iwarp_get_async_event(ctx, ev));
	iwarp_ack_async_event(ev);
	return true;
}

int sx_post_recv(struct iwarp_qp *qp, uint64_t wr_id, struct iwarp_mr *mr,
		 void *addr, uint32_t len)
{
	struct iwarp_recv_wr wr, *bad;
	struct iwarp_sge sge;

	sge.addr = (uintptr_t)addr;
	sge.length = len;
	sge.lkey = mr ? mr->lkey : 0;
	memset(&wr, 0, sizeof(wr));
	wr.wr_id = wr_id;
	wr.sg_list = &sge;
	wr.num_sge = mr ? 1 : 0;
	return iwarp_post_recv(qp, &wr, &bad);
}

int sx_post_send(struct iwarp_qp *qp, uint64_t wr_id, enum iwarp_wr_opcode op,
		 unsigned int flags, struct iwarp_mr *mr, void *addr,
		 uint32_t len, uint64_t raddr, uint32_t rkey)
{
	struct iwarp_send_wr wr, *bad;
	struct iwarp_sge sge;

	sge.addr = (uintptr_t)addr;
	sge.length = len;
	sge.lkey = mr ? mr->lkey : 0;
	memset(&wr, 0, sizeof(wr));
	wr.wr_id = wr_id;
	wr.sg_list = &sge;
	wr.num_sge = len || op == IWARP_WR_RDMA_READ ? 1 : 0;
	wr.opcode = op;
	wr.send_flags = flags;
	wr.wr.rdma.remote_addr = raddr;
	wr.wr.rdma.rkey = rkey;
	return iwarp_post_send(qp, &wr, &bad);
}
