# rdmap/local.mk
