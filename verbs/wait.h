/*
 * verbs/wait.h: the blocking wait of the verbs layer (iwarp_get_cq_event,
 * iwarp_get_async_event), which also drives the engine of an
 * IWARP_PROGRESS_INLINE context while it waits.
 */
#ifndef IWARP_VERBS_WAIT_H
#define IWARP_VERBS_WAIT_H

#include "verbs/verbs.h"

/* Longest sleep of one engine pass of an INLINE wait, in milliseconds. */
#define VERBS_INLINE_WAIT_MS 5

/*
 * Waits until the eventfd-style |fd| of |ctx| (async fd, completion channel)
 * is readable. Any thread.
 *
 * Threaded progress modes (or |ctx| NULL): sleeps in poll() (verbs_wait_fd).
 * IWARP_PROGRESS_INLINE: nobody else runs the engine, so this drives it
 * (engine_run_once with a sleep of at most VERBS_INLINE_WAIT_MS, in a
 * loop) until |fd| is readable. The bound is what lets a readability that
 * does not come from this engine (another thread pushing a completion or
 * event) end the wait: it is seen within that bound.
 *
 * An O_NONBLOCK |fd| never sleeps: in INLINE mode the engine is driven
 * once without waiting, then 0 if |fd| became readable, else -EAGAIN.
 *
 * Returns 0 when readable (the caller re-checks its queue: another thread
 * may have taken the entry), -EAGAIN, or -errno of fcntl/poll/the engine.
 */
int verbs_wait_ctx(struct iwarp_context *ctx, int fd);

#endif /* IWARP_VERBS_WAIT_H */
