/*
 * io/net.h: TCP listeners and outgoing connections on the engine (io_uring
 * ACCEPT / CONNECT), and TCP socket options. IPv4 and IPv6.
 */
#ifndef IWARP_IO_NET_H
#define IWARP_IO_NET_H

#include <stddef.h>
#include <sys/socket.h>

struct engine;
struct listener;
struct connect_req;

/*
 * Called on the engine thread for every accepted connection: |fd| is a
 * connected TCP socket now owned by the callee (TCP_NODELAY and the engine's
 * congestion control already set), |peer| its remote address.
 * On an accept error that ends listening, called once with fd = -errno and
 * peer = NULL (the listener must still be closed).
 */
typedef void (*engine_accept_cb)(void *arg, int fd, const struct sockaddr *peer,
				 socklen_t peer_len);

/*
 * Listens on |addr| (engine_tcp_bind; port 0 = any, see engine_listener_addr)
 * and accepts with io_uring (multishot when the kernel has it).
 * Socket, bind and listen happen in the caller, so their errors come back
 * here; accepting starts on the engine thread. Any thread.
 * An accept that fails for lack of resources (EMFILE, ENFILE, ENOBUFS,
 * ENOMEM) is not reported: accepting pauses for a back-off (50 ms,
 * doubling up to 1 s) and resumes by itself.
 * Returns 0 and *out, or -errno (-EADDRINUSE, -EAFNOSUPPORT, -ENOMEM, ...).
 */
int engine_listen(struct engine *eng, const struct sockaddr *addr,
		  socklen_t addr_len, int backlog, engine_accept_cb on_accept,
		  void *arg, struct listener **out);

/*
 * A TCP socket (SOCK_CLOEXEC) bound to |addr|: port 0 takes a free port
 * now, which getsockname() reports, and holds it (no other socket binds
 * it) until the socket listens (engine_listen_fd), connects
 * (engine_connect_fd) or is closed. A port given is bound with
 * SO_REUSEADDR, as listeners are (a restart beside TIME_WAIT connections).
 * Any thread. The fd, or -errno.
 */
int engine_tcp_bind(const struct sockaddr *addr, socklen_t addr_len);

/*
 * engine_listen on the bound socket |fd| (engine_tcp_bind). On success the
 * listener owns |fd|; on failure (-errno of listen(2), -ENOMEM) the caller
 * still does.
 */
int engine_listen_fd(struct engine *eng, int fd, int backlog,
		     engine_accept_cb on_accept, void *arg,
		     struct listener **out);

/* The bound address of |lst| (getsockname). Any thread. 0 or -errno. */
int engine_listener_addr(struct listener *lst, struct sockaddr_storage *ss,
			 socklen_t *len);

/*
 * Stops accepting and frees |lst| once the kernel released it. No callback
 * runs after this. Engine thread.
 */
void engine_listener_close(struct listener *lst);

/*
 * Called on the engine thread with a connected socket (owned by the callee,
 * options set as for accept) or -errno: -ECONNREFUSED, -ETIMEDOUT (after
 * |timeout_ms|), -ENETUNREACH, -EHOSTUNREACH, ...
 */
typedef void (*engine_connect_cb)(void *arg, int fd);

/*
 * Connects to |dst|, from |src| when not NULL (bind first), giving up after
 * |timeout_ms| (0 = the kernel's own limit). Any thread; the socket is
 * created (and bound) in the caller, the connect runs on the engine.
 * Returns 0 and *out (may be NULL if the handle is not wanted; it stays
 * valid until the callback ran or engine_connect_cancel), or -errno
 * (socket/bind errors, -ENOMEM). Exactly one callback follows a 0 return,
 * unless cancelled.
 */
int engine_connect(struct engine *eng, const struct sockaddr *dst,
		   socklen_t dst_len, const struct sockaddr *src,
		   socklen_t src_len, unsigned int timeout_ms,
		   engine_connect_cb on_connected, void *arg,
		   struct connect_req **out);

/*
 * engine_connect from the TCP socket |fd| (bound or not; not yet
 * connected). On success the request owns |fd| (the callback gets it, or
 * -errno and it is closed); on failure (-EINVAL, -ENOMEM) the caller still
 * does.
 */
int engine_connect_fd(struct engine *eng, int fd, const struct sockaddr *dst,
		      socklen_t dst_len, unsigned int timeout_ms,
		      engine_connect_cb on_connected, void *arg,
		      struct connect_req **out);

/* Cancels a pending connect: its callback will not run. Engine thread. */
void engine_connect_cancel(struct connect_req *req);

/*
 * Sets TCP_NODELAY and, if |cc| is non-empty, TCP_CONGESTION on |fd|.
 * Returns 0 or -errno (from TCP_CONGESTION: -ENOENT unknown, -EPERM not
 * allowed). Any thread.
 */
int engine_tcp_setup(int fd, const char *cc);

/* Effective TCP_CONGESTION of |fd| into |buf| (NUL-terminated). Any thread.
 * Returns 0 or -errno. */
int engine_tcp_cc(int fd, char *buf, size_t len);

#endif /* IWARP_IO_NET_H */
