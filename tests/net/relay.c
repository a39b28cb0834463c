/*
 * tests/net/relay.c: a user-space TCP relay for the network tests.
 *
 *   relay [-l ADDR] [-p PORT] -t HOST -P PORT [-d MS] [-k K]
 *         [-c DIR:N[:rst]] [-z DIR:N:SECS] [-v]
 *
 * Listens on ADDR:PORT (default 127.0.0.1, port 0 = any; the port is printed
 * as "port N" on stdout once listening), connects every accepted
 * connection onward to HOST:PORT and forwards both directions.
 *   -d MS         each direction holds every chunk MS milliseconds before
 *                 forwarding it (added one-way delay)
 *   -c DIR:N      after N octets forwarded in DIR (c2s: client to server,
 *                 s2c: server to client), cut the connection: both sockets
 *                 closed (FIN), or reset (RST, SO_LINGER 0) with ":rst"
 *   -z DIR:N:SECS after N octets forwarded in DIR, stop reading DIR for SECS
 *                 seconds (the sender sees a zero window once the buffers
 *                 fill)
 *   -k K          -c and -z apply from the K-th accepted connection on
 *                 (1-based; default 1: every connection). iwarp_bw opens its
 *                 control connection first: -k 2 hits the data connections,
 *                 retries included
 * Events ("accepted", "cut", "stalled", "closed") are printed on stderr
 * with -v.
 * Runs until killed. Exit 1 on a setup error.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#define MAX_CONNS 64
#define CHUNK	  65536
#define QUEUE_MAX ((size_t)4 << 20)

struct chunk {
	struct chunk *next;
	uint64_t due_ms;
	size_t len, off;
	char data[];
};

struct dir {
	int src, dst;
	struct chunk *head, *tail;
	size_t queued;
	uint64_t fwd;	      /* octets written to dst */
	int eof;	      /* src sent FIN */
	int shut;	      /* FIN passed on to dst */
	uint64_t stall_until; /* ms; 0: not stalled */
	int stalled_once;
};

struct conn {
	int used, idx;
	struct dir d[2]; /* 0: c2s, 1: s2c */
};

static struct {
	const char *laddr, *lport, *thost, *tport;
	unsigned int delay_ms;
	int cut_dir; /* -1: none */
	uint64_t cut_n;
	int cut_rst;
	int stall_dir;
	uint64_t stall_n;
	unsigned int stall_s;
	int only; /* faults from this connection on */
	int verbose;
} opt = {"127.0.0.1", "0", NULL, NULL, 0, -1, 0, 0, -1, 0, 0, 0, 0};

static struct conn conns[MAX_CONNS];

static uint64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000u + (uint64_t)ts.tv_nsec / 1000000u;
}

/* "relay: conn IDX WHAT N" on stderr with -v */
static void logv(int idx, const char *what, uint64_t n)
{
	if (opt.verbose) {
		fprintf(stderr, "relay: conn %d %s %llu\n", idx, what,
			(unsigned long long)n);
		fflush(stderr);
	}
}

static int parse_dir(const char *s)
{
	if (!strncmp(s, "c2s", 3))
		return 0;
	if (!strncmp(s, "s2c", 3))
		return 1;
	return -1;
}

static void nonblock(int fd)
{
	int one = 1;

	fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK);
	setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
}

static void sock_close(int fd, int rst)
{
	struct linger l = {1, 0};

	if (fd < 0)
		return;
	if (rst)
		setsockopt(fd, SOL_SOCKET, SO_LINGER, &l, sizeof(l));
	close(fd);
}

static void conn_close(struct conn *c, int rst)
{
	int i;

	for (i = 0; i < 2; i++) {
		struct chunk *k = c->d[i].head, *n;

		for (; k; k = n) {
			n = k->next;
			free(k);
		}
	}
	sock_close(c->d[0].src, rst);
	sock_close(c->d[0].dst, rst);
	memset(c, 0, sizeof(*c));
}

static int faults_apply(const struct conn *c)
{
	return c->idx >= opt.only;
}

static int listen_on(void)
{
	struct addrinfo h = {.ai_flags = AI_PASSIVE,
			     .ai_socktype = SOCK_STREAM},
			*ai;
	union {
		struct sockaddr sa;
		struct sockaddr_in in;
		struct sockaddr_in6 in6;
	} a;
	socklen_t alen = sizeof(a);
	int fd, one = 1, r;

	r = getaddrinfo(opt.laddr, opt.lport, &h, &ai);
	if (r) {
		fprintf(stderr, "relay: %s: %s\n", opt.laddr, gai_strerror(r));
		return -1;
	}
	fd = socket(ai->ai_family, SOCK_STREAM, 0);
	if (fd < 0 ||
	    setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)) ||
	    bind(fd, ai->ai_addr, ai->ai_addrlen) || listen(fd, 16) ||
	    getsockname(fd, &a.sa, &alen)) {
		perror("relay: listen");
		freeaddrinfo(ai);
		return -1;
	}
	freeaddrinfo(ai);
	printf("port %u\n", ntohs(a.sa.sa_family == AF_INET6 ? a.in6.sin6_port
							     : a.in.sin_port));
	fflush(stdout);
	return fd;
}

static int connect_onward(void)
{
	struct addrinfo h = {.ai_socktype = SOCK_STREAM}, *ai;
	int fd, r;

	r = getaddrinfo(opt.thost, opt.tport, &h, &ai);
	if (r) {
		fprintf(stderr, "relay: %s: %s\n", opt.thost, gai_strerror(r));
		return -1;
	}
	fd = socket(ai->ai_family, SOCK_STREAM, 0);
	if (fd >= 0 && connect(fd, ai->ai_addr, ai->ai_addrlen)) {
		close(fd);
		fd = -1;
	}
	freeaddrinfo(ai);
	return fd;
}

static void do_accept(int lfd, int *count)
{
	int cfd = accept(lfd, NULL, NULL), sfd, i;
	struct conn *c = NULL;

	if (cfd < 0)
		return;
	for (i = 0; i < MAX_CONNS; i++) {
		if (!conns[i].used) {
			c = &conns[i];
			break;
		}
	}
	sfd = c ? connect_onward() : -1;
	if (sfd < 0) {
		/* the target refused: so does the relay */
		sock_close(cfd, 1);
		return;
	}
	nonblock(cfd);
	nonblock(sfd);
	memset(c, 0, sizeof(*c));
	c->used = 1;
	c->idx = ++*count;
	c->d[0].src = cfd;
	c->d[0].dst = sfd;
	c->d[1].src = sfd;
	c->d[1].dst = cfd;
	logv(c->idx, "accepted", 0);
}

/* The most |d| may read now (0: nothing). */
static size_t read_room(const struct conn *c, int i, uint64_t now)
{
	const struct dir *d = &c->d[i];
	size_t room;

	if (d->eof || d->queued >= QUEUE_MAX)
		return 0;
	if (d->stall_until && now < d->stall_until)
		return 0;
	room = QUEUE_MAX - d->queued;
	if (room > CHUNK)
		room = CHUNK;
	if (faults_apply(c) && opt.cut_dir == i) {
		uint64_t inq = d->fwd + d->queued;

		if (inq >= opt.cut_n)
			return 0;
		if (room > opt.cut_n - inq)
			room = (size_t)(opt.cut_n - inq);
	}
	if (faults_apply(c) && opt.stall_dir == i && !d->stalled_once) {
		uint64_t inq = d->fwd + d->queued;

		if (inq >= opt.stall_n)
			return 0;
		if (room > opt.stall_n - inq)
			room = (size_t)(opt.stall_n - inq);
	}
	return room;
}

/* Reads into |d|'s queue. -1: error (reset), 0 otherwise. */
static int dir_read(struct conn *c, int i, uint64_t now)
{
	struct dir *d = &c->d[i];
	size_t room = read_room(c, i, now);
	struct chunk *k;
	ssize_t n;

	if (!room)
		return 0;
	k = malloc(sizeof(*k) + room);
	if (!k)
		return -1;
	n = read(d->src, k->data, room);
	if (n <= 0) {
		free(k);
		if (n == 0) {
			d->eof = 1;
			return 0;
		}
		return errno == EAGAIN || errno == EINTR ? 0 : -1;
	}
	k->next = NULL;
	k->len = (size_t)n;
	k->off = 0;
	k->due_ms = now + opt.delay_ms;
	if (d->tail)
		d->tail->next = k;
	else
		d->head = k;
	d->tail = k;
	d->queued += (size_t)n;
	return 0;
}

/* Writes what is due. -1: error, 1: the connection was cut, 0 otherwise. */
static int dir_write(struct conn *c, int i, uint64_t now)
{
	struct dir *d = &c->d[i];
	ssize_t n;

	while (d->head && d->head->due_ms <= now) {
		struct chunk *k = d->head;

		n = write(d->dst, k->data + k->off, k->len - k->off);
		if (n < 0)
			return errno == EAGAIN || errno == EINTR ? 0 : -1;
		k->off += (size_t)n;
		d->fwd += (uint64_t)n;
		d->queued -= (size_t)n;
		if (k->off < k->len)
			return 0;
		d->head = k->next;
		if (!d->head)
			d->tail = NULL;
		free(k);
	}
	if (faults_apply(c) && opt.cut_dir == i && d->fwd >= opt.cut_n) {
		logv(c->idx,
		     opt.cut_rst ? "cut (rst) after octets"
				 : "cut (close) after octets",
		     d->fwd);
		return 1;
	}
	if (faults_apply(c) && opt.stall_dir == i && !d->stalled_once &&
	    d->fwd >= opt.stall_n) {
		d->stalled_once = 1;
		d->stall_until = now + (uint64_t)opt.stall_s * 1000u;
		logv(c->idx,
		     i ? "s2c stalled after octets"
		       : "c2s stalled after octets",
		     d->fwd);
	}
	if (d->eof && !d->head && !d->shut) {
		shutdown(d->dst, SHUT_WR);
		d->shut = 1;
	}
	return 0;
}

static void usage(void)
{
	fprintf(stderr,
		"usage: relay [-l ADDR] [-p PORT] -t HOST -P PORT [-d MS] [-k K]\n"
		"             [-c c2s|s2c:N[:rst]] [-z c2s|s2c:N:SECS] [-v]\n");
	exit(1);
}

int main(int argc, char **argv)
{
	struct pollfd pfd[1 + 2 * MAX_CONNS];
	int lfd, ch, count = 0, i, j;
	char *p;

	signal(SIGPIPE, SIG_IGN);
	while ((ch = getopt(argc, argv, "l:p:t:P:d:k:c:z:v")) != -1) {
		switch (ch) {
		case 'l':
			opt.laddr = optarg;
			break;
		case 'p':
			opt.lport = optarg;
			break;
		case 't':
			opt.thost = optarg;
			break;
		case 'P':
			opt.tport = optarg;
			break;
		case 'd':
			opt.delay_ms = (unsigned int)strtoul(optarg, NULL, 10);
			break;
		case 'k':
			opt.only = atoi(optarg);
			break;
		case 'c':
			opt.cut_dir = parse_dir(optarg);
			p = strchr(optarg, ':');
			if (opt.cut_dir < 0 || !p)
				usage();
			opt.cut_n = strtoull(p + 1, &p, 10);
			opt.cut_rst = p && !strcmp(p, ":rst");
			break;
		case 'z':
			opt.stall_dir = parse_dir(optarg);
			p = strchr(optarg, ':');
			if (opt.stall_dir < 0 || !p)
				usage();
			opt.stall_n = strtoull(p + 1, &p, 10);
			if (*p != ':')
				usage();
			opt.stall_s = (unsigned int)strtoul(p + 1, NULL, 10);
			break;
		case 'v':
			opt.verbose = 1;
			break;
		default:
			usage();
		}
	}
	if (!opt.thost || !opt.tport)
		usage();
	lfd = listen_on();
	if (lfd < 0)
		return 1;
	for (;;) {
		uint64_t now = now_ms(), next = UINT64_MAX;
		int n, timeout;

		pfd[0].fd = lfd;
		pfd[0].events = POLLIN;
		for (i = 0; i < MAX_CONNS; i++) {
			for (j = 0; conns[i].used && j < 2; j++) {
				const struct dir *d = &conns[i].d[j];

				if (d->stall_until > now &&
				    d->stall_until < next)
					next = d->stall_until;
				if (d->head && d->head->due_ms > now &&
				    d->head->due_ms < next)
					next = d->head->due_ms;
			}
		}
		/* one pollfd per socket: c->d[0].src (client) and d[1].src
		 * (server) */
		n = 1;
		for (i = 0; i < MAX_CONNS; i++) {
			struct conn *c = &conns[i];

			if (!c->used)
				continue;
			for (j = 0; j < 2; j++) {
				struct dir *in = &c->d[j], *out = &c->d[1 - j];
				short ev = 0;

				/* socket in->src reads direction j and writes
				 * 1-j */
				if (read_room(c, j, now))
					ev |= POLLIN;
				if (out->head && out->head->due_ms <= now)
					ev |= POLLOUT;
				pfd[n].fd = in->src;
				pfd[n].events = ev;
				n++;
			}
		}
		timeout = next == UINT64_MAX ? 1000 : (int)(next - now + 1);
		if (poll(pfd, (nfds_t)n, timeout) < 0 && errno != EINTR)
			return 1;
		if (pfd[0].revents & POLLIN)
			do_accept(lfd, &count);
		now = now_ms();
		for (i = 0; i < MAX_CONNS; i++) {
			struct conn *c = &conns[i];
			int r = 0;

			if (!c->used || c->idx > count)
				continue;
			for (j = 0; j < 2 && r == 0; j++)
				r = dir_read(c, j, now);
			for (j = 0; j < 2 && r == 0; j++)
				r = dir_write(c, j, now);
			if (r) {
				if (r < 0)
					logv(c->idx, "reset, errno",
					     (uint64_t)errno);
				conn_close(c, r < 0 || opt.cut_rst);
				continue;
			}
			if (c->d[0].shut && c->d[1].shut) {
				logv(c->idx, "closed", 0);
				conn_close(c, 0);
			}
		}
	}
}
