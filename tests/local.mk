# tests/local.mk: shared test helpers. Each module registers its own suite
# in its local.mk (check_PROGRAMS += tests/<module>_test; TESTS += ...).
if HAVE_CHECK
check_LTLIBRARIES = tests/libtestutil.la
tests_libtestutil_la_SOURCES = tests/testutil.c tests/testutil.h
tests_libtestutil_la_CFLAGS = $(IWTEST_COMPILE_FLAGS)
endif
EXTRA_DIST += tests/data
