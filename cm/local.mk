# cm/local.mk: the connection manager (librdmacm-shaped API, MPA
# Request/Reply exchange over TCP, RFC 5044 §7.1 + RFC 6581).
libiwarp_core_la_SOURCES += \
	cm/cm_int.h \
	cm/cm_qp.h \
	cm/cm_mpa.c cm/cm_mpa.h \
	cm/cm_mpa_term.c cm/cm_mpa_term.h \
	cm/cm_event.c \
	cm/cm_ctx.c \
	cm/cm_id.c \
	cm/cm_conn.c \
	cm/cm_disc.c

if HAVE_CHECK
check_PROGRAMS += tests/cm_mpa_test tests/cm_test
TESTS += tests/cm_mpa_test tests/cm_test
tests_cm_mpa_test_SOURCES = tests/cm_mpa_test.c
tests_cm_mpa_test_CFLAGS = $(IWTEST_COMPILE_FLAGS)
tests_cm_mpa_test_LDADD = $(IWTEST_LINK)
tests_cm_test_SOURCES = tests/cm_test.c
tests_cm_test_CFLAGS = $(IWTEST_COMPILE_FLAGS)
tests_cm_test_LDADD = $(IWTEST_LINK) $(LIBURING_LIBS) $(PTHREAD_LIBS)
# Blocking waits and signals (EINTR as rdma-core's read(2)).
check_PROGRAMS += tests/cm_intr_test
TESTS += tests/cm_intr_test
tests_cm_intr_test_SOURCES = tests/cm_intr_test.c
tests_cm_intr_test_CFLAGS = $(IWTEST_COMPILE_FLAGS)
tests_cm_intr_test_LDADD = $(IWTEST_LINK) $(PTHREAD_LIBS)
endif

# Object lifetimes under races and floods (destroy orders, pending cap).
if HAVE_CHECK
check_PROGRAMS += tests/cm_lifetime_test
TESTS += tests/cm_lifetime_test
tests_cm_lifetime_test_SOURCES = tests/cm_lifetime_test.c
tests_cm_lifetime_test_CFLAGS = $(IWTEST_COMPILE_FLAGS)
tests_cm_lifetime_test_LDADD = $(IWTEST_LINK) $(LIBURING_LIBS) $(PTHREAD_LIBS)
endif

# When DISCONNECTED is raised (cm_disc.c): after the completions before it.
if HAVE_CHECK
check_PROGRAMS += tests/cm_disc_test
TESTS += tests/cm_disc_test
tests_cm_disc_test_SOURCES = tests/cm_disc_test.c
tests_cm_disc_test_CFLAGS = $(IWTEST_COMPILE_FLAGS)
tests_cm_disc_test_LDADD = $(IWTEST_LINK) $(LIBURING_LIBS) $(PTHREAD_LIBS)
endif

# iwarp_cm_migrate_id: events moving between channels.
if HAVE_CHECK
check_PROGRAMS += tests/cm_migrate_test
TESTS += tests/cm_migrate_test
tests_cm_migrate_test_SOURCES = tests/cm_migrate_test.c
tests_cm_migrate_test_CFLAGS = $(IWTEST_COMPILE_FLAGS)
tests_cm_migrate_test_LDADD = $(IWTEST_LINK) $(LIBURING_LIBS) $(PTHREAD_LIBS)
endif
