/*
 * tests/io_signals_test.c: the library's own threads block asynchronous
 * signals (util/thread.h), so a process-directed signal reaches the
 * application's threads.
 *
 *  - iw_thread_create: the new thread's mask blocks every asynchronous
 *    signal and none of the synchronous ones; the caller's mask is the same
 *    after the call as before.
 *  - the progress thread of an engine (each threaded mode), read
 *    from /proc/self/task/<tid>/status (SigBlk), blocks SIGINT, SIGTERM and
 *    the rest, not SIGSEGV and the other synchronous signals.
 *  - end to end: with an engine running and SIGUSR1 blocked in the main
 *    thread only, kill(getpid(), SIGUSR1) stays pending for the process
 *    while the engine thread runs calls (it does not take the signal);
 *    unblocking it runs the handler on the main thread.
 */
#include "config.h"

#include <dirent.h>
#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "io/engine.h"
#include "testutil.h"
#include "util/thread.h"
#include "util/tsan.h"

/* Asynchronous signals a library thread must block. */
static const int async_sigs[] = {
	SIGHUP,	 SIGINT,  SIGQUIT,   SIGUSR1, SIGUSR2,	SIGPIPE, SIGALRM,
	SIGTERM, SIGCHLD, SIGCONT,   SIGTSTP, SIGTTIN,	SIGTTOU, SIGURG,
	SIGXCPU, SIGXFSZ, SIGVTALRM, SIGPROF, SIGWINCH, SIGIO,
};

/* Synchronous signals it must leave unblocked (its own faults). */
static const int sync_sigs[] = {
	SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGTRAP, SIGSYS, SIGABRT,
};

#define N_ELEM(a) (sizeof(a) / sizeof((a)[0]))

/* ---- iw_thread_create ---- */

static void *mask_reader(void *arg)
{
	sigset_t *out = arg;

	pthread_sigmask(SIG_SETMASK, NULL, out);
	return NULL;
}

START_TEST(test_thread_create_mask)
{
	sigset_t before, after, child, usr2;
	pthread_t th;
	size_t i;
	int s;

	/* a caller that blocks SIGUSR2 and nothing else */
	sigemptyset(&usr2);
	sigaddset(&usr2, SIGUSR2);
	ck_assert_int_eq(pthread_sigmask(SIG_SETMASK, &usr2, NULL), 0);
	ck_assert_int_eq(pthread_sigmask(SIG_SETMASK, NULL, &before), 0);

	sigemptyset(&child);
	ck_assert_int_eq(iw_thread_create(&th, mask_reader, &child), 0);
	ck_assert_int_eq(pthread_join(th, NULL), 0);

	for (i = 0; i < N_ELEM(async_sigs); i++)
		ck_assert_msg(sigismember(&child, async_sigs[i]) == 1,
			      "signal %d not blocked in the new thread",
			      async_sigs[i]);
	ck_assert_int_eq(sigismember(&child, SIGRTMIN), 1);
	ck_assert_int_eq(sigismember(&child, SIGRTMAX), 1);
	for (i = 0; i < N_ELEM(sync_sigs); i++)
		ck_assert_msg(sigismember(&child, sync_sigs[i]) == 0,
			      "synchronous signal %d blocked in the new thread",
			      sync_sigs[i]);

	/* the caller's mask is back to what it was, signal by signal */
	ck_assert_int_eq(pthread_sigmask(SIG_SETMASK, NULL, &after), 0);
	for (s = 1; s < SIGRTMIN; s++)
		ck_assert_msg(sigismember(&after, s) == sigismember(&before, s),
			      "caller's mask changed for signal %d", s);
	ck_assert_int_eq(sigismember(&after, SIGUSR2), 1);
	ck_assert_int_eq(sigismember(&after, SIGINT), 0);
}
END_TEST

/* ---- the progress thread of a context ---- */

/* The modes that run a progress thread (every iwarp_progress_mode but
 * INLINE maps to one of them). */
static const enum engine_mode threaded_modes[] = {
	ENGINE_MODE_ADAPTIVE,
	ENGINE_MODE_LATENCY,
	ENGINE_MODE_CPU,
};

static void on_engine(void *arg)
{
	(*(int *)arg)++;
}

/*
 * An engine with its thread running: glibc starts a new thread with every
 * signal blocked and installs the inherited mask in the thread itself, so
 * the mask is only meaningful once the thread has run a call.
 */
static struct engine *engine_started(int mode)
{
	struct engine *eng;
	int ran = 0;

	eng = engine_create(
		&(struct engine_attr){.mode = threaded_modes[mode]});
	ck_assert_msg(eng != NULL, "engine_create: %s", strerror(errno));
	ck_assert_int_eq(engine_call_sync(eng, on_engine, &ran), 0);
	ck_assert_int_eq(ran, 1);
	return eng;
}

/* PF_IO_WORKER in the flags of /proc/<pid>/task/<tid>/stat: an io_uring
 * worker the kernel runs as a task of this process (iou-wrk-*, iou-sqp-*),
 * with every signal blocked. Not a library thread. */
#define TASK_PF_IO_WORKER 0x10u

/*
 * Reads the flags (stat field 9), Name and SigBlk of task |tid| of this
 * process. Returns 0, or -1 if the task is gone.
 */
static int task_info(const char *tid, unsigned long *flags, char *name,
		     size_t name_len, uint64_t *blk)
{
	char path[300], line[512];
	const char *p;
	int got = 0, field;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/self/task/%s/stat", tid);
	f = fopen(path, "r");
	if (!f)
		return -1;
	p = fgets(line, sizeof(line), f) ? strrchr(line, ')') : NULL;
	fclose(f);
	if (!p)
		return -1;
	/* after "pid (comm)": state is field 3, flags field 9 */
	for (field = 2; p && field < 9; field++)
		p = strchr(p + 1, ' ');
	if (!p)
		return -1;
	*flags = strtoul(p + 1, NULL, 10);

	snprintf(path, sizeof(path), "/proc/self/task/%s/status", tid);
	f = fopen(path, "r");
	if (!f)
		return -1;
	name[0] = '\0';
	while (fgets(line, sizeof(line), f)) {
		if (!strncmp(line, "Name:", 5)) {
			snprintf(name, name_len, "%s",
				 line + 5 + strspn(line + 5, " \t"));
			name[strcspn(name, "\n")] = '\0';
		} else if (!strncmp(line, "SigBlk:", 7)) {
			*blk = strtoull(line + 7, NULL, 16);
			got = 1;
		}
	}
	fclose(f);
	return got ? 0 : -1;
}

/* Bit of signal |sig| in a /proc SigBlk word. */
static uint64_t sig_bit(int sig)
{
	return UINT64_C(1) << (sig - 1);
}

START_TEST(test_engine_thread_sigblk)
{
	struct engine *eng = engine_started(_i);
	char self[32], name[64];
	struct dirent *de;
	unsigned long flags;
	int checked = 0;
	uint64_t blk;
	size_t i;
	DIR *d;

	snprintf(self, sizeof(self), "%d", (int)getpid());
	d = opendir("/proc/self/task");
	ck_assert_ptr_nonnull(d);
	while ((de = readdir(d))) {
		if (de->d_name[0] == '.' || !strcmp(de->d_name, self))
			continue;
		if (task_info(de->d_name, &flags, name, sizeof(name), &blk))
			continue;
		if (flags & TASK_PF_IO_WORKER)
			continue;
		/* ThreadSanitizer's runtime starts a background thread of its
		 * own that blocks every signal, SIGSEGV included; ours never
		 * block SIGSEGV (the checks below), so that one is not ours. */
		if (IW_TSAN && (blk & sig_bit(SIGSEGV)) &&
		    (blk & sig_bit(SIGILL)) && (blk & sig_bit(SIGBUS)))
			continue;
		for (i = 0; i < N_ELEM(async_sigs); i++)
			ck_assert_msg(
				blk & sig_bit(async_sigs[i]),
				"task %s (%s): signal %d not blocked (SigBlk %016" PRIx64
				")",
				de->d_name, name, async_sigs[i], blk);
		ck_assert(blk & sig_bit(SIGRTMIN));
		for (i = 0; i < N_ELEM(sync_sigs); i++)
			ck_assert_msg(
				!(blk & sig_bit(sync_sigs[i])),
				"task %s (%s, flags 0x%lx): synchronous signal %d blocked (SigBlk %016" PRIx64
				")",
				de->d_name, name, flags, sync_sigs[i], blk);
		checked++;
	}
	closedir(d);
	/* the progress thread is there: the check was not vacuous */
	ck_assert_int_ge(checked, 1);
	engine_destroy(eng);
}
END_TEST

/* ---- end to end: a process-directed signal ---- */

static volatile sig_atomic_t usr1_count;
static pthread_t usr1_thread;

static void on_usr1(int sig)
{
	(void)sig;
	usr1_thread = pthread_self();
	usr1_count++;
}

START_TEST(test_signal_stays_with_the_application)
{
	struct engine *eng;
	struct sigaction sa;
	sigset_t usr1, pend;
	int ran = 0;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_usr1;
	sigemptyset(&sa.sa_mask);
	ck_assert_int_eq(sigaction(SIGUSR1, &sa, NULL), 0);
	sigemptyset(&usr1);
	sigaddset(&usr1, SIGUSR1);
	/* the engine thread is created while SIGUSR1 is NOT blocked here,
	 * so it cannot inherit a block from us */
	ck_assert_int_eq(pthread_sigmask(SIG_UNBLOCK, &usr1, NULL), 0);
	eng = engine_started(_i);

	ck_assert_int_eq(pthread_sigmask(SIG_BLOCK, &usr1, NULL), 0);
	usr1_count = 0;
	ck_assert_int_eq(kill(getpid(), SIGUSR1), 0);
	/*
	 * The engine thread runs two calls in user space after the kill: a
	 * thread that did not block SIGUSR1 would have taken the signal on
	 * its way back from the kernel and run the handler before them.
	 */
	ck_assert_int_eq(engine_call_sync(eng, on_engine, &ran), 0);
	ck_assert_int_eq(engine_call_sync(eng, on_engine, &ran), 0);
	ck_assert_int_eq(ran, 2);
	ck_assert_int_eq(usr1_count, 0);
	/* every thread blocks it: the kernel keeps it pending */
	ck_assert_int_eq(sigpending(&pend), 0);
	ck_assert_int_eq(sigismember(&pend, SIGUSR1), 1);
	/* POSIX: a pending signal that this unblocks is delivered before
	 * pthread_sigmask returns, to this thread */
	ck_assert_int_eq(pthread_sigmask(SIG_UNBLOCK, &usr1, NULL), 0);
	ck_assert_int_eq(usr1_count, 1);
	ck_assert(pthread_equal(usr1_thread, pthread_self()));

	engine_destroy(eng);
}
END_TEST

static Suite *io_signals_suite(void)
{
	Suite *s = suite_create("io_signals");
	TCase *tc;

	tc = tcase_create("thread");
	tcase_add_test(tc, test_thread_create_mask);
	suite_add_tcase(s, tc);

	tc = tcase_create("engine");
	tcase_set_timeout(tc, 30);
	tcase_add_loop_test(tc, test_engine_thread_sigblk, 0,
			    (int)N_ELEM(threaded_modes));
	tcase_add_loop_test(tc, test_signal_stays_with_the_application, 0,
			    (int)N_ELEM(threaded_modes));
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	struct engine *eng = engine_create(
		&(struct engine_attr){.mode = ENGINE_MODE_INLINE});

	if (!eng && (errno == ENOSYS || errno == EPERM))
		return 77; /* no io_uring here: skip */
	engine_destroy(eng);
	return iw_test_run_suite(io_signals_suite());
}
