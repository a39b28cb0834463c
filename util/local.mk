# util/local.mk: byte order, allocator seam, CRC32c, errors.
libiwarp_core_la_SOURCES += \
	util/bytes.h \
	util/mem.c util/mem.h \
	util/crc32c.c util/crc32c.h \
	util/errors.c
