# tools/local.mk
