# tests/compat.mk: unmodified RDMA programs over the compat libraries
# (shared by compat/verbs and compat/rdmacm; append only).

# librdmacm: one test per row of tests/compat_programs.sh (each skips with
# 77 when its Debian package is missing).
COMPAT_RDMACM_ROWS = tests/compat/rping_self.sh tests/compat/rping_iwarp_ping.sh \
	tests/compat/ib_send_bw.sh tests/compat/ib_write_bw.sh tests/compat/ib_read_bw.sh \
	tests/compat/ib_send_lat.sh tests/compat/ib_write_lat.sh tests/compat/ib_read_lat.sh \
	tests/compat/qperf_rc_bw.sh tests/compat/qperf_rc_lat.sh \
	tests/compat/fi_pingpong_msg.sh tests/compat/fi_pingpong_rdm.sh \
	tests/compat/mpi_pingpong.sh
TESTS += $(COMPAT_RDMACM_ROWS)
dist_check_SCRIPTS += tests/compat_programs.sh $(COMPAT_RDMACM_ROWS)

# libibverbs: the ABI Debian's RDMA programs import, and the library seen
# through <infiniband/verbs.h> (linked to the shared libraries, as
# applications are).
dist_check_SCRIPTS += tests/compat_symbols.sh
if BUILD_COMPAT
TESTS += tests/compat_symbols.sh
if HAVE_CHECK
check_PROGRAMS += tests/compat_verbs_test
TESTS += tests/compat_verbs_test
tests_compat_verbs_test_SOURCES = tests/compat_verbs_test.c
tests_compat_verbs_test_CFLAGS = $(IWTEST_COMPILE_FLAGS)
tests_compat_verbs_test_LDADD = compat/libibverbs.la libiwarp.la tests/libtestutil.la \
	$(CHECK_LIBS)
endif
endif

# The compat librdmacm's API as applications use it (Check suite).
if BUILD_COMPAT
if HAVE_CHECK
check_PROGRAMS += tests/compat_rdmacm_test
TESTS += tests/compat_rdmacm_test
tests_compat_rdmacm_test_SOURCES = tests/compat_rdmacm_test.c
tests_compat_rdmacm_test_CFLAGS = $(AM_CFLAGS) $(CHECK_CFLAGS) -fvisibility=default
tests_compat_rdmacm_test_LDADD = compat/librdmacm.la compat/libibverbs.la $(CHECK_LIBS)
endif
endif

# The MPI program of the mpi_pingpong row (built by the row with mpicc).
EXTRA_DIST += tests/compat/mpi_pingpong.c

# perftest's six -R programs against libiwarp's iwarp_bw, both roles (a row
# of tests/compat_programs.sh).
TESTS += tests/compat/perftest_iwarp_bw.sh
dist_check_SCRIPTS += tests/compat/perftest_iwarp_bw.sh
