/*
 * io/backend.h: the transport seam under an endpoint (SPDK style).
 *
 * An endpoint (io/ep.h) moves bytes through a backend: the TCP socket
 * backend (io_uring SENDMSG/RECVMSG), the in-memory pipe, or the fault
 * injector wrapped around any of them (io/testio.h). The owner of the
 * endpoint sees the same callbacks whichever backend runs.
 *
 * Contract (engine thread only):
 * - at most one recv and one send outstanding; each started op completes
 *   exactly once through be->up's rx_complete / tx_complete, never from
 *   inside recv()/send() themselves (always later, from the engine loop);
 * - the iovec array passed to recv()/send() stays valid until completion;
 * - result: > 0 bytes, 0 = EOF (recv only), or -errno;
 * - cancel() makes outstanding ops complete soon (with data, 0 or an error);
 * - destroy() is called once, with no op outstanding.
 */
#ifndef IWARP_IO_BACKEND_H
#define IWARP_IO_BACKEND_H

#include <stdbool.h>
#include <sys/types.h>
#include <sys/uio.h>

struct engine;
struct io_backend;

/* Where a backend reports completions (the endpoint, or a wrapping backend). */
struct io_backend_up {
	void (*rx_complete)(void *up, ssize_t res);
	void (*tx_complete)(void *up, ssize_t res);
	void *up;
};

struct io_backend_ops {
	const char *name;
	/* Starts a receive into |iov|[0..cnt). Returns 0 or -errno (no
	 * completion then). */
	int (*recv)(struct io_backend *be, const struct iovec *iov, int cnt);
	/* Starts a send of |iov|[0..cnt) (may complete partially). 0 or -errno.
	 */
	int (*send)(struct io_backend *be, const struct iovec *iov, int cnt);
	/* Orderly end of our direction (TCP FIN) once no send is outstanding.
	 */
	int (*shutdown)(struct io_backend *be);
	/* Makes outstanding ops complete soon. */
	void (*cancel)(struct io_backend *be);
	/* Makes the outstanding recv complete soon, without ending the
	 * stream (-ECANCELED, or the data that had landed). Optional. */
	void (*cancel_rx)(struct io_backend *be);
	/* Releases the backend. |abort|: reset the connection (TCP RST). */
	void (*destroy)(struct io_backend *be, bool abort);
	/* Largest segment the transport carries (TCP_MAXSEG), or -errno. */
	int (*mss)(struct io_backend *be);
	/* True when a receive's octets are read and its rx_complete runs in
	 * one step on the engine (the iovecs are written only just before
	 * it): memory provided for them may then be shared by endpoints
	 * (ep.h, EP_RX_PROVIDED). */
	bool recv_sync;
};

struct io_backend {
	const struct io_backend_ops *ops;
	struct engine *eng;
	struct io_backend_up up;
};

/* Sets where |be| reports completions. */
static inline void io_backend_set_up(struct io_backend *be,
				     const struct io_backend_up *up)
{
	be->up = *up;
}

/*
 * Creates the TCP socket backend for connected socket |fd| (takes ownership
 * of |fd|: destroy closes it). Sets TCP_NODELAY, and TCP_CONGESTION when the
 * engine has one. Returns NULL with errno ENOMEM.
 */
struct io_backend *io_sock_backend_create(struct engine *eng, int fd);

#endif /* IWARP_IO_BACKEND_H */
