/*
 * tests/io_ring_owner_test.c: creating and destroying an engine with a
 * progress thread leaves nothing behind in the calling thread. io_uring
 * notifies the task that created a ring when the ring is closed, from a
 * kernel worker after close() returned; if that task were the
 * application's thread, its next blocking epoll_wait() (libfabric's event
 * queues after fi_getinfo opened and closed a device) would fail with
 * EINTR. So only the progress thread may create and use the ring.
 */
#include "config.h"

#include <errno.h>
#include <netinet/in.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <unistd.h>

#include "io/engine.h"
#include "io/net.h"
#include "testutil.h"

/* How long the calling thread then blocks in epoll_wait. The notification
 * comes within microseconds of the close; a slower one only makes the
 * check weaker, never makes it fail. */
#define QUIET_MS 300

static void on_accept(void *arg, int fd, const struct sockaddr *peer,
		      socklen_t len)
{
	(void)arg, (void)peer, (void)len;
	if (fd >= 0)
		close(fd);
}

static const enum engine_mode modes[] = {
	ENGINE_MODE_ADAPTIVE,
	ENGINE_MODE_LATENCY,
	ENGINE_MODE_CPU,
};

/* Loop: the thread modes; with a listener left open (torn down by the
 * engine) or not. */
START_TEST(test_no_eintr_after_destroy)
{
	struct engine_attr a = {.mode = modes[_i % 3]};
	struct sockaddr_in sin;
	struct epoll_event ev;
	struct listener *l;
	struct engine *eng;
	int ep, r, i;

	for (i = 0; i < 3; i++) {
		eng = engine_create(&a);
		ck_assert_msg(eng != NULL, "engine_create: %s",
			      strerror(errno));
		if (_i >= 3) {
			memset(&sin, 0, sizeof(sin));
			sin.sin_family = AF_INET;
			sin.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
			ck_assert_int_eq(engine_listen(eng,
						       (struct sockaddr *)&sin,
						       sizeof(sin), 4,
						       on_accept, NULL, &l),
					 0);
		}
		engine_destroy(eng);
	}
	ep = epoll_create1(EPOLL_CLOEXEC);
	ck_assert_int_ge(ep, 0);
	r = epoll_wait(ep, &ev, 1, QUIET_MS);
	ck_assert_msg(r == 0, "epoll_wait: %d (%s)", r,
		      r < 0 ? strerror(errno) : "an event");
	close(ep);
}
END_TEST

static Suite *ring_owner_suite(void)
{
	Suite *s = suite_create("io_ring_owner");
	TCase *tc = tcase_create("threads");

	tcase_set_timeout(tc, 60);
	tcase_add_loop_test(tc, test_no_eintr_after_destroy, 0, 6);
	suite_add_tcase(s, tc);
	return s;
}

IW_TEST_MAIN(ring_owner_suite)
