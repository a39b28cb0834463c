# rdmap/local.mk: RDMAP opcode table, Read Request and Terminate codecs.
libiwarp_core_la_SOURCES += \
	rdmap/rdmap_opcode.c rdmap/rdmap_opcode.h \
	rdmap/rdmap_rreq.c rdmap/rdmap_rreq.h \
	rdmap/rdmap_term.c rdmap/rdmap_term.h

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
