/*
 * tools/common/stop.c: SIGINT/SIGTERM flag and self-pipe of the tools
 * (see tools/common/stop.h).
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "tools/common/stop.h"

static volatile sig_atomic_t stop_sig;
static int stop_pipe[2] = {-1, -1};

static void stop_handler(int sig)
{
	int saved = errno;
	ssize_t wr;

	if (stop_sig) {
		/* the second one: no more clean-up, die now */
		signal(sig, SIG_DFL);
		raise(sig);
		errno = saved;
		return;
	}
	stop_sig = sig;
	wr = write(stop_pipe[1], "", 1);
	(void)wr;
	errno = saved;
}

int tool_stop_init(void)
{
	static const int sigs[] = {SIGINT, SIGTERM};
	struct sigaction sa;
	size_t i;

	if (stop_pipe[0] >= 0)
		return 0;
	if (pipe2(stop_pipe, O_CLOEXEC | O_NONBLOCK))
		return -errno;
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = stop_handler;
	sigemptyset(&sa.sa_mask);
	for (i = 0; i < sizeof(sigs) / sizeof(sigs[0]); i++)
		sigaddset(&sa.sa_mask, sigs[i]);
	/* no SA_RESTART: a blocking poll(2) or nanosleep(2) returns EINTR */
	for (i = 0; i < sizeof(sigs) / sizeof(sigs[0]); i++)
		if (sigaction(sigs[i], &sa, NULL))
			return -errno;
	signal(SIGPIPE, SIG_IGN);
	return 0;
}

int tool_stop_signal(void)
{
	return stop_sig;
}

int tool_stop_fd(void)
{
	return stop_pipe[0];
}

int tool_stop_exit(int status)
{
	int sig = stop_sig;
	sigset_t set;

	if (!sig)
		return status;
	fflush(stdout);
	fflush(stderr);
	signal(sig, SIG_DFL);
	sigemptyset(&set);
	sigaddset(&set, sig);
	sigprocmask(SIG_UNBLOCK, &set, NULL);
	raise(sig);
	return 128 + sig;
}
