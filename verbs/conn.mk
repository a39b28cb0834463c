# verbs/conn.mk: the QP datapath (qp_conn): WQEs to FPDUs, received FPDUs to
# placement and completions, RDMA Read ORQ/IRQ, TERMINATE.
libiwarp_core_la_SOURCES += \
	verbs/conn.h \
	verbs/conn.c \
	verbs/conn_tx.c \
	verbs/conn_rx.c \
	verbs/conn_term.c \
	verbs/conn_engine.c

if HAVE_CHECK
check_PROGRAMS += tests/conn_test
TESTS += tests/conn_test
tests_conn_test_SOURCES = tests/conn_test.c
tests_conn_test_CFLAGS = $(IWTEST_COMPILE_FLAGS)
tests_conn_test_LDADD = $(IWTEST_LINK)
endif
