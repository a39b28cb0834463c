/*
 * bench/tcp_raw_wake.c: tcp_raw wake, which thread io_uring wakes when a
 * receive completes.
 *
 *   tcp_raw wake [--submitter sleep|spin|self] [-n N]
 *
 * N loopback connections (default 400). A ring is set up as io/engine.c
 * sets up the progress thread's (COOP_TASKRUN | TASKRUN_FLAG) and one
 * IORING_OP_RECV is armed on each connection. The "waiter" thread blocks
 * in io_uring_enter for completions, as a thread that waits for the
 * library's events would if it ran the engine. The main thread writes one
 * octet to one connection at a time and waits until the waiter has its
 * completion. Who armed the receives:
 *   sleep  another thread ("submitter"), which then sleeps in read(2) on a
 *          pipe (the engine's progress thread asleep);
 *   spin   that thread, spinning in user space afterwards;
 *   self   the waiter itself (the engine's INLINE mode).
 * Prints one JSON line: context switches per message of the submitter and
 * of the waiter (getrusage RUSAGE_THREAD) and the latency from the write to
 * the waiter holding the completion (median, p99, max). A message whose
 * completion the waiter does not have within WAKE_MSG_TIMEOUT_S (a lost
 * wake-up, a receive that never completes) ends the run with an error on
 * stderr and exit status 1.
 *
 * A receive's completion work runs in the task that submitted the request
 * (with COOP_TASKRUN it is flagged to that task instead of interrupting
 * it), so a submitter that is not the waiter is woken for every message:
 * bench/README.md, "Event mode: where the round trip goes".
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <getopt.h>
#include <liburing.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <unistd.h>

#include "tcp_raw.h"

/* How long the main thread waits for the waiter to see one message. */
#define WAKE_MSG_TIMEOUT_S 5

enum wake_submitter { SUB_SLEEP, SUB_SPIN, SUB_SELF };

static const char *const wake_names[] = {"sleep", "spin", "self"};

struct wake {
	enum wake_submitter sub;
	unsigned int n;
	int *rfd, *wfd;
	char (*rbuf)[8];
	double *lat_us;
	int pipefd[2];
	struct io_uring ring;
	atomic_int armed;  /* the receives are armed */
	atomic_int rx_res; /* a receive that brought no octet: its result */
	atomic_uint done;  /* completions the waiter has seen */
	atomic_int stop;   /* the spinning submitter may leave */
	_Atomic uint64_t t_write;
	int ring_rc;
	long sub_csw, wait_csw; /* context switches while measuring */
};

static long thread_csw(void)
{
	struct rusage r;

	getrusage(RUSAGE_THREAD, &r);
	return r.ru_nvcsw + r.ru_nivcsw;
}

/* Sets up the ring and arms one receive per connection. */
static int wake_arm(struct wake *w)
{
	unsigned int i;
	int rc = io_uring_queue_init(w->n + 8, &w->ring,
				     IORING_SETUP_COOP_TASKRUN |
					     IORING_SETUP_TASKRUN_FLAG);

	if (rc < 0)
		return rc;
	for (i = 0; i < w->n; i++) {
		struct io_uring_sqe *sqe = io_uring_get_sqe(&w->ring);

		if (!sqe)
			return -EBUSY;
		io_uring_prep_recv(sqe, w->rfd[i], w->rbuf[i],
				   sizeof(w->rbuf[i]), 0);
	}
	rc = io_uring_submit(&w->ring);
	return rc < 0 ? rc : 0;
}

static void *wake_submitter_main(void *arg)
{
	struct wake *w = arg;
	long csw;
	char c;

	w->ring_rc = wake_arm(w);
	csw = thread_csw();
	atomic_store(&w->armed, 1);
	if (w->ring_rc < 0)
		return NULL;
	if (w->sub == SUB_SPIN) {
		while (!atomic_load(&w->stop))
			;
		w->sub_csw = thread_csw() - csw;
	} else {
		ssize_t r = read(w->pipefd[0], &c, 1);

		(void)r;
		w->sub_csw = thread_csw() - csw - 1; /* the final wake-up */
	}
	return NULL;
}

static void *wake_waiter_main(void *arg)
{
	struct wake *w = arg;
	unsigned int i;
	long csw;

	if (w->sub == SUB_SELF) {
		w->ring_rc = wake_arm(w);
		atomic_store(&w->armed, 1);
		if (w->ring_rc < 0)
			return NULL;
	}
	csw = thread_csw();
	for (i = 0; i < w->n; i++) {
		struct io_uring_cqe *cqe;

		while (io_uring_wait_cqe(&w->ring, &cqe) < 0)
			;
		w->lat_us[i] =
			(double)(now_ns() - atomic_load(&w->t_write)) / 1000.0;
		if (cqe->res <= 0) {
			/* an error or the end of a stream is no message */
			atomic_store(&w->rx_res, cqe->res ? cqe->res : -EPIPE);
			io_uring_cqe_seen(&w->ring, cqe);
			return NULL;
		}
		io_uring_cqe_seen(&w->ring, cqe);
		if (i + 1 == w->n)
			w->wait_csw = thread_csw() - csw;
		atomic_store(&w->done, i + 1);
	}
	return NULL;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

/* n connected pairs on 127.0.0.1 (port chosen by the kernel). */
static int wake_connect(struct wake *w)
{
	struct sockaddr_in a = {.sin_family = AF_INET};
	socklen_t al = sizeof(a);
	unsigned int i;
	int one = 1, lfd;

	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	lfd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (lfd < 0 || bind(lfd, (struct sockaddr *)&a, sizeof(a)) < 0 ||
	    listen(lfd, 128) < 0 ||
	    getsockname(lfd, (struct sockaddr *)&a, &al) < 0)
		return -errno;
	for (i = 0; i < w->n; i++) {
		w->wfd[i] = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
		if (w->wfd[i] < 0 ||
		    connect(w->wfd[i], (struct sockaddr *)&a, sizeof(a)) < 0)
			return -errno;
		w->rfd[i] = accept4(lfd, NULL, NULL, SOCK_CLOEXEC);
		if (w->rfd[i] < 0)
			return -errno;
		setsockopt(w->wfd[i], IPPROTO_TCP, TCP_NODELAY, &one,
			   sizeof(one));
	}
	close(lfd);
	return 0;
}

/*
 * Message |i| timed out. Does not return: the waiter may still be blocked
 * in io_uring_enter on the ring and the receive buffers, so the process
 * ends without freeing them.
 */
static void wake_expired(const struct wake *w, unsigned int i)
{
	fprintf(stderr,
		"tcp_raw wake: submitter %s: message %u of %u: the waiter had "
		"no completion after %d s (lost wake-up?)\n",
		wake_names[w->sub], i + 1, w->n, WAKE_MSG_TIMEOUT_S);
	exit(1);
}

/* Waits (bounded) until the receives are armed. */
static void wake_wait_armed(const struct wake *w)
{
	uint64_t t = now_ns();

	while (!atomic_load(&w->armed)) {
		if (now_ns() - t > (uint64_t)WAKE_MSG_TIMEOUT_S * 1000000000u) {
			fprintf(stderr,
				"tcp_raw wake: submitter %s: the "
				"receives were not armed after %d s\n",
				wake_names[w->sub], WAKE_MSG_TIMEOUT_S);
			exit(1);
		}
		usleep(100);
	}
}

static int wake_run(struct wake *w)
{
	pthread_t ts, tw;
	unsigned int i;
	int rc;

	rc = wake_connect(w);
	if (rc < 0) {
		fprintf(stderr, "tcp_raw wake: connect: %s\n", strerror(-rc));
		return 1;
	}
	if (pipe(w->pipefd) < 0)
		return 1;
	if (w->sub != SUB_SELF) {
		if (pthread_create(&ts, NULL, wake_submitter_main, w))
			return 1;
		wake_wait_armed(w);
	}
	if (pthread_create(&tw, NULL, wake_waiter_main, w))
		return 1;
	wake_wait_armed(w);
	if (w->ring_rc < 0) {
		fprintf(stderr, "tcp_raw wake: io_uring: %s\n",
			strerror(-w->ring_rc));
		return 1;
	}
	usleep(20000);
	for (i = 0; i < w->n; i++) {
		uint64_t t;

		usleep(1000); /* the waiter (and a sleeping submitter) asleep */
		t = now_ns();
		atomic_store(&w->t_write, t);
		if (write(w->wfd[i], "x", 1) != 1) {
			fprintf(stderr, "tcp_raw wake: message %u: write: %s\n",
				i + 1, strerror(errno));
			exit(1); /* the threads still use the sockets */
		}
		while (atomic_load(&w->done) <= i) {
			if (atomic_load(&w->rx_res)) {
				fprintf(stderr,
					"tcp_raw wake: message %u: receive: "
					"%s\n",
					i + 1,
					strerror(-atomic_load(&w->rx_res)));
				exit(1);
			}
			if (now_ns() - t >
			    (uint64_t)WAKE_MSG_TIMEOUT_S * 1000000000u)
				wake_expired(w, i);
			usleep(20);
		}
	}
	pthread_join(tw, NULL);
	if (w->sub != SUB_SELF) {
		atomic_store(&w->stop, 1);
		if (write(w->pipefd[1], "q", 1) != 1)
			return 1;
		pthread_join(ts, NULL);
	}
	qsort(w->lat_us, w->n, sizeof(double), cmp_double);
	printf("{\"mode\":\"wake\",\"submitter\":\"%s\",\"messages\":%u,"
	       "\"submitter_csw_per_msg\":%.2f,\"waiter_csw_per_msg\":%.2f,"
	       "\"lat_median_us\":%.1f,\"lat_p99_us\":%.1f,"
	       "\"lat_max_us\":%.1f}\n",
	       wake_names[w->sub], w->n, (double)w->sub_csw / w->n,
	       (double)w->wait_csw / w->n, w->lat_us[w->n / 2],
	       w->lat_us[w->n * 99 / 100], w->lat_us[w->n - 1]);
	io_uring_queue_exit(&w->ring);
	for (i = 0; i < w->n; i++) {
		close(w->rfd[i]);
		close(w->wfd[i]);
	}
	close(w->pipefd[0]);
	close(w->pipefd[1]);
	return 0;
}

int tcp_raw_wake(int argc, char **argv)
{
	static const struct option lo[] = {
		{"submitter", required_argument, NULL, 'S'},
		{"iters", required_argument, NULL, 'n'},
		{NULL, 0, NULL, 0},
	};
	struct wake w = {.sub = SUB_SLEEP, .n = 400};
	int ch, rc;

	optind = 2;
	while ((ch = getopt_long(argc, argv, "n:", lo, NULL)) != -1) {
		switch (ch) {
		case 'S':
			if (!strcmp(optarg, "sleep"))
				w.sub = SUB_SLEEP;
			else if (!strcmp(optarg, "spin"))
				w.sub = SUB_SPIN;
			else if (!strcmp(optarg, "self"))
				w.sub = SUB_SELF;
			else
				goto bad;
			break;
		case 'n':
			w.n = (unsigned int)strtoul(optarg, NULL, 0);
			if (w.n < 1 || w.n > 4000)
				goto bad;
			break;
		default:
			goto bad;
		}
	}
	w.rfd = calloc(w.n, sizeof(*w.rfd));
	w.wfd = calloc(w.n, sizeof(*w.wfd));
	w.rbuf = calloc(w.n, sizeof(*w.rbuf));
	w.lat_us = calloc(w.n, sizeof(*w.lat_us));
	if (!w.rfd || !w.wfd || !w.rbuf || !w.lat_us)
		return 1;
	rc = wake_run(&w);
	free(w.rfd);
	free(w.wfd);
	free(w.rbuf);
	free(w.lat_us);
	return rc;
bad:
	fprintf(stderr, "usage: tcp_raw wake [--submitter sleep|spin|self] "
			"[-n 1..4000]\n");
	return 1;
}
