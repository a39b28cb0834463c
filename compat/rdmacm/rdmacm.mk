# compat/rdmacm/rdmacm.mk: the compat librdmacm.so.1 and iwarp_run (see compat/local.mk).
