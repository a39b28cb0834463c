/* bench/tcp_raw.h: the plain-socket modes of tcp_raw (tcp_raw_plain.c). */
#ifndef IWARP_BENCH_TCP_RAW_H
#define IWARP_BENCH_TCP_RAW_H
#include <stdint.h>

/* CLOCK_MONOTONIC in nanoseconds (tcp_raw.c). */
uint64_t now_ns(void);
/* Process CPU seconds, all threads (getrusage; tcp_raw.c). */
double cpu_now(void);

/*
 * tcp_raw streams|msgrate|pingpong|connrate ARGS: runs the mode named by
 * argv[1]; prints one JSON line. Returns the exit status (0 or 1).
 */
int tcp_raw_plain(int argc, char **argv);

/* tcp_raw tls ARGS: one TLS 1.3 stream (OpenSSL); one JSON line
 * (tcp_raw_tls.c). Returns the exit status. */
int tcp_raw_tls(int argc, char **argv);

/* tcp_raw wake ARGS: which thread io_uring wakes for a receive completion;
 * one JSON line (tcp_raw_wake.c). Returns the exit status. */
int tcp_raw_wake(int argc, char **argv);

#endif
