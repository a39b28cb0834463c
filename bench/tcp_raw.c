/*
 * bench/tcp_raw.c: raw TCP baseline for iwarp_bw, over io_uring on loopback.
 *
 *   tcp_raw bw  [-s SIZE] [-D SECS] [--depth N] [--batch N] [--cc NAME]
 *   tcp_raw lat [-s SIZE] [-n ITERS] [--poll uring|uring-ipi|recv] [--cc NAME]
 *   tcp_raw streams|msgrate|pingpong|connrate ...  (tcp_raw_plain.c)
 *   tcp_raw tls [-s SIZE] [-D SECS]                (tcp_raw_tls.c)
 *   tcp_raw wake [--submitter sleep|spin|self]     (tcp_raw_wake.c)
 *
 * Both ends run in this process, one thread each, over one TCP connection
 * on 127.0.0.1 with TCP_NODELAY (and TCP_CONGESTION when --cc is given; the
 * congestion control actually in use is read back with getsockopt).
 * --addr IP listens on another address; --netns-server / --netns-client
 * NAME create the listener / client socket in the network namespaces
 * /run/netns/NAME (bench/net_bench.sh: the two ends of a veth pair).
 *
 * bw: single stream. The sender keeps --depth IORING_OP_SENDMSG in flight,
 * each gathering --batch messages of SIZE bytes (one iovec per message, like
 * the engine's one SENDMSG per batch of FPDUs). The receiver has one
 * IORING_OP_RECV into a 4 MiB buffer armed at a time and counts the bytes
 * between the first completion after the warm-up and the last one.
 * MB/sec = 2^20 bytes/s, the unit of iwarp_bw.
 *
 * lat: ping-pong of SIZE-byte messages; both threads busy-poll. With
 * --poll uring (default) each side spins on io_uring_peek_cqe with a RECV
 * armed (ring with COOP_TASKRUN | TASKRUN_FLAG, like the engine: no IPI,
 * io_uring_get_events when the kernel flags pending completion work) and
 * submits SEND + next RECV in one io_uring_enter; --poll uring-ipi is the
 * same with default ring flags (completion work interrupts the spinner with
 * an IPI, as the engine's INLINE mode does); with --poll recv
 * each side spins on recv(MSG_DONTWAIT) and sends with send(2). The client
 * times each round trip (CLOCK_MONOTONIC), after --warmup untimed ones.
 *
 * A benchmark, not a test. Exit status: 0, 1 on error, 2 without io_uring.
 */
#include "config.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <liburing.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <pthread.h>
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

#include "bench/tcp_raw.h"

#define RX_BUF_MIN  ((size_t)4 << 20) /* receiver's bulk buffer */
#define BATCH_BYTES ((size_t)1 << 20) /* default bytes per SENDMSG */
#define BATCH_MAX   128U	      /* = iwarp_bw's default tx depth */
#define UD_SEND	    1ULL	      /* io_uring user_data tags */
#define UD_RECV	    2ULL

enum mode { MODE_BW, MODE_LAT };

struct opts {
	enum mode mode;
	size_t size;
	double seconds;		/* bw: sending time */
	double warmup;		/* bw: seconds not measured at the start */
	unsigned long iters;	/* lat: timed round trips */
	unsigned long lat_warm; /* lat: untimed round trips first */
	unsigned int depth;	/* bw: SENDMSGs in flight */
	unsigned int batch;	/* bw: messages per SENDMSG; 0 = auto */
	int poll_uring;		/* lat: 1 io_uring spin, 0 recv spin */
	int uring_ipi;		/* lat: ring without COOP_TASKRUN */
	const char *cc;		/* NULL: the system's default */
	const char *addr;	/* listener address (IPv4 or IPv6 literal) */
	const char *netns_srv;	/* namespace of the listener, NULL: ours */
	const char *netns_cli;	/* namespace of the client socket */
	int json;
};

/* What one thread of a run needs: its socket, options and result. */
struct side {
	const struct opts *o;
	int fd;
	int err;	    /* 0 or -errno */
	uint64_t bytes;	    /* bw receiver: measured bytes */
	uint64_t ns;	    /* bw receiver: measured time */
	uint64_t all_bytes; /* bw receiver: every byte, warm-up included */
	uint64_t *rtt;	    /* lat client: o->iters round trips, ns */
};

uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

/* Process CPU seconds (both threads), getrusage. */
double cpu_now(void)
{
	struct rusage ru;

	if (getrusage(RUSAGE_SELF, &ru))
		return 0;
	return (double)ru.ru_utime.tv_sec + (double)ru.ru_utime.tv_usec / 1e6 +
	       (double)ru.ru_stime.tv_sec + (double)ru.ru_stime.tv_usec / 1e6;
}

static void *xalloc(size_t len)
{
	void *p = NULL;

	if (posix_memalign(&p, 4096, len))
		return NULL;
	memset(p, 0x5a, len);
	return p;
}

/* Sets TCP_NODELAY and, if |cc|, TCP_CONGESTION on |fd|. 0 or -errno. */
static int sock_tune(int fd, const char *cc)
{
	int one = 1;

	if (setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one)) < 0)
		return -errno;
	if (cc && setsockopt(fd, IPPROTO_TCP, TCP_CONGESTION, cc,
			     (socklen_t)strlen(cc)) < 0)
		return -errno;
	return 0;
}

/* Effective congestion control of |fd| into |buf| ("?" on failure). */
static void sock_cc(int fd, char *buf, size_t len)
{
	socklen_t n = (socklen_t)(len - 1);

	memset(buf, 0, len);
	if (getsockopt(fd, IPPROTO_TCP, TCP_CONGESTION, buf, &n) < 0)
		snprintf(buf, len, "?");
}

/*
 * Enters the network namespace /run/netns/|name| (the calling thread only),
 * or |home| (an open /proc/self/ns/net) when |name| is NULL. 0 or -errno.
 */
static int netns_enter(const char *name, int home)
{
	char path[256];
	int fd, r = 0;

	if (!name)
		return home < 0 || setns(home, CLONE_NEWNET) == 0 ? 0 : -errno;
	snprintf(path, sizeof(path), "/run/netns/%s", name);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	if (setns(fd, CLONE_NEWNET) < 0)
		r = -errno;
	close(fd);
	return r;
}

/*
 * Connected pair: |*srv| accepted, |*cli| connected, both tuned. The
 * listener binds o->addr (an IPv4 or IPv6 literal; default 127.0.0.1, port
 * chosen by the kernel) in network namespace o->netns_srv, the client
 * socket is made in o->netns_cli (NULL: this process's namespace): sockets
 * keep the namespace they were created in.
 * Returns 0 or -errno (message printed).
 */
static int pair_open(const struct opts *o, int *srv, int *cli)
{
	const char *cc = o->cc;
	union {
		struct sockaddr sa;
		struct sockaddr_in in;
		struct sockaddr_in6 in6;
	} a;
	socklen_t alen = sizeof(a);
	int lfd = -1, c = -1, s = -1, one = 1, r = 0, home = -1, fam;

	memset(&a, 0, sizeof(a));
	if (inet_pton(AF_INET, o->addr, &a.in.sin_addr) == 1) {
		fam = a.in.sin_family = AF_INET;
	} else if (inet_pton(AF_INET6, o->addr, &a.in6.sin6_addr) == 1) {
		fam = a.in6.sin6_family = AF_INET6;
	} else {
		fprintf(stderr, "tcp_raw: --addr %s: not an IP address\n",
			o->addr);
		return -EINVAL;
	}
	if (o->netns_srv || o->netns_cli) {
		home = open("/proc/self/ns/net", O_RDONLY | O_CLOEXEC);
		if (home < 0)
			r = -errno;
	}
	if (r == 0)
		r = netns_enter(o->netns_srv, home);
	if (r == 0) {
		lfd = socket(fam, SOCK_STREAM, 0);
		if (lfd < 0)
			r = -errno;
	}
	if (r == 0) {
		setsockopt(lfd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
		r = sock_tune(lfd, cc);
	}
	if (r == 0 &&
	    (bind(lfd, &a.sa, fam == AF_INET ? sizeof(a.in) : sizeof(a.in6)) <
		     0 ||
	     getsockname(lfd, &a.sa, &alen) < 0 || listen(lfd, 1) < 0))
		r = -errno;
	if (r == 0)
		r = netns_enter(o->netns_cli, home);
	if (r == 0) {
		c = socket(fam, SOCK_STREAM, 0);
		if (c < 0)
			r = -errno;
	}
	if (r == 0)
		r = sock_tune(c, cc);
	if (r == 0 && connect(c, &a.sa, alen) < 0)
		r = -errno;
	if (r == 0) {
		s = accept(lfd, NULL, NULL);
		if (s < 0)
			r = -errno;
	}
	if (r == 0)
		r = sock_tune(s, cc);
	if (home >= 0) {
		if (netns_enter(NULL, home) && r == 0)
			r = -errno;
		close(home);
	}
	if (lfd >= 0)
		close(lfd);
	if (r) {
		fprintf(stderr, "tcp_raw: connection to %s%s%s: %s\n", o->addr,
			cc ? " with congestion control " : "", cc ? cc : "",
			strerror(-r));
		if (c >= 0)
			close(c);
		if (s >= 0)
			close(s);
		return r;
	}
	*srv = s;
	*cli = c;
	return 0;
}

/* Next completion, spinning (|spin|) or sleeping in io_uring_enter. */
static int ring_next(struct io_uring *ring, int spin, struct io_uring_cqe **cqe)
{
	int r;

	if (!spin)
		return io_uring_wait_cqe(ring, cqe);
	for (;;) {
		r = io_uring_peek_cqe(ring, cqe);
		if (r != -EAGAIN)
			return r;
		/* COOP_TASKRUN: no IPI; the kernel flags pending work */
		if (IO_URING_READ_ONCE(*ring->sq.kflags) & IORING_SQ_TASKRUN)
			io_uring_get_events(ring);
	}
}

/* A free SQE; submits what is queued when the ring is full. */
static struct io_uring_sqe *sqe_get(struct io_uring *ring)
{
	struct io_uring_sqe *sqe;

	while (!(sqe = io_uring_get_sqe(ring)))
		io_uring_submit(ring);
	return sqe;
}

static void prep_send(struct io_uring *ring, int fd, const void *buf,
		      size_t len)
{
	struct io_uring_sqe *sqe = sqe_get(ring);

	io_uring_prep_send(sqe, fd, buf, len, MSG_WAITALL);
	io_uring_sqe_set_data64(sqe, UD_SEND);
}

static void prep_recv(struct io_uring *ring, int fd, void *buf, size_t len)
{
	struct io_uring_sqe *sqe = sqe_get(ring);

	io_uring_prep_recv(sqe, fd, buf, len, 0);
	io_uring_sqe_set_data64(sqe, UD_RECV);
}

/* ---- bandwidth ---- */

static void *bw_sender(void *arg)
{
	struct side *sd = arg;
	const struct opts *o = sd->o;
	unsigned int i, inflight = 0;
	struct io_uring ring;
	struct io_uring_cqe *cqe;
	struct iovec *iov;
	struct msghdr msg;
	uint64_t end;
	int stop = 0, r;
	void *buf;

	r = io_uring_queue_init(2 * o->depth, &ring, 0);
	if (r) {
		sd->err = r;
		shutdown(sd->fd, SHUT_WR);
		return NULL;
	}
	buf = xalloc(o->size);
	iov = calloc(o->batch, sizeof(*iov));
	if (!buf || !iov) {
		sd->err = -ENOMEM;
		goto out;
	}
	for (i = 0; i < o->batch; i++) {
		iov[i].iov_base = buf;
		iov[i].iov_len = o->size;
	}
	memset(&msg, 0, sizeof(msg));
	msg.msg_iov = iov;
	msg.msg_iovlen = o->batch;
	end = now_ns() + (uint64_t)(o->seconds * 1e9);
	while (!stop || inflight) {
		while (!stop && inflight < o->depth) {
			io_uring_prep_sendmsg(sqe_get(&ring), sd->fd, &msg,
					      MSG_WAITALL);
			inflight++;
		}
		r = io_uring_submit_and_wait(&ring, 1);
		if (r < 0) {
			sd->err = r;
			break;
		}
		while (io_uring_peek_cqe(&ring, &cqe) == 0) {
			if (cqe->res < 0 && !sd->err)
				sd->err = cqe->res;
			io_uring_cqe_seen(&ring, cqe);
			inflight--;
		}
		if (sd->err || now_ns() >= end)
			stop = 1;
	}
out:
	shutdown(sd->fd, SHUT_WR);
	io_uring_queue_exit(&ring);
	free(iov);
	free(buf);
	return NULL;
}

static void *bw_receiver(void *arg)
{
	struct side *sd = arg;
	const struct opts *o = sd->o;
	size_t len = o->size > RX_BUF_MIN ? o->size : RX_BUF_MIN;
	uint64_t first = 0, t0 = 0, t1 = 0, now;
	struct io_uring ring;
	struct io_uring_cqe *cqe;
	int r, res;
	void *buf;

	r = io_uring_queue_init(4, &ring, 0);
	if (r) {
		sd->err = r;
		return NULL;
	}
	buf = xalloc(len);
	if (!buf) {
		sd->err = -ENOMEM;
		goto out;
	}
	for (;;) {
		prep_recv(&ring, sd->fd, buf, len);
		r = io_uring_submit_and_wait(&ring, 1);
		if (r < 0) {
			sd->err = r;
			break;
		}
		r = io_uring_peek_cqe(&ring, &cqe);
		if (r) {
			sd->err = r;
			break;
		}
		res = cqe->res;
		io_uring_cqe_seen(&ring, cqe);
		if (res <= 0) {
			sd->err = res;
			break;
		}
		now = now_ns();
		sd->all_bytes += (uint64_t)res;
		if (!first)
			first = now;
		if (!t0) {
			/* warm-up: the measure starts at a completion */
			if (now - first >= (uint64_t)(o->warmup * 1e9))
				t0 = now;
			continue;
		}
		sd->bytes += (uint64_t)res;
		t1 = now;
	}
	sd->ns = t1 > t0 ? t1 - t0 : 0;
out:
	io_uring_queue_exit(&ring);
	free(buf);
	return NULL;
}

/* ---- latency ---- */

/* Receives exactly |len| bytes, busy-polling (--poll recv). 0 or -errno. */
static int spin_recv(int fd, char *buf, size_t len)
{
	size_t got = 0;
	ssize_t n;

	while (got < len) {
		n = recv(fd, buf + got, len - got, MSG_DONTWAIT);
		if (n > 0)
			got += (size_t)n;
		else if (n == 0)
			return -ECONNRESET;
		else if (errno != EAGAIN && errno != EWOULDBLOCK &&
			 errno != EINTR)
			return -errno;
	}
	return 0;
}

static int spin_send(int fd, const char *buf, size_t len)
{
	size_t done = 0;
	ssize_t n;

	while (done < len) {
		n = send(fd, buf + done, len - done, MSG_DONTWAIT);
		if (n > 0)
			done += (size_t)n;
		else if (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK &&
			 errno != EINTR)
			return -errno;
	}
	return 0;
}

/*
 * io_uring round: with a RECV of |len| into |rbuf| already submitted,
 * spins until |len| bytes arrived and |sends| SEND completions were seen.
 * Returns 0, -ECONNRESET on EOF or -errno.
 */
static int uring_round(struct io_uring *ring, int fd, char *rbuf, size_t len,
		       unsigned int sends)
{
	struct io_uring_cqe *cqe;
	size_t got = 0;
	int r, res;
	uint64_t ud;

	while (got < len || sends) {
		r = ring_next(ring, 1, &cqe);
		if (r)
			return r;
		res = cqe->res;
		ud = io_uring_cqe_get_data64(cqe);
		io_uring_cqe_seen(ring, cqe);
		if (res < 0)
			return res;
		if (ud == UD_SEND) {
			sends--;
			continue;
		}
		if (res == 0)
			return -ECONNRESET;
		got += (size_t)res;
		if (got < len) {
			prep_recv(ring, fd, rbuf + got, len - got);
			r = io_uring_submit(ring);
			if (r < 0)
				return r;
		}
	}
	return 0;
}

/* Both roles; the client (|sd->rtt| set) pings first and times. */
static void *lat_side(void *arg)
{
	struct side *sd = arg;
	const struct opts *o = sd->o;
	unsigned long i, total = o->lat_warm + o->iters;
	int client = sd->rtt != NULL, r = 0;
	struct io_uring ring;
	uint64_t t0;
	char *sbuf, *rbuf;

	/* as the engine in latency mode: completion work runs when we ask */
	r = io_uring_queue_init(8, &ring,
				o->uring_ipi
					? 0U
					: IORING_SETUP_COOP_TASKRUN |
						  IORING_SETUP_TASKRUN_FLAG);
	if (r == -EINVAL && !o->uring_ipi)
		r = io_uring_queue_init(8, &ring, 0);
	if (r) {
		sd->err = r;
		return NULL;
	}
	sbuf = xalloc(o->size);
	rbuf = xalloc(o->size);
	if (!sbuf || !rbuf) {
		r = -ENOMEM;
		goto out;
	}
	for (i = 0; i < total && !r; i++) {
		t0 = now_ns();
		if (o->poll_uring) {
			/* server: the echo goes with the next RECV */
			if (client || i == 0) {
				if (client)
					prep_send(&ring, sd->fd, sbuf, o->size);
				prep_recv(&ring, sd->fd, rbuf, o->size);
				r = io_uring_submit(&ring);
				if (r < 0)
					break;
			}
			r = uring_round(&ring, sd->fd, rbuf, o->size,
					client || i > 0 ? 1U : 0U);
			if (!r && !client) {
				prep_send(&ring, sd->fd, sbuf, o->size);
				if (i + 1 < total)
					prep_recv(&ring, sd->fd, rbuf, o->size);
				r = io_uring_submit(&ring);
				if (r >= 0)
					r = 0;
				/* its completion is reaped next round */
			}
		} else if (client) {
			r = spin_send(sd->fd, sbuf, o->size);
			if (!r)
				r = spin_recv(sd->fd, rbuf, o->size);
		} else {
			r = spin_recv(sd->fd, rbuf, o->size);
			if (!r)
				r = spin_send(sd->fd, sbuf, o->size);
		}
		if (!r && client && i >= o->lat_warm)
			sd->rtt[i - o->lat_warm] = now_ns() - t0;
	}
	/* server (uring): the final echo SEND completes before exit */
	if (!r && !client && o->poll_uring)
		r = uring_round(&ring, sd->fd, rbuf, 0, 1);
out:
	sd->err = r < 0 ? r : 0;
	io_uring_queue_exit(&ring);
	free(sbuf);
	free(rbuf);
	return NULL;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/* ---- driver ---- */

static int run(const struct opts *o)
{
	struct side s = {.o = o, .fd = -1}, c = {.o = o, .fd = -1};
	pthread_t ts, tc;
	char cc_s[32], cc_c[32];
	double cpu0, cpu = 0;
	int r;

	r = pair_open(o, &s.fd, &c.fd);
	if (r)
		return 1;
	sock_cc(s.fd, cc_s, sizeof(cc_s));
	sock_cc(c.fd, cc_c, sizeof(cc_c));
	fprintf(o->json ? stderr : stdout,
		"tcp_raw: %s, size %zu, congestion control %s/%s "
		"(server/client; requested %s), TCP_NODELAY on\n",
		o->mode == MODE_BW ? "bw"
		: !o->poll_uring   ? "lat (recv busy-poll)"
		: o->uring_ipi	   ? "lat (io_uring busy-poll, IPI task work)"
				   : "lat (io_uring busy-poll, COOP_TASKRUN)",
		o->size, cc_s, cc_c, o->cc ? o->cc : "system default");
	if (o->mode == MODE_LAT) {
		c.rtt = calloc(o->iters, sizeof(*c.rtt));
		if (!c.rtt) {
			r = 1;
			goto out;
		}
	}
	cpu0 = cpu_now();
	if (pthread_create(&ts, NULL,
			   o->mode == MODE_BW ? bw_receiver : lat_side, &s)) {
		r = 1;
		goto out;
	}
	if (pthread_create(&tc, NULL, o->mode == MODE_BW ? bw_sender : lat_side,
			   &c)) {
		shutdown(c.fd, SHUT_RDWR);
		pthread_join(ts, NULL);
		r = 1;
		goto out;
	}
	pthread_join(tc, NULL);
	if (c.err)
		shutdown(s.fd, SHUT_RDWR); /* unblock the other side */
	pthread_join(ts, NULL);
	cpu = cpu_now() - cpu0;
	if (c.err == -EINVAL || c.err == -ENOSYS || s.err == -ENOSYS) {
		fprintf(stderr, "tcp_raw: io_uring unavailable\n");
		r = 2;
		goto out;
	}
	if (c.err || (s.err && o->mode == MODE_LAT)) {
		fprintf(stderr, "tcp_raw: %s\n",
			strerror(-(c.err ? c.err : s.err)));
		r = 1;
		goto out;
	}
	if (o->mode == MODE_BW && (s.err || !s.ns)) {
		fprintf(stderr, "tcp_raw: nothing measured%s%s\n",
			s.err ? ": " : " (run too short?)",
			s.err ? strerror(-s.err) : "");
		r = 1;
		goto out;
	}
	if (o->mode == MODE_BW) {
		double sec = (double)s.ns / 1e9;
		double mbs = sec > 0 ? (double)s.bytes / sec / 1048576.0 : 0;

		if (o->json)
			printf("{\"tool\":\"tcp_raw\",\"mode\":\"bw\","
			       "\"bytes\":%zu,\"depth\":%u,\"batch\":%u,"
			       "\"seconds\":%.3f,\"bytes_total\":%llu,"
			       "\"bw_average\":%.3f,\"unit\":\"MB/sec\","
			       "\"cc\":\"%s\",\"cpu_s\":%.3f,\"cpu_s_per_gb\":%.4f}\n",
			       o->size, o->depth, o->batch, sec,
			       (unsigned long long)s.bytes, mbs, cc_c, cpu,
			       s.all_bytes ? cpu / ((double)s.all_bytes / 1e9)
					   : 0);
		else
			printf("%zu B: %.2f MB/sec (2^20 B/s), %.2f GB/s "
			       "(1e9 B/s), %llu bytes in %.3f s\n",
			       o->size, mbs, (double)s.bytes / sec / 1e9,
			       (unsigned long long)s.bytes, sec);
	} else {
		uint64_t *t = c.rtt, sum = 0;
		unsigned long i, n = o->iters;
		double med, avg;

		qsort(t, n, sizeof(*t), cmp_u64);
		for (i = 0; i < n; i++)
			sum += t[i];
		med = (n % 2 ? (double)t[n / 2]
			     : ((double)t[n / 2 - 1] + (double)t[n / 2]) / 2) /
		      1e3;
		avg = (double)sum / (double)n / 1e3;
		if (o->json)
			printf("{\"tool\":\"tcp_raw\",\"mode\":\"latency\","
			       "\"poll\":\"%s\",\"bytes\":%zu,"
			       "\"iterations\":%lu,\"rtt_min\":%.2f,"
			       "\"rtt_median\":%.2f,\"rtt_avg\":%.2f,"
			       "\"rtt_p99\":%.2f,\"half_rtt_median\":%.2f,"
			       "\"unit\":\"usec\",\"cc\":\"%s\"}\n",
			       !o->poll_uring ? "recv"
			       : o->uring_ipi ? "uring-ipi"
					      : "uring",
			       o->size, n, (double)t[0] / 1e3, med, avg,
			       (double)t[n * 99 / 100] / 1e3, med / 2, cc_c);
		else
			printf("%zu B: RTT median %.2f us, avg %.2f, min %.2f, "
			       "p99 %.2f (half RTT median %.2f) over %lu\n",
			       o->size, med, avg, (double)t[0] / 1e3,
			       (double)t[n * 99 / 100] / 1e3, med / 2, n);
	}
	r = 0;
out:
	free(c.rtt);
	close(s.fd);
	close(c.fd);
	return r;
}

static void usage(FILE *f)
{
	fprintf(f,
		"Usage: tcp_raw bw  [-s SIZE] [-D SECS] [--depth N] [--batch N] [OPTIONS]\n"
		"       tcp_raw lat [-s SIZE] [-n ITERS] [--poll uring|uring-ipi|recv] [OPTIONS]\n"
		"       tcp_raw streams -P N [-s SIZE] [-D SECS]   N parallel streams (plain sockets)\n"
		"       tcp_raw msgrate [-s 64] [-D SECS]          one record per send(2), Nagle on\n"
		"       tcp_raw pingpong [-s 8] [-n ITERS] [--procs] [--cpus ECHO,TIMER]\n"
		"                                             blocking ping-pong, percentiles, CPU\n"
		"       tcp_raw connrate -P N                      connect + accept per second\n"
		"       tcp_raw tls [-s SIZE] [-D SECS]            one TLS 1.3 stream (OpenSSL, blocking)\n"
		"       tcp_raw wake [--submitter sleep|spin|self] which thread a receive completion wakes\n"
		"Raw TCP over io_uring on 127.0.0.1 (or --addr), both ends in this process.\n"
		"  -s, --size=N      message size, K/M suffixes (default 65536 bw, 8 lat)\n"
		"  -D, --duration=S  bw: seconds of sending (default 2)\n"
		"  -w, --warmup=S    bw: seconds not measured at the start (default 0.25)\n"
		"      --depth=N     bw: SENDMSGs in flight (default 2)\n"
		"      --batch=N     bw: messages per SENDMSG (default min(128, 1 MiB/SIZE), >= 1)\n"
		"  -n, --iters=N     lat: timed round trips (default 10000)\n"
		"      --lat-warmup=N lat: untimed round trips first (default 200)\n"
		"      --poll=MODE   lat: uring (spin on io_uring CQEs, ring with\n"
		"                    COOP_TASKRUN, default), uring-ipi (same, default\n"
		"                    ring flags: the kernel interrupts the spinner) or\n"
		"                    recv (spin on recv(MSG_DONTWAIT), send(2))\n"
		"      --cc=NAME     TCP congestion control (default: the system's)\n"
		"      --json        one JSON object on stdout\n"
		"      --addr=IP     listen on IP (IPv4 or IPv6, default 127.0.0.1)\n"
		"      --netns-server=NAME  listener in network namespace NAME\n"
		"      --netns-client=NAME  client socket in NAME (needs root)\n"
		"  -h, --help        this text\n");
}

/* Parses a size with an optional K/M/G suffix into |*out| (>= 1). */
static int parse_size(const char *s, size_t *out)
{
	char *end;
	unsigned long long v;

	errno = 0;
	v = strtoull(s, &end, 0);
	if (errno || end == s || v == 0)
		return -1;
	switch (*end) {
	case 'k':
	case 'K':
		v <<= 10;
		end++;
		break;
	case 'm':
	case 'M':
		v <<= 20;
		end++;
		break;
	case 'g':
	case 'G':
		v <<= 30;
		end++;
		break;
	default:
		break;
	}
	if (*end || v > ((unsigned long long)1 << 32))
		return -1;
	*out = (size_t)v;
	return 0;
}

static int parse_ulong(const char *s, unsigned long max, unsigned long *out)
{
	char *end;
	unsigned long v;

	errno = 0;
	v = strtoul(s, &end, 10);
	if (errno || end == s || *end || v == 0 || v > max)
		return -1;
	*out = v;
	return 0;
}

static int parse_secs(const char *s, double *out)
{
	char *end;
	double v;

	errno = 0;
	v = strtod(s, &end);
	if (errno || end == s || *end || v < 0 || v > 3600)
		return -1;
	*out = v;
	return 0;
}

int main(int argc, char **argv)
{
	static const struct option lo[] = {
		{"size", required_argument, NULL, 's'},
		{"duration", required_argument, NULL, 'D'},
		{"warmup", required_argument, NULL, 'w'},
		{"iters", required_argument, NULL, 'n'},
		{"depth", required_argument, NULL, 'd'},
		{"batch", required_argument, NULL, 'b'},
		{"lat-warmup", required_argument, NULL, 'W'},
		{"poll", required_argument, NULL, 'P'},
		{"cc", required_argument, NULL, 'c'},
		{"json", no_argument, NULL, 'j'},
		{"addr", required_argument, NULL, 'A'},
		{"netns-server", required_argument, NULL, 'S'},
		{"netns-client", required_argument, NULL, 'C'},
		{"help", no_argument, NULL, 'h'},
		{NULL, 0, NULL, 0},
	};
	struct opts o = {
		.seconds = 2,
		.warmup = 0.25,
		.iters = 10000,
		.lat_warm = 200,
		.depth = 2,
		.poll_uring = 1,
		.addr = "127.0.0.1",
	};
	unsigned long v;
	int ch;

	if (argc < 2 || !strcmp(argv[1], "-h") || !strcmp(argv[1], "--help")) {
		usage(argc < 2 ? stderr : stdout);
		return argc < 2;
	}
	if (!strcmp(argv[1], "streams") || !strcmp(argv[1], "msgrate") ||
	    !strcmp(argv[1], "pingpong") || !strcmp(argv[1], "connrate"))
		return tcp_raw_plain(argc, argv);
	if (!strcmp(argv[1], "tls"))
		return tcp_raw_tls(argc, argv);
	if (!strcmp(argv[1], "wake"))
		return tcp_raw_wake(argc, argv);
	if (!strcmp(argv[1], "bw")) {
		o.mode = MODE_BW;
	} else if (!strcmp(argv[1], "lat")) {
		o.mode = MODE_LAT;
	} else {
		usage(stderr);
		return 1;
	}
	optind = 2;
	while ((ch = getopt_long(argc, argv, "s:D:w:n:h", lo, NULL)) != -1) {
		switch (ch) {
		case 's':
			if (parse_size(optarg, &o.size))
				goto bad;
			break;
		case 'D':
			if (parse_secs(optarg, &o.seconds) || o.seconds <= 0)
				goto bad;
			break;
		case 'w':
			if (parse_secs(optarg, &o.warmup))
				goto bad;
			break;
		case 'n':
			if (parse_ulong(optarg, 100000000UL, &o.iters))
				goto bad;
			break;
		case 'W':
			if (parse_ulong(optarg, 100000000UL, &o.lat_warm))
				goto bad;
			break;
		case 'd':
			if (parse_ulong(optarg, 1024, &v))
				goto bad;
			o.depth = (unsigned int)v;
			break;
		case 'b':
			if (parse_ulong(optarg, 1024, &v))
				goto bad;
			o.batch = (unsigned int)v;
			break;
		case 'P':
			o.uring_ipi = !strcmp(optarg, "uring-ipi");
			if (!strcmp(optarg, "uring") || o.uring_ipi)
				o.poll_uring = 1;
			else if (!strcmp(optarg, "recv"))
				o.poll_uring = 0;
			else
				goto bad;
			break;
		case 'c':
			o.cc = optarg;
			break;
		case 'j':
			o.json = 1;
			break;
		case 'A':
			o.addr = optarg;
			break;
		case 'S':
			o.netns_srv = optarg;
			break;
		case 'C':
			o.netns_cli = optarg;
			break;
		case 'h':
			usage(stdout);
			return 0;
		default:
			goto bad;
		}
	}
	if (optind != argc)
		goto bad;
	if (!o.size)
		o.size = o.mode == MODE_BW ? 65536 : 8;
	if (!o.batch) {
		size_t b = BATCH_BYTES / o.size;

		o.batch = b > BATCH_MAX ? BATCH_MAX : b ? (unsigned int)b : 1U;
	}
	if (o.mode == MODE_BW && o.warmup >= o.seconds)
		goto bad;
	return run(&o);
bad:
	usage(stderr);
	return 1;
}
