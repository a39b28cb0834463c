# tests/tls.mk: iWARP inside TLS 1.3 (io/tls.c, iwarp_cm_set_tls): the
# Check suite over loopback, and the tools test with a capture.
dist_check_SCRIPTS += tests/tls_certs.sh
if HAVE_CHECK
check_PROGRAMS += tests/tls_test
TESTS += tests/tls_test
tests_tls_test_SOURCES = tests/tls_test.c
tests_tls_test_CFLAGS = $(IWTEST_COMPILE_FLAGS)
tests_tls_test_LDADD = $(IWTEST_LINK) $(LIBURING_LIBS) $(OPENSSL_LIBS) $(PTHREAD_LIBS)
check_PROGRAMS += tests/tls_io_test
TESTS += tests/tls_io_test
tests_tls_io_test_SOURCES = tests/tls_io_test.c
tests_tls_io_test_CFLAGS = $(IWTEST_COMPILE_FLAGS)
tests_tls_io_test_LDADD = $(IWTEST_LINK) $(LIBURING_LIBS) $(OPENSSL_LIBS) $(PTHREAD_LIBS)
endif
TESTS += tests/tls_tools.sh
dist_check_SCRIPTS += tests/tls_tools.sh
EXTRA_DIST += docs/tls.md
