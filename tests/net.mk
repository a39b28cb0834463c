# tests/net.mk: tests over real links between network namespaces
# (tests/net/netns.sh). Not part of "make check": they need root, change
# network namespaces and take a few minutes. "make check-net" runs them; they
# exit 77 (skip) without root or "ip netns".
EXTRA_PROGRAMS += tests/net/relay
tests_net_relay_SOURCES = tests/net/relay.c
CLEANFILES += tests/net/relay$(EXEEXT)
net_files = tests/net_matrix.sh tests/net/netns.sh tests/net/fpdu_fit.py
dist_noinst_SCRIPTS += $(net_files)

check-net: tools/iwarp_bw$(EXEEXT) tools/iwarp_ping$(EXEEXT) \
		tools/iwarp_decode$(EXEEXT) tests/net/relay$(EXEEXT)
	@rc=0; top_srcdir=$(top_srcdir) top_builddir=$(top_builddir) \
	  timeout 900 bash $(top_srcdir)/tests/net_matrix.sh || rc=$$?; \
	if [ $$rc = 77 ]; then echo "check-net: SKIPPED (see above)"; rc=0; fi; \
	exit $$rc

.PHONY: check-net
