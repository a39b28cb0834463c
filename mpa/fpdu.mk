# mpa/fpdu.mk: FPDU framing (RFC 5044 §4-6): marker arithmetic, transmit
# framing, receive deframer.
libiwarp_core_la_SOURCES += \
	mpa/mpa_marker.c mpa/mpa_marker.h \
	mpa/mpa_tx.c mpa/mpa_tx.h \
	mpa/mpa_rx.c mpa/mpa_rx.h

if HAVE_CHECK
check_PROGRAMS += tests/mpa_marker_test tests/mpa_tx_test tests/mpa_rx_test
TESTS += tests/mpa_marker_test tests/mpa_tx_test tests/mpa_rx_test
tests_mpa_marker_test_SOURCES = tests/mpa_marker_test.c
tests_mpa_marker_test_CFLAGS = $(IWTEST_COMPILE_FLAGS)
tests_mpa_marker_test_LDADD = $(IWTEST_LINK)
tests_mpa_tx_test_SOURCES = tests/mpa_tx_test.c
tests_mpa_tx_test_CFLAGS = $(IWTEST_COMPILE_FLAGS)
tests_mpa_tx_test_LDADD = $(IWTEST_LINK)
tests_mpa_rx_test_SOURCES = tests/mpa_rx_test.c
tests_mpa_rx_test_CFLAGS = $(IWTEST_COMPILE_FLAGS)
tests_mpa_rx_test_LDADD = $(IWTEST_LINK)
endif
