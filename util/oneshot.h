/*
 * util/oneshot.h: a one-shot flag one thread sleeps on until another sets
 * it, for a waiter that owns the flag's memory (on its stack) and returns
 * as soon as it sees it set.
 *
 * A mutex and condition variable would make the setter signal under the
 * mutex, since the waiter may free both once it returns: the waiter, woken
 * on the setter's CPU, usually preempts it there and then sleeps again on
 * the mutex until the setter runs to release it (two more context switches
 * and a futex wake per wait). Here the setter publishes the flag and wakes
 * the address with futex(2): after the store it touches no memory of the
 * waiter's, and a wake-up sent to an address the waiter's stack reuses
 * meanwhile is one any futex waiter must tolerate (every wait re-checks
 * its word).
 */
#ifndef IWARP_UTIL_ONESHOT_H
#define IWARP_UTIL_ONESHOT_H

#include <stdint.h>

struct iw_oneshot {
	uint32_t set; /* 0, then 1; read and written atomically */
};

/* Clears |o|. Thread safety: before any other thread sees |o|. */
void iw_oneshot_init(struct iw_oneshot *o);

/*
 * Sets |o| (release) and wakes a thread in iw_oneshot_wait on it. After
 * the store |o| may already be gone: only its address is used. Thread
 * safety: safe; at most one setter per |o|.
 */
void iw_oneshot_set(struct iw_oneshot *o);

/*
 * Returns once |o| is set (acquire: what the setter wrote before it is
 * visible). Signals do not end the wait. Thread safety: one waiter per |o|.
 */
void iw_oneshot_wait(struct iw_oneshot *o);

#endif /* IWARP_UTIL_ONESHOT_H */
