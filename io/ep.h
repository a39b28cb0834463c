/*
 * io/ep.h: endpoints, one per byte-stream connection, driven by iovec
 * providers (ngtcp2 / SPDK style: the owner is sans-I/O).
 *
 * The owner supplies struct ep_ops; every callback runs on the engine
 * thread. The engine keeps at most one receive and one send outstanding per
 * endpoint (stream order), gathers everything tx_iov returns into one send
 * (one SENDMSG SQE), and receives straight into the iovecs rx_iov returns.
 *
 * Lifetime: ep_close() is the owner's last call, exactly once (also after
 * closed()); no callback runs after ep_close() or after closed(). The
 * iovecs the owner handed out stay in use until their operation's
 * completion came back: closed() is delivered only once no receive or send
 * is in flight, and ep_close_then() tells when that is the case after a
 * close.
 */
#ifndef IWARP_IO_EP_H
#define IWARP_IO_EP_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/uio.h>

struct engine;
struct endpoint;
struct io_backend;

/* Most iovecs one send or receive carries (the |cap| passed to rx_iov/tx_iov):
 * the kernel's UIO_MAXIOV, so a batch holds several full-size FPDUs even
 * with markers (two iovecs per marker, RFC 5044 §5). */
#define EP_IOV_MAX 1024

/*
 * Provided receive memory (the owner keeps no buffer of its own): the last
 * iovec rx_iov returns may have iov_base NULL and asks the endpoint for up
 * to EP_RX_PROVIDED_MAX octets of memory. A backend that reads and
 * completes in one step (io_backend_ops.recv_sync: direct sockets) gets
 * the engine's one scratch buffer, shared by all its endpoints, so idle
 * connections pin no receive memory and the busy ones reuse cache-hot
 * octets; any other backend gets a buffer of the endpoint's own, allocated
 * at its first use. The owner learns where the octets landed through
 * rx_done_at and must consume them there: the memory is another
 * endpoint's once rx_done_at returns.
 */
#define EP_RX_PROVIDED_MAX (1u << 20)

struct ep_ops {
	/* Fill up to |cap| iovecs where the next received bytes go.
	 * Return the count; 0 (or < 0) = pause receiving until ep_kick_rx(). */
	int (*rx_iov)(void *owner, struct iovec *iov, int cap);
	/* |n| bytes landed, in order, at the start of the last rx_iov set
	 * (0 only after ep_cancel_rx: the receive ended without data).
	 * May be NULL when rx_done_at is set. */
	void (*rx_done)(void *owner, size_t n);
	/* Fill up to |cap| iovecs with bytes to send now; 0 = nothing. */
	int (*tx_iov)(void *owner, struct iovec *iov, int cap);
	/* The first |n| bytes of the last tx_iov set were accepted by the
	 * transport. A partial send is normal: the engine calls tx_iov again
	 * and the owner offers the rest (and anything new). Also called when
	 * the stream ended while the send was in flight (just before
	 * closed()), for what the transport took before it ended. */
	void (*tx_done)(void *owner, size_t n);
	/* The stream ended: peer EOF (0) or an error (-errno). No receive
	 * or send is in flight any more, and no callback follows; the owner
	 * still calls ep_close(). */
	void (*closed)(void *owner, int err);
	/* Optional, called instead of rx_done when set (required by an
	 * owner that asks for provided memory): |provided| is where the
	 * provided iovec's octets landed (those after the owner's own
	 * iovecs), NULL when the set had none; valid during the call only. */
	void (*rx_done_at)(void *owner, size_t n, const uint8_t *provided);
};

/*
 * Creates an endpoint over backend |be| (takes ownership of it). Receiving
 * and sending start on the next loop iteration (no callback runs inside this
 * call). Engine thread. NULL with errno ENOMEM (|be| is destroyed then).
 */
struct endpoint *ep_create(struct engine *eng, struct io_backend *be,
			   const struct ep_ops *ops, void *owner);

/*
 * Creates an endpoint over TCP socket |fd| (takes ownership of |fd|; sets
 * TCP_NODELAY and the engine's TCP_CONGESTION). Engine thread.
 * NULL with errno ENOMEM (|fd| is closed then).
 */
struct endpoint *ep_create_fd(struct engine *eng, int fd,
			      const struct ep_ops *ops, void *owner);

/* The owner has more to send: ask tx_iov now (if no send is outstanding). */
void ep_kick_tx(struct endpoint *ep);

/* The owner can receive again after pausing: ask rx_iov now. */
void ep_kick_rx(struct endpoint *ep);

/*
 * Orderly close of our direction: once tx_iov returns 0 with no send
 * outstanding, send FIN. Receiving continues until the peer's EOF (closed(0)).
 */
void ep_shutdown(struct endpoint *ep);

/*
 * Releases the endpoint (the owner's last call). Outstanding I/O is
 * cancelled; the connection is reset (TCP RST) unless ep_shutdown() had sent
 * our FIN. No callback runs after this. Safe inside any callback.
 */
void ep_close(struct endpoint *ep);

/*
 * ep_close(), and |drained|(|arg|) once no receive or send is in flight any
 * more, so the owner may free the buffers its iovecs pointed at (a
 * cancelled io_uring operation completes asynchronously). |drained| may
 * run inside this call. Engine thread.
 */
void ep_close_then(struct endpoint *ep, void (*drained)(void *arg), void *arg);

/*
 * Makes the receive in flight (if any) end soon; the owner gets rx_done
 * with what landed (possibly 0) and is asked for rx_iov again. Used when
 * the memory it receives into is being revoked. Engine thread.
 */
void ep_cancel_rx(struct endpoint *ep);

/* TCP_MAXSEG of the connection (65483 on loopback), or -errno. */
int ep_mss(struct endpoint *ep);

/* True when no receive and no send is outstanding (ep_set_owner may run). */
bool ep_idle(const struct endpoint *ep);

/*
 * Hands the endpoint to a new owner (e.g. the CM passes an established
 * connection from its MPA handshake to the QP datapath). |carry|[0..len) are
 * bytes the old owner received beyond what it consumed (e.g. the first FPDU
 * after the MPA Reply): the engine copies them and delivers them to the new
 * owner (through its rx_iov / rx_done) before any byte received later.
 * Bytes the engine still held for the old owner from an earlier hand-over
 * follow |carry|. No callback runs inside this call; the new owner is asked
 * for rx_iov / tx_iov right after the current callback returns.
 *
 * Only when no receive and no send is outstanding, so no byte can land in
 * the old owner's buffers afterwards: inside the old owner's rx_done or
 * tx_done, or while it paused receiving and has nothing in flight.
 * Returns 0, -EBUSY (I/O outstanding), -EPIPE (closed), or -ENOMEM.
 */
int ep_set_owner(struct endpoint *ep, const struct ep_ops *ops, void *owner,
		 const void *carry, size_t len);

/* True when the provided receive memory of |ep| is the engine's shared
 * scratch (EP_RX_PROVIDED: a recv_sync backend), cache-warm from the
 * receives before. */
bool ep_rx_scratch(const struct endpoint *ep);

/* The engine |ep| runs on. */
struct engine *ep_engine(const struct endpoint *ep);

#endif /* IWARP_IO_EP_H */
