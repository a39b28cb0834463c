/*
 * util/tsan.h: happens-before edges ThreadSanitizer cannot see.
 *
 * TSan follows the C11 atomics, pthread and a few syscalls it intercepts,
 * but not orderings made by the kernel behind io_uring: a byte one engine
 * thread submits in an IORING_OP_SENDMSG is received by another engine's
 * IORING_OP_RECVMSG completion, so everything the sender did before the
 * submission happens before what the receiver does after the completion.
 * iw_tsan_release(addr) at the submission and iw_tsan_acquire(addr) at the
 * completion, on an address both sides agree on, tell TSan so.
 *
 * Built with -fsanitize=thread they call the runtime; otherwise they are
 * empty and IW_TSAN is 0 (guard the code that only computes an address).
 */
#ifndef IWARP_UTIL_TSAN_H
#define IWARP_UTIL_TSAN_H

#if defined(__SANITIZE_THREAD__)
#define IW_TSAN 1
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define IW_TSAN 1
#endif
#endif
#ifndef IW_TSAN
#define IW_TSAN 0
#endif

#if IW_TSAN
#include <sanitizer/tsan_interface.h>

static inline void iw_tsan_release(void *addr)
{
	__tsan_release(addr);
}

static inline void iw_tsan_acquire(void *addr)
{
	__tsan_acquire(addr);
}
#else
static inline void iw_tsan_release(void *addr)
{
	(void)addr;
}

static inline void iw_tsan_acquire(void *addr)
{
	(void)addr;
}
#endif

#endif /* IWARP_UTIL_TSAN_H */
