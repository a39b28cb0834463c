# tests/interop.mk: the siw interop matrix (tests/interop/README.md).
# Not part of "make check": it boots a QEMU guest with the kernel's siw and
# needs root (apt-get, dumpcap). "make check-interop" runs it; it exits 77
# (skip) without root.

# oob_write: provokes siw's TERMINATE with an out-of-bounds RDMA Write
# (public API only); built on demand by check-interop.
EXTRA_PROGRAMS += tests/interop/oob_write
tests_interop_oob_write_SOURCES = tests/interop/oob_write.c
tests_interop_oob_write_LDADD = libiwarp.la
CLEANFILES += tests/interop/oob_write

interop_files = \
	tests/interop/run-matrix.sh \
	tests/interop/build-guest.sh \
	tests/interop/run-guest.sh \
	tests/interop/guest-init.sh \
	tests/interop/guest-agent.sh \
	tests/interop/tap-hosts.sh \
	tests/interop/verify-capture.sh \
	tests/interop/split-pcap.py \
	tests/interop/realign-pcap.py \
	tests/interop/siw-trailer-check.py
dist_noinst_SCRIPTS += $(interop_files)

# The matrix re-runs a siw CRC error only when siw-trailer-check.py proves
# it is siw misreading a split trailer; that proof is tested in make check.
TESTS += tests/siw_trailer_check.sh
dist_check_SCRIPTS += tests/siw_trailer_check.sh
EXTRA_DIST += tests/interop/README.md tests/interop/pcapio.py

# INTEROP_CASES: optional case globs, e.g. make check-interop INTEROP_CASES='ping-hc-*'
INTEROP_CASES =
# The compat group runs Debian's programs under iwarp_run on the host; it
# is skipped (with the reason) when the compat libraries are not built.
INTEROP_COMPAT_DEPS =
if BUILD_COMPAT
INTEROP_COMPAT_DEPS += compat/libibverbs.la compat/librdmacm.la tools/iwarp_run
endif
check-interop: tools/iwarp_ping tools/iwarp_bw tools/iwarp_decode \
		tests/interop/oob_write $(INTEROP_COMPAT_DEPS)
	@rc=0; top_builddir=$(abs_top_builddir) TSHARK=$(TSHARK) \
	  bash $(top_srcdir)/tests/interop/run-matrix.sh $(INTEROP_CASES) || rc=$$?; \
	if [ $$rc = 77 ]; then echo "check-interop: SKIPPED (see above)"; rc=0; fi; \
	exit $$rc

.PHONY: check-interop
