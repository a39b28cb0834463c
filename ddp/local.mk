# ddp/local.mk
