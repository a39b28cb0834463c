/*
 * verbs/wait.h: the blocking wait of the verbs layer (iwarp_get_cq_event,
 * iwarp_get_async_event), which also drives the engine of an
 * IWARP_PROGRESS_INLINE context while it waits.
 */
#ifndef IWARP_VERBS_WAIT_H
#define IWARP_VERBS_WAIT_H

#include "verbs/verbs.h"

/* Longest sleep between two engine passes of an INLINE wait, in ms. */
#define VERBS_INLINE_WAIT_MS 1

/*
 * Waits until the eventfd-style |fd| of |ctx| (async fd, completion channel)
 * is readable. Any thread.
 *
 * Threaded progress modes (or |ctx| NULL): sleeps in poll() (verbs_wait_fd);
 * with direct sockets (one engine, IWARP_SOCKET_IO not ring) it polls them
 * too and reads them itself (io/engine.h, engine_drive_begin), so the
 * message that ends the wait wakes this thread alone.
 * IWARP_PROGRESS_INLINE: nobody else runs the engine, so this drives it
 * in a loop until |fd| is readable: one non-blocking engine pass
 * (engine_run_once(eng, 0)), then a sleep in poll() on |fd| of at most
 * VERBS_INLINE_WAIT_MS. The engine lock is not held during the sleep, so
 * other threads of the context (iwarp_poll_cq, another waiter) are not
 * held up; a readability caused by another thread ends the sleep at once,
 * network input is handled by the next pass (within the bound), as in
 * iwarp_cm_get_event.
 *
 * An O_NONBLOCK |fd| never sleeps: in INLINE mode the engine is driven
 * once without waiting, then 0 if |fd| became readable, else -EAGAIN.
 *
 * Returns 0 when readable (the caller re-checks its queue: another thread
 * may have taken the entry), -EAGAIN, or -errno of fcntl/poll/the engine.
 */
int verbs_wait_ctx(struct iwarp_context *ctx, int fd);

/*
 * verbs_wait_ctx, which also returns 0 as soon as |ready|(|arg|) is true
 * (checked after each engine pass of this thread): what this thread's own
 * passes produce may not make |fd| readable (iwarp_get_cq_event's
 * channel, see comp_channel.c). |ready| NULL = verbs_wait_ctx.
 * |fd_watched| (may be NULL) is the caller's record that |fd| was added
 * to the direct sockets' set (engine_drive_watch; false at first), kept
 * with |fd| and guarded by the one-driver rule.
 */
int verbs_wait_ctx_until(struct iwarp_context *ctx, int fd,
			 bool (*ready)(void *arg), void *arg, bool *fd_watched);

#endif /* IWARP_VERBS_WAIT_H */
