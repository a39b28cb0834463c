# tools/bw.mk: iwarp_bw, perftest-compatible BW/latency tests (public API only).
bin_PROGRAMS += tools/iwarp_bw
tools_iwarp_bw_SOURCES = tools/bw/bw.h tools/bw/main.c tools/bw/comm.c \
	tools/bw/data.c tools/bw/run.c tools/bw/report.c tools/bw/stats.c tools/bw/ext.c \
	tools/common/stop.c tools/common/stop.h tools/common/tls.c tools/common/tls.h
tools_iwarp_bw_LDADD = libiwarp.la $(PTHREAD_LIBS) -lm
dist_man_MANS += man/iwarp_bw.1
TESTS += tests/bw_loopback.sh
dist_check_SCRIPTS += tests/bw_loopback.sh
