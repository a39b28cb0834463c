/*
 * io/tls_int.h: what io/tls.c and io/tls_ctx.c share (only io/ includes
 * OpenSSL headers).
 */
#ifndef IWARP_IO_TLS_INT_H
#define IWARP_IO_TLS_INT_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <openssl/ssl.h>

#include "io/tls.h"

/* External PSK length bounds, octets (128 to 512 bits). */
#define TLS_PSK_MIN 16
#define TLS_PSK_MAX 64

struct io_tls_ctx {
	atomic_uint refs;
	SSL_CTX *ssl_ctx;
	bool has_cert, has_ca, require_peer_cert;
	uint8_t psk[TLS_PSK_MAX];
	size_t psk_len; /* 0: no PSK */
	char psk_identity[129];
	char peer_name[256]; /* "": verify the chain only */
};

/* The SSL_CTX ex_data slot that points back at the io_tls_ctx. */
int tls_ctx_index(void);

#endif /* IWARP_IO_TLS_INT_H */
