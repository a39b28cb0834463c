/*
 * tools/common/stop.h: SIGINT and SIGTERM in the command-line tools.
 *
 * The first SIGINT or SIGTERM sets a flag and makes a self-pipe readable;
 * every wait of a tool polls that pipe next to its own descriptors (or, in
 * a busy-poll loop, checks the flag), then the tool disconnects, tears down
 * and ends as if killed by the signal: the shell reports 128 + the signal
 * number (130 for SIGINT, 143 for SIGTERM), as for rping and perftest,
 * which are simply killed. A second signal kills the tool at once.
 *
 * libiwarp's own threads block these signals, so the handler always runs
 * on one of the tool's threads and interrupts its poll(2) (no SA_RESTART).
 */
#ifndef IWARP_TOOLS_COMMON_STOP_H
#define IWARP_TOOLS_COMMON_STOP_H

/*
 * Installs the handlers of SIGINT and SIGTERM and ignores SIGPIPE.
 * Call once, before anything can block. Returns 0 or -errno.
 */
int tool_stop_init(void);

/* The signal that asked the tool to stop (SIGINT, SIGTERM), 0 if none. */
int tool_stop_signal(void);

/*
 * The read end of the self-pipe (non-blocking): readable from the first
 * signal on, for good (the byte is never read). -1 before tool_stop_init.
 */
int tool_stop_fd(void);

/*
 * Ends the program: |status| when no signal came; otherwise flushes stdio
 * and re-raises the signal with its default action, so the parent sees
 * the tool killed by it. Returns 128 + the signal number only if it is
 * still alive after that (the signal was blocked).
 */
int tool_stop_exit(int status);

#endif /* IWARP_TOOLS_COMMON_STOP_H */
