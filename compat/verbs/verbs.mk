# compat/verbs/verbs.mk: the compat libibverbs.so.1 (see compat/local.mk).
# SONAME libibverbs.so.1 (-version-info 1:0:0) with rdma-core 44's symbol
# version nodes (compat/libibverbs.map); docs/compat.md.
if BUILD_COMPAT
compatlib_LTLIBRARIES = compat/libibverbs.la
compat_libibverbs_la_SOURCES = compat/verbs/iwc.h compat/verbs/device.c \
	compat/verbs/context.c compat/verbs/pd_mr.c compat/verbs/cq.c \
	compat/verbs/qp.c compat/verbs/misc.c compat/verbs/strings.c \
	compat/verbs/provider_abi.c
compat_libibverbs_la_LIBADD = libiwarp.la $(PTHREAD_LIBS)
compat_libibverbs_la_LDFLAGS = $(AM_LDFLAGS) -version-info 1:0:0 -no-undefined \
	-Wl,--version-script=$(top_srcdir)/compat/libibverbs.map
EXTRA_compat_libibverbs_la_DEPENDENCIES = $(top_srcdir)/compat/libibverbs.map
endif
EXTRA_DIST += compat/libibverbs.map docs/compat.md
