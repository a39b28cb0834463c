/*
 * util/thread.c: library threads that block asynchronous signals
 * (see util/thread.h).
 */
#include "config.h"

#include <errno.h>

#include "util/thread.h"

void iw_thread_sigset(sigset_t *set)
{
	static const int sync_sigs[] = {
		SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGTRAP, SIGSYS, SIGABRT,
	};
	size_t i;

	sigfillset(set);
	for (i = 0; i < sizeof(sync_sigs) / sizeof(sync_sigs[0]); i++)
		sigdelset(set, sync_sigs[i]);
}

int iw_thread_create(pthread_t *th, void *(*fn)(void *), void *arg)
{
	sigset_t block, saved;
	int rc;

	iw_thread_sigset(&block);
	rc = pthread_sigmask(SIG_BLOCK, &block, &saved);
	if (rc)
		return -rc;
	rc = pthread_create(th, NULL, fn, arg);
	/* SIG_SETMASK with the mask pthread_sigmask returned cannot fail */
	(void)pthread_sigmask(SIG_SETMASK, &saved, NULL);
	return -rc;
}

bool iw_wait_interrupted(void)
{
	struct sigaction sa;
	int sig;

	for (sig = 1; sig < NSIG; sig++) {
		if (sig == SIGKILL || sig == SIGSTOP)
			continue;
		/* fails for the C library's internal signals: not ours */
		if (sigaction(sig, NULL, &sa) < 0)
			continue;
		if (!(sa.sa_flags & SA_SIGINFO) &&
		    (sa.sa_handler == SIG_DFL || sa.sa_handler == SIG_IGN))
			continue;
		if (!(sa.sa_flags & SA_RESTART))
			return true;
	}
	return false;
}
