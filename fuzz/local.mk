# fuzz/local.mk
