/*
 * verbs/wait.c: see verbs/wait.h. The blocking wait of iwarp_get_cq_event
 * and iwarp_get_async_event; in IWARP_PROGRESS_INLINE mode it is also the
 * progress loop (as iwarp_cm_get_event is for CM events), since an
 * event-driven program has no other call that would run the engine.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>

#include "io/engine.h"
#include "util/thread.h"
#include "verbs/verbs.h"
#include "verbs/wait.h"

/* poll() on |fd| for |ms| (-1 = forever). A signal handler that ran ends
 * the wait with -EINTR when it would have ended a read(2) on |fd| (one
 * installed without SA_RESTART: util/thread.h); otherwise the wait goes
 * on. Returns 1 readable, 0 not (yet), or -errno. */
static int fd_poll(int fd, int ms)
{
	struct pollfd pfd;
	int r;

	pfd.fd = fd;
	pfd.events = POLLIN;
	do {
		pfd.revents = 0;
		r = poll(&pfd, 1, ms);
	} while (r < 0 && errno == EINTR && !iw_wait_interrupted());
	if (r < 0)
		return -errno;
	return r > 0;
}

/*
 * Direct sockets (one engine, IWARP_SOCKET_IO unset or direct), blocking |fd|:
 * this thread reads the sockets while it waits, so the message it waits
 * for wakes it alone (io/engine.h, engine_drive_begin). Returns as
 * verbs_wait_ctx, or -EOPNOTSUPP / -EBUSY when it cannot drive (the
 * caller waits on |fd|). A non-blocking fd is a program that polls it
 * itself (a BW loop draining its channel): it never drives.
 *
 * With |fd| in the sockets' set (|*fd_watched|, engine_drive_watch), the
 * sleep and the sockets' readiness are one epoll_wait(2); otherwise a
 * poll(2) on both fds comes before each reading pass.
 */
static int wait_driving(struct engine *eng, int fd, bool *fd_watched,
			bool (*ready)(void *arg), void *arg)
{
	struct pollfd pfd[2];
	bool edges = false;
	int efd, r;

	efd = engine_drive_begin(eng);
	if (efd < 0)
		return efd;
	/* |*fd_watched| is the driver's: one at a time */
	if (fd_watched && !*fd_watched && engine_drive_watch(eng, fd) == 0)
		*fd_watched = true;
	if (fd_watched && *fd_watched) {
		engine_drive_pass(eng, false);
		for (;;) {
			if (ready(arg)) {
				r = 0;
				break;
			}
			r = engine_drive_wait(eng);
			if (r == -EINTR && !iw_wait_interrupted())
				continue;
			if (r != 0) {
				r = r < 0 ? r : 0; /* 1: |fd| is readable */
				break;
			}
		}
		engine_drive_end(eng);
		return r;
	}
	pfd[0].fd = fd;
	pfd[0].events = POLLIN;
	pfd[1].fd = efd;
	pfd[1].events = POLLIN;
	for (;;) {
		engine_drive_pass(eng, edges);
		if (ready(arg)) {
			r = 0;
			break;
		}
		do {
			pfd[0].revents = pfd[1].revents = 0;
			r = poll(pfd, 2, -1);
		} while (r < 0 && errno == EINTR && !iw_wait_interrupted());
		if (r < 0) {
			r = -errno;
			break;
		}
		if (pfd[0].revents) {
			r = 0;
			break;
		}
		edges = pfd[1].revents != 0;
	}
	engine_drive_end(eng);
	return r;
}

int verbs_wait_fd(int fd)
{
	return verbs_wait_ctx(NULL, fd);
}

int verbs_wait_ctx(struct iwarp_context *ctx, int fd)
{
	return verbs_wait_ctx_until(ctx, fd, NULL, NULL, NULL);
}

int verbs_wait_ctx_until(struct iwarp_context *ctx, int fd,
			 bool (*ready)(void *arg), void *arg, bool *fd_watched)
{
	bool nonblock;
	int fl, r;

	fl = fcntl(fd, F_GETFL);
	if (fl < 0)
		return -errno;
	nonblock = (fl & O_NONBLOCK) != 0;
	/* only a completion wait drives (|ready| set): a thread blocked in
	 * iwarp_get_async_event for the whole run must not become the
	 * context's reader */
	if (ready && ctx && ctx->attr.progress != IWARP_PROGRESS_INLINE &&
	    ctx->n_engines == 1 && !nonblock) {
		r = wait_driving(ctx->engine, fd, fd_watched, ready, arg);
		if (r != -EOPNOTSUPP && r != -EBUSY)
			return r;
	}
	if (!ctx || ctx->attr.progress != IWARP_PROGRESS_INLINE) {
		if (nonblock)
			return -EAGAIN;
		r = fd_poll(fd, -1);
		return r < 0 ? r : 0;
	}
	/* INLINE: this thread is the engine while it waits. Each pass holds
	 * the engine only while it works (no sleep inside engine_run_once:
	 * that would keep the engine's lock from other threads of the
	 * context, e.g. iwarp_poll_cq, for the whole sleep); the sleep is
	 * on |fd| with the lock released. */
	for (;;) {
		r = engine_run_once(ctx->engine, 0);
		if (r < 0)
			return r;
		if (ready && ready(arg))
			return 0;
		r = fd_poll(fd, nonblock ? 0 : VERBS_INLINE_WAIT_MS);
		if (r)
			return r < 0 ? r : 0;
		if (nonblock)
			return -EAGAIN;
	}
}
