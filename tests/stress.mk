# tests/stress.mk: the stress suite (tests/stress/). `make check` runs each
# scenario a few dozen times; `make stress` runs them IWARP_STRESS_ITERS
# times (default 1000) in whatever build it is invoked in;
# scripts/stress.sh does that in an ASan+UBSan and a TSan tree.
STRESS_COMMON = tests/stress/sx.c tests/stress/sx.h tests/stress/sx_mem.c
STRESS_LIBS = libiwarp-core.la $(LIBURING_LIBS) $(PTHREAD_LIBS)
STRESS_LINKFLAGS = $(AM_LDFLAGS) -export-dynamic
STRESS_PROGS = tests/stress/stress_teardown tests/stress/stress_handshake \
	tests/stress/stress_dereg tests/stress/stress_cq_overflow \
	tests/stress/stress_poll_mt tests/stress/stress_read_disc
check_PROGRAMS += $(STRESS_PROGS)
TESTS += $(STRESS_PROGS)
tests_stress_stress_teardown_SOURCES = tests/stress/stress_teardown.c $(STRESS_COMMON)
tests_stress_stress_teardown_LDADD = $(STRESS_LIBS)
tests_stress_stress_teardown_LDFLAGS = $(STRESS_LINKFLAGS)
tests_stress_stress_handshake_SOURCES = tests/stress/stress_handshake.c $(STRESS_COMMON)
tests_stress_stress_handshake_LDADD = $(STRESS_LIBS)
tests_stress_stress_handshake_LDFLAGS = $(STRESS_LINKFLAGS)
tests_stress_stress_dereg_SOURCES = tests/stress/stress_dereg.c $(STRESS_COMMON)
tests_stress_stress_dereg_LDADD = $(STRESS_LIBS)
tests_stress_stress_dereg_LDFLAGS = $(STRESS_LINKFLAGS)
tests_stress_stress_cq_overflow_SOURCES = tests/stress/stress_cq_overflow.c $(STRESS_COMMON)
tests_stress_stress_cq_overflow_LDADD = $(STRESS_LIBS)
tests_stress_stress_cq_overflow_LDFLAGS = $(STRESS_LINKFLAGS)
tests_stress_stress_poll_mt_SOURCES = tests/stress/stress_poll_mt.c $(STRESS_COMMON)
tests_stress_stress_poll_mt_LDADD = $(STRESS_LIBS)
tests_stress_stress_poll_mt_LDFLAGS = $(STRESS_LINKFLAGS)
tests_stress_stress_read_disc_SOURCES = tests/stress/stress_read_disc.c $(STRESS_COMMON)
tests_stress_stress_read_disc_LDADD = $(STRESS_LIBS)
tests_stress_stress_read_disc_LDFLAGS = $(STRESS_LINKFLAGS)

STRESS_ITERS = 1000
stress: $(STRESS_PROGS)
	@fails=0; for t in $(STRESS_PROGS); do \
	  IWARP_STRESS_ITERS=$(STRESS_ITERS) ./$$t >$$t.stress.log 2>&1; rc=$$?; \
	  if test $$rc -eq 0; then tail -1 $$t.stress.log; \
	  elif test $$rc -eq 77; then echo "SKIP: $$t: $$(tail -1 $$t.stress.log)"; \
	  else echo "FAIL: $$t (exit $$rc); $$t.stress.log:"; \
	    grep -vE '^(  0x[0-9a-f]+:|=>0x|Shadow byte|  [A-Z][A-Za-z -]+: )' $$t.stress.log | head -100; \
	    fails=$$((fails+1)); fi; \
	done; \
	echo "stress: $$fails of $(words $(STRESS_PROGS)) scenarios failed ($(STRESS_ITERS) iterations each)"; \
	test $$fails -eq 0
.PHONY: stress
CLEANFILES += tests/stress/*.stress.log
