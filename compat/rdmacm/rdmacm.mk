# compat/rdmacm/rdmacm.mk: the compat librdmacm.so.1 and iwarp_run (see compat/local.mk).
if BUILD_COMPAT
# Own directory variable (same place as the compat libibverbs), so the two
# makefile fragments never assign the same variable.
rdmacmlibdir = $(compatlibdir)
rdmacmlib_LTLIBRARIES = compat/librdmacm.la
compat_librdmacm_la_SOURCES = \
	compat/rdmacm/cma.h \
	compat/rdmacm/channel.c \
	compat/rdmacm/device.c \
	compat/rdmacm/id.c \
	compat/rdmacm/event.c \
	compat/rdmacm/qp.c \
	compat/rdmacm/addrinfo.c \
	compat/rdmacm/unsupported.c
# The rdma-core ABI is the exported one: default visibility here, and the
# version script (rdma-core 44's nodes) keeps everything else local.
compat_librdmacm_la_CFLAGS = $(AM_CFLAGS) -fvisibility=default $(PTHREAD_CFLAGS)
compat_librdmacm_la_LIBADD = compat/libibverbs.la libiwarp.la $(PTHREAD_LIBS)
compat_librdmacm_la_LDFLAGS = $(AM_LDFLAGS) -version-info 1:0:0 \
	-Wl,--version-script=$(top_srcdir)/compat/librdmacm.map -no-undefined
EXTRA_compat_librdmacm_la_DEPENDENCIES = $(top_srcdir)/compat/librdmacm.map
endif
EXTRA_DIST += compat/librdmacm.map

# iwarp_run: puts the installed compat directory first on the library path.
bin_SCRIPTS = tools/iwarp_run
tools/iwarp_run: $(top_srcdir)/tools/iwarp_run.in Makefile
	$(AM_V_GEN)$(MKDIR_P) tools && sed -e 's|@compatlibdir[@]|$(compatlibdir)|g' \
		-e 's|@libdir[@]|$(libdir)|g' -e 's|@PACKAGE_VERSION[@]|$(PACKAGE_VERSION)|g' \
		$(top_srcdir)/tools/iwarp_run.in >$@.tmp && chmod +x $@.tmp && mv $@.tmp $@
CLEANFILES += tools/iwarp_run
EXTRA_DIST += tools/iwarp_run.in
