# tools/ping.mk: iwarp_ping, rping-compatible ping over the public API only.
bin_PROGRAMS += tools/iwarp_ping
tools_iwarp_ping_SOURCES = \
	tools/ping/ping.h \
	tools/ping/session.h \
	tools/ping/main.c \
	tools/ping/opts.c \
	tools/ping/payload.c \
	tools/ping/stats.c \
	tools/ping/sess.c \
	tools/ping/client.c \
	tools/ping/server.c \
	tools/ping/loop.c \
	tools/common/stop.c tools/common/stop.h \
	tools/common/tls.c tools/common/tls.h
tools_iwarp_ping_LDADD = libiwarp.la $(PTHREAD_LIBS)
dist_man_MANS += man/iwarp_ping.1

# Loopback run of server and client (skips with 77 without io_uring).
TESTS += tests/ping_loopback.sh
dist_check_SCRIPTS += tests/ping_loopback.sh

# Unit tests of the pure parts (payload, control message, stats, options).
if HAVE_CHECK
check_PROGRAMS += tests/ping_unit_test
TESTS += tests/ping_unit_test
tests_ping_unit_test_SOURCES = tools/ping/ping_unit_test.c \
	tools/ping/payload.c tools/ping/stats.c tools/ping/opts.c \
	tools/ping/ping.h tools/common/tls.c tools/common/tls.h
tests_ping_unit_test_CFLAGS = $(IWTEST_COMPILE_FLAGS)
tests_ping_unit_test_LDADD = $(IWTEST_LINK)
endif
