# compat/verbs/verbs.mk: the compat libibverbs.so.1 (see compat/local.mk).
