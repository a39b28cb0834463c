# rdmap/local.mk: RDMAP opcode table, Read Request and Terminate codecs,
# and the per-connection RDMAP engine (sans-I/O, behind struct rdmap_ops).
libiwarp_core_la_SOURCES += \
	rdmap/rdmap_opcode.c rdmap/rdmap_opcode.h \
	rdmap/rdmap_rreq.c rdmap/rdmap_rreq.h \
	rdmap/rdmap_ext.c rdmap/rdmap_ext.h \
	rdmap/rdmap_term.c rdmap/rdmap_term.h \
	rdmap/rdmap_wr.h \
	rdmap/rdmap_conn.h rdmap/rdmap_conn_int.h \
	rdmap/rdmap_conn.c \
	rdmap/rdmap_conn_rx.c \
	rdmap/rdmap_conn_tx.c \
	rdmap/rdmap_conn_term.c

if HAVE_CHECK
check_PROGRAMS += tests/rdmap_test tests/rdmap_term_test tests/errors_test
TESTS += tests/rdmap_test tests/rdmap_term_test tests/errors_test
tests_rdmap_test_SOURCES = tests/rdmap_test.c
tests_rdmap_test_CFLAGS = $(IWTEST_COMPILE_FLAGS)
tests_rdmap_test_LDADD = $(IWTEST_LINK)
tests_rdmap_term_test_SOURCES = tests/rdmap_term_test.c
tests_rdmap_term_test_CFLAGS = $(IWTEST_COMPILE_FLAGS)
tests_rdmap_term_test_LDADD = $(IWTEST_LINK)
tests_errors_test_SOURCES = tests/errors_test.c
tests_errors_test_CFLAGS = $(IWTEST_COMPILE_FLAGS)
tests_errors_test_LDADD = $(IWTEST_LINK)
endif

# The engine alone behind a fake ops table (tests/rdmap_fake.c).
if HAVE_CHECK
check_PROGRAMS += tests/rdmap_conn_test
TESTS += tests/rdmap_conn_test
tests_rdmap_conn_test_SOURCES = tests/rdmap_conn_test.c tests/rdmap_fake.c tests/rdmap_fake.h
tests_rdmap_conn_test_CFLAGS = $(IWTEST_COMPILE_FLAGS)
tests_rdmap_conn_test_LDADD = $(IWTEST_LINK)
endif
