# mpa/local.mk
