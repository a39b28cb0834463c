/*
 * tests/net/trelay.c: the in-process relay thread (trelay.h).
 */
#include "config.h"

#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "../stress/sx.h"
#include "io/sock_int.h"
#include "trelay.h"

void trelay_init(struct trelay *r)
{
	memset(r, 0, sizeof(*r));
	r->cut_dir = -1;
	r->stall_dir = -1;
	r->lfd = -1;
}

static uint64_t tr_now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000u + (uint64_t)ts.tv_nsec / 1000000u;
}

static void tr_close(int fd, int rst)
{
	struct linger l = {1, 0};

	if (fd < 0)
		return;
	if (rst)
		(void)setsockopt(fd, SOL_SOCKET, SO_LINGER, &l, sizeof(l));
	close(fd);
}

static void tr_record(struct trelay *r, int d, const uint8_t *p, size_t n)
{
	if (!r->record)
		return;
	if (r->rec_len[d] + n > r->rec_cap[d]) {
		size_t cap = (r->rec_len[d] + n) * 2;
		uint8_t *q = realloc(r->rec[d], cap);

		if (!q)
			abort();
		r->rec[d] = q;
		r->rec_cap[d] = cap;
	}
	memcpy(r->rec[d] + r->rec_len[d], p, n);
	r->rec_len[d] += n;
}

static int tr_write_all(int fd, const uint8_t *p, size_t n)
{
	while (n) {
		ssize_t w = write(fd, p, n);

		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			return -1;
		p += w;
		n -= (size_t)w;
	}
	return 0;
}

static void *tr_main(void *arg)
{
	struct trelay *r = arg;
	struct sockaddr_in sin;
	struct pollfd p[2];
	uint8_t buf[65536];
	int s[2] = {-1, -1}, eof[2] = {0, 0}, d, err = 0, stalled_once = 0;
#if IW_TSAN
	char *wire[2] = {NULL, NULL};
#endif
	int one = 1;
	uint64_t until = 0;

	p[0].fd = r->lfd;
	p[0].events = POLLIN;
	while (!r->stop) {
		if (poll(p, 1, 50) == 1)
			break;
	}
	if (r->stop)
		goto out;
	s[0] = accept(r->lfd, NULL, NULL);
	if (s[0] < 0)
		goto out;
	s[1] = socket(AF_INET, SOCK_STREAM, 0);
	memset(&sin, 0, sizeof(sin));
	sin.sin_family = AF_INET;
	sin.sin_port = htons(r->target);
	sin.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if (s[1] < 0 || connect(s[1], (struct sockaddr *)&sin, sizeof(sin))) {
		err = 1;
		goto out;
	}
	/* no Nagle: the relay must not add delay to small FPDUs */
	(void)setsockopt(s[0], IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	(void)setsockopt(s[1], IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	while (!r->stop && !(eof[0] && eof[1])) {
		if (r->cut_dir >= 0 && r->fwd[r->cut_dir] >= r->cut_n) {
			r->cut = 1;
			break;
		}
		if (r->stall_dir >= 0 && !stalled_once &&
		    r->fwd[r->stall_dir] >= r->stall_n) {
			stalled_once = 1;
			r->stalled = 1;
			until = tr_now_ms() + r->stall_ms;
		}
		if (r->stalled && (r->resume || tr_now_ms() >= until))
			r->stalled = 0;
		for (d = 0; d < 2; d++) {
			p[d].fd = eof[d] || (r->stalled && d == r->stall_dir)
					  ? -1
					  : s[d];
			p[d].events = POLLIN;
			p[d].revents = 0;
		}
		if (poll(p, 2, 50) <= 0)
			continue;
		for (d = 0; d < 2; d++) {
			size_t room = sizeof(buf);
			ssize_t n;

			if (!p[d].revents)
				continue;
			if (r->cut_dir == d && room > r->cut_n - r->fwd[d])
				room = (size_t)(r->cut_n - r->fwd[d]);
			if (r->stall_dir == d && !stalled_once &&
			    room > r->stall_n - r->fwd[d])
				room = (size_t)(r->stall_n - r->fwd[d]);
			if (!room)
				continue;
			n = read(s[d], buf, room);
			if (n < 0 && errno == EINTR)
				continue;
			if (n < 0) {
				err = 1;
				goto out;
			}
			if (n == 0) {
				eof[d] = 1;
				(void)shutdown(s[1 - d], SHUT_WR);
				continue;
			}
#if IW_TSAN
			/* what came in on one connection goes out on the other:
			 * the library's sockets order their ends by the wire
			 * (util/tsan.h), so carry that order across */
			iw_tsan_acquire(sock_tsan_wire(s[d], &wire[d]));
			iw_tsan_release(sock_tsan_wire(s[1 - d], &wire[1 - d]));
#endif
			if (tr_write_all(s[1 - d], buf, (size_t)n)) {
				err = 1;
				goto out;
			}
			tr_record(r, d, buf, (size_t)n);
			r->fwd[d] += (uint64_t)n;
			if (r->cut_dir == d && r->fwd[d] >= r->cut_n)
				break;
		}
	}
	if (r->cut_dir >= 0 && r->fwd[r->cut_dir] >= r->cut_n)
		r->cut = 1;
out:
	tr_close(s[0], err || (r->cut && r->rst));
	tr_close(s[1], err || (r->cut && r->rst));
	r->done = 1;
	return NULL;
}

void trelay_start(struct trelay *r, uint16_t target)
{
	struct sockaddr_in sin;
	socklen_t sl = sizeof(sin);

	r->target = target;
	r->done = r->cut = r->stalled = 0;
	r->lfd = socket(AF_INET, SOCK_STREAM, 0);
	SX_CHECK(r->lfd >= 0, "socket: %s", strerror(errno));
	memset(&sin, 0, sizeof(sin));
	sin.sin_family = AF_INET;
	sin.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	SX_CHECK(bind(r->lfd, (struct sockaddr *)&sin, sizeof(sin)) == 0 &&
			 listen(r->lfd, 4) == 0 &&
			 getsockname(r->lfd, (struct sockaddr *)&sin, &sl) == 0,
		 "relay listen: %s", strerror(errno));
	r->port = ntohs(sin.sin_port);
	SX_CHECK(pthread_create(&r->th, NULL, tr_main, r) == 0,
		 "pthread_create");
}

void trelay_stop(struct trelay *r)
{
	r->stop = 1;
	pthread_join(r->th, NULL);
	close(r->lfd);
}
