# fuzz/local.mk: libFuzzer targets (configure --enable-fuzzing, clang).
# `make fuzz-smoke` runs each target for $(FUZZ_SECONDS) seconds on its seed
# corpus (fuzz/corpus/<target>/) and fails on any crash.
FUZZ_SECONDS = 30
FUZZ_TARGETS =
if ENABLE_FUZZING
FUZZ_TARGETS += fuzz/fuzz_mpa_rr fuzz/fuzz_mpa_rx fuzz/fuzz_ddp_rdmap fuzz/fuzz_term fuzz/fuzz_decode fuzz/fuzz_conn
noinst_PROGRAMS += fuzz/fuzz_mpa_rr fuzz/fuzz_mpa_rx fuzz/fuzz_ddp_rdmap fuzz/fuzz_term fuzz/fuzz_decode fuzz/fuzz_conn
fuzz_fuzz_decode_SOURCES = fuzz/fuzz_decode.c $(IWARP_DECODE_ENGINE)
fuzz_fuzz_decode_CFLAGS = $(AM_CFLAGS) $(PCAP_CFLAGS) -I$(top_srcdir)/tools/decode
fuzz_fuzz_decode_LDADD = $(FUZZ_LINKWITH)
fuzz_fuzz_decode_LDFLAGS = $(FUZZ_LINKFLAGS)
fuzz_fuzz_mpa_rx_SOURCES = fuzz/fuzz_mpa_rx.c
fuzz_fuzz_mpa_rx_LDADD = $(FUZZ_LINKWITH)
fuzz_fuzz_mpa_rx_LDFLAGS = $(FUZZ_LINKFLAGS)
fuzz_fuzz_mpa_rr_SOURCES = fuzz/fuzz_mpa_rr.c
fuzz_fuzz_mpa_rr_LDADD = $(FUZZ_LINKWITH)
fuzz_fuzz_mpa_rr_LDFLAGS = $(FUZZ_LINKFLAGS)
fuzz_fuzz_ddp_rdmap_SOURCES = fuzz/fuzz_ddp_rdmap.c
fuzz_fuzz_ddp_rdmap_LDADD = $(FUZZ_LINKWITH)
fuzz_fuzz_ddp_rdmap_LDFLAGS = $(FUZZ_LINKFLAGS)
fuzz_fuzz_term_SOURCES = fuzz/fuzz_term.c
fuzz_fuzz_term_LDADD = $(FUZZ_LINKWITH)
fuzz_fuzz_term_LDFLAGS = $(FUZZ_LINKFLAGS)
# the RDMAP engine behind the tests' fake owner
fuzz_fuzz_conn_SOURCES = fuzz/fuzz_conn.c tests/rdmap_fake.c tests/rdmap_fake.h
fuzz_fuzz_conn_CFLAGS = $(AM_CFLAGS) -I$(top_srcdir)/tests
fuzz_fuzz_conn_LDADD = $(FUZZ_LINKWITH)
fuzz_fuzz_conn_LDFLAGS = $(FUZZ_LINKFLAGS)
endif
EXTRA_DIST += fuzz/fuzz_decode.c fuzz/fuzz_mpa_rx.c fuzz/fuzz_mpa_rr.c fuzz/fuzz_ddp_rdmap.c fuzz/fuzz_term.c fuzz/fuzz_conn.c fuzz/gen_conn_seeds.py
FUZZ_LINKWITH = libiwarp-core.la
FUZZ_LINKFLAGS = $(AM_LDFLAGS) -fsanitize=fuzzer

fuzz-smoke: $(FUZZ_TARGETS)
	@set -e; fails=0; \
	if test -z "$(FUZZ_TARGETS)"; then echo "fuzz-smoke: no targets (configure --enable-fuzzing)"; exit 1; fi; \
	for t in $(FUZZ_TARGETS); do \
	  name=$$(basename $$t); corpus=$(srcdir)/fuzz/corpus/$$name; \
	  work=fuzz-work/$$name; rm -rf $$work; mkdir -p $$work; \
	  test -d $$corpus && cp -r $$corpus/. $$work/ || true; \
	  echo "== $$name: $(FUZZ_SECONDS) s"; \
	  if ./$$t -max_total_time=$(FUZZ_SECONDS) -print_final_stats=1 -rss_limit_mb=2048 \
	        -max_len=70000 -timeout=10 $$work >fuzz-work/$$name.log 2>&1; then \
	    grep -E 'stat::number_of_executed_units|stat::new_units_added' fuzz-work/$$name.log | tr '\n' ' '; echo; \
	  else \
	    echo "FAIL: $$name"; tail -40 fuzz-work/$$name.log; fails=$$((fails+1)); \
	  fi; \
	done; \
	test $$fails -eq 0
.PHONY: fuzz-smoke
CLEANFILES += -r fuzz-work
EXTRA_DIST += fuzz/corpus

# `make fuzz-long`: every target for $(FUZZ_MINUTES) minutes (fuzz/long.sh),
# one summary line per target with its executions and crashes.
FUZZ_MINUTES = 10
fuzz-long: $(FUZZ_TARGETS)
	@$(SHELL) $(srcdir)/fuzz/long.sh $(FUZZ_MINUTES) $(srcdir) $(FUZZ_TARGETS)
.PHONY: fuzz-long
CLEANFILES += -r fuzz-long
EXTRA_DIST += fuzz/long.sh
