/*
 * util/oneshot.c: a one-shot flag with futex(2) (see util/oneshot.h).
 */
#include "config.h"

#include <linux/futex.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "util/oneshot.h"

static long oneshot_futex(uint32_t *word, int op, uint32_t val)
{
	return syscall(SYS_futex, word, op, val, NULL, NULL, 0);
}

void iw_oneshot_init(struct iw_oneshot *o)
{
	__atomic_store_n(&o->set, 0, __ATOMIC_RELAXED);
}

void iw_oneshot_set(struct iw_oneshot *o)
{
	uint32_t *word = &o->set;

	__atomic_store_n(word, 1, __ATOMIC_RELEASE);
	/* |o| may be gone now: the wake names its address only */
	(void)oneshot_futex(word, FUTEX_WAKE_PRIVATE, 1);
}

void iw_oneshot_wait(struct iw_oneshot *o)
{
	while (!__atomic_load_n(&o->set, __ATOMIC_ACQUIRE))
		/* EAGAIN: set meanwhile; EINTR or a stray wake: look again */
		(void)oneshot_futex(&o->set, FUTEX_WAIT_PRIVATE, 0);
}
