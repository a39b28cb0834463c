/*
 * bench/tcp_raw_plain.c: the plain-socket modes of tcp_raw (no io_uring),
 * baselines for the rows of bench.sh that a plain application would see:
 *
 *   tcp_raw streams  -P N [-s SIZE] [-D SECS]  N connections in parallel
 *   tcp_raw msgrate  [-s 64] [-D SECS]         one record per send(2)
 *   tcp_raw pingpong [-s 8] [-n ITERS] [--procs] [--cpus E,C]  blocking
 *                                              ping-pong
 *   tcp_raw connrate -P N                      connect + accept rate
 *
 * All on 127.0.0.1, both ends in this process (one thread each; pingpong
 * --procs: the echo end in a child process, as iwarp_bw's two processes,
 * so that each round trip also switches address spaces when both ends
 * share a core; --cpus: the echo end runs on CPU E, the timing end on
 * CPU C, so that a run's placement is chosen rather than the
 * scheduler's, which makes the round trip bimodal: both ends on one CPU
 * hand over without waking an idle CPU). msgrate
 * leaves TCP_NODELAY off (Nagle on, as an application that does not set
 * it): the kernel coalesces records, the sender makes one send() call per
 * record. streams and pingpong set TCP_NODELAY. CPU figures are getrusage
 * (RUSAGE_SELF: both ends) over the measured interval.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "bench/tcp_raw.h"

struct popts {
	const char *mode;
	size_t size;
	double seconds;
	unsigned long iters;
	unsigned long warm;
	unsigned long conns;
	const char *cc;
	int json;
	int procs;		/* pingpong: the echo end in a child process */
	int cpu_echo, cpu_time; /* pingpong --cpus: each end's CPU, or -1 */
};

/* Runs the calling thread on |cpu| (no-op for -1); Linux applies
 * sched_setaffinity(0, ...) to the calling thread only. */
static int pin_self(int cpu)
{
	cpu_set_t set;

	if (cpu < 0)
		return 0;
	CPU_ZERO(&set);
	CPU_SET((size_t)cpu, &set);
	return sched_setaffinity(0, sizeof(set), &set) < 0 ? -errno : 0;
}

static void raise_nofile(void)
{
	struct rlimit rl;

	if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < rl.rlim_max) {
		rl.rlim_cur = rl.rlim_max;
		(void)setrlimit(RLIMIT_NOFILE, &rl);
	}
}

/* Listening socket on 127.0.0.1, port 0; |*a| gets its address. */
static int listen_any(struct sockaddr_in *a, int backlog, const char *cc)
{
	socklen_t alen = sizeof(*a);
	int fd = socket(AF_INET, SOCK_STREAM, 0), one = 1;

	if (fd < 0)
		return -errno;
	memset(a, 0, sizeof(*a));
	a->sin_family = AF_INET;
	a->sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (cc)
		setsockopt(fd, IPPROTO_TCP, TCP_CONGESTION, cc,
			   (socklen_t)strlen(cc));
	if (bind(fd, (struct sockaddr *)a, sizeof(*a)) < 0 ||
	    getsockname(fd, (struct sockaddr *)a, &alen) < 0 ||
	    listen(fd, backlog) < 0) {
		int e = -errno;

		close(fd);
		return e;
	}
	return fd;
}

/* One connected pair through |lfd|; |nodelay| sets TCP_NODELAY. */
static int pair(int lfd, const struct sockaddr_in *a, const char *cc,
		int nodelay, int *s, int *c)
{
	int one = 1;

	*c = socket(AF_INET, SOCK_STREAM, 0);
	if (*c < 0)
		return -errno;
	if (cc && setsockopt(*c, IPPROTO_TCP, TCP_CONGESTION, cc,
			     (socklen_t)strlen(cc)) < 0)
		return -errno;
	if (connect(*c, (const struct sockaddr *)a, sizeof(*a)) < 0)
		return -errno;
	*s = accept(lfd, NULL, NULL);
	if (*s < 0)
		return -errno;
	if (nodelay) {
		setsockopt(*c, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
		setsockopt(*s, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	}
	return 0;
}

/* ---- streams and msgrate: senders and a receiver over N pairs ---- */

struct flow {
	const struct popts *o;
	int *fds;
	unsigned long n;
	volatile int *stop;
	uint64_t bytes, t0, t1;
	double c0, c1;
	int c1_set;
	int err;
};

static void *flow_send(void *arg)
{
	struct flow *f = arg;
	char *buf = calloc(1, f->o->size);
	int ep = epoll_create1(0);
	struct epoll_event ev[64];
	unsigned long i;

	if (!buf || ep < 0) {
		f->err = -ENOMEM;
		goto out;
	}
	if (!strcmp(f->o->mode,
		    "msgrate")) { /* a plain blocking send() per record */
		while (!*f->stop) {
			if (send(f->fds[0], buf, f->o->size, 0) < 0) {
				f->err = -errno;
				break;
			}
		}
		goto out;
	}
	for (i = 0; i < f->n; i++) {
		struct epoll_event e = {.events = EPOLLOUT, .data.u64 = i};

		fcntl(f->fds[i], F_SETFL, O_NONBLOCK);
		epoll_ctl(ep, EPOLL_CTL_ADD, f->fds[i], &e);
	}
	while (!*f->stop) {
		int k, m = epoll_wait(ep, ev, 64, 100);

		for (k = 0; k < m; k++) {
			int fd = f->fds[ev[k].data.u64];

			while (send(fd, buf, f->o->size, 0) > 0)
				;
		}
	}
out:
	for (i = 0; i < f->n; i++)
		shutdown(f->fds[i], SHUT_WR);
	if (ep >= 0)
		close(ep);
	free(buf);
	return NULL;
}

static void *flow_recv(void *arg)
{
	struct flow *f = arg;
	size_t len = 1 << 20;
	char *buf = malloc(len);
	int ep = epoll_create1(0);
	struct epoll_event ev[64];
	unsigned long i, open = f->n;
	uint64_t first = 0, warm = 250000000ULL;

	if (!buf || ep < 0) {
		f->err = -ENOMEM;
		goto out;
	}
	for (i = 0; i < f->n; i++) {
		struct epoll_event e = {.events = EPOLLIN, .data.u64 = i};

		fcntl(f->fds[i], F_SETFL, O_NONBLOCK);
		epoll_ctl(ep, EPOLL_CTL_ADD, f->fds[i], &e);
	}
	while (open > 0) {
		int k, m = epoll_wait(ep, ev, 64, 1000);

		for (k = 0; k < m; k++) {
			int fd = f->fds[ev[k].data.u64];
			ssize_t r;

			while ((r = recv(fd, buf, len, 0)) > 0) {
				uint64_t now = now_ns();

				if (!first)
					first = now;
				if (!f->t0) {
					if (now - first >= warm) {
						f->t0 = now;
						f->c0 = cpu_now();
					}
					continue;
				}
				if (!*f->stop) {
					f->bytes += (uint64_t)r;
					f->t1 = now;
				} else if (!f->c1_set) {
					f->c1_set = 1;
					f->c1 = cpu_now();
				}
			}
			if (r == 0) {
				epoll_ctl(ep, EPOLL_CTL_DEL, fd, NULL);
				open--;
			}
		}
	}
	if (!f->c1_set)
		f->c1 = cpu_now();
out:
	if (ep >= 0)
		close(ep);
	free(buf);
	return NULL;
}

static int run_flows(const struct popts *o, unsigned long n, int nodelay)
{
	struct sockaddr_in a;
	int lfd, *sf = calloc(n, sizeof(int)), *cf = calloc(n, sizeof(int)),
		 r = 0;
	volatile int stop = 0;
	struct flow snd = {.o = o, .fds = cf, .n = n, .stop = &stop};
	struct flow rcv = {.o = o, .fds = sf, .n = n, .stop = &stop};
	pthread_t ts, tr;
	unsigned long i;
	double sec, cpu = 0;
	struct timespec d;

	if (!sf || !cf)
		return 1;
	lfd = listen_any(&a, n > 4096 ? 4096 : (int)n, o->cc);
	if (lfd < 0) {
		fprintf(stderr, "tcp_raw: listen: %s\n", strerror(-lfd));
		return 1;
	}
	for (i = 0; i < n; i++) {
		r = pair(lfd, &a, o->cc, nodelay, &sf[i], &cf[i]);
		if (r) {
			fprintf(stderr, "tcp_raw: connection %lu of %lu: %s\n",
				i, n, strerror(-r));
			return 1;
		}
	}
	close(lfd);
	pthread_create(&tr, NULL, flow_recv, &rcv);
	pthread_create(&ts, NULL, flow_send, &snd);
	d.tv_sec = (time_t)o->seconds;
	d.tv_nsec = (long)((o->seconds - (double)d.tv_sec) * 1e9);
	nanosleep(&d, NULL);
	stop = 1;
	pthread_join(ts, NULL);
	pthread_join(tr, NULL);
	sec = rcv.t1 > rcv.t0 ? (double)(rcv.t1 - rcv.t0) / 1e9 : 0;
	if (sec <= 0 || snd.err || rcv.err) {
		fprintf(stderr, "tcp_raw: nothing measured (%s)\n",
			strerror(snd.err   ? -snd.err
				 : rcv.err ? -rcv.err
					   : EAGAIN));
		return 1;
	}
	cpu = rcv.c1 - rcv.c0; /* roughly the measured interval + drain */
	printf("{\"tool\":\"tcp_raw\",\"mode\":\"%s\",\"streams\":%lu,\"bytes\":%zu,"
	       "\"nodelay\":%d,\"seconds\":%.3f,\"bytes_total\":%llu,\"bw_average\":%.3f,"
	       "\"unit\":\"MB/sec\",\"msg_rate_mpps\":%.6f,\"cpu_s\":%.3f,"
	       "\"cpu_s_per_gb\":%.4f}\n",
	       o->mode, n, o->size, nodelay, sec, (unsigned long long)rcv.bytes,
	       (double)rcv.bytes / sec / 1048576.0,
	       (double)rcv.bytes / (double)o->size / sec / 1e6, cpu,
	       rcv.bytes ? cpu / ((double)rcv.bytes / 1e9) : 0);
	for (i = 0; i < n; i++) {
		close(sf[i]);
		close(cf[i]);
	}
	free(sf);
	free(cf);
	return 0;
}

/* ---- blocking ping-pong ---- */

static int xfer(int fd, char *buf, size_t len, int tx)
{
	size_t done = 0;

	while (done < len) {
		ssize_t r = tx ? send(fd, buf + done, len - done, 0)
			       : recv(fd, buf + done, len - done, 0);

		if (r == 0)
			return -ECONNRESET;
		if (r < 0 && errno != EINTR)
			return -errno;
		if (r > 0)
			done += (size_t)r;
	}
	return 0;
}

struct pp {
	const struct popts *o;
	int fd;
	int err;
	double cpu; /* CPU seconds over the measured round trips (--procs) */
};

static void *pp_echo(void *arg)
{
	struct pp *p = arg;
	char *buf = calloc(1, p->o->size);
	unsigned long i;
	double c0 = 0;

	p->err = pin_self(p->o->cpu_echo);
	for (i = 0; buf && i < p->o->iters + p->o->warm && !p->err; i++) {
		if (i == p->o->warm)
			c0 = cpu_now();
		p->err = xfer(p->fd, buf, p->o->size, 0);
		if (!p->err)
			p->err = xfer(p->fd, buf, p->o->size, 1);
	}
	p->cpu = cpu_now() - c0;
	if (p->err) /* the timing end would wait for an echo forever */
		shutdown(p->fd, SHUT_RDWR);
	free(buf);
	return NULL;
}

/* --procs: the echo end in a child, which reports its error and CPU
 * time on |wfd|. Returns the child's pid or -errno. */
static pid_t pp_echo_fork(struct pp *echo, int other_fd, int wfd)
{
	pid_t pid = fork();

	if (pid < 0)
		return -errno;
	if (pid == 0) {
		close(other_fd);
		pp_echo(echo);
		_exit(write(wfd, echo, sizeof(*echo)) == (ssize_t)sizeof(*echo)
			      ? 0
			      : 1);
	}
	return pid;
}

static int cmp64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

static int run_pingpong(const struct popts *o)
{
	struct sockaddr_in a;
	int lfd, s, c, r;
	uint64_t *t = calloc(o->iters, sizeof(*t)), t0;
	char *buf = calloc(1, o->size);
	struct pp echo = {.o = o};
	pthread_t th;
	unsigned long i, n = o->iters;
	double c0 = 0, c1, w0 = 0, w1;
	int pfd[2] = {-1, -1};
	pid_t child = -1;

	lfd = listen_any(&a, 1, o->cc);
	if (lfd < 0 || !t || !buf || (r = pair(lfd, &a, o->cc, 1, &s, &c))) {
		fprintf(stderr, "tcp_raw: pingpong set-up failed\n");
		return 1;
	}
	close(lfd);
	echo.fd = s;
	if (o->procs) {
		if (pipe(pfd) < 0 ||
		    (child = pp_echo_fork(&echo, c, pfd[1])) < 0) {
			fprintf(stderr, "tcp_raw: pingpong: no echo process\n");
			return 1;
		}
		close(pfd[1]);
	} else {
		pthread_create(&th, NULL, pp_echo, &echo);
	}
	r = pin_self(o->cpu_time);
	for (i = 0; i < o->warm + n && !r; i++) {
		if (i == o->warm) {
			c0 = cpu_now();
			w0 = (double)now_ns();
		}
		t0 = now_ns();
		r = xfer(c, buf, o->size, 1);
		if (!r)
			r = xfer(c, buf, o->size, 0);
		if (i >= o->warm)
			t[i - o->warm] = now_ns() - t0;
	}
	c1 = cpu_now();
	w1 = (double)now_ns();
	if (r) /* the echo end would wait for a message forever */
		shutdown(c, SHUT_RDWR);
	if (o->procs) {
		/* the child's own figures; RUSAGE_SELF above was this end's */
		if (read(pfd[0], &echo, sizeof(echo)) != (ssize_t)sizeof(echo))
			echo.err = -EPIPE;
		echo.o = o;
		c1 += echo.cpu;
		close(pfd[0]);
		waitpid(child, NULL, 0);
	} else {
		pthread_join(th, NULL);
	}
	if (r || echo.err) {
		fprintf(stderr, "tcp_raw: pingpong: %s\n",
			strerror(r ? -r : -echo.err));
		return 1;
	}
	qsort(t, n, sizeof(*t), cmp64);
	printf("{\"tool\":\"tcp_raw\",\"mode\":\"pingpong\",\"bytes\":%zu,\"iterations\":%lu,"
	       "\"rtt_min\":%.2f,\"rtt_median\":%.2f,\"rtt_p99\":%.2f,\"rtt_max\":%.2f,"
	       "\"cpu_per_rtt_us\":%.3f,\"cpu_util\":%.2f,\"unit\":\"usec\"}\n",
	       o->size, n, (double)t[0] / 1e3, (double)t[n / 2] / 1e3,
	       (double)t[(n * 99) / 100] / 1e3, (double)t[n - 1] / 1e3,
	       (c1 - c0) * 1e6 / (double)n,
	       100.0 * (c1 - c0) / ((w1 - w0) / 1e9));
	close(s);
	close(c);
	free(t);
	free(buf);
	return 0;
}

/* ---- connect rate ---- */

static int run_connrate(const struct popts *o)
{
	struct sockaddr_in a;
	unsigned long i, n = o->conns;
	int lfd, *sf = calloc(n, sizeof(int)), *cf = calloc(n, sizeof(int)),
		 r = 0;
	uint64_t t0, t1;

	lfd = listen_any(&a, n > 4096 ? 4096 : (int)n, o->cc);
	if (lfd < 0 || !sf || !cf) {
		fprintf(stderr, "tcp_raw: connrate set-up failed\n");
		return 1;
	}
	t0 = now_ns();
	for (i = 0; i < n && !r; i++)
		r = pair(lfd, &a, o->cc, 1, &sf[i], &cf[i]);
	t1 = now_ns();
	if (r) {
		fprintf(stderr, "tcp_raw: connection %lu of %lu: %s\n", i, n,
			strerror(-r));
		return 1;
	}
	printf("{\"tool\":\"tcp_raw\",\"mode\":\"connrate\",\"connections\":%lu,\"seconds\":%.6f,"
	       "\"connect_rate\":%.1f}\n",
	       n, (double)(t1 - t0) / 1e9,
	       (double)n / ((double)(t1 - t0) / 1e9));
	for (i = 0; i < n; i++) {
		close(sf[i]);
		close(cf[i]);
	}
	close(lfd);
	return 0;
}

int tcp_raw_plain(int argc, char **argv)
{
	static const struct option lo[] = {
		{"size", required_argument, NULL, 's'},
		{"duration", required_argument, NULL, 'D'},
		{"iters", required_argument, NULL, 'n'},
		{"parallel", required_argument, NULL, 'P'},
		{"cc", required_argument, NULL, 'c'},
		{"json", no_argument, NULL, 'j'},
		{"procs", no_argument, NULL, 'F'},
		{"cpus", required_argument, NULL, 'C'},
		{NULL, 0, NULL, 0},
	};
	struct popts o = {.mode = argv[1],
			  .seconds = 1.5,
			  .iters = 10000,
			  .warm = 200,
			  .conns = 1,
			  .cpu_echo = -1,
			  .cpu_time = -1};
	int ch;

	optind = 2;
	while ((ch = getopt_long(argc, argv, "s:D:n:P:", lo, NULL)) != -1) {
		switch (ch) {
		case 's':
			o.size = strtoul(optarg, NULL, 0);
			break;
		case 'D':
			o.seconds = strtod(optarg, NULL);
			break;
		case 'n':
			o.iters = strtoul(optarg, NULL, 0);
			break;
		case 'P':
			o.conns = strtoul(optarg, NULL, 0);
			break;
		case 'c':
			o.cc = optarg;
			break;
		case 'j':
			o.json = 1;
			break;
		case 'F':
			o.procs = 1;
			break;
		case 'C':
			if (sscanf(optarg, "%d,%d", &o.cpu_echo, &o.cpu_time) !=
				    2 ||
			    o.cpu_echo < 0 || o.cpu_time < 0)
				return 1;
			break;
		default:
			return 1;
		}
	}
	if (o.conns < 1 || o.iters < 1 || o.seconds <= 0.3)
		return 1;
	raise_nofile();
	if (!strcmp(o.mode, "streams")) {
		if (!o.size)
			o.size = 65536;
		return run_flows(&o, o.conns, 1);
	}
	if (!strcmp(o.mode, "msgrate")) {
		if (!o.size)
			o.size = 64;
		return run_flows(&o, 1, 0);
	}
	if (!strcmp(o.mode, "pingpong")) {
		if (!o.size)
			o.size = 8;
		return run_pingpong(&o);
	}
	if (!strcmp(o.mode, "connrate"))
		return run_connrate(&o);
	return 1;
}
