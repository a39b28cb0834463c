# tests/local.mk: shared test helpers. Each module registers its own suite
# in its local.mk (check_PROGRAMS += tests/<module>_test; TESTS += ...).
if HAVE_CHECK
check_LTLIBRARIES = tests/libtestutil.la
tests_libtestutil_la_SOURCES = tests/testutil.c tests/testutil.h \
	tests/cm_testutil.c tests/cm_testutil.h
tests_libtestutil_la_CFLAGS = $(IWTEST_COMPILE_FLAGS)
endif
EXTRA_DIST += tests/data tests/testlib.sh

# The Wireshark round trip: a capture built by our encoders, decoded by tshark.
if HAVE_CHECK
check_PROGRAMS += tests/synth_capture
endif
tests_synth_capture_SOURCES = tests/synth_capture.c tests/pcap_writer.c tests/pcap_writer.h
tests_synth_capture_LDADD = libiwarp-core.la
TESTS += tests/tshark_roundtrip.sh
dist_check_SCRIPTS += tests/tshark_roundtrip.sh

# Every public function has its man page, and every page renders cleanly.
TESTS += tests/man_coverage.sh
dist_check_SCRIPTS += tests/man_coverage.sh

# The client/server example in iwarp.7 compiles and runs.
TESTS += tests/man_example.sh
dist_check_SCRIPTS += tests/man_example.sh

# The library's threads block asynchronous signals (util/thread.h).
if HAVE_CHECK
check_PROGRAMS += tests/io_signals_test
TESTS += tests/io_signals_test
tests_io_signals_test_SOURCES = tests/io_signals_test.c
tests_io_signals_test_CFLAGS = $(IWTEST_COMPILE_FLAGS)
tests_io_signals_test_LDADD = $(IWTEST_LINK) $(LIBURING_LIBS) $(PTHREAD_LIBS)
endif

# iwarp_ping and iwarp_bw stop on SIGINT/SIGTERM in every state.
TESTS += tests/tool_signals.sh
dist_check_SCRIPTS += tests/tool_signals.sh
