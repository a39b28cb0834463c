/*
 * io/testio.h: test doubles behind the transport seam (io/backend.h):
 * an in-memory pipe and a fault-injecting wrapper around any backend.
 * Both run on the engine, deterministic, never block, never hang.
 */
#ifndef IWARP_IO_TESTIO_H
#define IWARP_IO_TESTIO_H

#include <stddef.h>
#include <stdint.h>

struct engine;
struct io_backend;

/*
 * Two backends connected back to back inside |eng|: bytes sent on *a are
 * received on *b and vice versa. Each direction buffers up to |cap_ab| /
 * |cap_ba| bytes (0 = 64 KiB); a send larger than the free space completes
 * partially. shutdown() gives the peer EOF after the buffered bytes;
 * destroy(abort) gives it -ECONNRESET (destroy without abort: EOF).
 * Engine thread. Returns 0 or -ENOMEM.
 */
int io_pipe_create(struct engine *eng, size_t cap_ab, size_t cap_ba,
		   struct io_backend **a, struct io_backend **b);

#define IO_FAULT_NEVER UINT64_MAX

/* What io_fault_wrap injects. io_fault_cfg_init() = nothing. */
struct io_fault_cfg {
	uint64_t seed; /* PRNG seed for short reads/writes */
	int short_rx;  /* each recv gets a random prefix (>= 1 byte) of its
			  iovecs */
	int short_tx;  /* each send offers a random prefix (>= 1 byte) */
	uint64_t fail_rx_nth;  /* the Nth recv (1-based) completes with fail_err
				*/
	uint64_t fail_tx_nth;  /* the Nth send (1-based) completes with fail_err
				*/
	int fail_err;	       /* -errno for fail_*_nth; default -EIO */
	uint64_t flip_rx_off;  /* XOR flip_mask into the received byte at this
				  stream offset */
	uint8_t flip_mask;     /* default 0x01 */
	uint64_t cut_rx_after; /* after this many received bytes, recv completes
				  with cut_err */
	uint64_t cut_tx_after; /* after this many sent bytes: FIN to the peer,
				  sends fail */
	int cut_err; /* recv result after the cut: 0 = EOF or -errno; default
			-ECONNRESET */
	uint64_t stall_rx_after; /* after this many received bytes, recv never
				    completes until cancel (-ECANCELED): a peer
				    that stopped reading */
};

/* Fills |cfg| with "inject nothing" (offsets and counts IO_FAULT_NEVER). */
void io_fault_cfg_init(struct io_fault_cfg *cfg);

/*
 * Wraps |inner| (takes ownership) with the faults in |cfg|. The wrapper is a
 * backend itself (pass it to ep_create). Sends after a tx cut, and the
 * faulted ops, complete with the error without reaching |inner|.
 * Engine thread. NULL with errno ENOMEM (|inner| is destroyed then).
 */
struct io_backend *io_fault_wrap(struct io_backend *inner,
				 const struct io_fault_cfg *cfg);

#endif /* IWARP_IO_TESTIO_H */
