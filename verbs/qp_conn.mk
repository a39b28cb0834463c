# verbs/qp_conn.mk: a connected QP: the QP bound to its RDMAP engine
# (rdmap/rdmap_conn*.c) through struct rdmap_ops, and the glue to the
# progress engine's endpoints.
libiwarp_core_la_SOURCES += \
	verbs/qp_conn.h \
	verbs/qp_conn.c \
	verbs/qp_engine.c

if HAVE_CHECK
check_PROGRAMS += tests/conn_test
TESTS += tests/conn_test
tests_conn_test_SOURCES = tests/conn_test.c
tests_conn_test_CFLAGS = $(IWTEST_COMPILE_FLAGS)
tests_conn_test_LDADD = $(IWTEST_LINK)
endif
