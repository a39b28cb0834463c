# ddp/local.mk: DDP (RFC 5041): header codec, TX segmentation, RX checks.
libiwarp_core_la_SOURCES += \
	ddp/ddp_hdr.c ddp/ddp_hdr.h \
	ddp/ddp_segment.c ddp/ddp_segment.h \
	ddp/ddp_rx.c ddp/ddp_rx.h

if HAVE_CHECK
check_PROGRAMS += tests/ddp_hdr_test tests/ddp_segment_test tests/ddp_rx_test
TESTS += tests/ddp_hdr_test tests/ddp_segment_test tests/ddp_rx_test
tests_ddp_hdr_test_SOURCES = tests/ddp_hdr_test.c
tests_ddp_hdr_test_CFLAGS = $(IWTEST_COMPILE_FLAGS)
tests_ddp_hdr_test_LDADD = $(IWTEST_LINK)
tests_ddp_segment_test_SOURCES = tests/ddp_segment_test.c
tests_ddp_segment_test_CFLAGS = $(IWTEST_COMPILE_FLAGS)
tests_ddp_segment_test_LDADD = $(IWTEST_LINK)
tests_ddp_rx_test_SOURCES = tests/ddp_rx_test.c
tests_ddp_rx_test_CFLAGS = $(IWTEST_COMPILE_FLAGS)
tests_ddp_rx_test_LDADD = $(IWTEST_LINK)
endif
