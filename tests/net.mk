# tests/net.mk: tests over real links between network namespaces
# (tests/net/netns.sh): net_matrix.sh (link conditions) and net_fault.sh
# (the data connection cut or stalled by tests/net/relay.c). Not part of
# "make check": they need root, create network namespaces and take about
# 20 minutes (net_long: the 30 s zero window and a mixed_cut sample, on
# loopback; soak: SOAK_CHECK_MINUTES of the soak). "make check-net" runs
# them; they exit 77 (skip) without root or "ip netns".
EXTRA_PROGRAMS += tests/net/relay
tests_net_relay_SOURCES = tests/net/relay.c
CLEANFILES += tests/net/relay$(EXEEXT)
net_files = tests/net_matrix.sh tests/net_fault.sh tests/net/netns.sh \
	tests/net/fpdu_fit.py tests/net_long.sh
dist_noinst_SCRIPTS += $(net_files)

# NET_TESTS: which scripts, e.g. make check-net NET_TESTS=net_fault
NET_TESTS = net_matrix net_fault net_long soak
SOAK_CHECK_MINUTES = 2
check-net: tools/iwarp_bw$(EXEEXT) tools/iwarp_ping$(EXEEXT) \
		tools/iwarp_decode$(EXEEXT) tests/net/relay$(EXEEXT) \
		tests/net/soak_peer$(EXEEXT) tests/net/mixed_cut$(EXEEXT) \
		tests/net/zero_window$(EXEEXT)
	@rc=0; for t in $(NET_TESTS); do \
	  r=0; top_srcdir=$(top_srcdir) top_builddir=$(top_builddir) \
	    SOAK_MINUTES=$(SOAK_CHECK_MINUTES) SOAK_INTERVAL=20 \
	    timeout 900 bash $(top_srcdir)/tests/$$t.sh || r=$$?; \
	  if [ $$r = 77 ]; then echo "check-net: $$t SKIPPED (see above)"; \
	  elif [ $$r != 0 ]; then echo "check-net: $$t FAILED ($$r)"; rc=1; \
	  else echo "check-net: $$t PASSED"; fi; \
	done; exit $$rc

.PHONY: check-net

# A connection cut at and around every MPA and FPDU boundary of 1,000 mixed
# operations (tests/net/mixed_cut.c, loopback, no root). make check runs a
# sample (MIXED_CUT_STRIDE unset); check-net runs every cut point.
check_PROGRAMS += tests/net/mixed_cut
TESTS += tests/net/mixed_cut
tests_net_mixed_cut_SOURCES = tests/net/mixed_cut.c tests/net/trelay.c \
	tests/net/trelay.h $(STRESS_COMMON)
tests_net_mixed_cut_LDADD = $(STRESS_LIBS)
tests_net_mixed_cut_LDFLAGS = $(STRESS_LINKFLAGS)

# The soak (tests/soak.sh, tests/net/soak_peer.c): 16 QPs churning under
# 1 % loss between two namespaces; RSS, fds, io_uring instances and threads
# of both processes sampled every minute and checked for growth. Root.
#   make soak                     30 minutes (SOAK_MINUTES=N to change)
# check-net runs it for SOAK_CHECK_MINUTES (2).
EXTRA_PROGRAMS += tests/net/soak_peer
tests_net_soak_peer_SOURCES = tests/net/soak_peer.c
tests_net_soak_peer_LDADD = libiwarp.la
CLEANFILES += tests/net/soak_peer$(EXEEXT)
dist_noinst_SCRIPTS += tests/soak.sh
SOAK_MINUTES = 30
soak: tests/net/soak_peer$(EXEEXT)
	top_srcdir=$(top_srcdir) top_builddir=$(top_builddir) \
	  SOAK_MINUTES=$(SOAK_MINUTES) bash $(top_srcdir)/tests/soak.sh
.PHONY: soak

# A zero window on one QP while others work (tests/net/zero_window.c,
# loopback, no root): a 5 s stall in make check, 30 s in check-net.
check_PROGRAMS += tests/net/zero_window
TESTS += tests/net/zero_window
tests_net_zero_window_SOURCES = tests/net/zero_window.c tests/net/trelay.c \
	tests/net/trelay.h $(STRESS_COMMON)
tests_net_zero_window_LDADD = $(STRESS_LIBS)
tests_net_zero_window_LDFLAGS = $(STRESS_LINKFLAGS)
EXTRA_DIST += docs/net-testing.md tests/net/README.md
