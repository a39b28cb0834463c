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
 * iw_tsan_net_begin() / iw_tsan_net_end() bracket the engine's writes into
 * application memory that no completion announces: RDMA Write and Read
 * Response payloads placed into a region, and remote atomics applied to
 * it (RFC 5040 §4.3, RFC 7306 §5). With a NIC those writes are DMA, which
 * a race detector in the program never sees; programs poll such memory
 * with plain loads (perftest's Write latency, credit words). Inside the
 * brackets TSan ignores the thread's accesses, so the library looks to
 * the program as hardware would. Receive buffers are not bracketed: their
 * completion orders them.
 *
 * iw_tsan_send_begin() / iw_tsan_send_end() bracket a sendmsg(2) on a
 * socket whose peer acquires the wire: the kernel's copy out of the
 * iovecs is recorded as reads before the release (the interceptor would
 * record it after, unordered with what the peer then does, e.g. an
 * application reusing a Read Response's source that its own peer's Read
 * completion announced), and the call runs with accesses ignored.
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

#include <stddef.h>
#include <sys/uio.h>

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

/* The TSan runtime's dynamic annotations (not in tsan_interface.h). */
void AnnotateIgnoreWritesBegin(const char *file, int line);
void AnnotateIgnoreWritesEnd(const char *file, int line);
void AnnotateIgnoreReadsBegin(const char *file, int line);
void AnnotateIgnoreReadsEnd(const char *file, int line);
void __tsan_read_range(void *addr, long size);

static inline void iw_tsan_net_begin(void)
{
	AnnotateIgnoreWritesBegin(__FILE__, __LINE__);
}

static inline void iw_tsan_net_end(void)
{
	AnnotateIgnoreWritesEnd(__FILE__, __LINE__);
}

static inline void iw_tsan_send_begin(void *wire, const struct iovec *iov,
				      size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		__tsan_read_range(iov[i].iov_base, (long)iov[i].iov_len);
	__tsan_release(wire);
	AnnotateIgnoreReadsBegin(__FILE__, __LINE__);
}

static inline void iw_tsan_send_end(void)
{
	AnnotateIgnoreReadsEnd(__FILE__, __LINE__);
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

static inline void iw_tsan_net_begin(void)
{
}

static inline void iw_tsan_net_end(void)
{
}

static inline void iw_tsan_send_begin(void *wire, const struct iovec *iov,
				      size_t n)
{
	(void)wire;
	(void)iov;
	(void)n;
}

static inline void iw_tsan_send_end(void)
{
}
#endif

#endif /* IWARP_UTIL_TSAN_H */
