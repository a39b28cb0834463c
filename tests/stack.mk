# tests/stack.mk: integration suites over the whole stack (public verbs +
# CM + engines + loopback TCP / in-memory transport with fault injection).
if HAVE_CHECK
STACK_TEST_SRC = tests/stack_harness.c tests/stack_harness.h
check_PROGRAMS += tests/stack_test
TESTS += tests/stack_test
tests_stack_test_SOURCES = tests/stack_test.c $(STACK_TEST_SRC)
tests_stack_test_CFLAGS = $(IWTEST_COMPILE_FLAGS)
tests_stack_test_LDADD = $(IWTEST_LINK) $(LIBURING_LIBS) $(PTHREAD_LIBS)
endif

if HAVE_CHECK
STACK_PIPE_SRC = tests/stack_pipe.c tests/stack_pipe.h
check_PROGRAMS += tests/stack_access_test
TESTS += tests/stack_access_test
tests_stack_access_test_SOURCES = tests/stack_access_test.c \
	$(STACK_TEST_SRC) $(STACK_PIPE_SRC)
tests_stack_access_test_CFLAGS = $(IWTEST_COMPILE_FLAGS)
tests_stack_access_test_LDADD = $(IWTEST_LINK) $(LIBURING_LIBS) $(PTHREAD_LIBS)
endif

if HAVE_CHECK
check_PROGRAMS += tests/stack_scale_test
TESTS += tests/stack_scale_test
tests_stack_scale_test_SOURCES = tests/stack_scale_test.c $(STACK_TEST_SRC)
tests_stack_scale_test_CFLAGS = $(IWTEST_COMPILE_FLAGS)
tests_stack_scale_test_LDADD = $(IWTEST_LINK) $(LIBURING_LIBS) $(PTHREAD_LIBS)
endif

if HAVE_CHECK
check_PROGRAMS += tests/stack_fault_test
TESTS += tests/stack_fault_test
tests_stack_fault_test_SOURCES = tests/stack_fault_test.c \
	$(STACK_TEST_SRC) $(STACK_PIPE_SRC)
tests_stack_fault_test_CFLAGS = $(IWTEST_COMPILE_FLAGS)
tests_stack_fault_test_LDADD = $(IWTEST_LINK) $(LIBURING_LIBS) $(PTHREAD_LIBS)
endif

if HAVE_CHECK
check_PROGRAMS += tests/stack_teardown_test
TESTS += tests/stack_teardown_test
tests_stack_teardown_test_SOURCES = tests/stack_teardown_test.c \
	$(STACK_TEST_SRC)
tests_stack_teardown_test_CFLAGS = $(IWTEST_COMPILE_FLAGS)
tests_stack_teardown_test_LDADD = $(IWTEST_LINK) $(LIBURING_LIBS) $(PTHREAD_LIBS)
endif

if HAVE_CHECK
check_PROGRAMS += tests/stack_ord_test
TESTS += tests/stack_ord_test
tests_stack_ord_test_SOURCES = tests/stack_ord_test.c $(STACK_TEST_SRC)
tests_stack_ord_test_CFLAGS = $(IWTEST_COMPILE_FLAGS)
tests_stack_ord_test_LDADD = $(IWTEST_LINK) $(LIBURING_LIBS) $(PTHREAD_LIBS)
endif

if HAVE_CHECK
check_PROGRAMS += tests/stack_inline_test
TESTS += tests/stack_inline_test
tests_stack_inline_test_SOURCES = tests/stack_inline_test.c $(STACK_TEST_SRC)
tests_stack_inline_test_CFLAGS = $(IWTEST_COMPILE_FLAGS)
tests_stack_inline_test_LDADD = $(IWTEST_LINK) $(LIBURING_LIBS) $(PTHREAD_LIBS)
endif

# CQ overflow fails the QP end to end (the engine fails the connection when
# a completion push returns -ENOSPC).
if HAVE_CHECK
check_PROGRAMS += tests/stack_overflow_test
TESTS += tests/stack_overflow_test
tests_stack_overflow_test_SOURCES = tests/stack_overflow_test.c $(STACK_TEST_SRC)
tests_stack_overflow_test_CFLAGS = $(IWTEST_COMPILE_FLAGS)
tests_stack_overflow_test_LDADD = $(IWTEST_LINK) $(LIBURING_LIBS) $(PTHREAD_LIBS)
endif

# RFC 7306 RDMAP extensions end to end (Immediate Data, atomics).
if HAVE_CHECK
check_PROGRAMS += tests/stack_ext_test
TESTS += tests/stack_ext_test
tests_stack_ext_test_SOURCES = tests/stack_ext_test.c $(STACK_TEST_SRC)
tests_stack_ext_test_CFLAGS = $(IWTEST_COMPILE_FLAGS)
tests_stack_ext_test_LDADD = $(IWTEST_LINK) $(LIBURING_LIBS) $(PTHREAD_LIBS)
endif

# Memory windows and invalidation end to end.
if HAVE_CHECK
check_PROGRAMS += tests/stack_mw_test
TESTS += tests/stack_mw_test
tests_stack_mw_test_SOURCES = tests/stack_mw_test.c $(STACK_TEST_SRC)
tests_stack_mw_test_CFLAGS = $(IWTEST_COMPILE_FLAGS)
tests_stack_mw_test_LDADD = $(IWTEST_LINK) $(LIBURING_LIBS) $(PTHREAD_LIBS)
endif

if HAVE_CHECK
check_PROGRAMS += tests/stack_order_test
TESTS += tests/stack_order_test
tests_stack_order_test_SOURCES = tests/stack_order_test.c $(STACK_TEST_SRC)
tests_stack_order_test_CFLAGS = $(IWTEST_COMPILE_FLAGS)
tests_stack_order_test_LDADD = $(IWTEST_LINK) $(LIBURING_LIBS) $(PTHREAD_LIBS)
endif
