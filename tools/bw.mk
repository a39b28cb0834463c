# tools/bw.mk: iwarp_bw, perftest-compatible BW/latency tests (public API only).
bin_PROGRAMS += tools/iwarp_bw
tools_iwarp_bw_SOURCES = tools/bw/bw.h tools/bw/main.c tools/bw/comm.c \
	tools/bw/data.c tools/bw/run.c tools/bw/idle.c tools/bw/idle.h tools/bw/report.c tools/bw/stats.c tools/bw/ext.c \
	tools/common/stop.c tools/common/stop.h tools/common/tls.c tools/common/tls.h
tools_iwarp_bw_LDADD = libiwarp.la $(PTHREAD_LIBS) -lm
dist_man_MANS += man/iwarp_bw.1
TESTS += tests/bw_loopback.sh
dist_check_SCRIPTS += tests/bw_loopback.sh

# Unit test of the BW loops' idle policy (pure: no I/O).
if HAVE_CHECK
check_PROGRAMS += tests/bw_idle_test
TESTS += tests/bw_idle_test
tests_bw_idle_test_SOURCES = tools/bw/bw_idle_test.c tools/bw/idle.c \
	tools/bw/idle.h
tests_bw_idle_test_CFLAGS = $(IWTEST_COMPILE_FLAGS)
tests_bw_idle_test_LDADD = $(IWTEST_LINK)
endif
