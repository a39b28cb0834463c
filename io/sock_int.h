/*
 * io/sock_int.h: what the two TCP socket backends (io/sock.c with io_uring
 * operations, io/sock_direct.c with plain system calls) share.
 */
#ifndef IWARP_IO_SOCK_INT_H
#define IWARP_IO_SOCK_INT_H

#include "io/backend.h"
#include "util/tsan.h"

/* The direct backend over connected socket |fd| (takes ownership; the
 * caller did engine_tcp_setup). NULL with errno. */
struct io_backend *io_sock_direct_create(struct engine *eng, int fd);

/* What both backends do to the socket itself: our FIN (0 or -errno), the
 * MSS (or -errno), and making the coming close() reset the connection. */
int sock_fd_shutdown_wr(int fd);
int sock_fd_mss(int fd);
void sock_fd_reset_on_close(int fd);

#if IW_TSAN
/* The address both ends of the connection on |fd| synchronize on (see
 * sock.c); |*cache| keeps it. */
char *sock_tsan_wire(int fd, char **cache);
#endif

#endif /* IWARP_IO_SOCK_INT_H */
