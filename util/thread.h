/*
 * util/thread.h: how the library starts its own threads.
 *
 * A thread the library creates must not take the application's
 * asynchronous signals: a process-directed signal (SIGINT from the
 * terminal, SIGTERM from kill(1), SIGALRM, SIGCHLD, ...) goes to any thread
 * that does not block it, and a handler that runs on a library thread
 * never wakes the application's poll(2) or sigwait(2) loop. Synchronous
 * signals (a fault of the thread itself) stay unblocked, so a crash in a
 * library thread still kills the process with the right signal.
 */
#ifndef IWARP_UTIL_THREAD_H
#define IWARP_UTIL_THREAD_H

#include <pthread.h>
#include <signal.h>
#include <stdbool.h>

/*
 * Fills |set| with every signal a library thread blocks: all signals but
 * the synchronous ones (SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGTRAP, SIGSYS,
 * SIGABRT). SIGKILL and SIGSTOP are in the set; the kernel ignores them.
 */
void iw_thread_sigset(sigset_t *set);

/*
 * pthread_create(|th|, NULL, |fn|, |arg|) with the signals of
 * iw_thread_sigset() blocked in the new thread from its first instruction:
 * the calling thread blocks them, creates the thread (which inherits the
 * mask) and restores its own mask before returning, on success and on
 * failure. Thread safety: safe; only the calling thread's mask changes,
 * and only for the duration of the call.
 * Returns 0 or a negative errno (pthread_create's error).
 */
int iw_thread_create(pthread_t *th, void *(*fn)(void *), void *arg);

/*
 * Whether a blocking wait of the library that poll(2) ended with EINTR
 * must return -EINTR to its caller, as a read(2) on the same descriptor
 * would: true when the process catches a signal with a handler installed
 * without SA_RESTART (the kernel restarts read(2) only after handlers
 * installed with it; poll(2) is never restarted, so it cannot say which).
 * A program that relies on EINTR to leave a wait (an interval timer that
 * ends a test) gets it; one whose handlers all use SA_RESTART sees the
 * wait go on. Thread safety: safe (reads the process's dispositions).
 */
bool iw_wait_interrupted(void);

#endif /* IWARP_UTIL_THREAD_H */
