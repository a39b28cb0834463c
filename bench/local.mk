# bench/local.mk: micro-benchmarks, not built by default.
# `make bench-crc` builds bench/bench_crc and runs it.
EXTRA_PROGRAMS += bench/bench_crc
bench_bench_crc_SOURCES = bench/bench_crc.c
bench_bench_crc_LDADD = libiwarp-core.la
CLEANFILES += bench/bench_crc$(EXEEXT)

.PHONY: bench-crc
bench-crc: bench/bench_crc$(EXEEXT)
	./bench/bench_crc$(EXEEXT)
