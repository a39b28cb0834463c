# io/local.mk: the progress engine (io_uring), endpoints, listeners and
# connects, and the test doubles behind the transport seam. Only io/
# includes liburing.
AM_CPPFLAGS += $(LIBURING_CFLAGS) $(OPENSSL_CFLAGS)
libiwarp_core_la_SOURCES += \
	io/engine.c io/engine.h io/engine_duty.h io/engine_int.h \
	io/timer.c \
	io/ep.c io/ep.h io/backend.h \
	io/sock.c io/sock_direct.c io/sock_int.h \
	io/net.c io/net.h \
	io/pipe.c io/fault.c io/testio.h \
	io/tls.c io/tls_ctx.c io/tls.h io/tls_int.h

if HAVE_CHECK
check_PROGRAMS += tests/io_engine_test tests/io_transport_test
TESTS += tests/io_engine_test tests/io_transport_test
tests_io_engine_test_SOURCES = tests/io_engine_test.c
tests_io_engine_test_CFLAGS = $(IWTEST_COMPILE_FLAGS)
tests_io_engine_test_LDADD = $(IWTEST_LINK) $(LIBURING_LIBS) $(PTHREAD_LIBS)
tests_io_transport_test_SOURCES = tests/io_transport_test.c
tests_io_transport_test_CFLAGS = $(IWTEST_COMPILE_FLAGS)
tests_io_transport_test_LDADD = $(IWTEST_LINK) $(LIBURING_LIBS) $(PTHREAD_LIBS)
endif

# The progress thread alone owns the ring: no EINTR left in the caller.
if HAVE_CHECK
check_PROGRAMS += tests/io_ring_owner_test
TESTS += tests/io_ring_owner_test
tests_io_ring_owner_test_SOURCES = tests/io_ring_owner_test.c
tests_io_ring_owner_test_CFLAGS = $(IWTEST_COMPILE_FLAGS)
tests_io_ring_owner_test_LDADD = $(IWTEST_LINK) $(LIBURING_LIBS) $(PTHREAD_LIBS)
endif
