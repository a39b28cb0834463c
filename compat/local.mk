# compat/: replacements for rdma-core's libibverbs.so.1 and librdmacm.so.1,
# built on the public libiwarp API against Debian's rdma-core headers (so
# the struct layouts cannot drift) and installed to a private directory
# that iwarp_run(1) puts first on the library path; never on the system
# library path, so a system rdma-core is never shadowed.
compatlibdir = $(pkglibdir)/compat
EXTRA_DIST += compat/compat_priv.h
include compat/verbs/verbs.mk
include compat/rdmacm/rdmacm.mk
