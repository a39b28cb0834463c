# util/local.mk: byte order, allocator seam, CRC32c, errors.
libiwarp_core_la_SOURCES += \
	util/bytes.h \
	util/mem.c util/mem.h \
	util/crc32c.c util/crc32c.h \
	util/crc32c_gf2.c \
	util/crc32c_slice8.c \
	util/crc32c_sse42.c \
	util/errors.c \
	util/oneshot.c util/oneshot.h \
	util/thread.c util/thread.h util/tsan.h \
	util/log.c util/log.h
if HAVE_ISAL
libiwarp_core_la_SOURCES += util/crc32c_isal.c
endif

if HAVE_CHECK
check_PROGRAMS += tests/crc32c_test
TESTS += tests/crc32c_test
tests_crc32c_test_SOURCES = tests/crc32c_test.c
tests_crc32c_test_CFLAGS = $(IWTEST_COMPILE_FLAGS)
tests_crc32c_test_LDADD = $(IWTEST_LINK)
endif
