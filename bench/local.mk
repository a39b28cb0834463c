# bench/local.mk: micro-benchmarks, not built by default.
# `make bench-crc` builds bench/bench_crc and runs it.
EXTRA_PROGRAMS += bench/bench_crc
bench_bench_crc_SOURCES = bench/bench_crc.c
bench_bench_crc_LDADD = libiwarp-core.la
CLEANFILES += bench/bench_crc$(EXEEXT)

.PHONY: bench-crc
bench-crc: bench/bench_crc$(EXEEXT)
	./bench/bench_crc$(EXEEXT)

# `make bench` builds bench/tcp_raw (raw TCP over io_uring baseline) and
# tools/iwarp_bw, then runs bench/bench.sh: iwarp_bw against raw TCP on
# loopback with the same congestion control (see bench/README.md).
EXTRA_PROGRAMS += bench/tcp_raw
bench_tcp_raw_SOURCES = bench/tcp_raw.c bench/tcp_raw_plain.c bench/tcp_raw.h \
	bench/tcp_raw_tls.c bench/tcp_raw_wake.c
bench_tcp_raw_CFLAGS = $(AM_CFLAGS) $(LIBURING_CFLAGS) $(OPENSSL_CFLAGS) $(PTHREAD_CFLAGS)
bench_tcp_raw_LDADD = $(LIBURING_LIBS) $(OPENSSL_LIBS) $(PTHREAD_LIBS)
CLEANFILES += bench/tcp_raw$(EXEEXT)
EXTRA_DIST += bench/README.md
dist_noinst_SCRIPTS += bench/bench.sh

.PHONY: bench
bench: bench/tcp_raw$(EXEEXT) tools/iwarp_bw$(EXEEXT)
	top_builddir=$(top_builddir) $(SHELL) $(srcdir)/bench/bench.sh

# `make bench-net` (root): iwarp_bw 64 KiB Write against raw TCP between
# two network namespaces under link conditions (bench/net_bench.sh).
dist_noinst_SCRIPTS += bench/net_bench.sh
.PHONY: bench-net
bench-net: bench/tcp_raw$(EXEEXT) tools/iwarp_bw$(EXEEXT)
	top_srcdir=$(top_srcdir) top_builddir=$(top_builddir) bash $(srcdir)/bench/net_bench.sh
