/*
 * tests/net/trelay.h: an in-process TCP relay thread for the loopback
 * network tests (mixed_cut.c, zero_window.c): accepts one connection on
 * 127.0.0.1 (port 0, read back into |port|), connects it onward to
 * 127.0.0.1:|target| and forwards both directions (0: client to server,
 * 1: server to client). Optional faults:
 *   cut:   after |cut_n| octets forwarded in |cut_dir|, close both
 *          connections (FIN), or reset them (|rst|: SO_LINGER 0)
 *   stall: after |stall_n| octets forwarded in |stall_dir|, stop reading
 *          that direction for |stall_ms| (its sender meets a zero window
 *          once the socket buffers are full), or until |resume| is set
 * |record| keeps a copy of each direction's octets in |rec|.
 */
#ifndef IWARP_TESTS_NET_TRELAY_H
#define IWARP_TESTS_NET_TRELAY_H

#include <pthread.h>
#include <stddef.h>
#include <stdint.h>

struct trelay {
	/* set before trelay_start (zero = none; cut_dir/stall_dir -1: off) */
	int cut_dir;
	uint64_t cut_n;
	int rst;
	int stall_dir;
	uint64_t stall_n;
	unsigned int stall_ms;
	int record;
	/* results */
	uint16_t port;
	uint8_t *rec[2];
	size_t rec_len[2], rec_cap[2];
	/* shared with the relay thread: C11 atomics (every plain access of
	 * them is a sequentially consistent one) */
	_Atomic uint64_t fwd[2];
	_Atomic int stop, done, cut, stalled, resume;
	/* internal */
	int lfd;
	uint16_t target;
	pthread_t th;
};

/* Clears |r|, faults off; then set the faults and call trelay_start. */
void trelay_init(struct trelay *r);
/* Listens, starts the thread (fails the test on a setup error). */
void trelay_start(struct trelay *r, uint16_t target);
/* Stops the thread, closes what is open; |rec| stays (free it). */
void trelay_stop(struct trelay *r);

#endif
