# tools/local.mk: command-line tools.

# iwarp_decode: strict validator of captured iWARP traffic (pcap/pcapng).
# Everything but main.c/pcapin.c is the pcap-free decoder engine a fuzz
# target can drive (tools/decode/decoder.h).
bin_PROGRAMS += tools/iwarp_decode
IWARP_DECODE_ENGINE = \
	tools/decode/decoder.c tools/decode/decoder.h \
	tools/decode/conn.h \
	tools/decode/stream.c tools/decode/stream.h \
	tools/decode/fpdu.c tools/decode/fpdu.h \
	tools/decode/follow.c \
	tools/decode/rdmap_chk.c \
	tools/decode/net.c tools/decode/net.h
tools_iwarp_decode_SOURCES = $(IWARP_DECODE_ENGINE) \
	tools/decode/output.c tools/decode/output.h \
	tools/decode/pcapin.c tools/decode/pcapin.h \
	tools/decode/main.c
tools_iwarp_decode_CFLAGS = $(AM_CFLAGS) $(PCAP_CFLAGS)
tools_iwarp_decode_LDADD = libiwarp-core.la $(PCAP_LIBS)

if HAVE_CHECK
check_PROGRAMS += tests/decode_test
TESTS += tests/decode_test
tests_decode_test_SOURCES = tests/decode_test.c $(IWARP_DECODE_ENGINE)
tests_decode_test_CFLAGS = $(IWTEST_COMPILE_FLAGS) $(PCAP_CFLAGS) \
	-I$(top_srcdir)/tools/decode
tests_decode_test_LDADD = $(IWTEST_LINK) $(PCAP_LIBS)
endif

dist_check_SCRIPTS += tests/decode_evidence.sh
TESTS += tests/decode_evidence.sh
