# mpa/rr.mk: MPA Request/Reply codec and connection negotiation
# (RFC 5044 §7.1, RFC 6581).
libiwarp_core_la_SOURCES += \
	mpa/mpa_rr.c mpa/mpa_rr.h \
	mpa/mpa_negotiate.c mpa/mpa_negotiate.h

if HAVE_CHECK
check_PROGRAMS += tests/mpa_rr_test tests/mpa_negotiate_test
TESTS += tests/mpa_rr_test tests/mpa_negotiate_test
tests_mpa_rr_test_SOURCES = tests/mpa_rr_test.c
tests_mpa_rr_test_CFLAGS = $(IWTEST_COMPILE_FLAGS)
tests_mpa_rr_test_LDADD = $(IWTEST_LINK)
tests_mpa_negotiate_test_SOURCES = tests/mpa_negotiate_test.c
tests_mpa_negotiate_test_CFLAGS = $(IWTEST_COMPILE_FLAGS)
tests_mpa_negotiate_test_LDADD = $(IWTEST_LINK)
endif
