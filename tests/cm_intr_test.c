/*
 * tests/cm_intr_test.c: the blocking waits (iwarp_cm_get_event,
 * iwarp_get_cq_event) and signals, as rdma-core's read(2) on the channel
 * fd behaves: a handler installed without SA_RESTART ends the wait with
 * -EINTR (qperf ends its timed tests so); with SA_RESTART handlers only,
 * the wait goes on until its event. A helper thread (SIGALRM blocked)
 * sends SIGALRM to the waiting thread every few milliseconds, so the
 * signal surely lands inside the wait; every wait is bounded (a wait that
 * never ends fails through the test timeout).
 */
#include "config.h"

#include <errno.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <string.h>

#include "iwarp/iwarp.h"
#include "testutil.h"

#define WAIT_MS 20000 /* bound of the helper's signalling */

static atomic_int handled;     /* SIGALRM handler runs */
static atomic_int waiter_done; /* the wait returned */

static void on_alrm(int sig)
{
	(void)sig;
	atomic_fetch_add(&handled, 1);
}

static void set_handler(int flags)
{
	struct sigaction sa;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_alrm;
	sa.sa_flags = flags;
	sigemptyset(&sa.sa_mask);
	ck_assert_int_eq(sigaction(SIGALRM, &sa, NULL), 0);
}

static void reset_handler(void)
{
	signal(SIGALRM, SIG_DFL);
}

/*
 * Puts every caught signal but SIGALRM back to its default: handlers the
 * test runner installed (without SA_RESTART) would make any interrupted
 * wait return -EINTR (the rule of util/thread.h: one such handler in the
 * process is enough).
 */
static void only_alrm_caught(void)
{
	struct sigaction sa;
	int sig;

	for (sig = 1; sig < NSIG; sig++) {
		if (sig == SIGALRM || sig == SIGKILL || sig == SIGSTOP ||
		    sigaction(sig, NULL, &sa) < 0)
			continue;
		if (!(sa.sa_flags & SA_SIGINFO) &&
		    (sa.sa_handler == SIG_DFL || sa.sa_handler == SIG_IGN))
			continue;
		signal(sig, SIG_DFL);
	}
}

struct helper {
	pthread_t target;
	int signals_before_event; /* 0: signal until the wait returns */
	struct iwarp_cm_id *id;	  /* resolve_addr raises the event */
	int resolve_rc;
};

static void *helper_run(void *arg)
{
	struct helper *h = arg;
	struct sockaddr_in dst;
	sigset_t set;
	int i;

	sigemptyset(&set);
	sigaddset(&set, SIGALRM);
	pthread_sigmask(SIG_BLOCK, &set, NULL);
	for (i = 0; i < WAIT_MS / 5 && !atomic_load(&waiter_done); i++) {
		if (h->signals_before_event &&
		    atomic_load(&handled) >= h->signals_before_event)
			break;
		pthread_kill(h->target, SIGALRM);
		poll(NULL, 0, 5);
	}
	if (h->id) {
		memset(&dst, 0, sizeof(dst));
		dst.sin_family = AF_INET;
		dst.sin_port = htons(9);
		dst.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
		h->resolve_rc = iwarp_cm_resolve_addr(
			h->id, NULL, (struct sockaddr *)&dst, 1000);
	}
	return NULL;
}

static void helper_start(pthread_t *th, struct helper *h)
{
	atomic_store(&handled, 0);
	atomic_store(&waiter_done, 0);
	h->target = pthread_self();
	ck_assert_int_eq(pthread_create(th, NULL, helper_run, h), 0);
}

START_TEST(test_cm_wait_eintr)
{
	struct iwarp_event_channel *ch = iwarp_cm_create_event_channel();
	struct iwarp_cm_event *ev;
	struct helper h;
	pthread_t th;
	int rc;

	ck_assert_ptr_nonnull(ch);
	set_handler(0); /* no SA_RESTART: the wait ends */
	memset(&h, 0, sizeof(h));
	helper_start(&th, &h);
	rc = iwarp_cm_get_event(ch, &ev);
	atomic_store(&waiter_done, 1);
	pthread_join(th, NULL);
	reset_handler();
	ck_assert_int_eq(rc, -EINTR);
	ck_assert_int_ge(atomic_load(&handled), 1);
	iwarp_cm_destroy_event_channel(ch);
}
END_TEST

START_TEST(test_cm_wait_restarts)
{
	struct iwarp_event_channel *ch = iwarp_cm_create_event_channel();
	struct iwarp_cm_event *ev;
	struct helper h;
	pthread_t th;
	int rc;

	ck_assert_ptr_nonnull(ch);
	memset(&h, 0, sizeof(h));
	ck_assert_int_eq(
		iwarp_cm_create_id(ch, NULL, &h.id, NULL, IWARP_PS_TCP), 0);
	only_alrm_caught();
	set_handler(SA_RESTART); /* the wait goes on until the event */
	h.signals_before_event = 3;
	helper_start(&th, &h);
	rc = iwarp_cm_get_event(ch, &ev);
	atomic_store(&waiter_done, 1);
	pthread_join(th, NULL);
	reset_handler();
	ck_assert_int_eq(rc, 0);
	ck_assert_int_ge(atomic_load(&handled), 3);
	ck_assert_int_eq(h.resolve_rc, 0);
	ck_assert_int_eq(ev->event, IWARP_CM_EVENT_ADDR_RESOLVED);
	ck_assert_int_eq(iwarp_cm_ack_event(ev), 0);
	ck_assert_int_eq(iwarp_cm_destroy_id(h.id), 0);
	iwarp_cm_destroy_event_channel(ch);
}
END_TEST

START_TEST(test_cq_wait_eintr)
{
	struct iwarp_context *ctx = iwarp_open_context(NULL);
	struct iwarp_comp_channel *cc;
	struct iwarp_cq *cq, *got;
	struct helper h;
	pthread_t th;
	void *cq_ctx;
	int rc;

	ck_assert_ptr_nonnull(ctx);
	cc = iwarp_create_comp_channel(ctx);
	ck_assert_ptr_nonnull(cc);
	cq = iwarp_create_cq(ctx, 4, NULL, cc, 0);
	ck_assert_ptr_nonnull(cq);
	ck_assert_int_eq(iwarp_req_notify_cq(cq, 0), 0);
	set_handler(0);
	memset(&h, 0, sizeof(h));
	helper_start(&th, &h);
	rc = iwarp_get_cq_event(cc, &got, &cq_ctx);
	atomic_store(&waiter_done, 1);
	pthread_join(th, NULL);
	reset_handler();
	ck_assert_int_eq(rc, -EINTR);
	ck_assert_int_ge(atomic_load(&handled), 1);
	ck_assert_int_eq(iwarp_destroy_cq(cq), 0);
	ck_assert_int_eq(iwarp_destroy_comp_channel(cc), 0);
	ck_assert_int_eq(iwarp_close_context(ctx), 0);
}
END_TEST

static Suite *intr_suite(void)
{
	Suite *s = suite_create("cm_intr");
	TCase *tc = tcase_create("signals");

	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, test_cm_wait_eintr);
	tcase_add_test(tc, test_cm_wait_restarts);
	tcase_add_test(tc, test_cq_wait_eintr);
	suite_add_tcase(s, tc);
	return s;
}

IW_TEST_MAIN(intr_suite)
